"""What partial input shows: the one owner of the rules by which a parse of
an output still being written holds text back.

An ``until`` or ``rest`` on partial input shows its text short of what may
still be a delimiter (:func:`held_back`: a proper prefix of one at the very
end), of a run of end-of-turn stops that ends the text (:func:`trailing_stops`),
of an escape cut short, and, for an ``until`` with held texts, of the first of
them (:func:`partial_end`).  The engine applies these to the frontier of a
partial parse; a stream's fast paths apply the same functions to each chunk
(:func:`held_back_of`); ``analysis.generation.shown_text`` applies them to a
message (what a stream shows, what an output cut short keeps)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from peg.combinators import Rest, Until
from peg.scanning import first_of
from peg.text import WS


def trailing_stops(text: str, stops: tuple[str, ...], start: int, end: int) -> int:
    """Where the run of ``stops`` (with whitespace between and after them) that
    ends ``text[start:end]`` begins; ``end`` when it ends with none."""
    cut = e = end
    while True:
        while e > start and text[e - 1] in WS:
            e -= 1
        for stop in stops:
            if text.endswith(stop, start, e):
                e -= len(stop)
                cut = e
                break
        else:
            return cut


def partial_end(node: Until | Rest, text: str, pos: int) -> int:
    """Where the text an ``until`` or ``rest`` at ``pos`` shows on partial input
    ends (what may still be a delimiter or a trailing stop waits, and so does
    an ``until``'s text from the first of its held texts on)."""
    if isinstance(node, Until):
        end = len(text) - held_back(text, node.delimiters + node.stops + node.held + node.repairs, pos)
        if node.escape and end > pos and text[end - 1] == node.escape:
            run = end - 1
            while run > pos and text[run - 1] == node.escape:
                run -= 1
            end -= (end - run) % 2  # an escape cut short waits for what it escapes
        if node.held:
            first = first_of(node.held, text, pos)
            end = first if 0 <= first < end else end
    else:
        end = len(text) - held_back(text, node.stops, pos)
    if not node.stops:
        return end
    # a run of whole stops that ends the text is no text, even where its last
    # character may begin another (MiniMax's "[e~[" ends with its own "[")
    whole = trailing_stops(text, node.stops, pos, len(text))
    end = trailing_stops(text, node.stops, pos, end)
    return min(end, whole)


def held_back(text: str, delimiters: tuple[str, ...], start: int = 0) -> int:
    """The length of the longest end of ``text[start:]`` that is a proper prefix
    of one of ``delimiters`` (what an ``until`` holds back on partial input)."""
    found = _prefix_at_end(delimiters).search(text, max(start, len(text) - longest_delimiter(delimiters) + 1))
    return len(text) - found.start() if found else 0


def held_back_of(delimiters: tuple[str, ...]) -> Callable[[str], int]:
    """:func:`held_back` for ``delimiters``, prepared once (a stream calls it per chunk)."""
    pattern, longest = _prefix_at_end(delimiters), longest_delimiter(delimiters)

    def hold(text: str) -> int:
        found = pattern.search(text, max(0, len(text) - longest + 1))
        return len(text) - found.start() if found else 0

    return hold


@functools.lru_cache(maxsize=256)
def longest_delimiter(delimiters: tuple[str, ...]) -> int:
    return max(map(len, delimiters), default=1)


@functools.lru_cache(maxsize=256)
def _prefix_at_end(delimiters: tuple[str, ...]) -> re.Pattern[str]:
    """A regex for a proper prefix of one of ``delimiters`` that ends the text,
    as a trie (``<(?:t(?:o)?)?\\Z`` for ``<to>``): one pass, the leftmost
    match is the longest."""
    trie: dict[str, dict] = {}  # type: ignore[type-arg]
    for d in delimiters:
        node = trie
        for c in d[:-1]:
            node = node.setdefault(c, {})

    def alternatives(node: dict) -> str:  # type: ignore[type-arg]
        parts = [re.escape(c) + (f"(?:{alternatives(sub)})?" if sub else "") for c, sub in node.items()]
        return "|".join(parts)

    body = alternatives(trie)
    return re.compile(f"(?:{body})\\Z" if body else "(?!)")


def json_partial_end(held: tuple[str, ...], text: str, pos: int, end: int) -> int:
    """Where a JSON value at ``pos``, still being written up to ``end``, shows
    to: short of the first of its ``held`` texts (another reading may end the
    value there), or of a start of one at the end."""
    text = text if end == len(text) else text[:end]
    first = first_of(held, text, pos)
    return first if first >= 0 else end - held_back(text, held, pos)
