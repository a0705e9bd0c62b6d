"""Differential helpers: splitting two renders into common and differing parts.

``diff_split(a, b)`` finds the longest common prefix and suffix of two renders
and the parts unique to each (``left`` from ``a``, ``right`` from ``b``), then
moves the boundaries so that no ``<...>``, ``[...]`` or ``◁...▷`` marker is cut in two:
a marker half in the prefix (or suffix) is moved whole into left/right.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.probing.markers import MARKER_RE

_PAIRS = (("<", ">"), ("[", "]"), ("◁", "▷"))
_CLOSERS = dict(_PAIRS)


@dataclass(frozen=True)
class DiffSplit:
    """``a == prefix + left + suffix`` and ``b == prefix + right + suffix``."""

    prefix: str
    left: str
    right: str
    suffix: str


def _common_prefix_len(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _in_markers(text: str) -> list[tuple[int, int]]:
    """The spans of the whole markers in ``text`` (a bracket inside one, as in
    ``<]minimax[>``, opens or closes nothing)."""
    return [m.span() for m in MARKER_RE.finditer(text)]


def _covered(spans: list[tuple[int, int]], i: int) -> bool:
    return any(start <= i < end for start, end in spans)


def _open_marker_start(text: str) -> int:
    """Index of an unclosed ``<`` or ``[`` at the end of ``text``, or -1."""
    best = -1
    spans: list[tuple[int, int]] | None = None
    for open_c, close_c in _PAIRS:
        i = text.rfind(open_c)
        if i > text.rfind(close_c):
            spans = _in_markers(text) if spans is None else spans
            if not _covered(spans, i):
                best = max(best, i)
    return best


def _unopened_marker_end(text: str) -> int:
    """Length of a marker tail (``...>`` with no ``<`` before it) at the start of ``text``, or -1."""
    best = -1
    spans: list[tuple[int, int]] | None = None
    for open_c, close_c in _PAIRS:
        i = text.find(close_c)
        j = text.find(open_c)
        if i >= 0 and (j < 0 or i < j):
            spans = _in_markers(text) if spans is None else spans
            if not _covered(spans, i):
                best = max(best, i + 1)
    return best


def diff_split(a: str, b: str) -> DiffSplit:
    """Split renders ``a`` and ``b`` (see the module docstring)."""
    p = _common_prefix_len(a, b)
    max_s = min(len(a), len(b)) - p
    s = 0
    while s < max_s and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    while True:
        changed = False
        # The prefix ends inside a marker: the marker's rest differs, move it out whole.
        start = _open_marker_start(a[:p])
        if start >= 0:
            p = start
            changed = True
        # The suffix starts inside a marker: its head differs, move the tail out whole.
        tail = _unopened_marker_end(a[len(a) - s:]) if s else -1
        if tail > 0:
            s -= tail
            changed = True
        if not changed:
            break
    return DiffSplit(a[:p], a[p:len(a) - s], b[p:len(b) - s], a[len(a) - s:] if s else "")


@dataclass(frozen=True)
class Segment:
    """A run of text, or a whole ``<...>`` / ``[...]`` marker."""

    text: str
    is_marker: bool


def segmentize_markers(text: str) -> list[Segment]:
    """Split ``text`` into markers (``<...>``, ``[...]``) and the text between them."""
    out: list[Segment] = []
    i = 0
    buf_start = 0
    while i < len(text):
        c = text[i]
        close = _CLOSERS.get(c)
        if close is not None:
            j = text.find(close, i + 1)
            nxt = min((k for k in (text.find(o, i + 1) for o in _CLOSERS) if k >= 0), default=-1)
            if j >= 0 and (nxt < 0 or j < nxt):
                if buf_start < i:
                    out.append(Segment(text[buf_start:i], False))
                out.append(Segment(text[i : j + 1], True))
                i = j + 1
                buf_start = i
                continue
        i += 1
    if buf_start < len(text):
        out.append(Segment(text[buf_start:], False))
    return out


def segment_diff(a: str, b: str) -> DiffSplit:
    """A diff at marker-segment granularity: when ``a`` is a prefix of ``b`` the
    difference is ``b``'s tail; otherwise whole segments are matched from the end
    and the start in turn (end first), so a turn-closing marker shared by both
    renders lands in the suffix.  Used to find the text that opens a role turn."""
    if b.startswith(a):
        return DiffSplit(a, "", b[len(a) :], "")
    sa = [s.text for s in segmentize_markers(a)]
    sb = [s.text for s in segmentize_markers(b)]
    p = s = 0
    while p + s < min(len(sa), len(sb)):
        moved = False
        if sa[len(sa) - 1 - s] == sb[len(sb) - 1 - s]:
            s += 1
            moved = True
        if p + s < min(len(sa), len(sb)) and sa[p] == sb[p]:
            p += 1
            moved = True
        if not moved:
            break
    prefix = "".join(sa[:p])
    suffix = "".join(sa[len(sa) - s :]) if s else ""
    return DiffSplit(prefix, "".join(sa[p : len(sa) - s]), "".join(sb[p : len(sb) - s]), suffix)


def appended(a: str, b: str) -> str:
    """What ``b`` adds after the end of ``a``: the exact tail when ``b`` extends
    ``a`` (a generation prompt is such a tail, wherever it falls relative to
    markers).  When the renders also differ earlier (a system block that
    depends on the turns), ``b`` is aligned on the longest end of ``a`` it
    contains (its last occurrence); with nothing in common, the diff's right
    side and suffix."""
    if b.startswith(a):
        return b[len(a) :]
    lo, hi = 0, len(a)  # the longest k with a[-k:] in b (containment shrinks as k grows)
    while lo < hi:
        k = (lo + hi + 1) // 2
        if a[-k:] in b:
            lo = k
        else:
            hi = k - 1
    if lo:
        return b[b.rfind(a[-lo:]) + lo :]
    split = diff_split(a, b)
    return split.right + split.suffix
