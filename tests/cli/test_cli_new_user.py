"""What a new user hit on a fresh clone (file modes, checks that pass when they
should not, conflicting options, piped output, errors that point wrong, render
that shows exactly what the template does)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from analysis.userio import write_atomic
from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES

DEMO = PROJECT_TEMPLATES / "demo.jinja"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


# --- 1. file modes ---------------------------------------------------------------------------


def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path: Path, umask_022: None) -> None:
    path = tmp_path / "new.json"
    write_atomic(path, "{}", "report")
    assert _mode(path) == 0o644
    os.umask(0o077)
    other = tmp_path / "private.json"
    write_atomic(other, "{}", "report")
    assert _mode(other) == 0o600


def test_a_replaced_file_keeps_its_mode(tmp_path: Path, umask_022: None) -> None:
    path = tmp_path / "kept.json"
    path.write_text("old")
    path.chmod(0o640)
    write_atomic(path, "new", "report")
    assert path.read_text() == "new" and _mode(path) == 0o640


def test_export_write_junit_and_lock_files_are_readable_by_others(tmp_path: Path, umask_022: None) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    config = folder / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": DEMO.read_text(), "eos_token": "<|im_end|>"}))
    config.chmod(0o664)
    assert run_cli("export", "--write", str(folder), "--no-verify").exit_code == 0
    assert "response_template" in json.loads(config.read_text()) and _mode(config) == 0o664
    out = tmp_path / "spec.json"
    assert run_cli("export", str(DEMO), "-o", str(out), "--no-verify").exit_code == 0
    assert _mode(out) == 0o644
    junit, lock = tmp_path / "report.xml", tmp_path / "check.lock"
    result = run_cli("check", str(DEMO), "--junit", str(junit), "--lock", str(lock), "--update-lock")
    assert result.exit_code == 0, result.stderr
    assert _mode(junit) == 0o644 and _mode(lock) == 0o644
