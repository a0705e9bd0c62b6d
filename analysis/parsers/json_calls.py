"""Calls written as JSON objects (``{"name": …, "arguments": …}``), and JSON
arguments inside any format's calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import product
from typing import Any

from analysis.messages import tags
from analysis.messages.pyliteral import python_value
from analysis.messages.tags import (
    TOOL_ARG_PY,
    TOOL_ARGS_UNREAD,
)
from analysis.parsers.pieces import ending, followed_by, markup, tool_name, turn_end_markers
from analysis.parsers.schemas import arguments_schema
from analysis.phases import quirks
from analysis.phases.result import (
    TemplateAnalysis,
    ToolFormat,
    ToolFormatAnalysis,
)
from analysis.probing.markers import strip_ws
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser


def json_arguments(
    function: Mapping[str, Any],
    follows: Sequence[str] = (),
    for_grammar: bool = False,
    closes: tuple[Parser, Sequence[str]] | None = None,
) -> Parser:
    """A call's JSON arguments.  Given ``follows`` (parsing: the texts that can
    only come after the arguments, such as ``}\n</tool_call>``), arguments that
    are not JSON (``{"days": 007}``) but are followed by one of them are kept as
    written: the call stays a call (its arguments reported by the schema
    check).  Given ``closes`` instead (a call that no marker ends: Llama 3's
    ``{"name": …}}``, then the output's end), such arguments end at the brace
    after which only its parser comes (its texts: the closing braces and an
    end-of-turn marker).  Where neither comes, the output was cut short or the
    call broke.  A stream shows arguments being written short of where such a
    reading would end them, so it never shows what the whole output reads
    otherwise."""
    if for_grammar:  # (the grammar: JSON of the schema)
        return tags.tool_args(arguments_schema(function))
    follows = [f for f in follows if f]
    # an object's text, to its last brace before what follows (whitespace after it is not arguments)
    ends = ["}" + gap + f for f in follows for gap in ("", "\n", " ", "\n\n")]
    if closes is not None:
        ends += ["}" + gap + text for text in closes[1] for gap in ("", "\n", " ")]
    # an object whose closing brace is left out ends before a marker that ends the call
    markers = [f for f in follows if markup(f) and f[0] not in "},"]
    unclosed_ends = [gap + f for f in markers for gap in ("\n", " ", "")]
    parsed = arguments_schema(function, ends + unclosed_ends)
    # a template that writes {{ arguments }} renders a dict in Python's spelling: {'city': 'Paris'}
    # (only that: arguments that open as JSON, {", are never reread as Python, as a stream showed them)
    python = p.peek(p.literal("{") + p.space() + p.literal("'")) + p.tag(TOOL_ARG_PY, python_value())
    options = [parsed, python]
    # (arguments that are not JSON, kept as written: TOOL_ARGS_UNREAD tells the
    # mapper that a finished parse keeps them as text, never as a call)
    if follows:
        # to the first place where the call may end: after a brace, or (left out) before a marker
        closed = p.literal("}") + followed_by(follows)
        call_end = p.choice(closed, followed_by(markers)) if markers else closed
        options.append(p.tag(TOOL_ARGS_UNREAD, p.peek(p.literal("{")) + p.until(*ends, *unclosed_ends) + call_end))
    elif closes is not None:
        piece = p.until("}") + p.literal("}")
        end = closes[0]
        options.append(p.tag(TOOL_ARGS_UNREAD, p.peek(p.literal("{")) + p.zero_or_more(piece + p.negate(end)) + piece + p.peek(end)))
    return tags.tool_args(p.choice(*options))


def _json_string_key(name: str) -> Parser:
    return p.literal('"' + name + '"') + p.space() + p.literal(":") + p.space()


#: The two spellings of a JSON call's arguments field (Llama 3 templates write
#: "parameters", its models often "arguments").
_ARGS_SPELLINGS = ("parameters", "arguments")


#: what Llama 3 models write before a call (a declared family quirk)
PYTHON_TAG = quirks.PYTHON_TAG.marker


def json_native_call(analysis: TemplateAnalysis, function: Mapping[str, Any], for_grammar: bool = False) -> tuple[Parser, Parser | None]:
    """A JSON call object of ``function``: the exact reading (its members in
    the template's order), and, for parsing, the reading of its members in any
    order, with others around them (None where there is none)."""
    fmt = analysis.tools.format
    name = tool_name(function["name"], for_grammar, _JSON_NAME_CHARS, _after_json_name(analysis))
    closes = None if for_grammar else _closed_by_the_end(analysis, turn_end_markers(analysis))
    args = json_arguments(function, _after_json_arguments(analysis), for_grammar, closes)
    if fmt.fun_name_is_key:
        return (
            p.literal("{")
            + p.space()
            + p.literal('"')
            + name
            + p.literal('"')
            + p.space()
            + p.literal(":")
            + p.space()
            + args
            + p.space()
            + p.literal("}")
        ), None
    members: dict[str, Parser] = {}
    nested_prefix = ""
    for field in (fmt.name_field, fmt.args_field, fmt.id_field, fmt.gen_id_field):
        if "." in field:
            nested_prefix = field.split(".", 1)[0]

    def key(f: str) -> str:
        return f.split(".", 1)[1] if nested_prefix and f.startswith(nested_prefix + ".") else f

    if fmt.name_field:
        members[fmt.name_field] = _json_string_key(key(fmt.name_field)) + p.literal('"') + name + p.literal('"')
    if fmt.args_field:
        spelled = key(fmt.args_field)
        if spelled in _ARGS_SPELLINGS and not for_grammar:  # models write either
            members[fmt.args_field] = p.choice(*(_json_string_key(k) for k in _ARGS_SPELLINGS)) + args
        else:
            members[fmt.args_field] = _json_string_key(spelled) + args
    for id_field in (fmt.id_field, fmt.gen_id_field):
        if id_field:
            members[id_field] = _json_string_key(key(id_field)) + p.literal('"') + tags.tool_id(p.until('"')) + p.literal('"')
    order = _member_order(fmt)
    parts: list[Parser] = []
    for i, field in enumerate(order):
        member = members[field]
        sep = p.space() + p.literal(",") + p.space() if i else p.eps()
        is_id = field in (fmt.id_field, fmt.gen_id_field)
        parts.append(p.optional(sep + member) if is_id else sep + member)
    body = p.literal("{") + p.space() + p.seq(*parts) + p.space() + p.literal("}")
    if nested_prefix:
        body = p.literal("{") + p.space() + _json_string_key(nested_prefix) + body + p.space() + p.literal("}")
    elif not for_grammar and fmt.name_field and fmt.args_field and not bare_json_call_starts(analysis):
        # (parsing) the members in another order, or with others around them
        # ({"arguments": …, "name": …}, {"id": …, "name": …}): JSON, read as JSON
        # (where calls have markers: a bare object in a reply is never a call)
        return body, _json_call_any_order(fmt, function, key)
    return body, None


def _json_call_any_order(fmt: ToolFormatAnalysis, function: Mapping[str, Any], key: Callable[[str], str]) -> Parser:
    """A JSON call object whose name and arguments come in any order, with
    other members (an id, a type) before, between or after them; the
    arguments JSON of the schema."""
    quote, sep = p.literal('"'), p.space() + p.literal(",") + p.space()
    spelled = p.literal(function["name"]) if function["name"] else p.chars(_JSON_NAME_CHARS, 1, UNBOUNDED)
    name = _json_string_key(key(fmt.name_field)) + quote + tags.tool_name(spelled + p.peek(quote)) + quote
    spellings = _ARGS_SPELLINGS if key(fmt.args_field) in _ARGS_SPELLINGS else (key(fmt.args_field),)
    args = p.choice(*(_json_string_key(k) for k in spellings)) + tags.tool_args(arguments_schema(function))
    ids = [f for f in (fmt.id_field, fmt.gen_id_field) if f]
    id_member = [_json_string_key(key(f)) + quote + tags.tool_id(p.until('"')) + quote for f in ids]
    # another member: any key but the name's and the arguments' (a repetition never gives one back)
    known = p.choice(*(p.literal(f'"{k}"') for k in (key(fmt.name_field), *spellings)))
    other = p.negate(known) + quote + p.chars('[^"\\\n]', 1, UNBOUNDED) + quote + p.space() + p.literal(":") + p.space() + p.json_value()
    extra = p.choice(*id_member, other)
    between = p.zero_or_more(sep + extra)
    pair = p.choice(name + between + sep + args, args + between + sep + name)
    return p.literal("{") + p.space() + p.zero_or_more(extra + sep) + pair + between + p.space() + p.literal("}")


#: what a function name in a JSON string may hold (a name outside the request's tools)
_JSON_NAME_CHARS = '[^"\\\\\n]'


def _after_json_name(analysis: TemplateAnalysis) -> Parser:
    """What confirms a JSON call's name (a stream shows the call from then on):
    its closing quote and the comma before the next member ({"name": "x"}
    alone is no call), or the closing brace where it is the last member.
    Where calls have no marker of their own (Llama 3), the next member's key
    too: {"name": "Bob", "age": 3} in a reply is never shown as a call."""
    fmt = analysis.tools.format
    quote = p.literal('"')
    if fmt.fun_name_is_key:
        return quote + p.space() + p.literal(":")
    order = _member_order(fmt)
    after = order[order.index(fmt.name_field) + 1 :] if fmt.name_field in order else []
    if not after:
        return quote + p.space() + p.literal("}")
    comma = quote + p.space() + p.literal(",")
    if not bare_json_call_starts(analysis):
        return comma
    keys = [after[0].split(".", 1)[-1]]
    if after[0] == fmt.args_field and keys[0] in _ARGS_SPELLINGS:
        keys = list(_ARGS_SPELLINGS)
    return comma + p.space() + p.choice(*(p.literal('"' + k + '"') for k in keys))


def _member_order(fmt: ToolFormatAnalysis) -> list[str]:
    """A JSON call's members (name, arguments, ids) in the order the template
    writes them (``parameter_order``, then the others)."""
    fields = [f for f in (fmt.name_field, fmt.args_field, fmt.id_field, fmt.gen_id_field) if f]
    return [f for f in fmt.parameter_order if f in fields] + [f for f in fields if f not in fmt.parameter_order]


def _after_json_arguments(analysis: TemplateAnalysis) -> list[str]:
    """What can only follow a JSON-native call's arguments: the next member's
    key where one follows them (``, "id"``), and the call's closing braces,
    then the marker or bracket that ends the call, or an array's next call
    (none when nothing marks the end: see :func:`_closed_by_the_end`)."""
    fmt = analysis.tools.format
    order = _member_order(fmt)
    follows: list[str] = []
    if not fmt.fun_name_is_key and fmt.args_field in order and order[-1] != fmt.args_field:
        key = order[order.index(fmt.args_field) + 1].split(".", 1)[-1]
        follows += ["," + gap + '"' + key + '"' for gap in ("", " ", "\n")]
    end = _json_call_end(fmt)
    if not end:
        return follows
    # (an array's next call, as templates indent it: Command R7B writes "},\n    {")
    nexts = [end] + ([",\n{", ", {", ",{", ",\n  {", ",\n    {", ",\n\t{"] if fmt.tools_array_wrapped else [])
    return follows + [c + n for c in _closings(order) for n in nexts]


def _json_call_end(fmt: ToolFormatAnalysis) -> str:
    """The marker or bracket after a JSON-native call's closing braces ("": none)."""
    return strip_ws(fmt.per_call_end) or ("]" if fmt.tools_array_wrapped else "") or strip_ws(fmt.section_end)


def _closing_braces(order: Sequence[str]) -> int:
    """How many braces close a JSON call after its last member (a nested call object closes twice)."""
    return 2 if any("." in f for f in order) else 1


def _closings(order: Sequence[str]) -> list[str]:
    """The spellings of a JSON call's closing braces after its last member,
    with the whitespace models put after each."""
    return ["".join("}" + gap for gap in gaps) for gaps in product(("", "\n", " "), repeat=_closing_braces(order))]


def _closed_by_the_end(analysis: TemplateAnalysis, stops: Sequence[str]) -> tuple[Parser, list[str]] | None:
    """What closes a JSON-native call that ends with its arguments and that no
    marker ends (Llama 3, GigaChat 3.1): its closing braces, then the output's
    end (or, where calls have no marker at all, the ``;`` before a next call),
    as a parser and as the texts that show it (the braces and an end-of-turn
    marker); None for other formats."""
    fmt = analysis.tools.format
    order = _member_order(fmt)
    if fmt.mode is not ToolFormat.JSON_NATIVE or _json_call_end(fmt):
        return None
    if not fmt.fun_name_is_key and (not order or order[-1] != fmt.args_field):
        return None
    closing = p.seq(*(p.space() + p.literal("}") for _ in range(_closing_braces(order))))
    after = p.choice(ending(stops), p.space() + p.literal(";")) if bare_json_call_starts(analysis) else ending(stops)
    return closing + after, [c + stop for c in _closings(order) for stop in stops]


def bare_json_call_starts(analysis: TemplateAnalysis) -> list[str]:
    """What can only start a JSON call in a format whose calls have no marker
    (Llama 3: ``{"name"``, or the python tag its models write first, quirks.PYTHON_TAG);
    none for other formats."""
    fmt = analysis.tools.format
    if fmt.mode is not ToolFormat.JSON_NATIVE or fmt.per_call_start or fmt.section_start or fmt.tools_array_wrapped:
        return []
    start = json_call_start(fmt)
    return [start, PYTHON_TAG] if start else []


def json_call_start(fmt: ToolFormatAnalysis) -> str:
    """What a JSON call object begins with, its name's key (``{"name"``), or ""
    where the name is no top-level member of its own (a key, a nested field)."""
    if fmt.mode is not ToolFormat.JSON_NATIVE or fmt.fun_name_is_key or not fmt.name_field or "." in fmt.name_field:
        return ""
    return '{"' + fmt.name_field + '"'
