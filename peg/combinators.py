"""PEG parser nodes and the builder functions that make them.

Nodes are immutable and print themselves (``dump()``) in the reference's style:
``Sequence(Literal(<think>), Tag(reasoning, Until(</think>)), ...)``.  ``a + b``
makes a sequence and ``a | b`` an ordered choice.  Recursion goes through named
rules: ``rule("value")`` makes one, whose ``body`` recurs through ``Ref(rule)``.

Each builder's docstring gives its meaning in PEG notation (``a b`` sequence,
``a / b`` ordered choice, ``a?`` ``a*`` ``a+`` ``a{m,n}`` repetition, ``&a``
and ``!a`` lookahead, ``.`` any character); ``peg.gbnf_writer`` writes the same
trees as GBNF, where lookaheads constrain nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

UNBOUNDED = -1


class Parser:
    """Base of all parser nodes."""

    def __add__(self, other: Parser) -> Parser:
        return seq(self, other)

    def __or__(self, other: Parser) -> Parser:
        return choice(self, other)

    def children(self) -> tuple[Parser, ...]:
        """Direct sub-parsers (for walking the tree)."""
        return ()

    def dump(self) -> str:
        """One-line printable form (as the reference's parser dump)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.dump()

    def walk(self) -> Iterator[Parser]:
        """This node and every node below it (each rule body once)."""
        seen: set[int] = set()
        stack: list[Parser] = [self]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield node
            stack.extend(reversed(node.children()))


@dataclass(frozen=True, eq=False)
class Literal(Parser):
    text: str

    def dump(self) -> str:
        return f"Literal({self.text})"


@dataclass(frozen=True, eq=False)
class CharClass(Parser):
    """One character out of ``ranges`` (pairs of inclusive bounds), or not, if negated;
    repeated between ``min`` and ``max`` times."""

    ranges: tuple[tuple[str, str], ...]
    negated: bool = False
    min: int = 1
    max: int = 1

    def matches(self, c: str) -> bool:
        inside = any(lo <= c <= hi for lo, hi in self.ranges)
        return inside != self.negated

    def spec(self) -> str:
        body = "".join(lo if lo == hi else f"{lo}-{hi}" for lo, hi in self.ranges)
        return f"[{'^' if self.negated else ''}{body}]"

    def dump(self) -> str:
        return f"CharRepeat({self.spec()}, {self.min}, {_bound(self.max)})"


@dataclass(frozen=True, eq=False)
class Sequence(Parser):
    items: tuple[Parser, ...]

    def children(self) -> tuple[Parser, ...]:
        return self.items

    def dump(self) -> str:
        return f"Sequence({', '.join(p.dump() for p in self.items)})"


@dataclass(frozen=True, eq=False)
class Choice(Parser):
    options: tuple[Parser, ...]

    def children(self) -> tuple[Parser, ...]:
        return self.options

    def dump(self) -> str:
        return f"Choice({', '.join(p.dump() for p in self.options)})"


@dataclass(frozen=True, eq=False)
class Repetition(Parser):
    item: Parser
    min: int = 0
    max: int = UNBOUNDED

    def children(self) -> tuple[Parser, ...]:
        return (self.item,)

    def dump(self) -> str:
        return f"Repetition({self.item.dump()}, {self.min}, {_bound(self.max)})"


@dataclass(frozen=True, eq=False)
class Until(Parser):
    """Everything up to (not including) the first of ``delimiters``, or to the
    end; where no delimiter follows, the text ends before a run of ``stops``
    (with whitespace between them) that ends the input.  On partial input,
    the text shown stops short of the first of ``held`` too (and of a tail that
    may begin one): texts where another reading of the same input would end
    it (a string left unclosed, recovered at the next argument)."""

    delimiters: tuple[str, ...]
    stops: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    #: a character after which the next one is never a delimiter (a string's
    #: backslash); one followed by a newline, or by nothing on final input, ends the text
    escape: str = ""
    #: what must read from a delimiter for the text to end there: the text ends
    #: at the first delimiter from which ``then`` matches (a look-ahead), not at
    #: the first one found (a closer quoted inside a value is the value's text).
    #: None: the first delimiter.
    then: Parser | None = None
    #: on partial input, a delimiter from which ``then`` ran out of input before
    #: it was decided: True ends the text there for now (what follows is read as
    #: what ``then`` starts, a call shown as it is written); False holds the
    #: text from it until more input decides
    tentative: bool = False
    #: delimiters that end the text only where none of ``delimiters`` does (a
    #: repair: a value's closer left out ends it at the next argument's name),
    #: each only where ``repair_then`` reads from it; on partial input the text
    #: is held from the first of them (its own delimiter may still come)
    repairs: tuple[str, ...] = ()
    repair_then: Parser | None = None

    def children(self) -> tuple[Parser, ...]:
        return tuple(n for n in (self.then, self.repair_then) if n is not None)

    def dump(self) -> str:
        stops = f"; stops: {' | '.join(self.stops)}" if self.stops else ""
        held = f"; held: {' | '.join(self.held)}" if self.held else ""
        escape = f"; escape: {self.escape}" if self.escape else ""
        then = f"; {'tentatively ' if self.tentative else ''}then: {_name_of(self.then)}" if self.then is not None else ""
        repairs = f"; else: {' | '.join(self.repairs)}" if self.repairs else ""
        return f"Until({' | '.join(self.delimiters)}{stops}{held}{escape}{then}{repairs})"


@dataclass(frozen=True, eq=False)
class Rest(Parser):
    """Everything to the end, less a run of ``stops`` that ends the input."""

    stops: tuple[str, ...] = ()

    def dump(self) -> str:
        return f"Rest(stops: {' | '.join(self.stops)})" if self.stops else "Rest"


@dataclass(frozen=True, eq=False)
class Space(Parser):
    """Zero or more whitespace characters."""

    def dump(self) -> str:
        return "Space"


@dataclass(frozen=True, eq=False)
class Eps(Parser):
    def dump(self) -> str:
        return "Epsilon"


@dataclass(frozen=True, eq=False)
class End(Parser):
    def dump(self) -> str:
        return "End"


@dataclass(frozen=True, eq=False)
class Peek(Parser):
    item: Parser

    def children(self) -> tuple[Parser, ...]:
        return (self.item,)

    def dump(self) -> str:
        return f"Peek({self.item.dump()})"


@dataclass(frozen=True, eq=False)
class Not(Parser):
    item: Parser

    def children(self) -> tuple[Parser, ...]:
        return (self.item,)

    def dump(self) -> str:
        return f"Not({self.item.dump()})"


@dataclass(frozen=True, eq=False)
class Atomic(Parser):
    """All or nothing under partial input: an incomplete match contributes no tree."""

    item: Parser

    def children(self) -> tuple[Parser, ...]:
        return (self.item,)

    def dump(self) -> str:
        return f"Atomic({self.item.dump()})"


@dataclass(frozen=True, eq=False)
class Tag(Parser):
    """A named capture the message mapper reads; ``marked``: a parse that
    captures it says so (``ParseResult.marked``: a reader that looks for such
    captures walks the tree only then)."""

    name: str
    item: Parser
    marked: bool = False

    def children(self) -> tuple[Parser, ...]:
        return (self.item,)

    def dump(self) -> str:
        return f"Tag({self.name}, {self.item.dump()})"


@dataclass(frozen=True, eq=False)
class Json(Parser):
    """A JSON value (lenient about schemas; partial-aware).  On partial input,
    a value still being written shows nothing from the first of ``held`` on,
    nor a tail that may begin one: texts at which another reading of the same
    input would end it (a parser's recovery of a value that breaks later)."""

    held: tuple[str, ...] = ()

    def dump(self) -> str:
        return f"Json(held: {' | '.join(self.held)})" if self.held else "Json"


@dataclass(frozen=True, eq=False)
class Schema(Parser):
    """``item`` (usually :class:`Json`) described by a JSON schema, used for GBNF."""

    item: Parser
    name: str
    schema: Mapping[str, Any] = field(default_factory=dict)

    def children(self) -> tuple[Parser, ...]:
        return (self.item,)

    def dump(self) -> str:
        return f"Schema({self.item.dump()}, {json.dumps(self.schema, sort_keys=True)})"


@dataclass(eq=False)
class Rule(Parser):
    """A named rule; its body may refer back to it through :class:`Ref`."""

    name: str
    body: Parser | None = None

    def children(self) -> tuple[Parser, ...]:
        return (self.body,) if self.body is not None else ()

    def dump(self) -> str:
        return f"Rule({self.name}, {self.body.dump() if self.body else '?'})"


@dataclass(frozen=True, eq=False)
class Ref(Parser):
    """A reference to a rule by name, resolved in a :class:`Grammar`'s rule table."""

    rule: Rule

    def dump(self) -> str:
        return f"Ref({self.rule.name})"


def _name_of(node: Parser) -> str:
    """A rule by its name (its body prints where it is defined), else the node's dump."""
    if isinstance(node, Rule):
        return node.name
    if isinstance(node, Ref):
        return node.rule.name
    return node.dump()


def _bound(n: int) -> str:
    return "unbounded" if n == UNBOUNDED else str(n)


# -- builders ---------------------------------------------------------------


def literal(text: str) -> Parser:
    """Exactly ``text``: ``"text"`` (the empty literal is epsilon, ``""``)."""
    return Literal(text) if text else Eps()


def seq(*items: Parser) -> Parser:
    """All of ``items`` in order: ``a b c`` (nested sequences are flattened)."""
    flat: list[Parser] = []
    for item in items:
        if isinstance(item, Sequence):
            flat.extend(item.items)
        elif not isinstance(item, Eps) or len(items) == 1:
            flat.append(item)
    if not flat:
        return Eps()
    return flat[0] if len(flat) == 1 else Sequence(tuple(flat))


def choice(*options: Parser) -> Parser:
    """The first of ``options`` that matches: ``a / b`` (PEG's ordered choice;
    GBNF writes ``a | b``; nested choices are flattened)."""
    flat: list[Parser] = []
    for option in options:
        flat.extend(option.options if isinstance(option, Choice) else [option])
    return flat[0] if len(flat) == 1 else Choice(tuple(flat))


def optional(item: Parser) -> Parser:
    """``item`` or nothing: ``a?``."""
    return Repetition(item, 0, 1)


def repeat(item: Parser, min: int = 0, max: int = UNBOUNDED) -> Parser:
    """``item`` ``min`` to ``max`` times (``max`` UNBOUNDED: no limit): ``a{min,max}``."""
    return Repetition(item, min, max)


def zero_or_more(item: Parser) -> Parser:
    """``item`` any number of times: ``a*``."""
    return Repetition(item, 0, UNBOUNDED)


def one_or_more(item: Parser) -> Parser:
    """``item`` at least once: ``a+``."""
    return Repetition(item, 1, UNBOUNDED)


def until(
    *delimiters: str,
    stops: tuple[str, ...] = (),
    held: Iterable[str] = (),
    escape: str = "",
    then: Parser | None = None,
    tentative: bool = False,
    repairs: Iterable[str] = (),
    repair_then: Parser | None = None,
) -> Parser:
    """Everything up to the first of ``delimiters``: ``(!d1 !d2 .)*`` (empty
    ones are ignored; on partial input, text that may begin a delimiter waits,
    and so does text from the first of ``held`` on: see :class:`Until`).
    Where no delimiter follows, the text ends before a trailing run of
    ``stops`` (end-of-turn markers a parser drops; a grammar reads none).
    With ``escape`` (one character), the inside of a quoted string:
    ``(!d1 !d2 !e . | e [^\n])*``, scanned in one pass.  With ``then``, up to
    the first delimiter from which ``then`` reads: ``(!(d1 &then) !(d2 &then) .)*``
    (a grammar writes it as without: look-aheads constrain nothing); on
    partial input, see :attr:`Until.tentative`.  With ``repairs``, up to the
    first of them from which ``repair_then`` reads, where no delimiter ends it
    (see :attr:`Until.repairs`)."""
    assert len(escape) <= 1, escape
    kept = tuple(r for r in dict.fromkeys(repairs) if r and r not in delimiters)
    return Until(
        tuple(d for d in delimiters if d), tuple(s for s in stops if s), tuple(h for h in held if h), escape, then, tentative, kept, repair_then
    )


def rest(stops: tuple[str, ...] = ()) -> Parser:
    """Everything to the end of the input: ``.*`` (less a trailing run of ``stops``, as :func:`until`)."""
    return Rest(tuple(s for s in stops if s))


def space() -> Parser:
    """Whitespace, possibly none: ``[ \\t\\r\\n]*``."""
    return Space()


def eps() -> Parser:
    """The empty match: ``""``."""
    return Eps()


def end() -> Parser:
    """The end of the input: ``!.``."""
    return End()


def peek(item: Parser) -> Parser:
    """``item`` matches here, but is not consumed: ``&a`` (no GBNF form: constrains nothing)."""
    return Peek(item)


def negate(item: Parser) -> Parser:
    """``item`` does not match here; nothing is consumed: ``!a`` (no GBNF form)."""
    return Not(item)


def atomic(item: Parser) -> Parser:
    """``item`` as a whole: on partial input it matches completely or not at all
    (a name is not shown half-written); in a grammar, just ``a``."""
    return Atomic(item)


def tag(name: str, item: Parser, marked: bool = False) -> Parser:
    """``item``, captured in the parse tree as a node called ``name`` (the
    readers find what a parser read by these names); in a grammar, just ``a``.
    ``marked``: a parse that captures it sets ``ParseResult.marked``."""
    return Tag(name, item, marked)


def json_value(held: Iterable[str] = ()) -> Parser:
    """One JSON value: ``json-value`` (the GBNF of JSON; with partial input, a
    value still being written, shown short of any of ``held``: see :class:`Json`)."""
    return Json(tuple(h for h in held if h))


def schema(item: Parser, name: str, json_schema: Mapping[str, Any]) -> Parser:
    """``item``, which a grammar constrains to ``json_schema`` (a rule named
    ``name``); the parser reads any JSON there."""
    return Schema(item, name, dict(json_schema))


def chars(spec: str, min: int = 1, max: int = 1) -> Parser:
    """A character class such as ``"[a-z_]"`` or ``"[^\\n]"``, repeated min..max:
    ``[a-z_]{min,max}``."""
    if not (spec.startswith("[") and spec.endswith("]")):
        raise ValueError(f"character class must look like [...]: {spec!r}")
    body = spec[1:-1]
    negated = body.startswith("^")
    if negated:
        body = body[1:]
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            c = {"n": "\n", "t": "\t", "r": "\r"}.get(body[i + 1], body[i + 1])
            i += 1
        if i + 2 < len(body) and body[i + 1] == "-":
            ranges.append((c, body[i + 2]))
            i += 3
            continue
        ranges.append((c, c))
        i += 1
    return CharClass(tuple(ranges), negated, min, max)


def rule(name: str, body: Parser | None = None) -> Rule:
    """A named rule: ``name ::= body``.  For recursion, make the rule first and
    set ``r.body = ...`` later; the body recurs through ``Ref(r)``."""
    return Rule(name, body)
