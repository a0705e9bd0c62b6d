"""Ministral / Magistral 3 and Devstral: ``[THINK]...[/THINK]`` reasoning (when
the template has it) and ``[TOOL_CALLS]name[ARGS]{json}`` calls, one marker per call."""

from __future__ import annotations

from dataclasses import replace

from analysis.parsers.handlers.base import Handler, probe_call_render, with_tool_markers
from analysis.parsers.response_spec import generic_calls
from analysis.phases.result import (
    CallIdAnalysis,
    ContentMode,
    ReasoningAnalysis,
    ReasoningMode,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.probes import FUN_A, REASONING_TEXT, Prober, assistant, conversation


def detect(source: str, prober: Prober) -> str | None:
    """Calls render as ``[TOOL_CALLS]name[ARGS]`` and reasoning as ``[THINK]...[/THINK]``."""
    call = probe_call_render(prober)
    thought = prober.render_shaped(conversation(assistant(reasoning=REASONING_TEXT), tools=False)) or ""
    if f"[TOOL_CALLS]{FUN_A}[ARGS]" not in call:
        return None
    if f"[THINK]{REASONING_TEXT}[/THINK]" in thought or "[THINK]" in source:
        return f"a probe call renders as [TOOL_CALLS]{FUN_A}[ARGS] and reasoning as [THINK]...[/THINK]"
    return f"a probe call renders as [TOOL_CALLS]{FUN_A}[ARGS] (no call id, no reasoning: Devstral)"


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    thinks = "[THINK]" in source
    refined = with_tool_markers(
        analysis,
        ToolFormat.TAG_WITH_JSON,
        format={"per_call_start": "[TOOL_CALLS]"},
        function={"name_prefix": "", "name_suffix": "[ARGS]", "close": ""},
        reasoning=ReasoningAnalysis(ReasoningMode.TAG_BASED, "[THINK]", "[/THINK]") if thinks else analysis.reasoning,
        content=replace(analysis.content, mode=ContentMode.PLAIN, start="", end=""),
    )
    return replace(refined, tools=replace(refined.tools, call_id=CallIdAnalysis()))


HANDLER = Handler("ministral-3", detect, refine, response_fields=lambda analysis: {"fields": {"tool_calls": generic_calls(analysis)}})
