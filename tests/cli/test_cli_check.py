"""``autoparser check`` over a temporary zoo written by the tests."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES, SHARED, SHARED_KNOWN_FAILURES, ZOO, needs_shared

SMALL = PROJECT_TEMPLATES / "tests"


@pytest.fixture()
def zoo(tmp_path: Path) -> Path:
    root = tmp_path / "zoo"
    (root / "org" / "model").mkdir(parents=True)
    shutil.copy(SMALL / "tagged_xml.jinja", root / "coder.jinja")
    shutil.copy(SMALL / "picky.jinja", root / "picky.jinja")  # degraded
    (root / "broken.jinja").write_text("{% if x %}never closed")  # failed
    config = {"chat_template": (SMALL / "plain.jinja").read_text(), "eos_token": "<eos>"}
    (root / "org" / "model" / "tokenizer_config.json").write_text(json.dumps(config))
    (root / "notes.txt").write_text("not a template")
    return root


def test_check_table_statuses_and_exit_code(zoo: Path) -> None:
    result = run_cli("check", str(zoo), width=250)
    assert result.exit_code == 1, result.stderr
    out = result.stdout
    for text in ("coder.jinja", "TAG_WITH_TAGGED", "degraded: content", "failed:"):
        assert text in out, text
    assert "notes.txt" not in out
    assert "4 templates, 0 cases: 3 passed (1 degraded), 1 failed" in out


def test_check_json_and_junit(zoo: Path, tmp_path: Path) -> None:
    junit = tmp_path / "report.xml"
    result = run_cli("check", str(zoo), "--json", "--junit", str(junit))
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert (data["templates"], data["cases"], data["passed"], data["failed"]) == (4, 0, 3, 1)
    assert data["failures"] == [
        {"template": "broken.jinja", "check": "analysis", "reason": data["failures"][0]["reason"]}
    ] and "syntax error" in data["failures"][0]["reason"]
    suites = ET.parse(junit).getroot()
    cases = suites.findall(".//testcase")
    assert len(cases) == 4 and suites.get("failures") == "1"
    assert {c.get("name") for c in cases} == {"broken.jinja", "coder.jinja", "org/model/tokenizer_config.json", "picky.jinja"}
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["broken.jinja"]


def test_lock_update_match_and_mismatch(zoo: Path, tmp_path: Path) -> None:
    (zoo / "broken.jinja").unlink()
    lock = tmp_path / "autoparser.lock"
    assert run_cli("check", str(zoo), "--lock", str(lock), "--update-lock").exit_code == 0
    text = lock.read_text()
    assert json.loads(text)["templates"]["coder.jinja"]["tools"]["format"]["per_call_start"] == "<tool_call>\n"
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"  # stable form
    assert run_cli("check", str(zoo), "--lock", str(lock)).exit_code == 0
    coder = zoo / "coder.jinja"
    coder.write_text(coder.read_text().replace("</parameter>", "</param>"))
    result = run_cli("check", str(zoo), "--lock", str(lock))
    assert result.exit_code == 3  # drift: not a failure, a status of its own
    assert "0 failed, 1 drifted from the lock" in result.stdout
    assert "coder.jinja: tools.arguments.value_suffix '</parameter>\\n' -> '</param>\\n'" in result.stdout
    assert "hint: --update-lock takes the new readings into the lock file" in result.stderr
    (zoo / "picky.jinja").unlink()
    result = run_cli("check", str(zoo), "--lock", str(lock), "--json")
    data = json.loads(result.stdout)
    reasons = {d["template"]: d["differences"] for d in data["drifts"]}
    assert "not checked" in reasons["picky.jinja"] and "value_suffix" in reasons["coder.jinja"]
    assert (data["failed"], data["drifted"], data["failures"], result.exit_code) == (0, 2, [], 3)
    (zoo / "broken.jinja").write_text("{% for %}")  # a failure beside the drift: the failure's status
    result = run_cli("check", str(zoo), "--lock", str(lock), "--junit", str(tmp_path / "check.xml"))
    assert result.exit_code == 1 and "1 failed, 2 drifted from the lock" in result.stdout
    assert 'failures="3"' in (tmp_path / "check.xml").read_text()  # (JUnit knows no drift: a failure there)


def _case(case_id: str, output: str, expected: dict, **request: object) -> str:
    tools = [{"type": "function", "function": {"name": "get", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]
    req = {"messages": [{"role": "user", "content": "Hi"}], "tools": tools, **request}
    return json.dumps({"id": case_id, "template": "tagged_xml.jinja", "request": req, "output": output, "partial": False, "expected": expected})


def test_cases_pass_and_fail_with_a_readable_diff(tmp_path: Path) -> None:
    shutil.copy(SMALL / "tagged_xml.jinja", tmp_path / "tagged_xml.jinja")
    call = "<tool_call>\n<function=get>\n<parameter=q>\nx\n</parameter>\n</function>\n</tool_call>"
    good = _case("good", call, {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "get", "arguments": "{\"q\": \"x\"}"}}]})
    bad = _case("bad", "Hello there", {"role": "assistant", "content": "Goodbye"})
    cases = tmp_path / "cases.jsonl"
    cases.write_text(good + "\n" + bad + "\n")
    result = run_cli("check", "--cases", str(cases))
    assert result.exit_code == 1
    assert "bad — parse" in result.stdout
    assert '-  "content": "Goodbye"' in result.stdout and '+  "content": "Hello there"' in result.stdout
    data = json.loads(run_cli("check", "--cases", str(cases), "--json").stdout)
    assert (data["templates"], data["cases"], data["passed"], data["failed"]) == (0, 2, 1, 1)
    assert data["failures"][0]["id"] == "bad" and data["failures"][0]["check"] == "parse"
    cases.write_text(good + "\n")
    assert run_cli("check", "--cases", str(cases), "--templates", str(tmp_path)).exit_code == 0


def test_bad_case_files_name_the_line(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"template": "t.jinja", "request": {}, "output": "", "expected": {}}\n{oops\n')
    assert ":2: invalid JSON" in assert_clean_error(run_cli("check", "--cases", str(cases)))
    assert_clean_error(run_cli("check", "--cases", str(tmp_path / "missing.jsonl")))
    assert_clean_error(run_cli("check", str(tmp_path / "nothing-here")))
    assert_clean_error(run_cli("check", "--update-lock"))


@pytest.mark.slow
@needs_shared
def test_check_on_the_shared_cases_agrees_with_the_conformance_test() -> None:
    from tests.analysis.checks.test_conformance import KNOWN_FAILURES

    # The conformance test runs all 348 cases; here the command runs the known
    # failures and the first case of every other template (the same runner,
    # through the CLI's selection, known-failures list and counts).
    known = SHARED_KNOWN_FAILURES
    cases = [json.loads(line) for line in (SHARED / "conformance" / "cases.jsonl").read_text().splitlines() if line.strip()]
    firsts = {c["template"]: c["id"] for c in reversed(cases)}
    chosen = sorted(set(KNOWN_FAILURES) | set(firsts.values()))
    result = run_cli(
        "check", "--cases", str(SHARED / "conformance" / "cases.jsonl"), "--templates", str(ZOO), "--json",
        "--known-failures", str(known), *[arg for case_id in chosen for arg in ("--case", case_id)],
    )
    data = json.loads(result.stdout)
    assert data["cases"] == len(chosen) > 50 and data["templates"] == 0
    assert {f["id"] for f in data["failures"]} == set(KNOWN_FAILURES)
    assert (data["passed"], data["failed"], data["known_failures"], data["fixed"]) == (len(chosen) - len(KNOWN_FAILURES), 0, len(KNOWN_FAILURES), [])
    assert result.exit_code == 0


def test_round_trip_column_and_opt_out(zoo: Path) -> None:
    """Each template's probes show as a count; --no-round-trip skips them."""
    result = run_cli("check", str(zoo / "coder.jinja"), width=250)
    assert result.exit_code == 0 and "7 ok" in result.stdout  # 4 call probes, text and call, a reply, reasoning
    result = run_cli("check", str(zoo / "coder.jinja"), "--no-round-trip", width=250)
    assert result.exit_code == 0 and "7 ok" not in result.stdout and "—" in result.stdout


def test_a_failed_round_trip_fails_the_template(zoo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wiring from a failed probe to the exit status, table and reports (the
    probes' own failure detection is tested in test_round_trip.py)."""
    from analysis.checks import checking
    from analysis.checks.round_trip import ProbeStatus, RoundTrip

    monkeypatch.setattr(checking, "round_trips", lambda parser: (RoundTrip("one call", ProbeStatus.FAILED, "the template writes '<x>'; parsed: {}"), RoundTrip("reply", ProbeStatus.OK)))
    result = run_cli("check", str(zoo / "coder.jinja"), width=250)
    assert result.exit_code == 1 and "failed: one call" in result.stdout
    data = json.loads(run_cli("check", str(zoo / "coder.jinja"), "--json").stdout)
    assert data["failures"] == [{"template": "coder.jinja", "check": "round-trip", "reason": "round trip (one call): the template writes '<x>'; parsed: {}"}]


def test_check_says_which_support_no_probe_read_back() -> None:
    """A pass that ran only the reply probe says so: per template (the table's
    details and --json) and counted in the summary line."""
    plain = PROJECT_TEMPLATES / "tests" / "plain.jinja"
    full = PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"
    result = run_cli("check", str(plain), str(full), "--json", "-j", "1")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    by_name = {r["template"]: r for r in data["results"]}
    assert by_name["plain.jinja"]["not_probed"] == {
        "tool calls": "the analysis finds no tool-call format",
        "reasoning": "the analysis finds no reasoning",
    }
    assert by_name["tagged_xml.jinja"]["not_probed"] == {}
    assert data["not_probed"] == {"tool calls": 1, "reasoning": 1}
    shown = run_cli("check", str(plain), str(full), "-j", "1", width=200)
    assert "not probed: tool calls (the analysis finds no tool-call format)" in shown.stdout
    assert shown.stdout.rstrip().endswith("2 passed, 0 failed; not probed: tool calls in 1, reasoning in 1")
