"""Checks of templates and case files: expected-parse cases, round-trip probes, and the orchestration of `check`.

The names below are this layer's public API; each is imported on first use
(``analysis.checks.NAME``), so importing one of its modules stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis._lazy import lazy_getattr

if TYPE_CHECKING:
    from analysis.checks.checking import CheckStatus, TemplateCheck, check_templates
    from analysis.checks.conformance import CaseRunner, load_cases
    from analysis.checks.hf_compare import Agreement, ProbeReading, export_checked
    from analysis.checks.report import CheckReport
    from analysis.checks.round_trip import ProbeStatus, RoundTrip, round_trips
    from analysis.checks.run import CheckOptions, CheckRun, run_check

_EXPORTS = {
    "CaseRunner": "conformance",
    "load_cases": "conformance",
    "round_trips": "round_trip",
    "RoundTrip": "round_trip",
    "check_templates": "checking",
    "CheckStatus": "checking",
    "TemplateCheck": "checking",
    "CheckReport": "report",
    "CheckOptions": "run",
    "CheckRun": "run",
    "run_check": "run",
    "Agreement": "hf_compare",
    "ProbeReading": "hf_compare",
    "export_checked": "hf_compare",
    "ProbeStatus": "round_trip",
}
__all__ = [
    "Agreement",
    "CaseRunner",
    "CheckOptions",
    "CheckReport",
    "CheckRun",
    "CheckStatus",
    "ProbeReading",
    "ProbeStatus",
    "RoundTrip",
    "TemplateCheck",
    "check_templates",
    "export_checked",
    "load_cases",
    "round_trips",
    "run_check",
]
__getattr__ = lazy_getattr(__name__, _EXPORTS)
