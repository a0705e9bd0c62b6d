"""Finding delimiters in text: the first of many (grouped by their shared
beginnings, one regex scan where there are enough groups), and runs of text
with no unescaped delimiter.  ``until`` uses them on whole and partial input
alike; a stream's fast paths use them to know when a chunk may hold one."""

from __future__ import annotations

import functools
import re


@functools.lru_cache(maxsize=256)
def escaped_run(delimiters: tuple[str, ...], escape: str) -> re.Pattern[str] | None:
    """A regex for the longest run of text with no unescaped delimiter (for
    single-character delimiters), or None."""
    if any(len(d) != 1 for d in delimiters):
        return None
    plain = f"[^{re.escape(''.join(delimiters) + escape)}]*"
    return re.compile(f"{plain}(?:{re.escape(escape)}[^\n]{plain})*")  # (unrolled: a tight loop per run)


def first_of(delimiters: tuple[str, ...], text: str, pos: int) -> int:
    """Where the first of ``delimiters`` starts at or after ``pos`` (-1: none)."""
    best = -1
    search = _anchor_search(delimiters)
    if search is not None:  # one regex scan for many anchors, not one scan each
        return _first_delimiter(text, pos, search, _anchors(delimiters))
    for anchor, group in _anchors(delimiters):
        # the first place where a delimiter of the group starts: the group's
        # shared beginning, found once, then each delimiter checked there (and
        # only before the first place another group found: no scan past it)
        end = len(text) if best < 0 else best - 1 + len(anchor)
        i = text.find(anchor, pos, end)
        while i >= 0:
            if len(group) == 1 or any(text.startswith(d, i) for d in group):
                best = i
                break
            i = text.find(anchor, i + 1, end)
    return best


#: from this many anchor groups on, one regex scan beats a ``str.find`` per group
#: (measured: two groups over 98 KB of prose, 129 against 146 us)
_REGEX_FROM = 2


@functools.lru_cache(maxsize=1024)
def _anchor_search(delimiters: tuple[str, ...]) -> re.Pattern[str] | None:
    """A regex for the anchors of ``delimiters``' groups, when there are enough of them."""
    groups = _anchors(delimiters)
    if len(groups) < _REGEX_FROM:
        return None
    return re.compile("|".join(re.escape(anchor) for anchor, _ in groups))


def _first_delimiter(text: str, pos: int, search: re.Pattern[str], groups: tuple[tuple[str, tuple[str, ...]], ...]) -> int:
    """Where the first delimiter starts at or after ``pos`` (-1: none): the first
    place an anchor starts at which one of its group's delimiters does too."""
    found = search.search(text, pos)
    while found is not None:
        i = found.start()
        for anchor, group in groups:
            if text.startswith(anchor, i) and (len(group) == 1 or any(text.startswith(d, i) for d in group)):
                return i
        found = search.search(text, i + 1)
    return -1


def delimiter_anchors(delimiters: tuple[str, ...]) -> tuple[str, ...]:
    """The beginnings ``delimiters`` share, in groups (every delimiter starts
    with one): text that holds none holds no delimiter either."""
    return tuple(anchor for anchor, _ in _anchors(delimiters))


@functools.lru_cache(maxsize=1024)
def _anchors(delimiters: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``delimiters`` in groups that share a beginning of three or more
    characters (``</parameter>\n<parameter=`` and ``</parameter>\n</function>``),
    each with that beginning: one scan of the text per group, not per delimiter."""
    groups: list[tuple[str, list[str]]] = []
    for d in sorted(set(delimiters)):
        if groups:
            anchor, members = groups[-1]
            shared = 0
            while shared < min(len(anchor), len(d)) and anchor[shared] == d[shared]:
                shared += 1
            if shared >= 3:
                groups[-1] = (anchor[:shared], [*members, d])
                continue
        groups.append((d, [d]))
    return tuple((anchor, tuple(members)) for anchor, members in groups)
