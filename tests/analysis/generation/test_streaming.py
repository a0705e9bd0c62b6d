"""The delimiter hold-back shared by the engine's partial ``until`` and the streaming fast path."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from peg.partial import held_back as _held_back
from tests.conftest import examples


def held_back_by_definition(buf: str, delimiters: tuple[str, ...]) -> int:
    """The longest end of ``buf`` that is a proper prefix of some delimiter."""
    return max((k for d in delimiters for k in range(1, min(len(d) - 1, len(buf)) + 1) if buf.endswith(d[:k])), default=0)


@settings(max_examples=examples(400), deadline=None)
@given(
    buf=st.text(alphabet="<ab/|>x", max_size=10),
    delimiters=st.lists(st.text(alphabet="<ab/|>", min_size=1, max_size=6), min_size=1, max_size=3),
)
def test_held_back_is_the_longest_delimiter_start_at_the_end(buf: str, delimiters: list[str]) -> None:
    delims = tuple(delimiters)
    if any(d in buf for d in delims):
        return  # a delimiter inside the buffer ends the fast path before this is asked
    assert _held_back(buf, delims) == held_back_by_definition(buf, delims)


def test_held_back_examples() -> None:
    assert _held_back("text </thi", ("</think>",)) == 5
    assert _held_back("a < b", ("</think>",)) == 0
    assert _held_back("x <", ("</think>", "<tool_call>")) == 1
    assert _held_back("x <to", ("</think>", "<tool_call>")) == 3
    assert _held_back("", ("</think>",)) == 0
    assert _held_back("ab</", ("</x>",), 2) == 2 and _held_back("ab</", ("</x>",), 3) == 0  # within text[start:] only
