"""What characters a parser node can begin with: its first characters, or
None where it may begin with any (an ``until``, JSON, a look-ahead, a
character class too large to list), and whether it can match no text at all.
The engine uses this to skip, on the way to a successful parse, the options
and repetitions that cannot match at the next character (see
``peg.engine.parse``)."""

from __future__ import annotations

import re

from peg.combinators import Atomic, CharClass, Choice, Parser, Ref, Repetition, Rule, Schema, Sequence, Space, Tag
from peg.combinators import Literal as _Literal
from peg.text import WS

#: (first characters, or None: any; whether it may match no text)
Start = tuple[frozenset[str] | None, bool]

#: what a :class:`~peg.combinators.Space` matches
SPACE_PATTERN = r"[ \t\n\r]*"

_ANY: Start = (None, True)
_WS_START: Start = (frozenset(WS), True)
#: a character class is listed up to this many characters
_MAX_LISTED = 256


def start_of(node: Parser) -> Start:
    """``node``'s first characters and whether it may match no text (kept on
    the node, worked out once).  None, and "may match no text", are always
    the safe answer: they never let a caller skip the node."""
    return _sub(node, set())


def _start(node: Parser, visiting: set[int]) -> Start:
    kind = type(node)
    if kind is _Literal:
        text = node.text  # type: ignore[attr-defined]
        return (frozenset(text[0]), False) if text else _ANY
    if kind is Space:
        return _WS_START
    if kind is CharClass:
        return _char_class(node)  # type: ignore[arg-type]
    if kind is Sequence:
        chars: set[str] = set()
        for item in node.items:  # type: ignore[attr-defined]
            first, empty = _sub(item, visiting)
            if first is None:
                return _ANY
            chars |= first
            if not empty:
                return frozenset(chars), False
        return frozenset(chars), True
    if kind is Choice:
        chars, any_empty = set(), False
        for option in node.options:  # type: ignore[attr-defined]
            first, empty = _sub(option, visiting)
            if first is None:
                return _ANY
            chars |= first
            any_empty = any_empty or empty
        return frozenset(chars), any_empty
    if kind is Repetition:
        first, empty = _sub(node.item, visiting)  # type: ignore[attr-defined]
        return _ANY if first is None else (first, empty or node.min == 0)  # type: ignore[attr-defined]
    if kind in (Tag, Atomic, Schema):
        return _sub(node.item, visiting)  # type: ignore[attr-defined]
    if kind is Ref:
        return _sub(node.rule, visiting)  # type: ignore[attr-defined]
    if kind is Rule:
        if id(node) in visiting or node.body is None:  # type: ignore[attr-defined]
            return _ANY
        visiting.add(id(node))
        return _sub(node.body, visiting)  # type: ignore[attr-defined]
    return _ANY  # (until, rest, JSON, look-aheads, end, eps: anything, or nothing)


def _sub(node: Parser, visiting: set[int]) -> Start:
    found: Start | None = node.__dict__.get("_start")
    if found is None:  # (a rule met again inside itself is "any": safe to keep)
        found = node.__dict__["_start"] = _start(node, visiting)
    return found


def _char_class(node: CharClass) -> Start:
    if node.negated:
        return _ANY
    size = sum(ord(hi) - ord(lo) + 1 for lo, hi in node.ranges)
    if size > _MAX_LISTED:
        return _ANY
    chars = frozenset(chr(c) for lo, hi in node.ranges for c in range(ord(lo), ord(hi) + 1))
    return chars, node.min == 0


def run_pattern(items: list[Parser]) -> str:
    """The regex of a run of literals and spaces, one after the other (a space greedy)."""
    return "".join(re.escape(item.text) if isinstance(item, _Literal) else SPACE_PATTERN for item in items)
