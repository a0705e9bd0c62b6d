"""Checks of templates and case files: expected-parse cases, round-trip probes, and the orchestration of `check`.

The names below are this layer's public API; each is imported on first use
(``analysis.checks.NAME``), so importing one of its modules stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis._lazy import lazy_getattr

if TYPE_CHECKING:
    from analysis.checks.checking import CheckStatus, TemplateCheck, check_templates
    from analysis.checks.conformance import CaseRunner, load_cases
    from analysis.checks.report import CheckReport
    from analysis.checks.round_trip import RoundTrip, round_trips
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
}
__all__ = ["CaseRunner", "CheckOptions", "CheckReport", "CheckRun", "CheckStatus", "RoundTrip", "TemplateCheck", "check_templates", "load_cases", "round_trips", "run_check"]
__getattr__ = lazy_getattr(__name__, _EXPORTS)
