"""Finding markers (``<...>`` and ``[...]`` tokens) around probe text in renders.

A *marker* is a ``<...>``, ``[...]`` or ``◁...▷`` run with no nested opener, the shape
special tokens take in chat templates (``<think>``, ``[TOOL_CALLS]``,
``<｜tool▁sep｜>``, ``<|tool_call:begin|>``).  These helpers answer the
questions the analysis phases ask of a render: which marker sits right before
or after a needle, what text separates them, where the first or last marker of
a span is.
"""

from __future__ import annotations

import re

from peg.text import WS as _WS

#: (a marker in a bracket alphabet, ``]<]name[>[``, mirrors its brackets outside
#: too: one marker, not a ``<]name[>`` between two stray brackets)
MARKER_RE = re.compile(r"\]<\][^<>\n]*\[>\[|<[^<>\n]*>|\[[^\[\]\n]*\]|◁[^◁▷\n]*▷")
#: Text holding one of these is markup (``<function=``, ``>``, ``[TOOL_CALLS]``,
#: ``<|channel|>``, ``<｜tool▁sep｜>``); plain words such as harmony's
#: ``functions.`` are text a model may write in prose and a tokenizer splits.
MARKUP_CHARS = frozenset("<>[]|◁▷｜")


def first_marker(text: str) -> re.Match[str] | None:
    """The first marker in ``text``."""
    return MARKER_RE.search(text)


def last_marker(text: str, end: int | None = None) -> re.Match[str] | None:
    """The last marker in ``text`` (in ``text[:end]`` when ``end`` is given)."""
    found = None
    for match in MARKER_RE.finditer(text, 0, len(text) if end is None else end):
        found = match
    return found


def from_last_marker(text: str) -> str:
    """The last marker of ``text`` and everything after it, or ``""`` if there is no marker."""
    match = last_marker(text)
    return text[match.start() :] if match else ""


def up_to_first_marker(text: str) -> str:
    """The text before the first marker (all of ``text`` when it has none)."""
    match = first_marker(text)
    return text[: match.start()] if match else text


def through_first_marker(text: str) -> str:
    """Text up to and including the first marker and the whitespace after it (``""`` if none)."""
    match = first_marker(text)
    if not match:
        return ""
    end = match.end()
    while end < len(text) and text[end] in _WS:
        end += 1
    return text[:end]


def marker_before(text: str, pos: int) -> tuple[str, str] | None:
    """The marker ending right before ``text[pos:]`` (whitespace allowed between).

    Returns ``(marker, whitespace)`` or ``None`` when other text comes first."""
    j = pos
    while j > 0 and text[j - 1] in _WS:
        j -= 1
    match = last_marker(text[:j])
    if match and match.end() == j:
        return match.group(), text[j:pos]
    return None


def marker_after(text: str, pos: int) -> tuple[str, str, str] | None:
    """The marker starting right after ``text[:pos]`` (whitespace allowed between).

    Returns ``(leading whitespace, marker, trailing whitespace)`` or ``None``."""
    i = pos
    while i < len(text) and text[i] in _WS:
        i += 1
    match = MARKER_RE.match(text, i)
    if not match:
        return None
    k = match.end()
    while k < len(text) and text[k] in _WS:
        k += 1
    return text[pos:i], match.group(), text[match.end() : k]


def common_prefix(a: str, b: str) -> str:
    """The longest common prefix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b):  # noqa: B905 - stops at the shorter on purpose
        if x != y:
            break
        n += 1
    return a[:n]


def common_suffix(a: str, b: str) -> str:
    """The longest common suffix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(reversed(a), reversed(b)):  # noqa: B905 - stops at the shorter on purpose
        if x != y:
            break
        n += 1
    return a[len(a) - n :]


def strip_ws(text: str) -> str:
    """``text`` without surrounding whitespace."""
    return text.strip(_WS)


def lstrip_ws(text: str) -> str:
    """``text`` without leading whitespace."""
    return text.lstrip(_WS)
