"""The tool-call part of a generic format: calls in arrays, per-call markers
and sections, and the marker that starts them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from analysis.messages import tags
from analysis.messages.deviations import DeviationKind, deviation
from analysis.parsers.json_calls import PYTHON_TAG, bare_json_call_starts, json_native_call
from analysis.parsers.pieces import marker, markup, turn_end_markers
from analysis.parsers.repair import bare_call_start, or_left_out, section_closer
from analysis.parsers.request import ChatRequest
from analysis.parsers.schemas import ANY_TOOL, tool_functions
from analysis.parsers.tagged_calls import tag_call
from analysis.phases.result import (
    CallIdPosition,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.markers import MARKER_RE, strip_ws
from peg import combinators as p
from peg.combinators import Parser


def calls_part(analysis: TemplateAnalysis, request: ChatRequest, for_grammar: bool = False, after_calls: Parser | None = None) -> Parser:
    """The tool-call part: calls of the request's functions, in array, per-call
    and section markers (``for_grammar``: as the grammar constrains them).

    ``after_calls`` (parsing): what reads after the last call's section to the
    output's end in the format's form.  Given it, tagged string values are read
    by the whole output's reading first (see :func:`read_tagged_args`)."""
    fmt = analysis.tools.format
    # (parsing) a call to a tool the request does not have is kept too
    functions = tool_functions(request) + ([] if for_grammar else [ANY_TOOL])
    exact = after_calls is not None and not for_grammar and _reads_to_the_end(analysis)
    after_call = p.rule("after-a-call") if exact else None
    if fmt.mode is ToolFormat.JSON_NATIVE:
        readings = [json_native_call(analysis, f, for_grammar) for f in functions]
        # every function's exact reading first, then the looser ones: the same call
        # (a name tells them apart), without a loose try of each name that is not it
        call = p.choice(*(exact for exact, _ in readings), *(loose for _, loose in readings if loose is not None))
    else:
        call = p.choice(*(tag_call(analysis, f, for_grammar, after_call) for f in functions))
    many = request.parallel_tool_calls or not for_grammar  # (see repeated_calls)
    if not for_grammar and fmt.mode is ToolFormat.JSON_NATIVE and not (fmt.per_call_start or fmt.section_start):
        call = p.optional(p.literal(PYTHON_TAG) + p.space()) + call
    if fmt.tools_array_wrapped:
        more = p.zero_or_more(p.space() + p.literal(",") + p.space() + tags.tool(call)) if many else p.eps()
        unit = p.literal("[") + p.space() + tags.tool(call) + more + p.space() + p.literal("]")
        if not for_grammar and (fmt.per_call_start or fmt.section_start):  # (parsing) a call without its brackets
            unit = p.choice(unit, tags.tool(call) + more)
    else:
        unit = tags.tool(call)
    stops = () if for_grammar else turn_end_markers(analysis)
    section_end = strip_ws(fmt.section_end)
    if fmt.per_call_start or fmt.per_call_end:
        # (parsing) a call's closer left out ends where the next call, the section's end or the turn's end follows
        opener = marker(fmt.per_call_start, for_grammar)
        closer = or_left_out(strip_ws(fmt.per_call_end), (strip_ws(fmt.per_call_start), section_end, *stops), for_grammar)
        # (parsing) the whitespace after the last call belongs to the text after it
        # ("…</tool_call> Done." keeps its space), so whitespace comes before a call
        trail = p.space() if for_grammar else p.eps()
        if fmt.tools_array_wrapped:  # each marker pair holds an array of calls
            one = opener + unit + p.space() + closer + trail
        else:  # the call includes its markers (a streamed call is shown once they open it)
            one = tags.tool(opener + call + p.space() + closer) + trail
            if not for_grammar and bare_call_start(analysis):  # "<function=…>" without its "<tool_call>"
                one = p.choice(one, deviation(DeviationKind.CALL_WITHOUT_WRAPPER, tags.tool(call + p.space() + p.optional(closer))))
            if not for_grammar and fmt.mode is not ToolFormat.JSON_NATIVE and strip_ws(fmt.per_call_start):
                # (a deviation: the family's other syntax after the opener, Mistral's older
                # [TOOL_CALLS][{"name": …, "arguments": …}] or one such object)
                one = p.choice(one, deviation(DeviationKind.OTHER_CALL_SYNTAX, opener + _json_call_list(analysis, functions) + p.space() + closer) + trail)
        calls = (p.one_or_more(one) if many else one) if for_grammar else p.one_or_more(p.space() + one)
    elif not for_grammar and bare_json_call_starts(analysis):  # Llama 3 models join calls with ";" too
        calls = p.one_or_more(unit + p.space() + p.optional(p.literal(";") + p.space()))
    else:
        calls = p.one_or_more(unit + p.space()) if many and not fmt.tools_array_wrapped else unit + p.space()
    if fmt.section_start or fmt.section_end:
        opener = marker(fmt.section_start, for_grammar)
        pair = section_pair(analysis)
        if pair and not for_grammar:  # (parsing) the opener's two markers may hold the turn's text
            # (its text ends at the first second marker from which a call reads: one quoted in
            # the text is text; a stream shows the text once that is decided)
            # (a whole call: text after which a call breaks is not decided, and the whole parse keeps it as written)
            inside = p.until(pair[1], then=p.literal(pair[1]) + p.space() + unit)
            opener = p.space() + p.literal(pair[0]) + tags.content_held(inside) + p.literal(pair[1]) + p.space()
        close = section_closer(section_end, for_grammar)
        calls = opener + calls + (close + p.space() if for_grammar else p.space() + close)
        if not for_grammar and strip_ws(fmt.section_start):  # (parsing) calls in several sections
            calls = p.one_or_more(calls)
    if after_call is not None and after_calls is not None:
        named = [f for f in functions if f.get("name")]
        # (the next call as it reads alone: its values end at the first closer from which it reads on)
        next_call = p.choice(*(tag_call(analysis, f) for f in named)) if named else None
        after_call.body = _after_a_call(analysis, after_calls, next_call, stops)
    return calls


def _json_call_list(analysis: TemplateAnalysis, functions: Sequence[Mapping[str, Any]]) -> Parser:
    """Calls written as JSON objects (``{"name": …, "arguments": …}``), in a
    list or one alone: what a family's other models write after its marker."""
    fmt = replace(
        analysis.tools.format,
        mode=ToolFormat.JSON_NATIVE,
        name_field="name",
        args_field="arguments",
        id_field="",
        gen_id_field="",
        fun_name_is_key=False,
        tools_array_wrapped=True,
        parameter_order=(),
        per_call_start="",
        per_call_end="",
        section_start="",
        section_end="",
    )
    as_json = replace(analysis, tools=replace(analysis.tools, format=fmt))
    readings = [json_native_call(as_json, f) for f in functions]
    call = tags.tool(p.choice(*(exact for exact, _ in readings), *(loose for _, loose in readings if loose is not None)))
    listed = p.literal("[") + p.space() + call + p.zero_or_more(p.space() + p.literal(",") + p.space() + call) + p.space() + p.literal("]")
    return p.choice(listed, call)


def _after_a_call(analysis: TemplateAnalysis, after_calls: Parser, next_call: Parser | None, stops: tuple[str, ...]) -> Parser:
    """What follows a call's function close in the format's own form, read as
    far as it decides the call's end: its closer, then the next call, whole,
    as it reads alone (``next_call``: its values end at their first closer
    from which it reads on, so this never nests), or the section's closer and
    the next section's opener or ``after_calls`` (the output's end).  A value's
    text is held in a stream until this reads: the closers and one call at most."""
    fmt, fn = analysis.tools.format, analysis.tools.function
    per_call, name_prefix = strip_ws(fmt.per_call_start), strip_ws(fn.name_prefix)
    call_start = per_call or name_prefix
    section_start, section_end = strip_ws(fmt.section_start), strip_ws(fmt.section_end)
    markers = [m for m in (strip_ws(m) for f, m in analysis.marker_fields().items() if f.startswith("tools.")) if markup(m)]
    next_sections = [p.peek(p.literal(section_start))]
    if next_call is not None and section_start:
        # (a deviation: text between two sections, holding none of the format's markers, then the next section's call, whole)
        opener = p.literal(per_call) + p.space() if per_call else p.eps()
        between_sections = p.until(*dict.fromkeys([section_start, *markers])) + p.literal(section_start) + p.space() + opener + next_call
        next_sections.append(p.peek(between_sections))
    after_section = p.choice(next_sections[0], after_calls, *next_sections[1:]) if section_start else after_calls
    tail = p.literal(section_end) + p.space() + after_section if section_end else after_calls
    close = p.literal(strip_ws(fmt.per_call_end)) + p.space() if strip_ws(fmt.per_call_end) else p.eps()
    if next_call is not None:  # (the next call, its markers and all: a call's closer left out ends where the rest of it does)
        opener = p.literal(per_call) + p.space() if per_call else p.eps()
        closer = or_left_out(strip_ws(fmt.per_call_end), (per_call, section_end, *stops), False) if per_call or strip_ws(fmt.per_call_end) else p.eps()
        head = opener + next_call + p.space() + closer
        # (a deviation: text between two calls, holding none of the format's
        # markers, then the next call, whole: a value that quotes its closers
        # and more markers after them is the value's text)
        between = p.until(*dict.fromkeys([call_start, *markers])) + head if call_start else None
    else:
        head = p.literal(call_start) + (p.space() + p.literal(name_prefix) if per_call and name_prefix else p.eps())
        between = None
    ahead = p.choice(p.peek(head), tail, *([p.peek(between)] if between is not None else [])) if call_start else tail
    return p.space() + close + ahead


def _reads_to_the_end(analysis: TemplateAnalysis) -> bool:
    """Whether tagged values are read by the whole output's reading: tagged
    arguments, calls not in an array, no call id after the arguments."""
    fmt = analysis.tools.format
    return (
        fmt.mode is ToolFormat.TAG_WITH_TAGGED
        and not fmt.tools_array_wrapped
        and analysis.tools.call_id.pos is not CallIdPosition.POST_ARGS
    )


def trigger_marker(analysis: TemplateAnalysis) -> str:
    """The text that starts tool calls (section or first per-call marker), or ""."""
    fmt = analysis.tools.format
    pair = section_pair(analysis)
    marker = pair[0] if pair else strip_ws(fmt.section_start) or strip_ws(fmt.per_call_start)
    if not marker and fmt.mode is not ToolFormat.JSON_NATIVE:
        # no section and no per-call marker: a tag that opens with the name starts each call
        # (MiniCPM5's <function name="...">)
        name_prefix = strip_ws(analysis.tools.function.name_prefix)
        if name_prefix.startswith("<"):
            marker = name_prefix
    return marker


def section_pair(analysis: TemplateAnalysis) -> tuple[str, str] | None:
    """A section opener that is two markers with nothing between them when the
    turn has no text (Llama 4's ``<|python_start|><|python_end|>``, which holds
    the turn's text when there is some), the second closing the first, as
    (first, second); else None (``<]minimax[>[tool_call]`` opens, twice)."""
    opener = strip_ws(analysis.tools.format.section_start)
    markers = MARKER_RE.findall(opener)
    if len(markers) != 2 or "".join(markers) != opener:
        return None
    first, second = markers
    closing = {first.replace("start", "end"), first.replace("begin", "end"), first[:1] + "/" + first[1:], first[:2] + "/" + first[2:]} - {first}
    return (first, second) if second in closing else None


class CallsBuilder(Protocol):
    """A dedicated handler's tool-call parser for a request, and its trigger
    marker; with ``for_grammar``, as the grammar constrains the calls (the tool's
    schema: required arguments present, each at most once, typed values)."""

    def __call__(self, analysis: TemplateAnalysis, request: ChatRequest, for_grammar: bool = False) -> tuple[Parser, str]: ...
