"""``autoparser grammar``: plain GBNF to copy, and ``--check`` of an output against it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from peg.gbnf_reader import read_gbnf
from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES

TAGGED = str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja")
CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"


def _file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_grammar_is_a_plain_gbnf_file() -> None:
    result = run_cli("grammar", TAGGED, width=40)  # never wrapped, whatever the terminal
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("# autoparser grammar for tagged_xml.jinja\n# lazy: yes\n# trigger word: \"<tool_call>\"\n")
    assert "# preserved tokens: \"<think>\"" in out
    assert "│" not in out and "╭" not in out  # no panel
    root = [line for line in out.splitlines() if line.startswith("root ::= ")]
    assert len(root) == 1 and len(root[0]) > 40  # one long line, as written
    assert read_gbnf(out).match(CALL).accepted  # the comments are GBNF comments


def test_grammar_file_loads_in_llguidance() -> None:
    """The printed file, comments and all, is what a llguidance-based server reads."""
    llguidance = pytest.importorskip("llguidance")
    out = run_cli("grammar", TAGGED).stdout
    tokenizer = llguidance.LLTokenizer("byte")
    matcher = llguidance.LLMatcher(tokenizer, llguidance.grammar_from("gbnf", out))
    assert not matcher.is_error()
    # (whether llguidance then accepts CALL is its known disagreement on `until`
    # rules, see the README's GBNF notes; the file itself loads)
    tokens = tokenizer.tokenize_str("<tool_call>\n<function=get_weather>\n")
    assert matcher.try_consume_tokens(tokens) == len(tokens)


def test_check_fits_lazy(tmp_path: Path) -> None:
    out = _file(tmp_path, "o.txt", "Let me look.\n" + CALL)
    result = run_cli("grammar", TAGGED, "--check", out)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "fits: the grammar accepts the output from offset 13"
    plain = _file(tmp_path, "p.txt", "No call here.")
    result = run_cli("grammar", TAGGED, "--check", plain)
    assert result.exit_code == 0 and "never switches on" in result.stdout


def test_check_does_not_fit_with_line_column_and_expected(tmp_path: Path) -> None:
    wrong = CALL.replace("<parameter=city>\nParis", "<parameter=unit>\nkelvin")
    out = _file(tmp_path, "o.txt", "Sure.\n" + wrong)
    result = run_cli("grammar", TAGGED, "--check", out)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == "error: does not fit at line 4, column 12 (offset 52): expected '[c]'"
    cut = _file(tmp_path, "c.txt", CALL[:40])
    result = run_cli("grammar", TAGGED, "--check", cut)
    assert result.exit_code == 1 and "ends before the grammar is complete" in result.stderr
    assert run_cli("grammar", TAGGED, "--check", cut, "--partial").exit_code == 0


def test_check_non_lazy_grammar(tmp_path: Path) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    request = _file(tmp_path, "r.json", json.dumps({"messages": [{"role": "user", "content": "Hi"}], "tools": tools, "tool_choice": "required"}))
    printed = run_cli("grammar", TAGGED, "--request", request).stdout
    assert "# lazy: no" in printed and "# trigger" not in printed
    assert run_cli("grammar", TAGGED, "--request", request, "--check", _file(tmp_path, "o.txt", CALL)).exit_code == 0
    text_only = _file(tmp_path, "t.txt", "Just text.")  # a required call has not come yet
    assert "ends before the grammar is complete" in run_cli("grammar", TAGGED, "--request", request, "--check", text_only).stderr
    wrong = _file(tmp_path, "w.txt", "Text.\n<tool_call>\n<function=nope>")
    result = run_cli("grammar", TAGGED, "--request", request, "--check", wrong)
    assert result.exit_code == 1 and "does not fit at line 3, column 11" in result.stderr


def test_grammar_bad_input(tmp_path: Path) -> None:
    assert_clean_error(run_cli("grammar", TAGGED, "--check", str(tmp_path / "missing.txt")))
    request = _file(tmp_path, "r.json", json.dumps({"messages": [{"role": "user", "content": "Hi"}]}))
    printed = run_cli("grammar", TAGGED, "--request", request)
    assert printed.exit_code == 0 and "# no grammar: nothing to constrain" in printed.stdout
    assert "no grammar for this request" in assert_clean_error(run_cli("grammar", TAGGED, "--request", request, "--check", _file(tmp_path, "o.txt", "x")))
