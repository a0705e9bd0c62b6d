"""Calls written between markers (``<function=f><parameter=x>…``): the call's
shape for both forms, and the arguments as the grammar constrains them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analysis.messages import tags
from analysis.messages.tags import (
    TOOL_ARG,
    TOOL_ARG_JSON,
    TOOL_ARG_NAME,
    TOOL_ARG_STRING,
)
from analysis.parsers.json_calls import json_arguments
from analysis.parsers.pieces import NAME_CHARS, argument_set, call_closers, exact_marker, followed_by, marker, markup, tool_name
from analysis.parsers.schemas import is_string_schema, parameters_of, properties_of
from analysis.parsers.tagged_values import read_tagged_args
from analysis.phases.result import (
    CallIdPosition,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.markers import strip_ws
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser


def _call_id_between(analysis: TemplateAnalysis, for_grammar: bool) -> Parser:
    cid = analysis.tools.call_id
    return p.optional(marker(cid.prefix, for_grammar) + tags.tool_id(p.until(strip_ws(cid.suffix) or "{")))


def tag_call(analysis: TemplateAnalysis, function: Mapping[str, Any], for_grammar: bool = False, after_call: Parser | None = None) -> Parser:
    """One call in a tag format: its name (and id) markers, then its arguments,
    JSON or tagged (``after_call``: see :func:`read_tagged_args`)."""
    tools = analysis.tools
    fmt, fn, cid = tools.format, tools.function, tools.call_id
    name = function["name"]
    parts: list[Parser] = []
    if cid.pos is CallIdPosition.PRE_FUNC_NAME and cid.suffix:
        lead = p.eps() if strip_ws(cid.prefix) in (strip_ws(fmt.per_call_start), strip_ws(fmt.section_start)) else marker(cid.prefix, for_grammar)
        parts.append(p.optional(lead + tags.tool_id(p.until(strip_ws(cid.suffix))) + marker(cid.suffix, for_grammar)))
    parts.append(marker(fn.name_prefix, for_grammar) + tool_name(name, for_grammar, NAME_CHARS, p.negate(p.chars(NAME_CHARS, 1, 1))))
    if cid.pos is CallIdPosition.BETWEEN_FUNC_AND_ARGS and cid.prefix:
        parts.append(_call_id_between(analysis, for_grammar))
    parts.append(marker(fn.name_suffix, for_grammar))
    if fmt.mode is ToolFormat.TAG_WITH_JSON:
        # (parsing) arguments that are not JSON end at the call's closer, else
        # at the next call's opener or the end of the output
        close = strip_ws(fn.close) or strip_ws(fmt.per_call_end) or strip_ws(fmt.section_end)
        opener = strip_ws(fmt.per_call_start) or strip_ws(fn.name_prefix)
        follows = [close] if close else [opener] if markup(opener) else []
        parts.append(json_arguments(function, follows, for_grammar))
    else:
        parts.append(tagged_args(analysis, function, for_grammar, after_call))
    if cid.pos is CallIdPosition.POST_ARGS and cid.prefix:
        call_id = tags.tool_id(p.until(strip_ws(cid.suffix) or "\n"))
        parts.append(p.optional(p.space() + marker(cid.prefix, for_grammar) + call_id + marker(cid.suffix, for_grammar)))
    function_close = marker(fn.close, for_grammar) if fn.close else p.eps()
    call_ends = [e for e in call_closers(fmt) if markup(e) and e != strip_ws(fn.close)]
    if fn.close and not for_grammar and call_ends:  # (parsing) the function's close left out: the call's closer ends it
        function_close = p.choice(function_close, followed_by(call_ends, space=False))
    parts.append(p.space() + function_close)
    return p.seq(*parts)


def tagged_args(analysis: TemplateAnalysis, function: Mapping[str, Any], for_grammar: bool = False, after_call: Parser | None = None) -> Parser:
    """Tagged arguments.  For parsing, :func:`read_tagged_args`.
    For the grammar (``for_grammar``): the schema's required arguments present, the
    others at most once (:func:`argument_set`), no unknown names unless
    ``additionalProperties`` allows them, string enums as their values, other
    values as JSON constrained by their schema."""
    if not for_grammar:
        return read_tagged_args(analysis, function, after_call)
    a = analysis.tools.arguments
    params = parameters_of(function)
    properties = properties_of(params)

    def argument(name: str, arg_schema: Any) -> Parser:
        head = marker(a.name_prefix, True) + p.tag(TOOL_ARG_NAME, p.literal(name) if name else p.chars(NAME_CHARS, 1, UNBOUNDED))
        if is_string_schema(arg_schema):
            # the value keeps its leading whitespace after the last marker before it
            # (GLM writes "</arg_key>\n<arg_value>": the newline belongs to no value)
            suffix = marker(a.name_suffix, True) if strip_ws(a.value_prefix) else exact_marker(a.name_suffix, True)
            enum = arg_schema.get("enum") if isinstance(arg_schema, Mapping) else None
            if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
                value = p.space() + p.choice(*(p.literal(v) for v in sorted(enum, key=len, reverse=True))) + p.space()
            else:
                value = p.until(strip_ws(a.value_suffix) or strip_ws(a.name_prefix))
            body = suffix + exact_marker(a.value_prefix, True) + p.tag(TOOL_ARG_STRING, value)
        else:
            json_schema = arg_schema if isinstance(arg_schema, Mapping) else {}
            json_value = p.tag(TOOL_ARG_JSON, p.schema(p.json_value(), f"{function['name']}-{name or 'extra'}", json_schema))
            body = marker(a.name_suffix, True) + marker(a.value_prefix, True) + json_value + p.space()
        return p.tag(TOOL_ARG, head + body + marker(a.value_suffix, True)) + p.space()

    names = sorted(properties, key=lambda n: -len(str(n)))  # longest first, as for function names
    required = [str(n) for n in params.get("required") or [] if n in properties]
    optional = [str(n) for n in names if str(n) not in required]
    extra = params.get("additionalProperties", False)
    extra_arg = argument("", extra if isinstance(extra, Mapping) else {}) if extra not in (False, None) else None
    return argument_set(
        [argument(n, properties[n]) for n in required],
        [argument(n, properties[n]) for n in optional],
        extra_arg,
    )
