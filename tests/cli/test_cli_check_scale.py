"""``check`` in CI: unique lock keys, nothing-found errors, full reasons, per-template
results, known failures, case selection, processes and shards."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from analysis.checks.discovery import shard
from analysis.errors import InputError
from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES

#: the zoo-wide and fuzzing runs: left out of the fast loop (pytest -m 'not slow')
pytestmark = pytest.mark.slow

SMALL = PROJECT_TEMPLATES / "tests"


@pytest.fixture()
def twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two folders holding templates with the same file name."""
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
        shutil.copy(SMALL / "tagged_xml.jinja", folder / "coder.jinja")
    return a, b


def test_same_file_name_in_two_folders_has_two_lock_entries(twins: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = twins
    lock = tmp_path / "x.lock"
    assert run_cli("check", str(a), str(b), "--lock", str(lock), "--update-lock", "--jobs", "1").exit_code == 0
    assert sorted(json.loads(lock.read_text())["templates"]) == ["a/coder.jinja", "b/coder.jinja"]
    coder = b / "coder.jinja"
    coder.write_text(coder.read_text().replace("</parameter>", "</param>"))
    result = run_cli("check", str(a), str(b), "--lock", str(lock), "--jobs", "1", width=200)
    assert result.exit_code == 3  # (drifted, nothing failed)
    assert "b/coder.jinja: tools.arguments.value_suffix" in result.stdout
    assert "a/coder.jinja: tools" not in result.stdout
    assert "ok, drifted" in result.stdout  # the status column says so


def test_nothing_to_check_is_bad_input(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no templates found" in assert_clean_error(run_cli("check", str(empty)))
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    assert "not a template file" in assert_clean_error(run_cli("check", str(notes)))


def test_full_reasons_under_the_table_at_80_columns(tmp_path: Path) -> None:
    message = "this template refuses every conversation because the reason is long " * 3
    (tmp_path / "t.jinja").write_text("{{ raise_exception('" + message.strip() + "') }}")
    result = run_cli("check", str(tmp_path), width=80)
    assert result.exit_code == 1
    assert message.strip() in result.stdout  # on one line, never cut


def test_json_has_per_template_results_and_junit_has_times(tmp_path: Path) -> None:
    shutil.copy(SMALL / "tagged_xml.jinja", tmp_path / "coder.jinja")
    shutil.copy(SMALL / "picky.jinja", tmp_path / "picky.jinja")
    junit = tmp_path / "r.xml"
    result = run_cli("check", str(tmp_path), "--json", "--junit", str(junit))
    report = json.loads(result.stdout)
    results = {r["template"]: r for r in report["results"]}
    assert results["coder.jinja"]["status"] == "ok"
    assert results["picky.jinja"]["status"] == "degraded" and results["picky.jinja"]["degraded"]
    assert report["degraded"] == 1
    assert results["coder.jinja"]["seconds"] > 0
    probes = {t["probe"]: t["status"] for t in results["coder.jinja"]["round_trips"]}
    assert probes and set(probes.values()) <= {"ok", "skipped"}
    skipped = [t for t in results["coder.jinja"]["round_trips"] if t["status"] == "skipped"]
    assert all(t["detail"] for t in skipped)  # each skip says why
    tree = ET.parse(junit).getroot()
    cases = {c.get("name"): c for c in tree.iter("testcase")}
    assert float(cases["coder.jinja"].get("time")) > 0
    assert "status: degraded" in cases["picky.jinja"].find("system-out").text


def _cases_file(tmp_path: Path) -> Path:
    shutil.copy(SMALL / "tagged_xml.jinja", tmp_path / "coder.jinja")
    good = {"id": "good", "template": "coder.jinja", "request": {"messages": [{"role": "user", "content": "hi"}]},
            "output": "Hello there", "expected": {"content": "Hello there"}}
    bad = dict(good, id="bad", expected={"content": "something else"})
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in (good, bad)) + "\n")
    return path


def test_known_failures_pass_and_fixed_ones_are_reported(tmp_path: Path) -> None:
    cases = _cases_file(tmp_path)
    assert run_cli("check", "--cases", str(cases)).exit_code == 1
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"bad": "the reference disagrees", "good": "was broken once"}))
    result = run_cli("check", "--cases", str(cases), "--known-failures", str(known), width=200)
    assert result.exit_code == 0, result.stdout
    assert "known: the reference disagrees" in result.stdout
    assert "good: listed in --known-failures but passes now" in result.stdout
    report = json.loads(run_cli("check", "--cases", str(cases), "--known-failures", str(known), "--json").stdout)
    assert (report["passed"], report["failed"], report["known_failures"], report["fixed"]) == (1, 0, 1, ["good"])
    known.write_text("[1]")
    assert "known failures must be a JSON object" in assert_clean_error(run_cli("check", "--cases", str(cases), "--known-failures", str(known)))


def test_select_cases_by_id_and_pattern(tmp_path: Path) -> None:
    cases = _cases_file(tmp_path)
    result = run_cli("check", "--cases", str(cases), "--case", "good", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["cases"] == 1
    result = run_cli("check", "--cases", str(cases), "-k", "ba", "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["cases"] == 1
    assert "no case with id nope" in assert_clean_error(run_cli("check", "--cases", str(cases), "--case", "nope"))


def test_jobs_give_the_same_results_and_shards_partition(tmp_path: Path) -> None:
    small = sorted(SMALL.glob("*.jinja"))
    for i, name in enumerate(small):
        shutil.copy(name, tmp_path / f"{i}-{name.name}")
    one = json.loads(run_cli("check", str(tmp_path), "--json", "--jobs", "1").stdout)
    two = json.loads(run_cli("check", str(tmp_path), "--json", "--jobs", "2").stdout)

    def strip(report: dict) -> list:
        return [{k: v for k, v in r.items() if k != "seconds"} for r in report["results"]]

    assert strip(one) == strip(two) and len(one["results"]) == len(small) >= 7
    names = [set(r["template"] for r in json.loads(run_cli("check", str(tmp_path), "--json", "--shard", f"{i}/3").stdout)["results"]) for i in (1, 2, 3)]
    assert set().union(*names) == {r["template"] for r in one["results"]}
    assert sum(len(n) for n in names) == len(small)
    assert "--shard '4/3'" in assert_clean_error(run_cli("check", str(tmp_path), "--shard", "4/3"))


def test_shard_arithmetic() -> None:
    paths = [Path(f"{i:02d}.jinja") for i in range(10)]
    assert shard(paths, "1/3") == [paths[0], paths[3], paths[6], paths[9]]
    assert shard(paths, "3/3") == [paths[2], paths[5], paths[8]]
    with pytest.raises(InputError):
        shard(paths, "0/2")
    with pytest.raises(InputError):
        shard(paths, "x")


def test_junit_marks_known_failures_skipped(tmp_path: Path) -> None:
    cases = _cases_file(tmp_path)
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"bad": "the reference disagrees"}))
    junit = tmp_path / "r.xml"
    assert run_cli("check", "--cases", str(cases), "--known-failures", str(known), "--junit", str(junit)).exit_code == 0
    cases_by_name = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    skipped = cases_by_name["bad"].find("skipped")
    assert skipped is not None and "the reference disagrees" in skipped.get("message")
    assert cases_by_name["good"].find("skipped") is None and cases_by_name["good"].find("failure") is None


def test_table_mode_names_skipped_probes_with_why(tmp_path: Path) -> None:
    shutil.copy(SMALL / "json_array_ids.jinja", tmp_path / "ids.jinja")  # no text in a calling turn
    shutil.copy(SMALL / "thinking_switch.jinja", tmp_path / "switch.jinja")  # the history drops reasoning
    result = run_cli("check", str(tmp_path), width=80)
    report = json.loads(run_cli("check", str(tmp_path), "--json").stdout)
    skipped = [(r["template"], t["probe"], t["detail"]) for r in report["results"] for t in r["round_trips"] if t["status"] == "skipped"]
    assert skipped, "the fixture should skip some probe"
    for template, probe, detail in skipped:
        assert f"round trip {probe} skipped: {detail}" in result.stdout, (template, probe)


def test_cases_whose_templates_are_elsewhere_are_one_error(tmp_path: Path) -> None:
    cases = _cases_file(tmp_path)
    elsewhere = tmp_path / "cases"
    elsewhere.mkdir()
    moved = elsewhere / "cases.jsonl"
    cases.rename(moved)
    err = assert_clean_error(run_cli("check", "--cases", str(moved)))
    assert "1 templates the cases name are not in" in err and "coder.jinja" in err and "give --templates DIR" in err
    assert run_cli("check", "--cases", str(moved), "--templates", str(tmp_path), "-k", "good").exit_code == 0
