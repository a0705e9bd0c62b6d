"""Lint: template defects that break serving, training and multi-turn use,
found by rendering conversations (never by reading the template's source).

The names below are this layer's public API."""

from __future__ import annotations

from analysis.lint.engines import DEFAULT_ENGINES, ENGINE_NAMES, ENGINES, Engine, check_engines
from analysis.lint.findings import Evidence, Finding, LintReport, Severity
from analysis.lint.linting import RULE_IDS, RULES, Rule, check_rule_ids, lint_template
from analysis.lint.sarif import Artifact, sarif_log
from analysis.lint.switches import Switch, reasoning_switches

__all__ = [
    "DEFAULT_ENGINES",
    "ENGINES",
    "ENGINE_NAMES",
    "RULES",
    "RULE_IDS",
    "Artifact",
    "Engine",
    "Evidence",
    "Finding",
    "LintReport",
    "Rule",
    "Severity",
    "Switch",
    "check_engines",
    "check_rule_ids",
    "lint_template",
    "reasoning_switches",
    "sarif_log",
]
