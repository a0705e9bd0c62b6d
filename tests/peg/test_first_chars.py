"""Skipping what cannot begin at the next character (``peg.first_chars``)
reads every input as the engine reads it without skipping: the same status,
end and captures, on whole and partial input."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from peg import combinators as p
from peg.combinators import Parser, Ref
from peg.engine import _DISPATCH, _State, parse
from peg.first_chars import start_of
from tests.conftest import examples
from tests.peg.strategies import combined

ATOMS = st.sampled_from(["a", "b", "<x>", "\n", "ab", ""]).map(p.literal) | st.just(p.space()) | st.just(p.chars("[a-b]", 1, 2))


def _nodes(children: st.SearchStrategy[Parser]) -> st.SearchStrategy[Parser]:
    return combined(children) | children.map(lambda c: p.tag("t", c))


PARSERS = st.recursive(ATOMS, _nodes, max_leaves=8)
TEXTS = st.lists(st.sampled_from(["a", "b", "<x>", "<", "\n", " "]), max_size=6).map("".join)


def _without_skipping(parser: Parser, text: str, partial: bool) -> tuple[int, int, list[tuple[str, int, int]]]:
    state = _State(text, partial)
    status, end, nodes = _DISPATCH[type(parser)](parser, state, 0)
    return status, end, [(n.name, n.start, n.end) for n in nodes]


@settings(max_examples=examples(1000), deadline=None)
@given(parser=PARSERS, text=TEXTS, partial=st.booleans())
@example(parser=p.choice(p.seq(p.space(), p.literal("a")), p.literal("b")), text="a", partial=False)
@example(parser=p.one_or_more(p.seq(p.space(), p.literal("a"), p.space(), p.literal("<x>"))), text="a<x> a <x>b", partial=False)
@example(parser=p.choice(p.seq(p.space(), p.literal("\n")), p.literal("b")), text="\n", partial=False)
def test_skipping_reads_as_the_engine_without_it(parser: Parser, text: str, partial: bool) -> None:
    fast = _State(text, partial, fast=True)
    status, end, nodes = _DISPATCH[type(parser)](parser, fast, 0)
    assert (status, end, [(n.name, n.start, n.end) for n in nodes]) == _without_skipping(parser, text, partial)


def test_a_failure_keeps_the_whole_expected_set() -> None:
    """The expected set comes from a reading without skipping."""
    parser = p.seq(p.choice(p.literal("<a>"), p.literal("<b>"), p.literal("c")), p.end())
    result = parse(parser, "d")
    assert result.status.name == "FAILURE" and result.expected == frozenset({"'<a>'", "'<b>'", "'c'"})


def test_first_characters() -> None:
    assert start_of(p.seq(p.space(), p.literal("<x>"))) == (frozenset(" \t\n\r") | {"<"}, False)
    assert start_of(p.optional(p.literal("a")))[1] is True
    assert start_of(p.seq(p.until("x"), p.literal("a")))[0] is None  # (an until: any)
    nested = p.rule("nested")
    nested.body = p.choice(p.seq(p.literal("("), Ref(nested), p.literal(")")), p.literal("a"))
    assert start_of(nested) == (frozenset("(a"), False)
    looped = p.rule("looped")  # (a rule met inside itself before any character: "any", never skipped)
    looped.body = p.choice(p.seq(Ref(looped), p.literal("x")), p.literal("a"))
    assert start_of(looped)[0] is None
