"""Functionary v3.2: recipients after ``>>>``: ``all`` then content, or a
function name then its JSON arguments; several in a row (``>>>f\\n{..}>>>g\\n{..}``)."""

from __future__ import annotations

from typing import Any

from analysis.messages import tags
from analysis.parsers.builder import BuiltParser
from analysis.parsers.handlers.base import Handler, with_tool_markers
from analysis.parsers.json_calls import json_arguments
from analysis.parsers.pieces import ending, repeated_calls, turn_end_markers
from analysis.parsers.reasoning import boilerplate_and_reasoning_start
from analysis.parsers.request import ChatRequest
from analysis.parsers.response_spec import NAME, call_field, marker, turn_ends
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import PrefillOutcome, TemplateAnalysis, ToolFormat
from analysis.probing.markers import strip_ws
from analysis.probing.probes import Prober, conversation
from peg import combinators as p

MARK = ">>>"


def detect(source: str, prober: Prober) -> str | None:
    """The generation prompt ends with the recipient marker ``>>>``."""
    out = prober.render_shaped(conversation(generation_prompt=True, tools=True)) or ""
    if out.rstrip().endswith(MARK) and ">>>all" in source:
        return "the generation prompt ends with >>> (a recipient follows: all, or a function)"
    return None


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    return with_tool_markers(
        analysis, ToolFormat.TAG_WITH_JSON, format={"per_call_start": MARK}, function={"name_prefix": "", "name_suffix": "\n", "close": ""}
    )


def build(
    analysis: TemplateAnalysis, request: ChatRequest, generation_prompt: str, continued_text: str, prefill: PrefillOutcome, for_grammar: bool = False
) -> BuiltParser:
    boilerplate, _ = boilerplate_and_reasoning_start(generation_prompt, continued_text, analysis, prefill)
    if MARK in boilerplate:  # the recipient after the last >>> is the model's
        boilerplate = boilerplate[: boilerplate.rfind(MARK) + len(MARK)]
    functions = tool_functions(request) if request.has_tools else []
    # (parsing) the end-of-turn marker an engine passes through is dropped
    stops = () if for_grammar else turn_end_markers(analysis)
    end = ending(stops)
    # (parsing) text ends at the first >>> from which the rest of the output reads
    # (a recipient and its text or call, to the end): a >>> quoted in prose is prose
    rest = p.rule("segments-to-end")
    text = p.until(MARK, stops=stops) if for_grammar else p.until(MARK, stops=stops, then=rest, tentative=True)
    segments = [p.literal("all") + p.space() + tags.content(text)]
    for f in functions:
        # (parsing) arguments that are not JSON are kept as written, up to the next >>>
        args = json_arguments(f, (MARK,), for_grammar)
        segments.insert(0, tags.tool(tags.tool_name(p.literal(f["name"])) + p.literal("\n") + p.space() + args))
    segment = p.choice(*segments)
    rest.body = p.zero_or_more(p.space() + p.literal(MARK) + segment) + end
    if request.parallel_tool_calls or not functions or not for_grammar:  # (see repeated_calls)
        body = segment + p.zero_or_more(p.space() + p.literal(MARK) + segment) + end
    else:  # one call at most: the call, or text and then a call
        call, text = p.choice(*segments[:-1]), segments[-1]
        body = p.choice(call, text + p.optional(p.space() + p.literal(MARK) + call)) + end
    calls = repeated_calls(p.optional(p.literal(MARK)) + p.choice(*segments[:-1]) + p.space(), request, for_grammar) if functions else None
    # no trigger (the prompt already ends with >>>): the grammar, when there are tools, covers the whole turn
    return BuiltParser(p.literal(boilerplate) + body, boilerplate, body, calls, "", False)


def response_fields(analysis: TemplateAnalysis) -> dict[str, Any]:
    """Each ``>>>`` names a recipient: ``all`` opens content, a function name
    its JSON arguments; the next ``>>>`` or the end of turn closes it.  The
    anchor stops before the prompt's own ``>>>``, which opens the first."""
    ends = turn_ends(analysis)
    closed = "|".join([f"(?={marker(MARK)})"] + [marker(m) for m in ends])
    prompt = strip_ws(analysis.generation_prompt.text)
    anchor = strip_ws(prompt[: prompt.rfind(MARK)]) if MARK in prompt else prompt
    content = {"open_pattern": marker(MARK) + r"\s*all\b", "close_pattern": closed, "content": "text", "repeats": True, "join": ""}
    calls = call_field(marker(MARK) + r"\s*(?!all\b)" + NAME + r"\s*", None, "json", close_pattern=closed)
    return {"start_anchor": anchor, "fields": {"tool_calls": calls, "content": content}}


HANDLER = Handler("functionary-v3.2", detect, refine, build=build, response_fields=response_fields)
