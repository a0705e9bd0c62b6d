"""The diff helpers: common prefix/suffix with marker-boundary fixing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from analysis.probing.diff import Segment, appended, diff_split, segmentize_markers


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


def test_a_bracket_inside_a_whole_marker_opens_and_closes_nothing() -> None:
    """``<]minimax[>`` is one marker: its ``[`` leaves no ``[...]`` open at the
    prefix's end, and its ``]`` closes none at the suffix's start (issue 33)."""
    d = diff_split('<]minimax[>\n<invoke name="aaa">', '<]minimax[>\n<invoke name="bbb">')
    assert (d.prefix, d.left, d.right) == ("<]minimax[>\n", '<invoke name="aaa">', '<invoke name="bbb">')
    d = diff_split("x\n<]/minimax[>", "y\n<]/minimax[>")
    assert (d.left, d.right, d.suffix) == ("x", "y", "\n<]/minimax[>")
    d = diff_split("<]mini", "<]minimax[>")  # (cut inside the marker: it moves out whole)
    assert (d.prefix, d.left, d.right) == ("", "<]mini", "<]minimax[>")


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


# --- helpers used by the phases ---------------------------------------------------

from analysis.probing.diff import segment_diff  # noqa: E402
from analysis.probing.markers import (  # noqa: E402
    from_last_marker,
    marker_after,
    marker_before,
    through_first_marker,
)


def test_markers_next_to_a_needle_keep_their_whitespace() -> None:
    text = "<|im_start|>assistant\n<think>\nNEEDLE\n</think>\n\nanswer"
    pos = text.index("NEEDLE")
    assert marker_before(text, pos) == ("<think>", "\n")
    assert marker_after(text, pos + len("NEEDLE")) == ("\n", "</think>", "\n\n")
    assert marker_before("assistant: NEEDLE", len("assistant: ")) is None


def test_non_ascii_markers() -> None:
    assert marker_before("◁think▷NEEDLE", len("◁think▷")) == ("◁think▷", "")
    assert from_last_marker("x<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function") == "<｜tool▁call▁begin｜>function"
    assert through_first_marker("name<｜tool▁sep｜>\n{") == "name<｜tool▁sep｜>\n"
    d = diff_split("<｜tool▁call▁begin｜>a", "<｜tool▁call▁end｜>b")
    assert d.prefix == "" and d.left.startswith("<｜tool▁call▁begin｜>")


def test_segment_diff_puts_shared_turn_closers_in_the_suffix() -> None:
    one = "<|user|>\nU<|end|>\n</s>"
    three = "<|user|>\nU<|end|>\n<|assistant|>\nA<|end|>\n<|user|>\nV<|end|>\n</s>"
    d = segment_diff(one, three)
    assert d.prefix + d.left + d.suffix == one and d.prefix + d.right + d.suffix == three
    assert d.right.startswith("<|end|>\n<|assistant|>")
    # when the shorter render is a prefix of the longer, the difference is the tail
    assert segment_diff("ab<x>", "ab<x>cd").right == "cd"


def test_appended_is_the_exact_tail_even_across_a_bracket_marker() -> None:
    """MiniMax's turns end '[e~[\\n' and its prompt starts ']~b]ai': the generation
    prompt is what the longer render appends, not widened to a '[…]' marker."""
    before = "]~b]user\nHey there![e~[\n"
    assert appended(before, before + "]~b]ai\n<think>\n") == "]~b]ai\n<think>\n"


def test_appended_aligns_on_the_end_of_the_shorter_render() -> None:
    """When the renders differ earlier (a block written only without the new
    turn), the new part starts after the shorter render's last common end."""
    without = "<S>sys<E><U>Hey<E><S>Write 'Action:'<E>"
    with_turn = "<S>sys<E><U>Hey<E><A>Hello, "
    assert appended(without, with_turn) == "<A>Hello, "
    assert appended("abc", "xyz") == "xyz"  # nothing in common: the diff
