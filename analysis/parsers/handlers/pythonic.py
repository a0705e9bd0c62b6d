"""LFM2 / LFM2.5: pythonic calls ``<|tool_call_start|>[name(a=1, b="x")]<|tool_call_end|>``.

Values are Python literals (``True``/``False``/``None``, either quote style,
nested lists and dicts); names may be dotted (``Calendar.create_event``).  A
bare ``[`` in prose stays content: calls start only at the section marker.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from analysis.messages import tags
from analysis.messages.pyliteral import python_value
from analysis.messages.tags import TOOL_ARG, TOOL_ARG_NAME, TOOL_ARG_PY, TOOL_ARG_PY_STRING
from analysis.parsers.handlers.base import Handler, probe_call_render, with_tool_markers
from analysis.parsers.pieces import (
    argument_set,
    ending,
    output_end,
    quoted_to_next_argument,
    text_to_next_argument,
    text_until,
    turn_end_markers,
    typed_value,
)
from analysis.parsers.repair import or_left_out, section_closer
from analysis.parsers.request import ChatRequest
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import ReasoningAnalysis, ReasoningMode, TemplateAnalysis, ToolFormat
from analysis.probing.diff import diff_split
from analysis.probing.markers import MARKER_RE, strip_ws
from analysis.probing.probes import ARG_A, FUN_A, FUN_B, Prober, assistant, conversation, tool_call
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser

SECTION_START = "<|tool_call_start|>"
SECTION_END = "<|tool_call_end|>"


def detect(source: str, prober: Prober) -> str | None:
    """A probe call renders as ``name(arg=...)`` inside the section markers."""
    out = probe_call_render(prober, {ARG_A: "v"})
    if re.search(re.escape(SECTION_START) + r"\s*\[\s*" + re.escape(f"{FUN_A}({ARG_A}="), out):
        return f"a probe call renders as {SECTION_START}[{FUN_A}({ARG_A}=...)]"
    if f"{FUN_A}({ARG_A}=" in out:
        return None  # python calls in another section (a code block): the generic pythonic section reads them
    if SECTION_START in out and FUN_A in out.split(SECTION_START, 1)[1]:
        return None  # the template writes its calls in another form (JSON): the differential analysis reads it
    listed = prober.render_shaped(conversation()) or ""
    for opener in ("<|tool_list_start|>", "List of tools: ["):
        if opener in listed and FUN_A in listed.split(opener, 1)[1] and "<|im_start|>" in listed:
            return f"the probe tools render after {opener!r} in ChatML turns (LFM2's tool list; its models call in pythonic form)"
    return None


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    """Section markers and pythonic argument markers; ``<think>`` reasoning when
    the template handles it."""
    reasoning = analysis.reasoning
    if reasoning.mode is ReasoningMode.NONE and "</think>" in source:
        reasoning = ReasoningAnalysis(ReasoningMode.TAG_BASED, "<think>", "</think>")
    return _with_pythonic_markers(analysis, SECTION_START + "[", "]" + SECTION_END, reasoning=reasoning)


def _with_pythonic_markers(analysis: TemplateAnalysis, start: str, end: str, **changes: Any) -> TemplateAnalysis:
    """``analysis`` with a pythonic list's markers between ``start`` and ``end``."""
    return with_tool_markers(
        analysis,
        ToolFormat.TAG_WITH_TAGGED,
        format={"section_start": start, "section_end": end},
        function={"name_prefix": "", "name_suffix": "(", "close": ")"},
        arguments={"name_prefix": "", "name_suffix": "=", "value_prefix": "", "value_suffix": "", "separator": ", "},
        **changes,
    )


def _next_call(functions: Sequence[Mapping[str, Any]], value: Parser, ends: list[str]) -> Parser:
    """A look-ahead: a call of one of ``functions`` reads here, whole, as it
    reads alone (its values end at their first end from which it reads on:
    the look-ahead never nests)."""
    return p.peek(p.choice(*(_call(f, value, False, ends) for f in functions)))


def _call_list(request: ChatRequest, for_grammar: bool, closes: tuple[str, ...] = (), after_list: Parser | None = None) -> Parser:
    """``[call, call]`` (one call, for the grammar, without parallel tool calls);
    when parsing, a ``]`` left out ends where one of ``closes`` follows.
    ``after_list``: what follows the list's ``]`` where the whole output reads
    in the format's form (string values are read by that reading first)."""
    value = python_value()
    functions = tool_functions(request)
    # where a call ends: the list's end, or the next call
    ends = ["]", *(f",{gap}{f['name']}(" for f in functions for gap in ("", " "))]
    after_call = None
    if after_list is not None and not for_grammar and functions:
        next_call = _next_call(functions, value, ends)
        after_call = p.rule("after-a-python-call", p.space() + p.choice(p.literal(",") + p.space() + next_call, p.literal("]") + after_list))
    call = p.choice(*(_call(f, value, for_grammar, ends, after_call) for f in functions))
    more = p.zero_or_more(p.space() + p.literal(",") + p.space() + call) if request.parallel_tool_calls or not for_grammar else p.eps()
    return p.literal("[") + p.space() + call + more + p.space() + or_left_out("]", closes, for_grammar)


def _value_as_written(value: Parser, names: list[str], ends: list[str], after_call: Parser | None = None) -> Parser:
    """A value as models write it: a string (streamed as it comes), else the
    first that fills the value's place up to the next argument or the call's
    end: a Python literal, JSON, or text (``3 days``, a broken ``[1,``), kept
    as written up to the next of the call's ``names`` or the call's ``ends``.
    A value that is not a string shows once decided; a string left unclosed
    ends there too (``days='3, unit=``)."""
    # (vLLM's Gemma 3 pythonic template writes no comma: the next argument's name ends a value too)
    next_name = [p.literal(name) + p.space() + p.literal("=") for name in names]
    end = p.peek(p.space() + p.choice(p.literal(","), p.literal(")"), p.literal("]"), *next_name))
    boundaries = [f",{gap}{name}=" for name in names for gap in ("", " ")] + [")" + e for e in ends]
    # (one scan for a string's inside, escapes and all)
    inside = lambda until: p.tag(TOOL_ARG_PY_STRING, until)  # noqa: E731 - (a quote inside is text: exact reading)
    # (the whole output's reading first: after the quote, the next argument, or the call's end and what follows it)
    whole = None
    if after_call is not None:
        next_argument = p.choice(*(p.literal(n) for n in names)) + p.space() + p.literal("=") if names else p.chars("[A-Za-z0-9_]", 1, UNBOUNDED)
        # (a declared name and "=" may follow without a comma: Gemma 3's pythonic template writes none)
        comma = p.optional(p.literal(",")) if names else p.literal(",")
        whole = p.space() + p.choice(comma + p.space() + next_argument, p.literal(")") + after_call)
    string = p.choice(*(quoted_to_next_argument(quote, boundaries if names else [], end, inside, escape="\\", whole=whole) for quote in "'\""))
    bare = text_to_next_argument(boundaries if names else [], "[^,)]")
    return p.choice(string, typed_value({}, "pythonic-value", end, bare, own=[p.tag(TOOL_ARG_PY, value)]))


def _call(function: Mapping[str, Any], value: Parser, for_grammar: bool = False, ends: list[str] | None = None, after_call: Parser | None = None) -> Parser:
    params = function.get("parameters") or {}
    properties = params.get("properties") or {}
    names = sorted(properties, key=lambda n: -len(str(n))) if isinstance(properties, Mapping) else []
    if for_grammar and names:  # the schema's arguments: required ones present, each at most once
        def argument(arg: str) -> Parser:
            return p.optional(p.literal(",") + p.space()) + p.literal(arg) + p.space() + p.literal("=") + p.space() + value + p.space()

        required = [str(n) for n in params.get("required") or [] if n in properties]
        args = argument_set([argument(n) for n in required], [argument(str(n)) for n in names if str(n) not in required], None)
        return p.literal(function["name"]) + p.literal("(") + p.space() + args + p.literal(")")
    name_choice = p.choice(*(p.literal(str(n)) for n in names)) if names else p.chars("[A-Za-z0-9_]", 1, UNBOUNDED)
    as_written = _value_as_written(value, [str(n) for n in names], ends or ["]"], after_call)
    arg = p.tag(TOOL_ARG, p.tag(TOOL_ARG_NAME, name_choice) + p.space() + p.literal("=") + p.space() + as_written)
    # (parsing) a comma left out between arguments is read too: vLLM's Gemma 3 pythonic template writes none
    args = p.optional(arg + p.zero_or_more(p.space() + p.optional(p.literal(",")) + p.space() + arg) + p.space())
    # (parsing) the closing parenthesis left out: the list's end ends the call
    close = p.choice(p.literal(")"), p.peek(p.space() + p.literal("]")))
    return tags.tool(tags.tool_name(p.literal(function["name"])) + p.literal("(") + p.space() + args + close)


def calls(analysis: TemplateAnalysis, request: ChatRequest, for_grammar: bool = False) -> tuple[Parser, str]:
    """``<|tool_call_start|>[call, call]<|tool_call_end|>``."""
    # (parsing) the list's end and the section's end left out before the turn's end marker
    stops = turn_end_markers(analysis)
    next_section = [p.peek(p.literal(SECTION_START)), output_end(analysis)]
    functions = tool_functions(request)
    if functions and not for_grammar:
        # (a deviation: text between two sections, holding neither marker, then the next section's call, whole)
        ends = ["]", *(f",{gap}{f['name']}(" for f in functions for gap in ("", " "))]
        first = _next_call(functions, python_value(), ends)
        next_section.append(p.peek(p.until(SECTION_START, SECTION_END) + p.literal(SECTION_START) + p.space() + p.literal("[") + p.space() + first))
    after_list = p.space() + p.literal(SECTION_END) + p.space() + p.choice(*next_section)
    calls = _call_list(request, for_grammar, (SECTION_END, *stops), after_list)
    parser = p.literal(SECTION_START) + p.space() + calls + p.space() + section_closer(SECTION_END, for_grammar) + p.space()
    if not for_grammar:  # calls in several <|tool_call_start|> blocks, each read as a whole (a stream shows its calls once it is)
        parser = p.one_or_more(tags.calls_held(parser))
    return parser, SECTION_START


#: why neither pythonic format has a response_template form
PYTHON_CALLS = "its calls are Python function calls (get_weather(city='Paris')), which no content parser reads"

HANDLER = Handler("lfm2-pythonic", detect, refine, calls=calls, response_unsupported=PYTHON_CALLS)


# --- pythonic call lists without markers (Gemma 3, Llama 3.2 / 4 pythonic templates) ----


def detect_list(source: str, prober: Prober) -> str | None:
    """A probe call renders as ``[name(arg=...)]`` with no section marker."""
    out = probe_call_render(prober, {ARG_A: "v"})
    if f"[{FUN_A}({ARG_A}=" in out and SECTION_START not in out:
        return f"a probe call renders as [{FUN_A}({ARG_A}=...)] (a pythonic call list)"
    return None


def refine_list(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    return _with_pythonic_markers(analysis, "[", "]")


def calls_list(analysis: TemplateAnalysis, request: ChatRequest, for_grammar: bool = False) -> tuple[Parser, str]:
    """``[call, call]`` at the start of the output (as vLLM's pythonic parser
    reads it; text may follow): no trigger word, since a ``[`` in prose is
    text.  When parsing, after text too, glued to it (``Let me check
    that.[get_weather(...)]``, as Llama 4's pythonic template writes a turn's
    text and calls): from the first ``[`` from which a call list reads to the
    output's end (a list quoted in prose, text after it, is text)."""
    if for_grammar:
        return _call_list(request, for_grammar) + p.space(), ""
    # (text may follow the list: after its "]", the output reads whatever comes; a
    # string value ends at the first quote after which its call closes and the
    # list goes on, the next call read whole, or ends)
    calls = _call_list(request, for_grammar, after_list=p.eps()) + p.space()
    stops = turn_end_markers(analysis)
    to_end = p.rule("call-list-to-end", calls + ending(stops))
    # (after text, held by a stream until the output ends: text after the list makes it prose)
    return p.choice(calls, text_until(("[",), stops, then=to_end) + tags.calls_held(to_end)), ""


LIST_HANDLER = Handler("pythonic-list", detect_list, refine_list, calls=calls_list, response_unsupported=PYTHON_CALLS)


# --- pythonic calls in a section of the template's own (<function_calls>, a ```python block) ----


def _call_at(text: str, name: str) -> re.Match[str] | None:
    """The probe call ``name(ARG_A='v')`` (either quote) in ``text``."""
    return re.search(re.escape(f"{name}({ARG_A}=") + r"""(['"]?)v\1\)""", text)


def _added(prober: Prober, calls: list[dict[str, Any]]) -> str:
    """What a turn's ``calls`` write in place of a reply's text ("" when either does not render)."""
    bare = prober.render_shaped(conversation(assistant()))
    called = prober.render_shaped(conversation(assistant(content="", calls=calls)))
    return diff_split(bare, called).right if bare is not None and called is not None else ""


def detect_section(source: str, prober: Prober) -> str | None:
    """A probe call renders as ``name(arg=...)`` between markers (after the
    list and LFM2 forms are ruled out): read back in the template's own section."""
    one = _added(prober, [tool_call(arguments={ARG_A: "v"})])
    match = _call_at(one, FUN_A)
    if match is None or not MARKER_RE.search(one[: match.start()]):
        return None
    return f"a probe call renders as {FUN_A}({ARG_A}=...) after {strip_ws(one[: match.start()])!r} (python calls in a section)"


def measure_section(analysis: TemplateAnalysis, prober: Prober) -> TemplateAnalysis:
    """The section's markers, from the renders of one call and of two: what
    comes before the first call, what follows the last, and what follows each
    call when the calls are written one per line (``per_call_end``)."""
    one = _added(prober, [tool_call(arguments={ARG_A: "v"})])
    two = _added(prober, [tool_call(arguments={ARG_A: "v"}), tool_call(FUN_B, {ARG_A: "v"})])
    first, second = _call_at(one, FUN_A), _call_at(two, FUN_B)
    if first is None:
        return analysis
    start, after = one[: first.start()], one[first.end() :]
    between = two[two.index(")", two.index(FUN_A)) + 1 : second.start()] if second is not None else ""
    per_call_end = between if between and strip_ws(between) != "," and after.startswith(between) else ""
    result = _with_pythonic_markers(analysis, start, after[len(per_call_end) :])
    return replace(result, tools=replace(result.tools, format=replace(result.tools.format, per_call_end=per_call_end)))


def calls_section(analysis: TemplateAnalysis, request: ChatRequest, for_grammar: bool = False) -> tuple[Parser, str]:
    """The section's opener, its calls (each followed by ``per_call_end`` when
    the template writes one per line, else separated by commas), its closer."""
    fmt = analysis.tools.format
    start, end, per_call_end = strip_ws(fmt.section_start), strip_ws(fmt.section_end), fmt.per_call_end
    functions = tool_functions(request)
    gaps = (per_call_end, ",", ", ") if per_call_end else (",", ", ")
    ends = [end, *(f"{gap}{f['name']}(" for f in functions for gap in gaps)]
    value = python_value()
    after_call = None
    if not for_grammar and functions:  # (the whole output's reading first: see _call_list)
        after_section = p.space() + p.choice(p.peek(p.literal(start)), output_end(analysis))
        section_tail = p.literal(end) + after_section if end else output_end(analysis)
        # (one per line: the line's end, then the next call or the section's end; else a comma and the next call)
        next_call = _next_call(functions, value, ends)
        if per_call_end:
            ahead = p.optional(p.literal(per_call_end)) + p.space() + p.choice(next_call, section_tail)
        else:
            ahead = p.space() + p.choice(p.literal(",") + p.space() + next_call, section_tail)
        after_call = p.rule("after-a-python-call", ahead)
    call = p.choice(*(_call(f, value, for_grammar, ends, after_call) for f in functions))
    if per_call_end:
        one = call + (p.literal(per_call_end) if for_grammar else p.space())
        gap: Parser = p.eps()
    else:
        one = call
        gap = p.literal(",") + p.space() if for_grammar else p.space() + p.optional(p.literal(",")) + p.space()
    many = request.parallel_tool_calls or not for_grammar
    body = one + (p.zero_or_more(gap + one) if many else p.eps())
    parser = p.literal(start) + p.space() + body + p.space() + section_closer(end, for_grammar) + p.space()
    if not for_grammar:  # calls in several sections
        parser = p.one_or_more(parser)
    return parser, start


SECTION_HANDLER = Handler(
    "pythonic-section", detect_section, lambda analysis, source: analysis, calls=calls_section, response_unsupported=PYTHON_CALLS, measure=measure_section
)
