"""Hypothesis strategies for random parsers, shared by the engine's property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from peg import combinators as p
from peg.combinators import Parser


def combined(children: st.SearchStrategy[Parser]) -> st.SearchStrategy[Parser]:
    """Sequences and choices of up to three ``children``, and repetitions of one."""
    return (
        st.lists(children, min_size=1, max_size=3).map(lambda items: p.seq(*items))
        | st.lists(children, min_size=1, max_size=3).map(lambda options: p.choice(*options))
        | children.map(p.zero_or_more)
        | children.map(p.optional)
    )
