"""Pieces of a Hugging Face ``response_template`` (the declarative output spec
transformers, vLLM and SGLang execute), shared by the generic export and the
dedicated formats' own.

A ``response_template`` is a flat set of regions: each field opens at a
literal or a regular expression and closes at another; the text between is
read by a content parser (``text``, ``json``, ``xml-inline``...), and a
``transform`` reshapes it with the open pattern's named groups.  These helpers
write the patterns for markers the analysis found.
"""

from __future__ import annotations

import re
from typing import Any

from analysis.errors import ExportError
from analysis.phases.result import CallIdPosition, TemplateAnalysis, ToolFormat
from analysis.probing.markers import strip_ws

#: a function name as models write it (greedy: it ends where the name's own characters end)
NAME = r"(?P<name>[\w.\-]+)"
#: an argument name in a tagged argument
KEY = r"(?P<key>[\w.\-]+)"
#: a tool call in the shape transformers' own templates produce; ``{name}``
#: and ``{content}`` are the open pattern's name and the parsed arguments
CALL_TRANSFORM: dict[str, Any] = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}


def turn_ends(analysis: TemplateAnalysis) -> list[str]:
    """The template's end-of-turn markers, trimmed (what closes plain content)."""
    return [m for m in map(strip_ws, analysis.turn_end) if m]


def marker(text: str) -> str:
    """A pattern for a marker: its text, with the whitespace around and inside
    it matching any whitespace (templates and models differ in newlines)."""
    parts = [re.escape(part) for part in strip_ws(text).split()]
    return r"\s*".join(parts)


def anchor(key: str, text: str) -> dict[str, str]:
    """``{key: literal}`` for a marker without whitespace inside (a literal
    streams with no delay), else ``{key_pattern: pattern}`` with flexible whitespace."""
    literal = strip_ws(text)
    if not any(c.isspace() for c in literal):
        return {key: literal}
    return {f"{key}_pattern": marker(literal)}


def call_field(open_pattern: str, close: str | list[str] | None, content: str, **extra: Any) -> dict[str, Any]:
    """A repeated ``tool_calls`` field: opened by ``open_pattern`` (which names
    the function), closed by the literal(s) ``close`` (or by a ``close_pattern``
    in ``extra``; neither: the end of the output), read by ``content``."""
    spec: dict[str, Any] = {"open_pattern": open_pattern}
    if close:
        spec.update(anchor("close", close) if isinstance(close, str) else {"close": close})
    spec.update({"repeats": True, "content": content, "transform": CALL_TRANSFORM, **extra})
    return spec


def generic_calls(analysis: TemplateAnalysis) -> dict[str, Any]:
    """The ``tool_calls`` field of a format the differential analysis read:
    JSON calls (:func:`json_calls`) or calls named in markers (:func:`tagged_calls`)."""
    if analysis.tools.format.mode is ToolFormat.JSON_NATIVE:
        return json_calls(analysis)
    return tagged_calls(analysis)


def json_calls(analysis: TemplateAnalysis) -> dict[str, Any]:
    """Calls written as JSON objects ``{"name": ..., "arguments": ...}``,
    one per marker pair, or an array of them in a section."""
    fmt = analysis.tools.format
    if fmt.fun_name_is_key:
        raise ExportError('calls written as {"NAME": ARGUMENTS} (the name is a key): a transform cannot read a key as a value')
    if not fmt.name_field or not fmt.args_field:
        raise ExportError("the calls' JSON has no name or no arguments member")
    one = {"type": "function", "function": {"name": "{" + fmt.name_field + "}", "arguments": "{" + fmt.args_field + "}"}}
    ends = turn_ends(analysis)
    if strip_ws(fmt.per_call_start):  # (the section markers around the calls are left out: see stray_markers)
        closes = anchor("close", fmt.per_call_end) if strip_ws(fmt.per_call_end) else _next_call_or_end(fmt.per_call_start, ends)
        spec = {**anchor("open", fmt.per_call_start), **closes, "repeats": True, "content": "json", "transform": _under("content", one)}
        if fmt.tools_array_wrapped:
            spec.update(transform=one, transform_each=True)
            spec.pop("repeats")
        return spec
    if strip_ws(fmt.section_start):
        section_closes: dict[str, Any] = dict(anchor("close", fmt.section_end)) if strip_ws(fmt.section_end) else ({"close": ends} if ends else {})
        return _json_body({**anchor("open", fmt.section_start), **section_closes}, one, fmt.tools_array_wrapped)
    # bare JSON: the turn is the call (Llama 3.x)
    first = (fmt.parameter_order or (fmt.name_field,))[0].split(".")[0]
    opens = {"open_pattern": f'^\\s*(?=(?:\\[\\s*)?\\{{\\s*"{re.escape(first)}")'}
    return _json_body({**opens, **({"close": ends} if ends else {})}, one, fmt.tools_array_wrapped)


def _json_body(anchors: dict[str, Any], one: dict[str, Any], array: bool) -> dict[str, Any]:
    """A field whose body is JSON: an array of calls (each transformed), or one call a field (repeated)."""
    if array:
        return {**anchors, "content": "json", "transform": one, "transform_each": True}
    return {**anchors, "content": "json", "transform": _under("content", one), "repeats": True}


def _under(root: str, transform: dict[str, Any]) -> dict[str, Any]:
    """``transform`` with its placeholders read under ``root`` (``{name}`` -> ``{content.name}``)."""

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
            return "{" + root + "." + value[1:]
        return value

    result: dict[str, Any] = walk(transform)
    return result


def _next_call_or_end(call_start: str, ends: list[str]) -> dict[str, str]:
    """Where a call with no closer of its own ends: before the next call's
    opener, or at an end-of-turn marker (or at the end of the output, which
    closes every field: a ``\\Z`` alternative would break streaming)."""
    alternatives = ([f"(?={marker(call_start)})"] if strip_ws(call_start) else []) + [marker(m) for m in ends]
    return {"close_pattern": "|".join(alternatives)} if alternatives else {}


def tagged_calls(analysis: TemplateAnalysis) -> dict[str, Any]:
    """Calls whose name sits in markers, with JSON arguments or tagged ones."""
    tools = analysis.tools
    fmt, function, arguments, call_id = tools.format, tools.function, tools.arguments, tools.call_id
    if call_id.pos is CallIdPosition.POST_ARGS:
        raise ExportError("a call id written after the arguments: a close pattern cannot skip it")
    before = ""
    if call_id.pos is CallIdPosition.PRE_FUNC_NAME:  # (the id is left out: calls compare by name and arguments)
        prefix = "" if strip_ws(call_id.prefix) == strip_ws(fmt.per_call_start) else marker(call_id.prefix)
        before = f"(?:{prefix}.*?{marker(call_id.suffix)})?\\s*"
    name_suffix = marker(function.name_suffix)
    between = ""
    if call_id.pos is CallIdPosition.BETWEEN_FUNC_AND_ARGS:  # (the id is left out: calls compare by name and arguments)
        suffix = "" if strip_ws(call_id.suffix) == strip_ws(function.name_suffix) else marker(call_id.suffix)
        between = f"(?:\\s*{marker(call_id.prefix)}.*?{suffix})?"
    opened = (
        marker(fmt.per_call_start)
        + (r"\s*" if strip_ws(fmt.per_call_start) else "")
        + before
        + marker(function.name_prefix)
        + NAME
        + between
        + (r"\s*" + name_suffix if name_suffix else "")
    )
    end = strip_ws(function.close) or strip_ws(fmt.per_call_end)
    ends = turn_ends(analysis)
    # (a call marker after the closer, and the section's markers, are left out: see stray_markers)
    closes = {} if end else _next_call_or_end(fmt.per_call_start, ends)
    if fmt.mode is ToolFormat.TAG_WITH_JSON:
        return call_field(opened, end or None, "json", **closes)
    tag = (
        marker(arguments.name_prefix)
        + KEY
        + marker(arguments.name_suffix)
        + r"\s*"
        + marker(arguments.value_prefix)
        + r"\n?(?P<value>.*?)\n?"
        + marker(arguments.value_suffix)
    )
    if not strip_ws(arguments.name_prefix) or not strip_ws(arguments.value_suffix):
        raise ExportError("tagged arguments without an argument opener and a value closer: an xml-inline pattern cannot find them")
    return call_field(opened, end or None, "xml-inline", **closes, content_args={"tag_pattern": tag})




def stray_markers(analysis: TemplateAnalysis, calls: dict[str, Any]) -> list[str]:
    """The call markers the ``calls`` field does not open or close at: a
    section's opener and closer, a per-call closer after the function's.
    Plain content closes at them, which leaves them out of the message."""
    fmt, function = analysis.tools.format, analysis.tools.function
    used = [calls.get("open"), calls.get("close"), calls.get("open_pattern", ""), calls.get("close_pattern", "")]
    out = []
    for text in (fmt.section_start, fmt.section_end, fmt.per_call_start, fmt.per_call_end, function.close):
        m = strip_ws(text)
        if not m or m in out or any(m == u or (isinstance(u, list) and m in u) for u in used[:2]):
            continue
        if any(isinstance(u, str) and marker(m) in u for u in used[2:]):
            continue
        out.append(m)
    return out


__all__ = ["CALL_TRANSFORM", "KEY", "NAME", "anchor", "call_field", "generic_calls", "json_calls", "marker", "stray_markers", "tagged_calls", "turn_ends"]
