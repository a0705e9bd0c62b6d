"""``check`` as a library call: options in, a report with its verdict out (no printing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.checks import CheckOptions, run_check
from analysis.errors import InputError
from tests.conftest import PROJECT_TEMPLATES


def test_run_check_returns_the_report_and_each_check(capsys: pytest.CaptureFixture[str]) -> None:
    run = run_check(CheckOptions(paths=(PROJECT_TEMPLATES / "tests" / "plain.jinja", PROJECT_TEMPLATES / "demo.jinja"), jobs=1))
    assert run.report.templates == 2 and run.report.failed == 0 and run.report.passed == 2
    assert [c.name for c in run.checks] == ["demo.jinja", "plain.jinja"]
    assert capsys.readouterr() == ("", "")  # the library prints nothing


def test_run_check_writes_then_compares_a_lock(tmp_path: Path) -> None:
    lock = tmp_path / "autoparser.lock"
    paths = (PROJECT_TEMPLATES / "demo.jinja",)
    run_check(CheckOptions(paths=paths, lock=lock, update_lock=True, jobs=1))
    assert lock.is_file()
    again = run_check(CheckOptions(paths=paths, lock=lock, jobs=1))
    assert again.drifted == {} and again.report.failed == 0


def test_run_check_names_bad_options() -> None:
    with pytest.raises(InputError, match="`update_lock` needs `lock`") as caught:  # (the library's names; the CLI's: tests/test_core_messages.py)
        run_check(CheckOptions(update_lock=True))
    assert caught.value.settings == ("update_lock", "lock")


def test_check_options_are_given_by_name() -> None:
    """Thirteen settings in a row are easy to shift by one: each is named."""
    with pytest.raises(TypeError):
        CheckOptions((PROJECT_TEMPLATES / "demo.jinja",))  # type: ignore[misc]
    assert CheckOptions(jobs=1, lint=True).lint


def test_a_drift_from_the_lock_is_not_a_failure(tmp_path: Path) -> None:
    lock = tmp_path / "autoparser.lock"
    template = tmp_path / "coder.jinja"
    template.write_text((PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja").read_text())
    run_check(CheckOptions(paths=(template,), lock=lock, update_lock=True, jobs=1))
    template.write_text(template.read_text().replace("</parameter>", "</param>"))
    run = run_check(CheckOptions(paths=(template,), lock=lock, jobs=1))
    assert (run.report.failed, run.report.drifted, run.report.passed) == (0, 1, 0)
    assert "value_suffix" in run.report.drifts[0][1] and run.report.to_json()["failures"] == []
    assert run.report.summary_line().endswith("0 passed, 0 failed, 1 drifted from the lock")
