"""Capability probes and the comparison of controlled renders (probes, diffs, markers).

The names below are this layer's public API; each is imported on first use
(``analysis.probing.NAME``), so importing one of its modules stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis._lazy import lazy_getattr

if TYPE_CHECKING:
    from analysis.probing.adapting import render_adapted, tokens_written
    from analysis.probing.caps import Capabilities, chat_template_problem, detect_capabilities
    from analysis.probing.diff import segment_diff
    from analysis.probing.probes import Comparison, ComparisonFailed, Prober

_EXPORTS = {
    "Capabilities": "caps",
    "detect_capabilities": "caps",
    "render_adapted": "adapting",
    "tokens_written": "adapting",
    "Prober": "probes",
    "Comparison": "probes",
    "ComparisonFailed": "probes",
    "segment_diff": "diff",
    "chat_template_problem": "caps",
}
__all__ = [
    "Capabilities",
    "Comparison",
    "ComparisonFailed",
    "Prober",
    "chat_template_problem",
    "detect_capabilities",
    "render_adapted",
    "segment_diff",
    "tokens_written",
]
__getattr__ = lazy_getattr(__name__, _EXPORTS)
