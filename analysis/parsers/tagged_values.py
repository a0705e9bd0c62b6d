"""Tagged arguments as parsing reads them: a value ends at the first closer
from which the call reads on (exact reading); only where none does, at a
repair (the closer left out: the next argument, the call's close).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analysis.messages.tags import (
    TOOL_ARG,
    TOOL_ARG_NAME,
    TOOL_ARG_STRING,
)
from analysis.parsers.pieces import NAME_CHARS, call_closers, exact_marker, followed_by, marker, markup, turn_end_markers, typed_value, whole_reading_first
from analysis.parsers.repair import value_closer
from analysis.parsers.schemas import is_only_string, parameters_of, properties_of
from analysis.phases.result import (
    ArgumentsAnalysis,
    TemplateAnalysis,
)
from analysis.probing.markers import strip_ws
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser

#: XML's character-data section, around a tagged value that holds markup
CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"


def read_tagged_args(analysis: TemplateAnalysis, function: Mapping[str, Any], after_call: Parser | None = None) -> Parser:
    """Tagged arguments as parsing reads them: in any order, each optional,
    names not in the schema too.  A value is read by the parameter's schema
    (:func:`typed_value`): a string schema's value is the text up to its
    closer; any other is the first of JSON or a Python literal that fills the
    value up to its end, else the text as written, a string (the call is
    kept; the schema check reports it).  A value's closer may be missing: it
    ends at the next argument's opener or the call's close.

    ``after_call``: what reads from the end of the call to the end of the
    output in the format's own form (the rest of the calls, the closers, the
    turn's end).  Given it, a string value ends first at the first closer from
    which the call closes and all the rest of the output reads so (the one
    reading of the whole output: a value that quotes the closers of a value, a
    call and a section, ``'</arg_value></tool_call>'``, is its text); only
    where none does, as without it."""
    a = analysis.tools.arguments
    name_prefix, value_end = strip_ws(a.name_prefix), strip_ws(a.value_suffix)
    function_close = strip_ws(analysis.tools.function.close)
    if function_close == value_end:
        function_close = ""
    properties = properties_of(parameters_of(function))
    names = sorted((str(n) for n in properties), key=lambda n: -len(n))  # longest first
    # the next argument's opener ("<parameter=days>"), where it is markup: a value
    # whose closer was left out ends there
    # (where the name's closer is the value's opener, MiniMax's <parameter name="days">, that ends it)
    name_closer = strip_ws(a.name_suffix) or strip_ws(a.value_prefix)
    openers = [name_prefix + n + name_closer for n in names] if markup(name_prefix) and name_closer else []
    closer = value_end or name_prefix
    # the markers that close the call around the function (</tool_call>): where the
    # function's own close is left out too, a value ends there
    fmt = analysis.tools.format
    call_ends = [e for e in call_closers(fmt) if markup(e) and e not in (value_end, function_close)]
    if function_close:
        # the value ends at its closer where the call goes on (another argument
        # or the call's close): "x </parameter> y" inside a value stays text
        nexts = [n for n in (name_prefix, function_close, *call_ends) if n]
        exact_ends = [closer + gap + n for n in nexts for gap in _GAPS]
        repairs = [function_close, *openers, *call_ends]
    else:
        exact_ends, repairs = [closer], [*openers, *call_ends]
    string_ends = exact_ends + repairs
    # what may follow a typed value: its closer, or (left out) what comes after one
    typed_ends = [closer, *openers, function_close, *call_ends] if value_end else [name_prefix, strip_ws(analysis.tools.function.close), *openers, *call_ends]
    value_open = p.optional(exact_marker(a.value_prefix)) if strip_ws(a.value_prefix) else exact_marker(a.value_prefix)
    # exact first: the value ends at its closer, from which the call reads on, or
    # at another declared argument's opener (its closer left out: a value holding
    # "<parameter=state>" of its function's own is no person's reading), whichever
    # comes first; only where none does, at a repair (the call's close)
    after = _after_a_value(analysis, call_ends)
    to_end = _after_a_value_to_end(analysis, after_call) if after_call is not None else None

    def string_value(own: str) -> Parser:
        """A string value of the argument ``own`` (its own opener is no other argument's)."""
        others = [o for o, n in zip(openers, names, strict=False) if n != own]  # (openers: one per name, or none)
        # (the whitespace the template writes around the closer left out is no part
        # of the value: the mapper leaves it out; no delimiter begins with it, which
        # would cost a scan that stops at every newline)
        ends = exact_ends + others
        value = p.tag(TOOL_ARG_STRING, p.until(*ends, then=after, repairs=[r for r in repairs if r not in others], repair_then=after))
        if to_end is not None:  # (the whole output's reading first: see the docstring)
            whole = p.choice(to_end, p.peek(_next_argument(a))) if others else to_end  # (_next_argument: whitespace first)
            value = whole_reading_first(ends, whole, value, lambda until: p.tag(TOOL_ARG_STRING, until))
        if name_prefix.startswith("<"):
            # XML's escape for text with markup in it: <![CDATA[a <b> & c]]> is the text inside (MiniCPM5);
            # once the opener is seen the branch cannot fail (a missing "]]>" ends at the value's end)
            # (exact reading: the section ends at a "]]>" from which the call reads on; only
            # where none does, at a closer from which it does: the "]]>" left out)
            inside = p.until(CDATA_CLOSE, then=p.literal(CDATA_CLOSE) + after, repairs=string_ends, repair_then=after)
            cdata = p.literal(CDATA_OPEN) + p.tag(TOOL_ARG_STRING, inside) + p.optional(p.literal(CDATA_CLOSE))
            value = p.choice(cdata, value)
        return value

    # the string keeps its leading whitespace after the last marker before it
    # (GLM writes "</arg_key>\n<arg_value>": the newline belongs to no value)
    # a name's closer left out ends where the value's opener follows (GLM's "<arg_key>unit\n<arg_value>")
    value_opener = strip_ws(a.value_prefix)
    name_close = _name_close(a)
    string_head = name_close if value_opener else exact_marker(a.name_suffix)
    typed_head = name_close + (p.optional(marker(a.value_prefix)) if value_opener else marker(a.value_prefix))
    typed_end = followed_by(typed_ends)

    # a name is complete (and shown) once what follows it confirms it: "city" is
    # not a name in "<parameter=city_name>"
    name_end = p.peek(name_close) if strip_ws(a.name_suffix) else p.eps()

    def argument(name: str, arg_schema: Any) -> Parser:
        spelled = p.literal(name) if name else p.chars(NAME_CHARS, 1, UNBOUNDED)
        head = marker(a.name_prefix) + p.tag(TOOL_ARG_NAME, spelled + name_end)
        string_body = string_head + value_open + string_value(name)
        if is_only_string(arg_schema):
            body = string_body
        else:
            body = p.choice(typed_head + typed_value(arg_schema, f"{function['name']}-{name or 'extra'}", typed_end), string_body)
        return p.tag(TOOL_ARG, head + body + value_close) + p.space()

    # (a value's closer left out: a deviation, noted where the value ends without it)
    value_close = value_closer(marker(a.value_suffix)) if value_end else p.eps()

    options = [argument(n, properties[n]) for n in names]
    options.append(argument("", {}))  # a name not in the schema: kept (the schema check reports it)
    return p.zero_or_more(p.choice(*options))


def _name_close(a: ArgumentsAnalysis) -> Parser:
    """An argument name's closer; left out, where the value's opener follows
    (GLM's ``<arg_key>unit\n<arg_value>``)."""
    name_close = marker(a.name_suffix)
    value_opener = strip_ws(a.value_prefix)
    if markup(strip_ws(a.name_suffix)) and markup(value_opener):
        name_close = p.choice(name_close, p.space() + p.peek(p.literal(value_opener)))
    return name_close


def _after_a_value(analysis: TemplateAnalysis, call_ends: Sequence[str]) -> Parser:
    """What reads after a tagged string value, where it ends (a look-ahead: a
    closer quoted inside the value, ``print('</function>')``, is the value's
    text): its closer (or none, left out), then the next argument's name, or
    the function's close and what ends the call (its closer, the next call,
    the turn's end marker, the output's end)."""
    a, fmt = analysis.tools.arguments, analysis.tools.format
    opener = strip_ws(fmt.per_call_start) or strip_ws(analysis.tools.function.name_prefix)
    ends = [*call_ends, *([opener] if markup(opener) else []), *turn_end_markers(analysis)]
    call_end = p.space() + p.choice(followed_by(ends), p.end()) if ends else p.space() + p.end()
    function_close = _function_close(analysis)
    close = p.literal(function_close) + call_end if function_close else call_end
    return p.optional(marker(a.value_suffix)) + p.choice(_next_argument(a), close, call_end)


def _after_a_value_to_end(analysis: TemplateAnalysis, after_call: Parser) -> Parser:
    """What reads after a tagged string value where the whole output reads in
    the format's form: its closer, then the next argument's name, or the
    function's close and ``after_call`` (the rest of the output)."""
    a = analysis.tools.arguments
    function_close = _function_close(analysis)
    close = p.space() + p.literal(function_close) if function_close else p.eps()
    value_close = marker(a.value_suffix) if strip_ws(a.value_suffix) else p.eps()
    return p.rule("value-to-the-end", value_close + p.choice(_next_argument(a), close + after_call))


def _next_argument(a: ArgumentsAnalysis) -> Parser:
    """The next argument's opener and a name, up to (a look-ahead) its closer."""
    name_close = _name_close(a) if strip_ws(a.name_suffix) else p.eps()
    return marker(a.name_prefix) + p.chars(NAME_CHARS, 1, UNBOUNDED) + p.peek(name_close)


def _function_close(analysis: TemplateAnalysis) -> str:
    """The function's close after its last value ("" where there is none, or it is the value's own closer)."""
    function_close = strip_ws(analysis.tools.function.close)
    return function_close if function_close != strip_ws(analysis.tools.arguments.value_suffix) else ""


#: The whitespace models put between a value's closer and the next marker.
_GAPS = ("\n", "", "\n\n")
