"""Findings' evidence: a window on one line with a caret under the place to look."""

from __future__ import annotations

from analysis.lint import Evidence
from analysis.lint.findings import diverge_at


def test_the_caret_points_at_the_offset() -> None:
    text = "a" * 100 + "X" + "b" * 100
    line, caret = Evidence("render", text, 100).window(40)
    assert caret is not None and line[caret] == "X"
    assert line.startswith("…") and line.endswith("…")


def test_newlines_show_as_arrows_on_one_line() -> None:
    line, caret = Evidence("render", "one\ntwo\tthree", 4).window()
    assert line == "one↵two→three" and caret == 4


def test_near_the_ends_the_window_is_not_cut() -> None:
    line, caret = Evidence("render", "short text", 0).window(40)
    assert (line, caret) == ("short text", 0)
    line, caret = Evidence("render", "x" * 80 + "END", 82).window(20)
    assert line.endswith("END") and line[caret] == "D"


def test_without_an_offset_the_whole_text_shows() -> None:
    conversation = '[{"role": "user", "content": "' + "w" * 300 + '"}]'
    line, caret = Evidence("conversation", conversation).window(40)
    assert line == conversation and caret is None


def test_diverge_at() -> None:
    assert diverge_at("abc", "abd") == 2
    assert diverge_at("ab", "abc") == 2
    assert diverge_at("", "x") == 0
