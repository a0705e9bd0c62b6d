"""A small validator of parser trees: what a PEG cannot mean.

- **Left recursion**: a rule reached again, at the same position, before any
  input is consumed (``r = r "a" | "b"``): a PEG loops there.
- **Shadowed alternatives**: an alternative a choice never reaches as a whole,
  because an earlier one already succeeds on everything it matches: one that
  matches the empty text (``ε | "a"``, ``"a"* | "b"``), or a literal that is a
  prefix of a later literal (``"a" | "ab"``).

:func:`problems` lists them, each with where it is (the rule it is in); the
tests run it over every parser the project builds.
"""

from __future__ import annotations

from peg.combinators import (
    Atomic,
    CharClass,
    Choice,
    End,
    Eps,
    Json,
    Literal,
    Not,
    Parser,
    Peek,
    Ref,
    Repetition,
    Rest,
    Rule,
    Schema,
    Sequence,
    Space,
    Tag,
    Until,
)


def problems(root: Parser) -> list[str]:
    """Every left recursion and shadowed alternative in ``root``'s tree, once each."""
    out: list[str] = []
    nullable = _Nullable()
    seen: set[int] = set()
    for node, rule in _walk(root):
        if id(node) in seen:
            continue
        seen.add(id(node))
        where = f" (in rule {rule})" if rule else ""
        if isinstance(node, Rule) and _left_reaches(node, node, nullable, set()):
            out.append(f"left recursion: rule {node.name} reaches itself before consuming input")
        if isinstance(node, Choice):
            out.extend(f"{msg}{where}" for msg in _shadowed(node, nullable))
    return out


def _children(node: Parser) -> tuple[Parser, ...]:
    """What the walk visits under ``node``: its sub-parsers, and a reference's rule."""
    return (node.rule,) if isinstance(node, Ref) else node.children()


def _walk(root: Parser) -> list[tuple[Parser, str]]:
    """Every node once, with the name of the nearest rule above it."""
    out: list[tuple[Parser, str]] = []
    stack: list[tuple[Parser, str]] = [(root, "")]
    visited: set[int] = set()
    while stack:
        node, rule = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        out.append((node, rule))
        inner = node.name if isinstance(node, Rule) else rule
        stack.extend((child, inner) for child in _children(node))
    return out


class _Nullable:
    """Whether a node can succeed without consuming input (memoised; a rule
    being decided counts as not nullable, which ends the recursion)."""

    def __init__(self) -> None:
        self._known: dict[int, bool] = {}

    def __call__(self, node: Parser) -> bool:
        key = id(node)
        if key in self._known:
            return self._known[key]
        self._known[key] = False  # (while deciding)
        self._known[key] = result = self._decide(node)
        return result

    def _decide(self, node: Parser) -> bool:
        if isinstance(node, (Eps, Space, End, Peek, Not, Rest, Until)):
            return True  # (until/rest may stop at once; end/peek/not consume nothing)
        if isinstance(node, Literal):
            return node.text == ""
        if isinstance(node, CharClass):
            return node.min == 0
        if isinstance(node, Json):
            return False
        if isinstance(node, Sequence):
            return all(self(item) for item in node.items)
        if isinstance(node, Choice):
            return any(self(option) for option in node.options)
        if isinstance(node, Repetition):
            return node.min == 0 or self(node.item)
        if isinstance(node, (Atomic, Tag, Schema)):
            return self(node.item)
        if isinstance(node, Rule):
            return node.body is not None and self(node.body)
        if isinstance(node, Ref):
            return self(node.rule)
        return False


def _left_reaches(node: Parser, target: Rule, nullable: _Nullable, seen: set[int]) -> bool:
    """Whether ``target`` is reached from ``node`` before any input is consumed."""
    for child in _left_children(node, nullable):
        if child is target:
            return True
        if id(child) not in seen:
            seen.add(id(child))
            if _left_reaches(child, target, nullable, seen):
                return True
    return False


def _left_children(node: Parser, nullable: _Nullable) -> list[Parser]:
    """The children a node may try at its own start position."""
    if isinstance(node, Sequence):
        out = []
        for item in node.items:
            out.append(item)
            if not nullable(item):
                break
        return out
    return list(_children(node))


def _shadowed(node: Choice, nullable: _Nullable) -> list[str]:
    out = []
    for i, earlier in enumerate(node.options):
        later_options = node.options[i + 1 :]
        if not later_options:
            break
        if _always_succeeds(earlier, nullable):
            out.append(f"shadowed alternative: {_short(later_options[0])} comes after {_short(earlier)}, which always succeeds")
            break
        if isinstance(earlier, Literal) and earlier.text:
            for later in later_options:
                if isinstance(later, Literal) and later.text != earlier.text and later.text.startswith(earlier.text):
                    out.append(f"shadowed alternative: {later.text!r} comes after its prefix {earlier.text!r}")
    return out


def _short(node: Parser) -> str:
    text = node.dump()
    return text if len(text) <= 60 else text[:57] + "..."


def _always_succeeds(node: Parser, nullable: _Nullable) -> bool:
    """A node that succeeds on any input (it cannot fail): the empty match,
    an optional or repeated item, a space run, ``rest``."""
    if isinstance(node, (Eps, Space, Rest)):
        return True
    if isinstance(node, Repetition):
        return node.min == 0
    if isinstance(node, (Atomic, Tag)):
        return _always_succeeds(node.item, nullable)
    if isinstance(node, Sequence):
        return all(_always_succeeds(item, nullable) for item in node.items)
    if isinstance(node, Choice):
        return any(_always_succeeds(option, nullable) for option in node.options)
    if isinstance(node, Rule):
        return node.body is not None and _always_succeeds(node.body, nullable)
    return False


__all__ = ["problems"]
