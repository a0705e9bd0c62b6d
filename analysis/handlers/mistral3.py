"""Ministral / Magistral 3 and Devstral: ``[THINK]...[/THINK]`` reasoning (when
the template has it) and ``[TOOL_CALLS]name[ARGS]{json}`` calls, one marker per call."""

from __future__ import annotations

from dataclasses import replace

from analysis.handlers import Handler
from analysis.probes import FUN_A, REASONING_TEXT, Prober, assistant, conversation, tool_call
from analysis.result import CallIdAnalysis, ContentMode, ReasoningAnalysis, ReasoningMode, TemplateAnalysis, ToolFormat


def detect(source: str, prober: Prober) -> str | None:
    """Calls render as ``[TOOL_CALLS]name[ARGS]`` and reasoning as ``[THINK]...[/THINK]``."""
    call = prober.render_shaped(conversation(assistant(content="", calls=[tool_call()]))) or ""
    thought = prober.render_shaped(conversation(assistant(reasoning=REASONING_TEXT), tools=False)) or ""
    if f"[TOOL_CALLS]{FUN_A}[ARGS]" not in call:
        return None
    if f"[THINK]{REASONING_TEXT}[/THINK]" in thought or "[THINK]" in source:
        return f"a probe call renders as [TOOL_CALLS]{FUN_A}[ARGS] and reasoning as [THINK]...[/THINK]"
    return f"a probe call renders as [TOOL_CALLS]{FUN_A}[ARGS] (no call id, no reasoning: Devstral)"


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    tools = analysis.tools
    thinks = "[THINK]" in source
    return replace(
        analysis,
        reasoning=ReasoningAnalysis(ReasoningMode.TAG_BASED, "[THINK]", "[/THINK]") if thinks else analysis.reasoning,
        content=replace(analysis.content, mode=ContentMode.PLAIN, start="", end=""),
        tools=replace(
            tools,
            format=replace(tools.format, mode=ToolFormat.TAG_WITH_JSON, per_call_start="[TOOL_CALLS]", per_call_end="", section_start="", section_end=""),
            function=replace(tools.function, name_prefix="", name_suffix="[ARGS]", close=""),
            call_id=CallIdAnalysis(),
        ),
    )


HANDLER = Handler("ministral-3", detect, refine)
