"""The library names its own settings, never the CLI's options: a message
meant for a user names a setting by the library's name in backquotes, and
the CLI spells it as its option (issue 31)."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import pytest

from analysis.errors import InputError
from autoparser_cli.common import OPTION_NAMES
from tests.cli_helpers import run_cli
from tests.conftest import PROJECT_TEMPLATES

ROOT = Path(__file__).resolve().parent.parent
#: a command-line option as the CLI spells it: --update-lock, --tools
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def _message_texts(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that are not docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_library_message_names_a_cli_option() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in sorted((ROOT / "analysis").rglob("*.py"))
        for line, text in _message_texts(path)
        if FLAG.search(text)
    ]
    assert found == []


def test_the_scan_finds_an_option_in_a_message(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Docs may name --tools."""\ndef f():\n    raise ValueError(f"give it with --tools {1}")\n')
    assert [text for _, text in _message_texts(module) if FLAG.search(text)] == ["give it with --tools "]


def test_a_library_user_reads_the_library_names_and_the_cli_its_options() -> None:
    error = InputError("`update_lock` needs `lock`", ("update_lock", "lock"))
    assert str(error) == "`update_lock` needs `lock`"
    assert error.phrased(OPTION_NAMES) == "--update-lock needs --lock FILE"
    copy = pickle.loads(pickle.dumps(error))  # (as from a check worker)
    assert copy.settings == error.settings and copy.phrased(OPTION_NAMES) == error.phrased(OPTION_NAMES)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["check", "--shard", "5/2", "templates"], "error: --shard '5/2': expected I/N with 1 <= I <= N (for example 2/4)"),
        (["check"], "error: nothing to check: give template files or folders (PATHS), or a case file (--cases)"),
    ],
)
def test_the_cli_spells_each_setting_as_its_option(args: list[str], expected: str) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2 and result.stderr.strip() == expected


def test_messages_given_as_tools_are_named_with_the_option(tmp_path: Path) -> None:
    messages = tmp_path / "m.json"
    messages.write_text('[{"type": "function", "function": {"name": "f"}}]')
    result = run_cli("render", str(PROJECT_TEMPLATES / "demo.jinja"), "--messages", str(messages))
    assert result.exit_code == 2 and "this looks like a list of tools: give it as --tools" in result.stderr
