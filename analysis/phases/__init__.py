"""The analysis phases (reasoning, content, tool calls, workarounds) and their result types.

The names below are this layer's public API; each is imported on first use
(``analysis.phases.NAME``), so importing one of its modules stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis._lazy import lazy_getattr

if TYPE_CHECKING:
    from analysis.phases.content import analyze_content
    from analysis.phases.phase_log import PhaseLog
    from analysis.phases.reasoning import analyze_reasoning
    from analysis.phases.result import (
        CallIdPosition,
        ContentAnalysis,
        Degradation,
        Evidence,
        ReasoningAnalysis,
        TemplateAnalysis,
        ToolsAnalysis,
    )
    from analysis.phases.tools import analyze_tools
    from analysis.phases.workarounds import apply_workarounds

_EXPORTS = {
    "TemplateAnalysis": "result",
    "ReasoningAnalysis": "result",
    "ContentAnalysis": "result",
    "ToolsAnalysis": "result",
    "Evidence": "result",
    "Degradation": "result",
    "PhaseLog": "phase_log",
    "analyze_reasoning": "reasoning",
    "analyze_content": "content",
    "analyze_tools": "tools",
    "apply_workarounds": "workarounds",
    "CallIdPosition": "result",
}
__all__ = [
    "CallIdPosition",
    "ContentAnalysis",
    "Degradation",
    "Evidence",
    "PhaseLog",
    "ReasoningAnalysis",
    "TemplateAnalysis",
    "ToolsAnalysis",
    "analyze_content",
    "analyze_reasoning",
    "analyze_tools",
    "apply_workarounds",
]
__getattr__ = lazy_getattr(__name__, _EXPORTS)
