"""The examples the documentation shows run as shown: every ``$ autoparser``
line of the README's and docs' console blocks (its output checked against the
lines shown, in order; ``…`` leaves lines out), and every command's
``Example:`` line in its help."""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from autoparser_cli.main import app
from tests.cli_helpers import run_cli
from tests.conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _slow_if_collection(*values: Any) -> Any:
    """An example's parameters; slow when it checks the project's whole template
    collection (``autoparser check templates/``: seconds, not the fast loop's)."""
    command = next(v for v in values if isinstance(v, str) and v.startswith("autoparser "))
    return pytest.param(*values, marks=pytest.mark.slow) if command.startswith("autoparser check templates") else pytest.param(*values)


def _console_examples() -> list[tuple[str, str, list[str]]]:
    """(file, command, the output lines shown) for each ``$ autoparser`` line."""
    out = []
    for doc in DOCS:
        for block in re.findall(r"```console\n(.*?)```", doc.read_text(), re.S):
            command, shown = "", []
            for line in block.splitlines():
                if line.startswith("$ "):
                    if command:
                        out.append((doc.name, command, shown))
                    command, shown = line[2:], []
                else:
                    shown.append(line.rstrip())
            if command:
                out.append((doc.name, command, shown))
    return out


def _run(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    words = shlex.split(command)
    assert words[0] == "autoparser"
    monkeypatch.chdir(ROOT)
    # files a command writes go to a scratch folder, not into the checkout
    args = [str(tmp_path / Path(w).name) if prev in ("-o", "--output", "--junit", "--lock") else w for prev, w in itertools.pairwise(words)]
    result = run_cli(*args, width=100)
    return result.exit_code, result.stdout + result.stderr


@pytest.mark.parametrize(
    "doc, command, shown", [_slow_if_collection(*example) for example in _console_examples()], ids=lambda v: v if isinstance(v, str) else ""
)
def test_console_examples_run_as_shown(doc: str, command: str, shown: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _run(command, tmp_path, monkeypatch)
    assert code == 0, (doc, command, output)
    lines = [line.rstrip() for line in output.splitlines()]
    at = 0
    for want in shown:
        if want in ("…", ""):
            continue
        while at < len(lines) and lines[at] != want:
            at += 1
        assert at < len(lines), (doc, command, want, output)
        at += 1


def _help_examples() -> list[tuple[str, str]]:
    out = []
    for command in app.registered_commands:
        doc = command.callback.__doc__ or "" if command.callback else ""
        for example in re.findall(r"Example: (autoparser [^\n]+)", doc):
            out.append((command.callback.__name__ if command.callback else "", example))
    return out


def test_every_command_shows_an_example() -> None:
    assert {name for name, _ in _help_examples()} >= {"render", "caps", "analyze", "grammar", "parse", "check", "export", "lint"}


@pytest.mark.parametrize("name, command", [_slow_if_collection(*example) for example in _help_examples()])
def test_help_examples_run(name: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _run(command, tmp_path, monkeypatch)
    assert code == 0, (name, command, output)


def test_every_capability_flag_is_documented() -> None:
    """`caps` prints each flag of Capabilities: docs/cli.md says what each means."""
    import dataclasses

    from analysis.probing.caps import Capabilities

    cli = (ROOT / "docs" / "cli.md").read_text()
    missing = [f.name for f in dataclasses.fields(Capabilities) if f"`{f.name}`:" not in cli]
    assert not missing
