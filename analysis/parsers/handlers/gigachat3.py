"""GigaChat 3: a call is its own turn, ``function call<|role_sep|>\n{"name": ...,
"arguments": {...}}``.  JSON-native, one call per turn: the differential markers
(the turn header as section start) feed the shared JSON call parser.  (GigaChat
3.1 writes ``<|function_call|>{...}`` inline and needs no handler.)"""

from __future__ import annotations

from dataclasses import replace

from analysis.parsers.handlers.base import Handler, probe_call_render
from analysis.parsers.response_spec import generic_calls
from analysis.phases.result import TemplateAnalysis, ToolFormat
from analysis.probing.probes import FUN_A, Prober

TURN = "function call<|role_sep|>"


def detect(source: str, prober: Prober) -> str | None:
    """A probe call renders as its own ``function call<|role_sep|>`` turn."""
    if f'{TURN}\n{{"name": "{FUN_A}"' in probe_call_render(prober):
        return f'a probe call renders as its own turn: {TURN}\n{{"name": "{FUN_A}", ...}}'
    return None


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    fmt = analysis.tools.format
    if fmt.mode is ToolFormat.JSON_NATIVE:
        return analysis
    return replace(analysis, tools=replace(analysis.tools, format=replace(fmt, mode=ToolFormat.JSON_NATIVE)))


HANDLER = Handler("gigachat3", detect, refine, response_fields=lambda analysis: {"fields": {"tool_calls": generic_calls(analysis)}})
