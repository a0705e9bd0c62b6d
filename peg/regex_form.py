"""Parsers that capture nothing, as one regex each (the engine's fast path on
whole input).

A parser built only of literals, spaces, character classes, sequences,
choices, repetitions, look-aheads, ``end`` and rules that do not recurse
reads no tag and scans no text for a delimiter: on whole input, where it
matches and how far depends on the text alone.  PEG never backtracks into a
choice that matched or a repetition that stopped; a regex does, unless its
groups are atomic and its quantifiers possessive (Python 3.11 on).  Written
so, the regex matches exactly where the parser does, to the same end:

* a choice is ``(?>a|b)``: the first option that matches, kept;
* a repetition and a space are possessive (``(?:x){0,3}+``, ``[ \\t\\n\\r]*+``);
* ``peek`` and ``not`` are ``(?=x)`` and ``(?!x)``, ``end`` is ``\\Z``.

It does not say why it failed, nor whether partial input may yet match: the
engine uses it only on whole input, in its first pass (a failed parse is read
again node by node, for its expected set).  None where a parser captures,
scans (``until``, JSON, ``rest``), recurses, or on Python 3.10 (no atomic
groups).  What a parser that captures must begin with is a regex too
(:func:`prefix_pattern`): where it does not match, the parser cannot."""

from __future__ import annotations

import re
import sys

from peg.combinators import (
    UNBOUNDED,
    Atomic,
    CharClass,
    Choice,
    End,
    Eps,
    Literal,
    Not,
    Parser,
    Peek,
    Ref,
    Repetition,
    Rule,
    Schema,
    Sequence,
    Space,
    Tag,
)
from peg.first_chars import start_of

#: a longer regex is not made (a grammar whose rules repeat one another inline)
_MAX_SOURCE = 20_000

#: atomic groups and possessive quantifiers came with Python 3.11
SUPPORTED = sys.version_info >= (3, 11)
#: how a group that never gives back opens, and what makes a quantifier never
#: give back; before 3.11 plain groups and greedy quantifiers, which match
#: wherever the exact ones do and more: no exact regex, but still a prefix
_ATOMIC = "(?>" if SUPPORTED else "(?:"
_KEEP = "+" if SUPPORTED else ""


def pure_pattern(node: Parser) -> re.Pattern[str] | None:
    """The regex that matches exactly where ``node`` does on whole input, to
    the same end (kept on the node, made once); None where ``node`` captures,
    scans or recurses (see the module docstring)."""
    if "_pure" in node.__dict__:
        found: re.Pattern[str] | None = node.__dict__["_pure"]
        return found
    source = pure_source(node) if SUPPORTED else None
    pattern = None
    if source is not None:
        try:
            pattern = re.compile(source)
        except (re.error, RecursionError, OverflowError):  # (a class with a range upside down, a huge grammar)
            pattern = None
    node.__dict__["_pure"] = pattern
    return pattern


def pure_source(node: Parser) -> str | None:
    """The regex source of :func:`pure_pattern` (None: no such regex)."""
    if "_pure_source" not in node.__dict__:
        source = _source(node, frozenset())
        node.__dict__["_pure_source"] = source if source is None or len(source) <= _MAX_SOURCE else None
    found: str | None = node.__dict__["_pure_source"]
    return found


def _source(node: Parser, rules: frozenset[int]) -> str | None:
    if isinstance(node, Literal):
        return re.escape(node.text)
    if isinstance(node, Space):
        return r"[ \t\n\r]*" + _KEEP
    if isinstance(node, CharClass):
        return _char_class(node)
    if isinstance(node, Eps):
        return ""
    if isinstance(node, End):
        return r"\Z"
    if isinstance(node, Sequence):
        return _joined(node.items, "", rules)
    if isinstance(node, Choice):
        body = _joined(node.options, "|", rules)
        return None if body is None else f"{_ATOMIC}{body})"
    if isinstance(node, Repetition):
        return _repetition(node, rules)
    if isinstance(node, (Peek, Not, Atomic)):
        item = _source(node.item, rules)
        if item is None:
            return None
        return f"(?={item})" if isinstance(node, Peek) else f"(?!{item})" if isinstance(node, Not) else f"{_ATOMIC}{item})"
    if isinstance(node, Ref):
        return _source(node.rule, rules)
    if isinstance(node, Rule):
        if id(node) in rules or node.body is None:
            return None  # (a rule inside itself: no regex)
        return _source(node.body, rules | {id(node)})
    return None  # (tags, until, rest, JSON, schemas: they capture or scan)


def _joined(nodes: tuple[Parser, ...], separator: str, rules: frozenset[int]) -> str | None:
    parts: list[str] = []
    size = 0
    for item in nodes:
        part = _source(item, rules)
        if part is None:
            return None
        size += len(part)
        if size > _MAX_SOURCE:
            return None
        parts.append(part)  # (each part is a literal or a group: it concatenates as it stands)
    return separator.join(parts)


def _repetition(node: Repetition, rules: frozenset[int]) -> str | None:
    item = _source(node.item, rules)
    # (the engine counts an empty match once and stops: a regex may count it
    # again up to the minimum, so an item that may match nothing repeats at most once before)
    if item is None or (node.min > 1 and start_of(node.item)[1]):
        return None
    high = "" if node.max == UNBOUNDED else str(node.max)
    return f"(?:{item}){{{node.min},{high}}}{_KEEP}"


def _char_class(node: CharClass) -> str:
    if not node.ranges:  # (no character: nothing, or, negated, any)
        one = r"[\s\S]" if node.negated else "(?!)"
        return one if node.min == node.max == 1 else f"(?:{one}){{{node.min},{'' if node.max == UNBOUNDED else node.max}}}{_KEEP}"
    body = "".join(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}" for lo, hi in node.ranges)
    high = "" if node.max == UNBOUNDED else str(node.max)
    return f"[{'^' if node.negated else ''}{body}]{{{node.min},{high}}}{_KEEP}"


def prefix_pattern(node: Parser) -> re.Pattern[str] | None:
    """A regex that matches wherever ``node`` can match on whole input (a
    necessary condition, not a sufficient one): its exact regex where it
    captures nothing, else the exact regex of the items it begins with,
    through sequences, tags and rules, and of a choice, the options' own
    prefixes (kept on the node, made once).  None where nothing is required
    (it may begin with a scan, or match no text).  Where it does not match,
    ``node`` cannot: a look-ahead that fails at its first characters fails in
    one regex call, and the engine skips an option or stops a repetition
    there.  Before Python 3.11 the regex's groups and quantifiers give back,
    so it matches more: still a necessary condition."""
    if "_prefix" in node.__dict__:
        found: re.Pattern[str] | None = node.__dict__["_prefix"]
        return found
    source = _prefix(node, frozenset())
    pattern = None
    if source and len(source) <= _MAX_SOURCE:
        try:
            pattern = re.compile(source)
        except (re.error, RecursionError, OverflowError):
            pattern = None
        if pattern is not None and pattern.match("") is not None:
            pattern = None  # (it may match no text: it rules nothing out worth a regex call)
    node.__dict__["_prefix"] = pattern
    return pattern


def _prefix(node: Parser, rules: frozenset[int]) -> str:
    """The source of :func:`prefix_pattern` ("" where nothing is required)."""
    exact = _source(node, rules)
    if exact is not None:
        return exact
    if isinstance(node, Sequence):
        parts: list[str] = []
        for item in node.items:
            exact = _source(item, rules)
            if exact is None:  # (the first item whose end is not fixed: its own prefix, and no further)
                parts.append(_prefix(item, rules))
                break
            parts.append(exact)
        return "".join(parts)
    if isinstance(node, Choice):
        options = [_prefix(option, rules) for option in node.options]
        return "" if not all(options) else "(?:" + "|".join(options) + ")"
    if isinstance(node, (Tag, Atomic, Schema)):
        return _prefix(node.item, rules)
    if isinstance(node, Repetition):
        return _prefix(node.item, rules) if node.min >= 1 else ""
    if isinstance(node, Ref):
        return _prefix(node.rule, rules)
    if isinstance(node, Rule):
        if id(node) in rules or node.body is None:
            return ""
        return _prefix(node.body, rules | {id(node)})
    return ""  # (until, rest, JSON, look-aheads: anything, or nothing)
