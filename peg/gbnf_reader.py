"""Reading GBNF grammars and matching text against them.

The reader accepts llama.cpp's GBNF dialect (rules ``name ::= ...``, literals
with escapes, character classes, ``.``, groups, ``* + ?`` and ``{m,n}``,
comments) and reports errors with line and column.  The matcher follows
llama.cpp's semantics: a set of grammar stacks advanced character by character
(nondeterministic, no backtracking), so it answers whether a string is accepted,
a valid prefix, or rejected at a position with the characters expected there.
"""

from __future__ import annotations

from dataclasses import dataclass

from peg.errors import GrammarError
from peg.status import Status
from peg.text import line_column

# -- AST --------------------------------------------------------------------


@dataclass(frozen=True)
class GChars:
    """One character in (or, negated, out of) inclusive ranges; ``any`` is ``.``."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False

    def matches(self, code: int) -> bool:
        return any(lo <= code <= hi for lo, hi in self.ranges) != self.negated

    def describe(self) -> str:
        if not self.ranges and self.negated:
            return "any character"
        body = "".join(chr(lo) if lo == hi else f"{chr(lo)}-{chr(hi)}" for lo, hi in self.ranges)
        return repr(f"[{'^' if self.negated else ''}{body}]")


@dataclass(frozen=True)
class GRef:
    name: str
    line: int
    column: int


@dataclass(frozen=True)
class GSeq:
    items: tuple[GExpr, ...]


@dataclass(frozen=True)
class GAlt:
    options: tuple[GExpr, ...]


@dataclass(frozen=True)
class GRepeat:
    item: GExpr
    min: int
    max: int | None


GExpr = GChars | GRef | GSeq | GAlt | GRepeat

ANY = GChars((), True)


# -- reader -----------------------------------------------------------------


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def where(self, pos: int | None = None) -> str:
        line, col = line_column(self.text, self.pos if pos is None else pos)
        return f"line {line}, column {col}"

    def line_col(self, pos: int) -> tuple[int, int]:
        return line_column(self.text, pos)

    def error(self, message: str, pos: int | None = None) -> GrammarError:
        return GrammarError(f"GBNF {self.where(pos)}: {message}")

    def skip(self, newlines: bool) -> None:
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if c == "#":
                while self.pos < len(t) and t[self.pos] != "\n":
                    self.pos += 1
            elif c in " \t\r" or (newlines and c == "\n"):
                self.pos += 1
            else:
                break

    def name(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] in "-_"):
            self.pos += 1
        if start == self.pos:
            raise self.error("expected a rule name")
        return self.text[start : self.pos]

    def at_rule_start(self) -> bool:
        save = self.pos
        try:
            self.skip(False)
            self.name()
            self.skip(False)
            return self.text.startswith("::=", self.pos)
        except GrammarError:
            return False
        finally:
            self.pos = save

    def grammar(self) -> dict[str, GExpr]:
        rules: dict[str, GExpr] = {}
        while True:
            self.skip(True)
            if self.pos >= len(self.text):
                break
            start = self.pos
            name = self.name()
            self.skip(False)
            if not self.text.startswith("::=", self.pos):
                raise self.error(f"expected '::=' after rule name {name!r}")
            self.pos += 3
            if name in rules:
                raise self.error(f"rule {name!r} defined twice", start)
            rules[name] = self.alternatives(nested=False)
        if not rules:
            raise GrammarError("GBNF line 1, column 1: empty grammar")
        return rules

    def alternatives(self, nested: bool) -> GExpr:
        options = [self.sequence(nested)]
        while True:
            self.skip(nested)
            if self.pos < len(self.text) and self.text[self.pos] == "|":
                self.pos += 1
                options.append(self.sequence(nested))
                continue
            if not nested and self.pos < len(self.text) and self.text[self.pos] == "\n":
                # A rule continues on the next line unless that line starts a rule.
                save = self.pos
                self.skip(True)
                if self.pos < len(self.text) and self.text[self.pos] == "|":
                    continue
                self.pos = save
            break
        return options[0] if len(options) == 1 else GAlt(tuple(options))

    def sequence(self, nested: bool) -> GExpr:
        items: list[GExpr] = []
        while True:
            self.skip(nested)
            if self.pos >= len(self.text):
                break
            c = self.text[self.pos]
            if c == "\n" and not nested:
                save = self.pos
                self.skip(True)
                if self.pos >= len(self.text) or self.at_rule_start() or self.text[self.pos] == "|":
                    self.pos = save
                    break
                continue
            if c in "|)":
                break
            items.append(self.postfix(self.atom()))
        return items[0] if len(items) == 1 else GSeq(tuple(items))

    def atom(self) -> GExpr:
        t = self.text
        c = t[self.pos]
        start = self.pos
        if c == '"':
            self.pos += 1
            chars: list[GExpr] = []
            while True:
                if self.pos >= len(t) or t[self.pos] == "\n":
                    raise self.error("unterminated string literal", start)
                if t[self.pos] == '"':
                    self.pos += 1
                    break
                code = self.char()
                chars.append(GChars(((code, code),)))
            return GSeq(tuple(chars))
        if c == "[":
            self.pos += 1
            negated = False
            if self.pos < len(t) and t[self.pos] == "^":
                negated = True
                self.pos += 1
            ranges: list[tuple[int, int]] = []
            while True:
                if self.pos >= len(t):
                    raise self.error("unterminated character class", start)
                if t[self.pos] == "]":
                    self.pos += 1
                    break
                lo = self.char()
                hi = lo
                if t.startswith("-", self.pos) and not t.startswith("-]", self.pos):
                    self.pos += 1
                    if self.pos >= len(t):
                        raise self.error("unterminated character class", start)
                    hi = self.char()
                ranges.append((lo, hi))
            return GChars(tuple(ranges), negated)
        if c == "(":
            self.pos += 1
            inner = self.alternatives(nested=True)
            self.skip(True)
            if self.pos >= len(t) or t[self.pos] != ")":
                raise self.error("expected ')'", start)
            self.pos += 1
            return inner
        if c == ".":
            self.pos += 1
            return ANY
        if c == "<":
            raise self.error("token syntax (<...>) is not supported")
        if c.isalnum() or c in "-_":
            line, col = self.line_col(self.pos)
            return GRef(self.name(), line, col)
        raise self.error(f"unexpected character {c!r}")

    def char(self) -> int:
        t = self.text
        if self.pos >= len(t):
            raise self.error("unexpected end of grammar")
        c = t[self.pos]
        if c != "\\":
            self.pos += 1
            return ord(c)
        if self.pos + 1 >= len(t):
            raise self.error("dangling escape")
        e = t[self.pos + 1]
        # exactly llama.cpp's escapes (its reader throws "unknown escape" on any other, \- included)
        simple = {"n": 10, "t": 9, "r": 13, "\\": 92, '"': 34, "[": 91, "]": 93}
        if e in simple:
            self.pos += 2
            return simple[e]
        widths = {"x": 2, "u": 4, "U": 8}
        if e in widths:
            digits = t[self.pos + 2 : self.pos + 2 + widths[e]]
            try:
                value = int(digits, 16)
            except ValueError:
                raise self.error(f"bad \\{e} escape") from None
            if len(digits) != widths[e]:
                raise self.error(f"bad \\{e} escape")
            self.pos += 2 + widths[e]
            return value
        raise self.error(f"unknown escape \\{e}")

    def postfix(self, item: GExpr) -> GExpr:
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if c == "*":
                item = GRepeat(item, 0, None)
            elif c == "+":
                item = GRepeat(item, 1, None)
            elif c == "?":
                item = GRepeat(item, 0, 1)
            elif c == "{":
                end = t.find("}", self.pos)
                if end < 0:
                    raise self.error("unterminated repetition")
                spec = t[self.pos + 1 : end].replace(" ", "")
                try:
                    if "," in spec:
                        lo_s, hi_s = spec.split(",", 1)
                        lo, hi = int(lo_s), (int(hi_s) if hi_s else None)
                    else:
                        lo = hi = int(spec)
                except ValueError:
                    raise self.error(f"bad repetition {{{spec}}}") from None
                item = GRepeat(item, lo, hi)
                self.pos = end
            else:
                break
            self.pos += 1
        return item


def read_gbnf(text: str) -> Grammar:
    """Read a GBNF grammar; raises GrammarError with line and column."""
    reader = _Reader(text)
    rules = reader.grammar()
    for expr in rules.values():
        for ref in _refs(expr):
            if ref.name not in rules:
                raise GrammarError(f"GBNF line {ref.line}, column {ref.column}: undefined rule {ref.name!r}")
    if "root" not in rules:
        raise GrammarError("GBNF: no 'root' rule")
    return Grammar(rules)


def _refs(expr: GExpr) -> list[GRef]:
    if isinstance(expr, GRef):
        return [expr]
    if isinstance(expr, GSeq):
        return [r for i in expr.items for r in _refs(i)]
    if isinstance(expr, GAlt):
        return [r for i in expr.options for r in _refs(i)]
    if isinstance(expr, GRepeat):
        return _refs(expr.item)
    return []


# -- matcher ----------------------------------------------------------------


#: how a match's outcome reads
_SAID = {Status.SUCCESS: "accepted", Status.NEED_MORE: "valid prefix", Status.FAILURE: "rejected"}


@dataclass(frozen=True)
class MatchResult:
    """What the matcher found: accepted, a valid prefix, or rejected at ``position``."""

    status: Status
    position: int
    expected: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return self.status is Status.SUCCESS

    def message(self) -> str:
        if self.status is Status.FAILURE:
            return f"rejected at offset {self.position}: expected {', '.join(self.expected) or 'end of input'}"
        return _SAID[self.status]


# Flattened form: rule id -> alternatives -> elements (GChars or int rule id).
_Elem = GChars | int
_Frame = tuple[int, int, int]  # (rule, alternative, position)


class Grammar:
    """A GBNF grammar, flattened for the stack matcher."""

    def __init__(self, rules: dict[str, GExpr]):
        self._ids: dict[str, int] = {}
        self._alts: list[list[tuple[_Elem, ...]]] = []
        for name in rules:
            self._rule_id(name)
        for name, expr in rules.items():
            self._alts[self._ids[name]] = self._alternatives(expr)
        self._check_left_recursion()

    def _rule_id(self, name: str) -> int:
        if name not in self._ids:
            self._ids[name] = len(self._alts)
            self._alts.append([])
        return self._ids[name]

    def _new_rule(self, alts: list[tuple[_Elem, ...]]) -> int:
        self._alts.append(alts)
        return len(self._alts) - 1

    def _alternatives(self, expr: GExpr) -> list[tuple[_Elem, ...]]:
        if isinstance(expr, GAlt):
            return [self._sequence(o) for o in expr.options]
        return [self._sequence(expr)]

    def _sequence(self, expr: GExpr) -> tuple[_Elem, ...]:
        items = expr.items if isinstance(expr, GSeq) else (expr,)
        out: list[_Elem] = []
        for item in items:
            out.extend(self._element(item))
        return tuple(out)

    def _element(self, expr: GExpr) -> list[_Elem]:
        if isinstance(expr, GChars):
            return [expr]
        if isinstance(expr, GRef):
            return [self._ids[expr.name]]
        if isinstance(expr, GSeq):
            return list(self._sequence(expr))
        if isinstance(expr, GAlt):
            return [self._new_rule(self._alternatives(expr))]
        if isinstance(expr, GRepeat):
            item = self._sequence(expr.item)
            out: list[_Elem] = []
            for _ in range(expr.min):
                out.extend(item)
            if expr.max is None:
                star = self._new_rule([])
                self._alts[star] = [item + (star,), ()]
                out.append(star)
            else:
                tail: tuple[_Elem, ...] = ()
                for _ in range(expr.max - expr.min):
                    opt = self._new_rule([item + tail, ()])
                    tail = (opt,)
                out.extend(tail)
            return out
        raise TypeError(expr)

    def _check_left_recursion(self) -> None:
        nullable = [False] * len(self._alts)
        changed = True
        while changed:
            changed = False
            for rid, alts in enumerate(self._alts):
                if not nullable[rid] and any(all(isinstance(e, int) and nullable[e] for e in alt) for alt in alts):
                    nullable[rid] = changed = True
        names = {v: k for k, v in self._ids.items()}
        # Generated rules (groups, repetitions of nullable items) may cycle
        # harmlessly: the expansion de-duplicates stacks.  Named rules may not.
        for start in names:
            seen: set[int] = set()
            todo = [start]
            while todo:
                rid = todo.pop()
                for alt in self._alts[rid]:
                    for e in alt:
                        if isinstance(e, GChars):
                            break
                        if e == start:
                            raise GrammarError(f"GBNF: left recursion in rule {names.get(start, '(group)')!r}")
                        if e not in seen:
                            seen.add(e)
                            todo.append(e)
                        if not nullable[e]:
                            break

    # -- stacks ---------------------------------------------------------------
    def _expand(self, stack: tuple[_Frame, ...], out: set[tuple[_Frame, ...]]) -> None:
        todo = [stack]
        seen: set[tuple[_Frame, ...]] = set()
        while todo:
            s = todo.pop()
            if s in seen:
                continue
            seen.add(s)
            if not s:
                out.add(s)
                continue
            rid, aid, pos = s[-1]
            alt = self._alts[rid][aid]
            if pos == len(alt):
                todo.append(s[:-1])
                continue
            elem = alt[pos]
            if isinstance(elem, GChars):
                out.add(s)
                continue
            base = s[:-1] + (((rid, aid, pos + 1),) if pos + 1 < len(alt) else ())
            for b in range(len(self._alts[elem])):
                todo.append(base + ((elem, b, 0),))

    def initial(self) -> set[tuple[_Frame, ...]]:
        stacks: set[tuple[_Frame, ...]] = set()
        root = self._ids["root"]
        for b in range(len(self._alts[root])):
            self._expand(((root, b, 0),), stacks)
        return stacks

    def advance(self, stacks: set[tuple[_Frame, ...]], code: int) -> set[tuple[_Frame, ...]]:
        out: set[tuple[_Frame, ...]] = set()
        for s in stacks:
            if not s:
                continue
            rid, aid, pos = s[-1]
            elem = self._alts[rid][aid][pos]
            if isinstance(elem, GChars) and elem.matches(code):
                self._expand(s[:-1] + ((rid, aid, pos + 1),), out)
        return out

    def expected(self, stacks: set[tuple[_Frame, ...]]) -> tuple[str, ...]:
        found = set()
        for s in stacks:
            if s:
                rid, aid, pos = s[-1]
                elem = self._alts[rid][aid][pos]
                if isinstance(elem, GChars):
                    found.add(elem.describe())
        return tuple(sorted(found))

    def match(self, text: str) -> MatchResult:
        """Accepted, valid prefix, or rejected at a position (with what was expected)."""
        stacks = self.initial()
        for i, c in enumerate(text):
            nxt = self.advance(stacks, ord(c))
            if not nxt:
                return MatchResult(Status.FAILURE, i, self.expected(stacks))
            stacks = nxt
        if () in stacks:
            return MatchResult(Status.SUCCESS, len(text))
        return MatchResult(Status.NEED_MORE, len(text), self.expected(stacks))
