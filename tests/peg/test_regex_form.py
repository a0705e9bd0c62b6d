"""Parsers that capture nothing, read as one regex each (``peg.regex_form``):
on whole input, the regex matches exactly where the engine's node-by-node
reading does, to the same end; with captures around them, the engine's
regex pass builds the same tree."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from peg import combinators as p
from peg.combinators import Parser, Ref
from peg.engine import _DISPATCH, _State, parse
from peg.regex_form import SUPPORTED, prefix_pattern, pure_pattern, pure_source
from tests.conftest import examples
from tests.peg.strategies import combined

#: the exact regexes need atomic groups (prefixes do not: they only rule out)
exact_only = pytest.mark.skipif(not SUPPORTED, reason="atomic groups need Python 3.11")

ATOMS = (
    st.sampled_from(["a", "b", "<x>", "\n", "ab", "a\n", "", "-", "]"]).map(p.literal)
    | st.just(p.space())
    | st.just(p.chars("[a-b]", 1, 2))
    | st.just(p.chars("[^a\\n]", 0, 3))
    | st.just(p.end())
    | st.just(p.eps())
)


def _nodes(children: st.SearchStrategy[Parser]) -> st.SearchStrategy[Parser]:
    return (
        combined(children)
        | children.map(p.one_or_more)
        | st.tuples(children, st.integers(0, 3), st.integers(0, 3)).map(lambda t: p.repeat(t[0], min(t[1:]), max(t[1:])))
        | children.map(p.peek)
        | children.map(p.negate)
        | children.map(p.atomic)
    )


PURE = st.recursive(ATOMS, _nodes, max_leaves=10)
TEXTS = st.lists(st.sampled_from(["a", "b", "<x>", "<", "\n", " ", "-", "]", "c"]), max_size=7).map("".join)


def _node_by_node(parser: Parser, text: str, pos: int) -> tuple[int, int]:
    """Status and end as the engine reads node by node (no regex, no skipping)."""
    status, end, _ = _DISPATCH[type(parser)](parser, _State(text, False), pos)
    return status, end


@exact_only
@settings(max_examples=examples(2000), deadline=None)
@given(parser=PURE, text=TEXTS, pos=st.integers(0, 3))
@example(parser=p.seq(p.choice(p.literal("a"), p.literal("ab")), p.literal("c")), text="abc", pos=0)  # (PEG keeps "a")
@example(parser=p.seq(p.space(), p.literal("\n")), text="\n", pos=0)  # (the space keeps its newline)
@example(parser=p.seq(p.zero_or_more(p.literal("a")), p.literal("a")), text="aa", pos=0)  # (no giving back)
@example(parser=p.repeat(p.optional(p.literal("a")), 2, 3), text="", pos=0)  # (an empty item counted once)
@example(parser=p.seq(p.literal("a"), p.end()), text="a\n", pos=0)  # (end is the very end)
def test_the_regex_matches_where_the_engine_does(parser: Parser, text: str, pos: int) -> None:
    pos = min(pos, len(text))
    pattern = pure_pattern(parser)
    expected_status, expected_end = _node_by_node(parser, text, pos)
    if pattern is None:  # (only a repetition of an item that may match nothing, more than once)
        assert pure_source(parser) is None
        return
    matched = pattern.match(text, pos)
    assert (0 if matched else 1) == expected_status
    if matched:
        assert matched.end() == expected_end


CAPTURING = st.recursive(
    ATOMS | st.just(p.tag("v", p.until("<"))),
    lambda children: _nodes(children) | children.map(lambda c: p.tag("t", c)),
    max_leaves=10,
)


@exact_only
@pytest.mark.filterwarnings("ignore:Generating overly large repr")
@settings(max_examples=examples(1000), deadline=None)
@given(parser=CAPTURING, text=TEXTS)
def test_the_regex_pass_builds_the_same_tree(parser: Parser, text: str) -> None:
    """Around captures and scans, the regex pass reads as the engine node by node."""
    fast = _State(text, False, fast=True, regex=True)
    status, end, nodes = _DISPATCH[type(parser)](parser, fast, 0)
    slow_status, slow_end, slow_nodes = _DISPATCH[type(parser)](parser, _State(text, False), 0)
    assert status == slow_status
    if status != 1:  # (where a failure stopped is the node-by-node pass's to say)
        assert (end, [(n.name, n.start, n.end) for n in nodes]) == (slow_end, [(n.name, n.start, n.end) for n in slow_nodes])


@exact_only
def test_what_captures_or_scans_has_no_regex() -> None:
    assert pure_pattern(p.tag("t", p.literal("a"))) is None
    assert pure_pattern(p.seq(p.literal("a"), p.until("b"))) is None
    assert pure_pattern(p.json_value()) is None
    looped = p.rule("looped")
    looped.body = p.choice(p.seq(p.literal("("), Ref(looped), p.literal(")")), p.literal("a"))
    assert pure_pattern(looped) is None  # (a rule inside itself)
    flat = p.rule("flat", p.seq(p.literal("<"), p.chars("[a-z]", 1, 5), p.literal(">")))
    assert pure_pattern(p.seq(Ref(flat), p.end())) == re.compile(r"<[a-z]{1,5}+>\Z")


def test_a_failed_parse_still_says_what_was_expected() -> None:
    """The regex pass does not say why it failed: the node-by-node pass that follows does."""
    parser = p.seq(p.literal("<"), p.choice(p.literal("a"), p.literal("b")), p.literal(">"), p.end())
    result = parse(parser, "<c>")
    assert result.status.name == "FAILURE"
    assert result.furthest == 1 and result.expected == frozenset({"'a'", "'b'"})


@pytest.mark.filterwarnings("ignore:Generating overly large repr")
@settings(max_examples=examples(1000), deadline=None)
@given(parser=CAPTURING, text=TEXTS, pos=st.integers(0, 3))
@example(parser=p.seq(p.literal("<"), p.tag("t", p.until(">")), p.literal(">")), text="x>", pos=0)
@example(parser=p.choice(p.seq(p.space(), p.tag("t", p.literal("a"))), p.literal("b")), text="c", pos=0)
@example(parser=p.choice(p.seq(p.literal("a"), p.tag("t", p.until("<"))), p.tag("t", p.literal("b"))), text="b", pos=0)  # (any option)
def test_where_the_prefix_does_not_match_the_parser_does_not(parser: Parser, text: str, pos: int) -> None:
    """``prefix_pattern`` is a necessary condition: where it does not match,
    the node-by-node reading fails too (so a look-ahead may fail at once)."""
    pos = min(pos, len(text))
    prefix = prefix_pattern(parser)
    if prefix is not None and prefix.match(text, pos) is None:
        assert _node_by_node(parser, text, pos)[0] == 1


@exact_only
def test_a_prefix_runs_through_captures_to_the_first_scan() -> None:
    value = p.seq(p.literal("<v>"), p.tag("t", p.until("</v>")), p.literal("</v>"))
    assert prefix_pattern(value) == re.compile("<v>")
    assert prefix_pattern(p.choice(value, p.seq(p.space(), p.tag("n", p.literal("x"))))) == re.compile(r"(?:<v>|[ \t\n\r]*+x)")
    assert prefix_pattern(p.seq(p.until("a"), p.literal("b"))) is None  # (it may begin with anything)
