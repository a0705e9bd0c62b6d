"""The diff helpers: common prefix/suffix with marker-boundary fixing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analysis.diff import Segment, diff_split, segmentize_markers


def test_plain_difference() -> None:
    d = diff_split("Hello Paris!", "Hello Oslo!")
    assert (d.prefix, d.left, d.right, d.suffix) == ("Hello ", "Paris", "Oslo", "!")


def test_marker_in_prefix_is_not_split() -> None:
    # Common prefix "<tool_" would cut the markers <tool_call> / <tool_response>.
    d = diff_split("A<tool_call>x", "A<tool_response>x")
    assert d.prefix == "A"
    assert d.left == "<tool_call>" and d.right == "<tool_response>"
    assert d.suffix == "x"


def test_marker_in_suffix_is_not_split() -> None:
    d = diff_split("x<think>", "y</think>")
    assert (d.prefix, d.left, d.right, d.suffix) == ("", "x<think>", "y</think>", "")
    d = diff_split("<a>1</a>", "<a>2</a>")
    assert (d.prefix, d.left, d.right, d.suffix) == ("<a>", "1", "2", "</a>")


def test_bracket_markers() -> None:
    d = diff_split("[INST]hi[/INST]", "[INST]hi[/THINK]")
    assert d.prefix == "[INST]hi"
    assert (d.left, d.right) == ("[/INST]", "[/THINK]")


def test_insertion_only() -> None:
    d = diff_split("<|im_start|>assistant\n", "<|im_start|>assistant\n<think>\n")
    assert d.prefix == "<|im_start|>assistant\n" and d.left == "" and d.right == "<think>\n" and d.suffix == ""


def test_overlapping_prefix_and_suffix() -> None:
    # "aXa" vs "a": prefix and suffix must not overlap.
    d = diff_split("aaa", "aa")
    assert d.prefix + d.left + d.suffix == "aaa" and d.prefix + d.right + d.suffix == "aa"
    assert len(d.prefix) + len(d.suffix) <= 2


@given(st.text(alphabet="ab<>[]/x", max_size=20), st.text(alphabet="ab<>[]/x", max_size=20))
def test_diff_split_reconstructs_both_inputs(a: str, b: str) -> None:
    d = diff_split(a, b)
    assert d.prefix + d.left + d.suffix == a
    assert d.prefix + d.right + d.suffix == b


def test_segmentize() -> None:
    assert segmentize_markers("a<think>b[/INST]c < d") == [
        Segment("a", False),
        Segment("<think>", True),
        Segment("b", False),
        Segment("[/INST]", True),
        Segment("c < d", False),
    ]
    assert segmentize_markers("<｜tool▁calls▁begin｜>x") == [Segment("<｜tool▁calls▁begin｜>", True), Segment("x", False)]
