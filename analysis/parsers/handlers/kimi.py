"""Kimi K2: ``<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
<|tool_call_argument_begin|>{json}<|tool_call_end|>...<|tool_calls_section_end|>``.

The call id is the whole ``functions.NAME:IDX`` (kept as the call id).  Models
also open calls inside an unclosed ``<think>``, skip the section markers, or
leave out ``<|tool_call_end|>``: reasoning then ends where calls begin and the
end markers are optional.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from analysis.messages import tags
from analysis.messages.deviations import DeviationKind, deviation
from analysis.messages.tags import REASONING_UNOPENED
from analysis.parsers.builder import BuiltParser, more_after_text
from analysis.parsers.handlers.base import Handler, probe_call_render, with_tool_markers
from analysis.parsers.json_calls import json_arguments
from analysis.parsers.pieces import ending, repeated_calls, text_then, text_to_end, text_until, turn_end_markers
from analysis.parsers.reasoning import boilerplate_and_reasoning_start
from analysis.parsers.repair import repeated_closers
from analysis.parsers.request import ChatRequest, ReasoningFormat, ToolChoice
from analysis.parsers.response_spec import NAME, call_field, marker
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import (
    PrefillOutcome,
    ReasoningAnalysis,
    ReasoningMode,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.markers import strip_ws
from analysis.probing.probes import FUN_A, Prober
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser

SECTION_START = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_START = "<|tool_call_begin|>"
ARGS_START = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"


def detect(source: str, prober: Prober) -> str | None:
    """A probe call renders as ``<|tool_call_begin|>functions.NAME:0``."""
    if f"{CALL_START}functions.{FUN_A}:" in probe_call_render(prober):
        return f"a probe call renders as {CALL_START}functions.{FUN_A}:0{ARGS_START}"
    if "<|tool_calls_section_begin|>" in source:
        return "the template writes <|tool_calls_section_begin|> (its calls are rendered from an id it does not keep)"
    return None


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    refined = with_tool_markers(
        analysis,
        ToolFormat.TAG_WITH_JSON,
        format={"section_start": SECTION_START, "section_end": SECTION_END, "per_call_start": CALL_START, "per_call_end": CALL_END},
        function={"name_prefix": "functions.", "name_suffix": ARGS_START, "close": ""},
        reasoning=ReasoningAnalysis(ReasoningMode.TAG_BASED, "<think>", "</think>"),  # K2 models think in <think>
    )
    return replace(refined, tools=replace(refined.tools, call_id=replace(refined.tools.call_id, prefix=CALL_START, suffix=ARGS_START)))


def _call(function: Mapping[str, Any], for_grammar: bool) -> Parser:
    # (parsing) an id without its namespace, "get_weather:0": the family's other spelling, a deviation
    namespace = p.literal("functions.")
    if not for_grammar:
        namespace = p.choice(namespace, deviation(DeviationKind.OTHER_CALL_SYNTAX, p.eps()))
    call_id = tags.tool_id(namespace + tags.tool_name(p.literal(function["name"])) + p.literal(":") + p.chars("[0-9]", 1, UNBOUNDED))
    # (parsing) arguments that are not JSON are kept as written, up to the call's end
    args = json_arguments(function, (CALL_END, CALL_START, SECTION_END), for_grammar)
    # whitespace models write around the markers (" <|tool_call_argument_begin|>") is read too
    close = p.optional(p.literal(CALL_END)) if for_grammar else _or_left_out(CALL_END, DeviationKind.CALL_CLOSER_LEFT_OUT)
    return tags.tool(p.literal(CALL_START) + p.space() + call_id + p.space() + p.literal(ARGS_START) + p.space() + args + p.space() + close)


def _or_left_out(closer: str, kind: DeviationKind) -> Parser:
    """``closer``, or (a deviation of ``kind``) nothing."""
    return p.choice(p.literal(closer), deviation(kind, p.eps()))


def build(
    analysis: TemplateAnalysis, request: ChatRequest, generation_prompt: str, continued_text: str, prefill: PrefillOutcome, for_grammar: bool = False
) -> BuiltParser:
    extracts = request.reasoning_format is not ReasoningFormat.NONE and analysis.reasoning.mode is not ReasoningMode.NONE
    boilerplate, _ = boilerplate_and_reasoning_start(generation_prompt, continued_text, analysis, prefill)
    functions = tool_functions(request) if request.has_tools else []
    starts = (SECTION_START, CALL_START) if functions else ()
    reasoning = p.eps()
    if extracts:
        start, end = strip_ws(analysis.reasoning.start), strip_ws(analysis.reasoning.end)
        block = p.literal(start) + p.space() + tags.reasoning(p.until(end, *starts)) + p.optional(p.literal(end)) + p.space()
        reasoning = p.optional(tags.reasoning_block(block))
        if not for_grammar and analysis.reasoning.always and end not in boilerplate:
            # (a deviation: K2 Thinking's models always open a block; one closed with no
            # opener lost it to the prompt, as a newer template of the family writes it)
            text = tags.reasoning(p.until(end, start, *starts)) + p.literal(end) + p.space()
            unopened = deviation(DeviationKind.REASONING_OPENER_IN_PROMPT, p.tag(REASONING_UNOPENED, tags.reasoning_block(text)))
            reasoning = p.optional(p.choice(tags.reasoning_block(block), unopened))
    # (parsing) the end-of-turn marker an engine passes through, and closers written twice, are dropped
    stops = () if for_grammar else turn_end_markers(analysis)
    if not functions:
        body = reasoning + text_to_end(stops)
        return BuiltParser(p.literal(boilerplate) + body, boilerplate, body, None, "", extracts)
    call = p.choice(*(_call(f, for_grammar) for f in functions))
    # (parsing) whitespace models write between the markers (" <|tool_call_begin|>") is read too
    section_start = p.literal(SECTION_START) if for_grammar else p.literal(SECTION_START) + p.space()
    section_end = p.optional(p.literal(SECTION_END)) if for_grammar else _or_left_out(SECTION_END, DeviationKind.SECTION_CLOSER_LEFT_OUT)
    calls = p.optional(section_start) + repeated_calls(call + p.space(), request, for_grammar) + section_end + p.space()
    if for_grammar:
        with_calls = text_then(starts, calls + ending(stops), stops, for_grammar)
    else:
        # (parsing) calls in several sections, with text between them (a deviation);
        # closers written twice are dropped; text after the calls is content, as in
        # the generic formats (a broken closer after a call that reads: the call is
        # kept, what follows is text)
        stray = repeated_closers((SECTION_END, CALL_END))
        block = p.rule("call-block", p.one_or_more(calls) + stray)
        between = deviation(DeviationKind.TEXT_BETWEEN_CALLS, text_until(starts, stops, then=block))
        after = p.choice(ending(stops), deviation(DeviationKind.TEXT_AFTER_CALLS, text_until((), stops)) + ending(stops))
        with_calls = text_then(starts, block + more_after_text(p.eps(), between, block) + after, stops)
    body = reasoning + (with_calls if request.tool_choice is ToolChoice.REQUIRED else p.choice(with_calls, text_to_end(stops)))
    # the grammar switches on at a call (models also write calls without the section marker)
    return BuiltParser(p.literal(boilerplate) + body, boilerplate, body, calls, CALL_START, extracts, p.literal(boilerplate) + reasoning + with_calls)


def response_fields(analysis: TemplateAnalysis) -> dict[str, Any]:
    """Calls as ``functions.NAME:IDX`` between the call markers, JSON arguments."""
    opened = marker(CALL_START) + r"\s*(?:functions\.)?" + NAME + r"(?::\d+)?\s*" + marker(ARGS_START)
    return {"fields": {"tool_calls": call_field(opened, CALL_END, "json")}}


HANDLER = Handler("kimi-k2", detect, refine, build=build, response_fields=response_fields, probe_call_id="functions.get_weather:{i}")
