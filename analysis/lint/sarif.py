"""Lint reports as SARIF 2.1.0, the format code scanning reads (GitHub's
upload-sarif action among others): one run, the rules as the tool's, each
finding a result at its template line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analysis.lint.findings import Finding, LintReport, Severity
from analysis.lint.linting import RULES

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


@dataclass(frozen=True)
class Artifact:
    """Where a report's template is: its URI (a path relative to the
    repository root, with ``/``), and whether the template's lines are the
    file's (a ``.jinja`` file; not a template inside a tokenizer_config.json,
    whose results are placed on the line its string starts on)."""

    uri: str
    lines_are_the_files: bool = True
    #: where the lines are not the file's (a template in a JSON string): the
    #: file line its text starts on, where the results are placed
    starts_at: int | None = None


def _rule(index: int) -> dict[str, Any]:
    rule = RULES[index]
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.summary},
        "help": {"text": f"autoparser's docs/lint.md, the rule {rule.id}"},
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
    }


def _result(finding: Finding, report: LintReport, artifact: Artifact, rule_index: dict[str, int]) -> dict[str, Any]:
    line = finding.where
    message = finding.message
    location: dict[str, Any] = {"artifactLocation": {"uri": artifact.uri}}
    if line is not None and artifact.lines_are_the_files:
        region: dict[str, Any] = {"startLine": line}
        if finding.column is not None:
            region["startColumn"] = finding.column
        location["region"] = region
    elif line is not None:
        message = f"{message} (template line {line})"
        if artifact.starts_at is not None:
            location["region"] = {"startLine": artifact.starts_at}
    properties: dict[str, Any] = {"template": report.template_name, "engines": list(finding.engines or ())}
    if line is not None:
        properties["templateLine"] = line
    return {
        "ruleId": finding.rule,
        "ruleIndex": rule_index[finding.rule],
        "level": _LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": location}],
        "properties": properties,
    }


def sarif_log(reports: Sequence[tuple[LintReport, Artifact]], version: str) -> str:
    """The reports, each with where its template is, as one SARIF 2.1.0 log
    (JSON text); ``version`` is the tool's."""
    rule_index = {rule.id: i for i, rule in enumerate(RULES)}
    results = [_result(f, report, artifact, rule_index) for report, artifact in reports for f in report.findings]
    artifacts = list(dict.fromkeys(artifact.uri for _, artifact in reports))
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "autoparser lint",
                        "version": version,
                        "rules": [_rule(i) for i in range(len(RULES))],
                    }
                },
                "artifacts": [{"location": {"uri": uri}} for uri in artifacts],
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
