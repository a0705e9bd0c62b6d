"""Markup-language calls with full-width markers: DeepSeek V3.2's DSML and GigaChat 3.5's GCML.

``<｜DSML｜function_calls>`` (GCML: ``<｜GCML｜tool_calls>``) then, per call,
``<｜DSML｜invoke name="NAME">`` with
``<｜DSML｜parameter name="ARG" string="true|false">VALUE</｜DSML｜parameter>``:
``string="true"`` values are text, ``string="false"`` values JSON.  One
handler per dialect, built by :func:`markup_handler`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from analysis.messages import tags
from analysis.messages.tags import (
    TOOL_ARG,
    TOOL_ARG_NAME,
    TOOL_ARG_RAW,
    TOOL_ARG_STRING,
)
from analysis.parsers.handlers.base import Handler, probe_call_render, with_tool_markers
from analysis.parsers.pieces import argument_set, output_end, repeated_calls, typed_value, whole_reading_first
from analysis.parsers.repair import section_closer, value_closer
from analysis.parsers.request import ChatRequest
from analysis.parsers.response_spec import call_field, marker
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import TemplateAnalysis, ToolFormat
from analysis.probing.markers import strip_ws
from analysis.probing.probes import FUN_A, Prober
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser


def markup_handler(name: str, dialect: str, section: str) -> Handler:
    """The handler for ``<｜DIALECT｜SECTION>`` calls."""
    bar = f"｜{dialect}｜"
    section_start, section_end = f"<{bar}{section}>", f"</{bar}{section}>"
    invoke, invoke_end = f'<{bar}invoke name="', f"</{bar}invoke>"
    param, param_end = f'<{bar}parameter name="', f"</{bar}parameter>"

    def detect(source: str, prober: Prober) -> str | None:
        """A probe call renders as ``<｜DIALECT｜invoke name="...">``."""
        if f'{invoke}{FUN_A}">' in probe_call_render(prober):
            return f'a probe call renders as {invoke}{FUN_A}"> with typed {param}..." string="..."> parameters'
        return None

    def section_of(analysis: TemplateAnalysis, source: str) -> tuple[str, str]:
        """The section markers the template writes, as the differential analysis
        found them (or its source spells them): the family renames them
        (DeepSeek V4 writes ``tool_calls`` where V3.2 wrote ``function_calls``)."""
        pattern = re.escape(f"<{bar}") + r"([A-Za-z_]+)>"
        named = re.fullmatch(pattern, strip_ws(analysis.tools.format.section_start)) or re.search(pattern, source)
        return (f"<{bar}{named[1]}>", f"</{bar}{named[1]}>") if named else (section_start, section_end)

    def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
        start, end = section_of(analysis, source)
        return with_tool_markers(
            analysis,
            ToolFormat.TAG_WITH_TAGGED,
            format={"section_start": start, "section_end": end},
            function={"name_prefix": invoke, "name_suffix": '">', "close": invoke_end},
            arguments={"name_prefix": param, "name_suffix": '" string="true|false">', "value_prefix": "", "value_suffix": param_end},
        )

    def call(
        function: Mapping[str, Any],
        for_grammar: bool,
        section_end: str = "",
        section_start: str = "",
        end: Parser | None = None,
        next_invoke: Parser | None = None,
    ) -> Parser:
        """One invoke.  When parsing, a string value ends at the first closer
        from which the whole output reads on, as far as ``next_invoke`` (the
        next invoke as it reads alone); without it, at the first from which
        its own invoke reads on (the reading alone)."""
        params = function.get("parameters") or {}
        properties = params.get("properties") or {}
        names = sorted(properties, key=lambda n: -len(str(n)))
        text = p.literal('true">') + p.tag(TOOL_ARG_STRING, p.until(param_end))
        head = p.literal(invoke) + tags.tool_name(p.literal(function["name"])) + p.literal('">') + p.space()
        if not for_grammar:  # any argument, in any order, each value text or JSON
            # exact reading: a value ends at the first closer from which the call reads on (the next
            # parameter, the invoke's or the section's end): a closer quoted in the value is its text
            follows = [p.literal(param), p.literal(invoke_end), *([p.literal(section_end)] if section_end else []), p.end()]
            after_param = p.literal(param_end) + p.space() + p.choice(*follows)
            # the whole output's reading first: the closers, then the next parameter or invoke, or the section's end and the output's
            after_section = p.choice(p.peek(p.literal(section_start)), end) if section_start and end is not None else (end or p.end())
            if section_start and next_invoke is not None:
                # (a deviation: text between two sections, holding none of the format's
                # markers, then the next section's invoke, whole)
                markers = (section_start, section_end, invoke, invoke_end, param, param_end)
                between = p.until(*markers) + p.literal(section_start) + p.space() + next_invoke
                after_section = p.choice(after_section, p.peek(between))
            section_tail = p.literal(section_end) + p.space() + after_section if section_end else after_section
            invoke_tail = p.literal(invoke_end) + p.space() + p.choice(p.peek(next_invoke), section_tail) if next_invoke is not None else None
            # a typed value that reads as no type is kept as written (the schema check reports it)
            typed_end = p.peek(p.space() + p.literal(param_end))

            def parameter(own: str | None) -> Parser:
                """A parameter named ``own`` (None: any name); a value's closer may be
                left out (a deviation) where another declared parameter's opener follows."""
                openers = [f'{param}{n}"' for n in names if n != own]
                next_param = p.peek(p.space() + p.choice(*(p.literal(o) for o in openers))) if openers and own is not None else None
                after = p.choice(after_param, next_param) if next_param is not None else after_param
                ends = (param_end, *openers) if next_param is not None else (param_end,)
                local = p.tag(TOOL_ARG_STRING, p.until(*ends, then=after))
                text = p.literal('true">') + local
                if invoke_tail is not None:  # (the next invoke, whole, as it reads alone: the look-ahead never nests)
                    whole = p.literal(param_end) + p.space() + p.choice(p.peek(p.literal(param)), invoke_tail)
                    if next_param is not None:
                        whole = p.choice(whole, next_param)
                    text = p.literal('true">') + whole_reading_first(ends, whole, local, lambda until: p.tag(TOOL_ARG_STRING, until))
                # a declared name (whole), else any (an argument the schema does not declare is kept: the schema check reports it)
                # (a name is complete, and shown, once its closing quote confirms it)
                name = (p.literal(own) if own is not None else p.chars('[^"]', 1, UNBOUNDED)) + p.peek(p.literal('"'))
                raw = p.tag(TOOL_ARG_RAW, p.until(param_end, then=after))
                typed = p.literal('false">') + p.space() + typed_value({}, f"{function['name']}-value", typed_end, raw)
                value_close = value_closer(p.literal(param_end)) if next_param is not None else p.literal(param_end)
                return p.tag(TOOL_ARG, p.literal(param) + p.tag(TOOL_ARG_NAME, name) + p.literal('" string="') + p.choice(text, typed) + value_close)

            # (declared names longest first)
            arg = p.choice(*(parameter(str(n)) for n in names), parameter(None))
            # an invoke whose end is left out ends at the section's end
            close = p.choice(p.literal(invoke_end), p.peek(p.literal(section_end))) if section_end else p.literal(invoke_end)
            return tags.tool(head + p.zero_or_more(arg + p.space()) + close)

        def argument(arg: str) -> Parser:  # string parameters as text, the others as JSON of their schema
            schema = properties[arg] if isinstance(properties[arg], Mapping) else {}
            is_text = schema.get("type") == "string" or (not schema.get("type") and "enum" not in schema)
            value = text if is_text else p.literal('false">') + p.space() + p.schema(p.json_value(), f"{function['name']}-{arg}", schema) + p.space()
            return p.literal(param) + p.literal(str(arg)) + p.literal('" string="') + value + p.literal(param_end) + p.space()

        required = [str(n) for n in params.get("required") or [] if n in properties]
        args = argument_set([argument(n) for n in required], [argument(str(n)) for n in names if str(n) not in required], None)
        return head + args + p.literal(invoke_end)

    def calls(analysis: TemplateAnalysis, request: ChatRequest, for_grammar: bool = False) -> tuple[Parser, str]:
        start, end = analysis.tools.format.section_start or section_start, analysis.tools.format.section_end or section_end
        functions = tool_functions(request)
        alone = p.choice(*(call(f, for_grammar) for f in functions)) if functions and not for_grammar else None
        one = p.choice(*(call(f, for_grammar, end, start, output_end(analysis), alone) for f in functions))
        # (parsing) the section's end left out before the turn's end marker
        close = section_closer(end, for_grammar)
        parser = p.literal(start) + p.space() + repeated_calls(one + p.space(), request, for_grammar) + close + p.space()
        if not for_grammar:  # calls in several sections
            parser = p.one_or_more(parser)
        return parser, start

    def response_fields(analysis: TemplateAnalysis) -> dict[str, Any]:
        """``invoke`` blocks in the section; each ``parameter`` a key and its
        value (``string="false"`` values are JSON: the tools' schema types them)."""
        start, end = analysis.tools.format.section_start or section_start, analysis.tools.format.section_end or section_end
        del start, end  # (the section's markers are left out: the content closes at them)
        opened = marker(invoke) + r'(?P<name>[^"]+)">'
        tag = marker(param) + r'(?P<key>[^"]+)" string="(?:true|false)">(?P<value>.*?)' + marker(param_end)
        return {"fields": {"tool_calls": call_field(opened, invoke_end, "xml-inline", content_args={"tag_pattern": tag})}}

    return Handler(name, detect, refine, calls=calls, response_fields=response_fields)


HANDLER = markup_handler("deepseek-v3.2-dsml", "DSML", "function_calls")
GCML_HANDLER = markup_handler("gigachat3.5-gcml", "GCML", "tool_calls")
