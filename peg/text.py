"""Text helpers every layer shares: the whitespace set, and a position's line and column."""

from __future__ import annotations

#: the whitespace JSON, GBNF and templates' markers are padded with
WS = " \t\r\n"


def line_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


__all__ = ["WS", "line_column"]
