"""A sequence reads a run of literals and spaces with one regex
(``engine._runs``): it must read exactly as the items one by one would, on
whole and partial input, where it succeeds and where it fails."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from peg import combinators as p
from peg.combinators import Parser, Sequence
from peg.engine import parse
from tests.conftest import examples

PIECES = ["<a>", "\n<a>", " ", "b", "\n", "</a>", "ab", "<"]


def _items(draw_items: list[tuple[str, str]]) -> list[Parser]:
    return [p.space() if kind == "space" else p.literal(text) for kind, text in draw_items]


def _unfused(node: Sequence) -> Sequence:
    node.__dict__["_runs"] = tuple((None, (item,)) for item in node.items)
    return node


ITEMS = st.lists(st.tuples(st.sampled_from(["space", "literal"]), st.sampled_from(PIECES[:-1])), min_size=1, max_size=6)
TEXTS = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(items=ITEMS, text=TEXTS, partial=st.booleans(), tagged_end=st.booleans())
def test_a_fused_run_reads_as_its_items(items: list[tuple[str, str]], text: str, partial: bool, tagged_end: bool) -> None:
    tail = [p.tag("x", p.until("!"))] if tagged_end else []
    fused = Sequence(tuple(_items(items) + tail))
    plain = _unfused(Sequence(tuple(_items(items) + tail)))
    a, b = parse(fused, text, partial=partial), parse(plain, text, partial=partial)
    assert (a.status, a.end, a.furthest, sorted(a.expected)) == (b.status, b.end, b.furthest, sorted(b.expected))
    assert [(n.name, n.start, n.end) for n in a.find("x")] == [(n.name, n.start, n.end) for n in b.find("x")]


def test_a_literal_that_begins_with_whitespace_after_a_space_is_not_given_the_space() -> None:
    """PEG: the space takes the newline, the literal then fails; a regex would backtrack."""
    node = p.seq(p.literal("a"), p.space(), p.literal("\n<b>"))
    assert parse(node, "a\n<b>").status.name == "FAILURE"
    assert parse(p.seq(p.literal("a"), p.space(), p.literal("<b>")), "a \n <b>").status.name == "SUCCESS"
