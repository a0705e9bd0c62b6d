"""DeepSeek V3.2: DSML calls with full-width markers.

``<｜DSML｜function_calls>`` then, per call, ``<｜DSML｜invoke name="NAME">`` with
``<｜DSML｜parameter name="ARG" string="true|false">VALUE</｜DSML｜parameter>``:
``string="true"`` values are text, ``string="false"`` values JSON.
"""

from __future__ import annotations

from typing import Any, Mapping

from analysis.handlers import Handler, probe_call_render, with_tool_markers
from analysis.parser_builder import tool_functions
from analysis.probes import FUN_A, Prober
from analysis.request import ChatRequest
from analysis.result import TemplateAnalysis, ToolFormat
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser

BAR = "｜DSML｜"
SECTION_START = f"<{BAR}function_calls>"
SECTION_END = f"</{BAR}function_calls>"
INVOKE = f'<{BAR}invoke name="'
INVOKE_END = f"</{BAR}invoke>"
PARAM = f'<{BAR}parameter name="'
PARAM_END = f"</{BAR}parameter>"


def detect(source: str, prober: Prober) -> str | None:
    """A probe call renders as ``<｜DSML｜invoke name="...">``."""
    if f'{INVOKE}{FUN_A}">' in probe_call_render(prober):
        return f'a probe call renders as {INVOKE}{FUN_A}"> with typed {PARAM}..." string="..."> parameters'
    return None


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    return with_tool_markers(
        analysis,
        ToolFormat.TAG_WITH_TAGGED,
        format={"section_start": SECTION_START, "section_end": SECTION_END},
        function={"name_prefix": INVOKE, "name_suffix": '">', "close": INVOKE_END},
        arguments={"name_prefix": PARAM, "name_suffix": '" string="true|false">', "value_prefix": "", "value_suffix": PARAM_END},
    )


_PY = p.choice(p.literal("True"), p.literal("False"), p.literal("None"))


def _call(function: Mapping[str, Any]) -> Parser:
    properties = (function.get("parameters") or {}).get("properties") or {}
    names = sorted(properties, key=lambda n: -len(str(n)))
    name = p.choice(*(p.literal(str(n)) for n in names)) if names else p.chars('[^"]', 1, UNBOUNDED)
    text = p.literal('true">') + p.tag("tool-arg-string", p.until(PARAM_END))
    typed = p.literal('false">') + p.space() + p.tag("tool-arg-json", p.choice(p.json_value(), _PY)) + p.space()
    arg = p.tag("tool-arg", p.literal(PARAM) + p.tag("tool-arg-name", name) + p.literal('" string="') + p.choice(text, typed) + p.literal(PARAM_END))
    head = p.literal(INVOKE) + p.tag("tool-name", p.literal(function["name"])) + p.literal('">') + p.space()
    return p.tag("tool", head + p.zero_or_more(arg + p.space()) + p.literal(INVOKE_END))


def calls(analysis: TemplateAnalysis, request: ChatRequest) -> tuple[Parser, str]:
    call = p.choice(*(_call(f) for f in tool_functions(request)))
    parser = p.literal(SECTION_START) + p.space() + p.one_or_more(call + p.space()) + p.literal(SECTION_END) + p.space()
    return parser, SECTION_START


HANDLER = Handler("deepseek-v3.2-dsml", detect, refine, calls=calls)
