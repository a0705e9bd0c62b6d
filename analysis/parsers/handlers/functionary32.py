"""Functionary's recipients: v3.2 writes each message after ``>>>``: ``all``
then content, or a function name then its JSON arguments; several in a row
(``>>>f\\n{..}>>>g\\n{..}``).  v2 writes the same with a longer recipient
marker and separator (``\\n<|from|>assistant\\n<|recipient|>f\\n<|content|>{..}``),
read from the template's renders."""

from __future__ import annotations

import json
from typing import Any

from analysis.messages import tags
from analysis.messages.deviations import DeviationKind, deviation
from analysis.parsers.builder import BuiltParser
from analysis.parsers.handlers.base import Handler, probe_call_render, with_tool_markers
from analysis.parsers.json_calls import json_arguments
from analysis.parsers.pieces import ending, repeated_calls, text_to_end, turn_end_markers, word_end
from analysis.parsers.pieces import marker as spaced
from analysis.parsers.reasoning import boilerplate_and_reasoning_start
from analysis.parsers.request import ChatRequest
from analysis.parsers.response_spec import NAME, call_field, marker, turn_ends
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import PrefillOutcome, TemplateAnalysis, ToolFormat
from analysis.probing.markers import last_marker, strip_ws
from analysis.probing.probes import FUN_A, FUN_B, Prober, assistant, conversation, tool_call
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


def _prompt_marker(prober: Prober) -> str:
    """The marker the generation prompt (with tools) ends with, or ""."""
    out = (prober.render_shaped(conversation(generation_prompt=True, tools=True)) or "").rstrip()
    match = last_marker(out)
    return match.group() if match is not None and match.end() == len(out) else ""


def detect_v2(source: str, prober: Prober) -> str | None:
    """The generation prompt ends with a recipient marker (``<|recipient|>``)
    that the template writes before ``all`` and before a call's function name
    (a template without calls is left to the reply's lead)."""
    mark = _prompt_marker(prober)
    if mark and mark != MARK and f"{mark}all" in source and f"{mark}{FUN_A}" in probe_call_render(prober):
        return f"the generation prompt ends with {mark} (a recipient follows: all, or a function, as a probe call renders)"
    return None


def measure_v2(analysis: TemplateAnalysis, prober: Prober) -> TemplateAnalysis:
    """The recipient marker (what precedes each message's recipient, from the
    render of two calls) and the separator after a recipient (what follows a
    function's name, before its JSON arguments)."""
    mark = _prompt_marker(prober)
    two = prober.render_shaped(conversation(assistant(content="", calls=[tool_call(), tool_call(FUN_B)]))) or ""
    first, second = two.rfind(FUN_A), two.rfind(FUN_B)  # (the calls, after the tools listed)
    brace = two.find("{", first)
    if not mark or first < 0 or second < 0 or brace < 0:
        return analysis
    try:
        _, end = json.JSONDecoder().raw_decode(two, brace)
    except ValueError:
        return analysis
    between, separator = strip_ws(two[end:second]), two[first + len(FUN_A) : brace]
    if not between.endswith(mark):
        return analysis
    function = {"name_prefix": "", "name_suffix": separator, "close": ""}
    return with_tool_markers(analysis, ToolFormat.TAG_WITH_JSON, format={"per_call_start": between}, function=function)


def build(
    analysis: TemplateAnalysis, request: ChatRequest, generation_prompt: str, continued_text: str, prefill: PrefillOutcome, for_grammar: bool = False
) -> BuiltParser:
    boilerplate, _ = boilerplate_and_reasoning_start(generation_prompt, continued_text, analysis, prefill)
    mark, separator = strip_ws(analysis.tools.format.per_call_start) or MARK, analysis.tools.function.name_suffix or "\n"
    if mark in boilerplate:  # the recipient after the last >>> is the model's
        boilerplate = boilerplate[: boilerplate.rfind(mark) + len(mark)]
    functions = tool_functions(request) if request.has_tools else []
    # (parsing) the end-of-turn marker an engine passes through is dropped
    stops = () if for_grammar else turn_end_markers(analysis)
    end = ending(stops)
    # (parsing) text ends at the first >>> from which the rest of the output reads
    # (a recipient and its text or call, to the end): a >>> quoted in prose is prose
    # (a text always reads, to the output's end if need be: the rest reads from
    # a >>> where the calls after it read and the output then ends, or a text
    # begins; so the look-ahead never nests one per message)
    rest = p.rule("segments-to-end")
    text = p.until(mark, stops=stops) if for_grammar else p.until(mark, stops=stops, then=rest, tentative=True)
    # (the recipient "all" is a whole word: "allall" is none of the declared recipients)
    text_head = p.literal("all") + word_end() + spaced(separator)
    segments = [text_head + tags.content(text)]
    for f in functions:
        # (parsing) arguments that are not JSON are kept as written, up to the next >>>
        args = json_arguments(f, (mark,), for_grammar)
        segments.insert(0, tags.tool(tags.tool_name(p.literal(f["name"])) + spaced(separator) + args))
    # (parsing) a message whose recipient is none of the declared ones ("allall") is
    # content, its recipient and all, as harmony keeps a message to an unknown recipient
    # (a declared function's call that breaks is not: it is reported, kept as text)
    declared = [p.literal(f["name"]) + word_end() for f in functions]
    unknown = tags.content(text) if not declared else p.negate(p.choice(*declared)) + tags.content(text)
    segment = p.choice(*segments) if for_grammar else p.choice(*segments, unknown)
    calls_ahead = p.zero_or_more(p.space() + p.literal(mark) + p.choice(*segments[:-1])) if functions else p.eps()
    rest.body = calls_ahead + p.choice(p.space() + p.literal(mark) + text_head, end)
    if functions and not for_grammar:  # (or calls, then text no recipient opens: text after the calls)
        rest.body = p.choice(rest.body, p.one_or_more(p.space() + p.literal(mark) + p.choice(*segments[:-1])) + text_to_end(stops))
    # (parsing) text after the last message that no recipient opens is content, as
    # after the generic formats' calls (a broken end-of-turn marker after a call), noted
    tail = end if for_grammar else p.choice(end, deviation(DeviationKind.TEXT_AFTER_CALLS, text_to_end(stops)))
    if request.parallel_tool_calls or not functions or not for_grammar:  # (see repeated_calls)
        if for_grammar:
            body = segment + p.zero_or_more(p.space() + p.literal(mark) + segment) + tail
        else:
            # (a deviation: text after a call with no recipient of its own, up to
            # the next >>> from which a call reads: text between two calls)
            next_call = p.literal(mark) + p.choice(*segments[:-1]) if functions else p.literal(mark)
            between = deviation(DeviationKind.TEXT_BETWEEN_CALLS, tags.content(p.until(mark, stops=stops, then=next_call)))
            # (the text's whitespace before it is its own, as the text after the calls keeps it)
            body = segment + p.zero_or_more(p.choice(p.space() + p.literal(mark), between + p.literal(mark)) + segment) + tail
    else:  # one call at most: the call, or text and then a call
        call, text = p.choice(*segments[:-1]), segments[-1]
        body = p.choice(call, text + p.optional(p.space() + p.literal(mark) + call)) + end
    calls = repeated_calls(p.optional(p.literal(mark)) + p.choice(*segments[:-1]) + p.space(), request, for_grammar) if functions else None
    # no trigger (the prompt already ends with >>>): the grammar, when there are tools, covers the whole turn
    return BuiltParser(p.literal(boilerplate) + body, boilerplate, body, calls, "", False)


def response_fields(analysis: TemplateAnalysis) -> dict[str, Any]:
    """Each ``>>>`` names a recipient: ``all`` opens content, a function name
    its JSON arguments; the next ``>>>`` or the end of turn closes it.  The
    anchor stops before the prompt's own ``>>>``, which opens the first."""
    ends = turn_ends(analysis)
    mark = strip_ws(analysis.tools.format.per_call_start) or MARK
    closed = "|".join([f"(?={marker(mark)})"] + [marker(m) for m in ends])
    # (v2's marker is <|from|>assistant\n<|recipient|>: the prompt ends inside it, so the
    # anchor stops before its last marker, and the first message begins there)
    last = last_marker(mark)
    recipient = last.group() if last is not None and last.end() == len(mark) else mark
    lead = strip_ws(mark[: len(mark) - len(recipient)])
    opened = (f"(?:{marker(lead)}\\s*)?" if lead else "") + marker(recipient)
    prompt = strip_ws(analysis.generation_prompt.text)
    anchor = strip_ws(prompt[: prompt.rfind(recipient)]) if recipient in prompt else prompt
    separator = strip_ws(analysis.tools.function.name_suffix)  # (v2's <|content|>)
    after = r"\s*" + (marker(separator) + r"\s*" if separator else "")
    content = {"open_pattern": opened + r"\s*all\b" + after, "close_pattern": closed, "content": "text", "repeats": True, "join": ""}
    calls = call_field(opened + r"\s*(?!all\b)" + NAME + after, None, "json", close_pattern=closed)
    return {"start_anchor": anchor, "fields": {"tool_calls": calls, "content": content}}


HANDLER = Handler("functionary-v3.2", detect, refine, build=build, response_fields=response_fields)
V2_HANDLER = Handler("functionary-v2", detect_v2, refine, build=build, measure=measure_v2, response_fields=response_fields)
