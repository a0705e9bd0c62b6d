"""Running a parser over text, with partial-input semantics.

``parse(parser, text, partial=False)`` returns a :class:`ParseResult`:

* ``SUCCESS`` — the parser matched (``end`` tells how far);
* ``FAILURE`` — it did not; ``furthest``, ``expected`` and ``rule_stack`` say
  where and why (``message()`` renders a one-line message and a caret excerpt);
* ``NEED_MORE`` — only with ``partial=True``: the input ended where more input
  could still make it match.  The tree built so far is returned, so a streaming
  caller can show a partial message.

The tree holds only :class:`~peg.combinators.Tag` captures (:class:`TagNode`).
Named rules are memoised per position, so backtracking never repeats their work;
``until`` and literals scan with ``str.find``/``startswith``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from peg import regex_form
from peg.combinators import (
    UNBOUNDED,
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
from peg.first_chars import SPACE_PATTERN, run_pattern, start_of
from peg.json_scan import scan_json
from peg.partial import json_partial_end, longest_delimiter, partial_end, trailing_stops
from peg.regex_form import prefix_pattern, pure_pattern, pure_source
from peg.scanning import escaped_run, first_of
from peg.status import Status
from peg.text import WS, line_column

_SPACE = re.compile(SPACE_PATTERN)


class _CutText:
    """A capture's ``text``, cut from the parsed text when first read and kept
    on the capture (``functools.cached_property`` takes a lock on every first
    read before Python 3.12: a parse builds a capture per tag)."""

    def __get__(self, node: TagNode | None, owner: type | None = None) -> str:
        if node is None:  # (read on the class: the descriptor itself, as a property would be)
            return self  # type: ignore[return-value]
        text: str = node.source[node.start : node.end]
        node.__dict__["text"] = text
        return text


@dataclass(frozen=True)
class TagNode:
    """A tagged capture: its name, span, text and nested captures.

    ``complete`` is False when partial input ended inside it; ``closer`` is set
    on JSON captures cut short (the text that would close the value).
    ``source`` is the whole parsed text: a capture's ``text`` is cut from it
    when read (a call, its argument and its value do not each copy 100 KB).
    """

    name: str
    start: int
    end: int
    source: str = field(repr=False, compare=False)
    children: tuple[TagNode, ...] = ()
    complete: bool = True
    closer: str = ""

    #: the captured text
    text = _CutText()

    def find(self, name: str) -> list[TagNode]:
        """Every capture named ``name`` below this one, in order (the captures
        below are indexed by name on the first call: a call's mapping asks for
        several names)."""
        if not self.children:
            return []
        index = self.__dict__.get("_index")
        if index is None:
            index = self.__dict__["_index"] = _index(self.children)
        return list(index.get(name, _NO_NODES))


_NO_NODES: tuple[TagNode, ...] = ()


def _tag_node(name: str, start: int, end: int, source: str, children: tuple[TagNode, ...], complete: bool, closer: str) -> TagNode:
    """``TagNode(...)`` built without the frozen dataclass's ``__init__`` (the
    engine's hot path: it sets each field through ``object.__setattr__``, about
    three times the cost)."""
    node = _new_object(TagNode)
    node.__dict__.update(name=name, start=start, end=end, source=source, children=children, complete=complete, closer=closer)
    return node


_new_object = object.__new__


def _index(nodes: tuple[TagNode, ...]) -> dict[str, list[TagNode]]:
    """The captures in ``nodes`` and below, by name, each list in document order (one walk)."""
    out: dict[str, list[TagNode]] = {}
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        found = out.get(node.name)
        if found is None:
            out[node.name] = [node]
        else:
            found.append(node)
        if node.children:
            stack.extend(reversed(node.children))
    return out


@dataclass(frozen=True)
class ParseResult:
    """What :func:`parse` found."""

    status: Status
    end: int
    tree: tuple[TagNode, ...]
    text: str
    furthest: int = 0
    expected: frozenset[str] = frozenset()
    rule_stack: tuple[str, ...] = ()
    #: with ``NEED_MORE``: the primitive (``until``, ``rest``, JSON, literal...) that
    #: reached the end of the input, and the offset where it started matching
    frontier: tuple[Parser, int] | None = None
    #: a delimiter's look-ahead did not match somewhere (``Until.then``): text
    #: may hold a delimiter (a quoted marker) that no look-ahead accepted
    rejected: bool = False
    #: a marked capture (``Tag.marked``) matched somewhere: the tree may hold one
    #: (False: it holds none)
    marked: bool = False

    @property
    def success(self) -> bool:
        return self.status is Status.SUCCESS

    def find(self, name: str) -> list[TagNode]:
        """Every capture named ``name`` in the tree, in document order (indexed on the first call)."""
        index = self.__dict__.get("_index")
        if index is None:
            index = self.__dict__["_index"] = _index(self.tree)
        return list(index.get(name, _NO_NODES))

    def message(self) -> str:
        """A one-line description of a failure (empty when it succeeded)."""
        if self.status is not Status.FAILURE:
            return ""
        line, col = line_column(self.text, self.furthest)
        expected = ", ".join(sorted(self.expected)) or "nothing more"
        rules = f" (in {' > '.join(self.rule_stack)})" if self.rule_stack else ""
        found = repr(self.text[self.furthest : self.furthest + 12]) if self.furthest < len(self.text) else "end of input"
        return f"parse error at line {line}, column {col} (offset {self.furthest}): expected {expected}, found {found}{rules}"

    def excerpt(self, width: int = 60, origin: int = 0) -> str:
        """The input line around the failure with a caret under the position
        (the line begins at ``origin`` at the earliest: text before it, such as
        a prompt the input continues, is not shown)."""
        start = max(self.text.rfind("\n", 0, self.furthest) + 1, origin)
        end = self.text.find("\n", self.furthest)
        end = len(self.text) if end < 0 else end
        lo = max(start, self.furthest - width // 2)
        hi = min(end, lo + width)
        return self.text[lo:hi] + "\n" + " " * (self.furthest - lo) + "^"


# A match result: (status, end, nodes).  The status is one of these small ints
# (for speed), the engine's own codes for Status.SUCCESS, FAILURE and NEED_MORE.
_OK, _FAIL, _MORE = 0, 1, 2
_Result = tuple[int, int, tuple[TagNode, ...]]
_NONE: tuple[TagNode, ...] = ()


@dataclass
class _State:
    text: str
    partial: bool
    memo: dict[tuple[int, int], _Result] = field(default_factory=dict)
    #: for a memoised rule that ran out of input: what asked for more, and a JSON closer
    more_at: dict[tuple[int, int], tuple[tuple[Parser, int] | None, str]] = field(default_factory=dict)
    furthest: int = -1
    expected: set[str] = field(default_factory=set)
    rule_stack: list[str] = field(default_factory=list)
    furthest_stack: tuple[str, ...] = ()
    last_closer: str = ""  # closer of the JSON value that partial input cut short
    frontier: tuple[Parser, int] | None = None  # the primitive that asked for more input, and where it began
    #: (an ``until``, its position) -> where its delimiter was found, kept by a
    #: caller that parses ever longer versions of one text (a stream)
    found: dict[tuple[int, int], int] | None = None
    #: the furthest failure inside a look-ahead that did not match: (where, expected, rules)
    rejected: tuple[int, frozenset[str], tuple[str, ...]] | None = None
    #: a look-ahead did not match somewhere
    any_rejected: bool = False
    #: skip options that cannot begin at the next character: the same reading,
    #: but a failure's expected set is not complete (``parse`` then reads again without)
    fast: bool = False
    #: fast on whole input: a parser that captures nothing matches as one regex (``peg.regex_form``)
    regex: bool = False
    #: a marked capture (``Tag.marked``) matched somewhere
    marked: bool = False
    #: partial input that is all there is (an output cut short): a look-ahead
    #: that runs out of input reads (what it reads so far is what was written)
    cut: bool = False

    def more(self, node: Parser, pos: int, end: int) -> _Result:
        self.frontier = (node, pos)
        return _MORE, end, _NONE

    def expect(self, pos: int, what: str) -> None:
        if pos > self.furthest:
            self.furthest = pos
            self.expected = {what}
            self.furthest_stack = tuple(self.rule_stack)
        elif pos == self.furthest:
            self.expected.add(what)


def _match(node: Parser, st: _State, pos: int) -> _Result:
    return _DISPATCH[type(node)](node, st, pos)


def _literal(node: Literal, st: _State, pos: int) -> _Result:
    text, lit = st.text, node.text
    if text.startswith(lit, pos):
        return _OK, pos + len(lit), _NONE
    if st.partial and len(text) - pos < len(lit) and lit.startswith(text[pos:]):  # (no slice of a long rest)
        return st.more(node, pos, len(text))
    st.expect(pos, repr(lit))
    return _FAIL, pos, _NONE


def _charclass(node: CharClass, st: _State, pos: int) -> _Result:
    text = st.text
    count = 0
    limit = node.max if node.max != UNBOUNDED else len(text) - pos
    while count < limit and pos + count < len(text) and node.matches(text[pos + count]):
        count += 1
    if count < node.min:
        if st.partial and pos + count == len(text):
            return st.more(node, pos, len(text))
        st.expect(pos + count, node.spec())
        return _FAIL, pos, _NONE
    return _OK, pos + count, _NONE


def _sequence(node: Sequence, st: _State, pos: int) -> _Result:
    nodes: list[TagNode] = []
    dispatch = _DISPATCH
    text = st.text
    if st.regex:  # (each run of items that capture nothing is one regex: where it fails, the sequence does)
        for pattern, item in node.__dict__.get("_pure_runs") or _pure_runs(node):
            if pattern is not None:
                matched = pattern.match(text, pos)
                if matched is None:
                    return _FAIL, pos, _NONE
                pos = matched.end()
                continue
            status, pos, found = dispatch[type(item)](item, st, pos)
            if status == _FAIL:
                return _FAIL, pos, _NONE
            if found:
                nodes.extend(found)
        return _OK, pos, tuple(nodes) if nodes else _NONE
    for pattern, items in node.__dict__.get("_runs") or _runs(node):
        if pattern is not None:  # a run of literals and spaces, read in one regex match where it matches
            matched = pattern.match(text, pos)
            if matched is not None:
                pos = matched.end()
                continue
        for item in items:  # (else item by item: the failure's expected set, or partial input)
            status, pos, found = dispatch[type(item)](item, st, pos)
            if status == _FAIL:
                return _FAIL, pos, _NONE
            if found:
                nodes.extend(found)
            if status == _MORE:
                return _MORE, pos, tuple(nodes)
    return _OK, pos, tuple(nodes) if nodes else _NONE


def _runs(node: Sequence) -> tuple[tuple[re.Pattern[str] | None, tuple[Parser, ...]], ...]:
    """A sequence's items, each consecutive run of literals and spaces made one
    regex (kept on the node, made once).  The regex matches exactly where the
    items all match one after the other: a space is greedy, and a run never
    puts a literal that begins with whitespace after a space (a regex would
    give the space's whitespace back to it; PEG does not).  Matching, it takes
    them as the items would, and they record nothing on success; failing, the
    items run one by one, so the expected set and partial input are theirs."""
    steps: list[tuple[re.Pattern[str] | None, tuple[Parser, ...]]] = []
    run: list[Parser] = []

    def close() -> None:
        if len(run) > 1 and any(isinstance(item, Literal) for item in run):
            steps.append((re.compile(run_pattern(run)), tuple(run)))
        else:
            steps.extend((None, (item,)) for item in run)
        run.clear()

    for item in node.items:
        if isinstance(item, Literal) and item.text:
            if run and isinstance(run[-1], Space) and item.text[0] in WS:
                close()
            run.append(item)
        elif isinstance(item, Space):
            run.append(item)
        else:
            close()
            steps.append((None, (item,)))
    close()
    runs = tuple(steps)
    node.__dict__["_runs"] = runs
    return runs


def _pure_runs(node: Sequence) -> tuple[tuple[re.Pattern[str] | None, Parser], ...]:
    """A sequence's items for the regex pass: each run of items that capture
    nothing made one regex (``peg.regex_form``), the others as they are (kept
    on the node, made once)."""
    steps: list[tuple[re.Pattern[str] | None, Parser]] = []
    run: list[Parser] = []

    def close() -> None:
        if run:
            steps.append((pure_pattern(Sequence(tuple(run))), run[0]))
        run.clear()

    for item in node.items:
        if pure_source(item) is not None:
            run.append(item)
        else:
            close()
            steps.append((None, item))
    close()
    if any(pattern is None and pure_source(item) is not None for pattern, item in steps):  # (a regex too large: item by item)
        steps = [(None, item) for item in node.items]
    runs = tuple(steps)
    node.__dict__["_pure_runs"] = runs
    return runs


def _choice(node: Choice, st: _State, pos: int) -> _Result:
    if st.fast:
        text = st.text
        # (the next character; "" at the end of whole input, where nothing that
        # needs one matches; None at the end of partial input: anything may come)
        c = text[pos] if pos < len(text) else None if st.partial else ""
        whole = not st.partial
        for option, first, prefix, pure in node.__dict__.get("_firsts") or _firsts(node):
            if first is not None and c is not None and c not in first:
                continue  # (it cannot match here)
            if whole and pure is not None:  # (an option that captures nothing: one regex)
                matched = pure.match(text, pos)
                if matched is not None:
                    return _OK, matched.end(), _NONE
                continue
            if whole and prefix is not None and prefix.match(text, pos) is None:
                continue  # (what it must begin with is not here; on partial input it may yet come)
            result = _DISPATCH[type(option)](option, st, pos)
            if result[0] != _FAIL:
                return result
        return _FAIL, pos, _NONE
    for option in node.options:
        result = _DISPATCH[type(option)](option, st, pos)
        if result[0] != _FAIL:
            return result
    return _FAIL, pos, _NONE


def _first_chars(node: Parser) -> frozenset[str] | None:
    """What ``node`` must begin with to match (None: it may match no text, or begin with anything)."""
    first, empty = start_of(node)
    return None if empty else first


def _firsts(
    node: Choice,
) -> tuple[tuple[Parser, frozenset[str] | None, re.Pattern[str] | None, re.Pattern[str] | None], ...]:
    """A choice's options, each with its first characters and the regex of
    what it must begin with (``peg.regex_form.prefix_pattern``), and its
    exact regex where it captures nothing (kept on the node)."""
    firsts = tuple((option, _first_chars(option), prefix_pattern(option), pure_pattern(option)) for option in node.options)
    node.__dict__["_firsts"] = firsts
    return firsts


def _repetition(node: Repetition, st: _State, pos: int) -> _Result:
    nodes: list[TagNode] = []
    count = 0
    item = node.item
    first, prefix = (node.__dict__["_first"] if "_first" in node.__dict__ else _item_first(node)) if st.fast else (None, None)
    text, partial = st.text, st.partial
    if partial:
        prefix = None  # (on partial input what it must begin with may yet come)
    while node.max == UNBOUNDED or count < node.max:
        if first is not None and (text[pos] not in first if pos < len(text) else not partial):
            break  # (it cannot match here)
        if prefix is not None and prefix.match(text, pos) is None:
            break
        status, end, found = _DISPATCH[type(item)](item, st, pos)
        if status == _FAIL:
            break
        nodes.extend(found)
        if status == _MORE:
            return _MORE, end, tuple(nodes)
        count += 1
        if end == pos:  # no progress: stop (an empty match repeats forever)
            break
        pos = end
    if count < node.min:
        return _FAIL, pos, _NONE
    return _OK, pos, tuple(nodes)


def _item_first(node: Repetition) -> tuple[frozenset[str] | None, re.Pattern[str] | None]:
    """What a repetition's item must begin with (kept on the node)."""
    found = node.__dict__["_first"] = (_first_chars(node.item), prefix_pattern(node.item))
    return found


def _until(node: Until, st: _State, pos: int) -> _Result:
    text = st.text
    found_before = st.found
    if found_before is not None:
        hit = found_before.get((id(node), pos))
        if hit is not None:
            return _OK, hit, _NONE
    best = _first_unescaped(node, text, pos, st.partial) if node.escape else first_of(node.delimiters, text, pos)
    if node.then is not None:
        best, decided = _first_that_reads(node.then, st, best, functools.partial(_next_delimiter, node, st))
        if not decided:  # (partial input: what follows the delimiter may still read, or not)
            if node.tentative:
                return _OK, best, _NONE
            return st.more(node, pos, best)
    if best < 0 and node.repairs:
        repaired = _repaired_end(node, st, pos)
        if repaired is not None:
            return repaired
    if best >= 0 and node.held and st.partial and _undecided(node, text, pos, best):
        return st.more(node, pos, first_of(node.held, text, pos))
    if best >= 0:
        # valid for every longer text only if no delimiter starting before it could end past this one
        # (and never with a look-ahead: what reads from a delimiter may change as text comes)
        if found_before is not None and node.then is None and best + longest_delimiter(node.delimiters) - 1 <= len(text):
            found_before[(id(node), pos)] = best
        return _OK, best, _NONE
    if st.partial:
        # Hold back a tail that may be the start of a delimiter (``</thi``) or a stop.
        return st.more(node, pos, partial_end(node, text, pos))
    if node.stops:
        return _OK, trailing_stops(text, node.stops, pos, len(text)), _NONE
    return _OK, len(text), _NONE


def _repaired_end(node: Until, st: _State, pos: int) -> _Result | None:
    """Where an until that none of its own delimiters ends is ended by a
    repair (see ``Until.repairs``): on final input, at the first repair
    delimiter from which ``repair_then`` reads (None: none does); on partial
    input, held from the first repair delimiter (its own may still come)."""
    first = first_of(node.repairs, st.text, pos)
    if first < 0:
        return None
    if st.partial:
        return st.more(node, pos, first)
    if node.repair_then is None:
        return _OK, first, _NONE
    best, _ = _first_that_reads(node.repair_then, st, first, lambda i: first_of(node.repairs, st.text, i))
    return (_OK, best, _NONE) if best >= 0 else None


def _next_delimiter(node: Until, st: _State, at: int) -> int:
    """Where ``node``'s next delimiter starts at or after ``at`` (-1: none)."""
    return _first_unescaped(node, st.text, at, st.partial) if node.escape else first_of(node.delimiters, st.text, at)


def _first_that_reads(then: Parser, st: _State, first: int, following: Callable[[int], int]) -> tuple[int, bool]:
    """From the delimiter found at ``first`` on (``following(i)``: where the
    next one starts at or after ``i``), the first from which ``then`` matches
    (-1: none), and whether that is decided: on partial input, a delimiter
    from which ``then`` ran out of input is not (it may yet match or not; the
    text is shown up to it).  Each look-ahead is one parse from a delimiter's
    position (memoised where ``then`` is a rule)."""
    # (a look-ahead leaves no trace in where a failure was furthest; what input it
    # ran out at stays: a delimiter accepted tentatively is read on from there)
    saved = (st.furthest, st.expected, st.furthest_stack)
    st.expected = set(st.expected)
    try:
        return _first_match(then, st, first, following)
    finally:
        # (the furthest failure inside a rejected look-ahead explains a parse that
        # then fails at the end: a call that did not read, rather than "end of input")
        if st.furthest > saved[0] and (st.rejected is None or st.furthest > st.rejected[0]):
            st.rejected = (st.furthest, frozenset(st.expected), st.furthest_stack)
        st.furthest, st.expected, st.furthest_stack = saved


def _first_match(then: Parser, st: _State, found: int, following: Callable[[int], int]) -> tuple[int, bool]:
    while found >= 0:
        status, _, _ = _DISPATCH[type(then)](then, st, found)
        if status == _OK:
            return found, True
        if status == _MORE:
            return found, st.cut
        st.any_rejected = True
        found = following(found + 1)  # (not there: the next delimiter, after this one's first character)
    return -1, True


def _first_unescaped(node: Until, text: str, pos: int, partial: bool) -> int:
    """Where an ``until`` with an escape character ends at or after ``pos``: at
    its first delimiter not escaped, or at an escape followed by a newline (or,
    on final input, by nothing); -1: none (on partial input, an escape at the
    very end waits for what it escapes)."""
    escape = node.escape
    scan = escaped_run(node.delimiters, escape)
    if scan is not None:  # single-character delimiters: one regex pass
        stop = scan.match(text, pos).end()  # type: ignore[union-attr]
        if stop == len(text) or (partial and stop == len(text) - 1 and text[stop] == escape):
            return -1
        return stop
    i = pos
    while True:
        found = first_of((*node.delimiters, escape), text, i)
        if found < 0 or not text.startswith(escape, found) or any(text.startswith(d, found) for d in node.delimiters):
            return found
        if found + 1 == len(text):
            return -1 if partial else found
        if text[found + 1] == "\n":
            return found
        i = found + 2


def _undecided(node: Until, text: str, pos: int, best: int) -> bool:
    """Whether the delimiter found at ``best``, after one of ``node``'s held
    texts, may still not end it: nothing but whitespace follows it yet (the
    reading that ends the text at the held one may still be the one)."""
    after = best + next(len(d) for d in node.delimiters if text.startswith(d, best))
    if _SPACE.match(text, after).end() < len(text):  # type: ignore[union-attr]  # (checked first: it is rarely so)
        return False
    return 0 <= first_of(node.held, text, pos) < best


def _rest(node: Rest, st: _State, pos: int) -> _Result:
    if st.partial:
        return st.more(node, pos, partial_end(node, st.text, pos) if node.stops else len(st.text))
    if node.stops:
        return _OK, trailing_stops(st.text, node.stops, pos, len(st.text)), _NONE
    return _OK, len(st.text), _NONE


def _space(node: Space, st: _State, pos: int) -> _Result:
    return _OK, _SPACE.match(st.text, pos).end(), _NONE  # type: ignore[union-attr]


def _eps(node: Eps, st: _State, pos: int) -> _Result:
    return _OK, pos, _NONE


def _end(node: End, st: _State, pos: int) -> _Result:
    if pos == len(st.text):
        return _OK, pos, _NONE
    st.expect(pos, "end of input")
    return _FAIL, pos, _NONE


def _peek(node: Peek, st: _State, pos: int) -> _Result:
    status, end, _ = _DISPATCH[type(node.item)](node.item, st, pos)
    return (status, end if status == _FAIL else pos, _NONE)  # (a look-ahead shows nothing)


def _not(node: Not, st: _State, pos: int) -> _Result:
    status, _, _ = _DISPATCH[type(node.item)](node.item, st, pos)
    if status == _OK:
        st.expect(pos, f"not {node.item.dump()}")
        return _FAIL, pos, _NONE
    if status == _MORE:
        return _MORE, pos, _NONE  # (a look-ahead shows nothing)
    return _OK, pos, _NONE


def _atomic(node: Atomic, st: _State, pos: int) -> _Result:
    status, end, found = _DISPATCH[type(node.item)](node.item, st, pos)
    if status == _MORE:
        return _MORE, end, _NONE
    return status, end, found


def _tag(node: Tag, st: _State, pos: int) -> _Result:
    if st.regex:
        pure = node.__dict__["_pure_item"] if "_pure_item" in node.__dict__ else _pure_item(node)
        if pure is not None:  # (what it captures holds no capture: one regex)
            matched = pure.match(st.text, pos)
            if matched is None:
                return _FAIL, pos, _NONE
            if node.marked:
                st.marked = True
            return _OK, matched.end(), (_tag_node(node.name, pos, matched.end(), st.text, _NONE, True, ""),)
    status, end, found = _DISPATCH[type(node.item)](node.item, st, pos)
    if status == _FAIL:
        return _FAIL, end, _NONE
    if node.marked:
        st.marked = True
    closer = st.last_closer if status == _MORE else ""
    tag_node = _tag_node(node.name, pos, end, st.text, found, status == _OK, closer)
    return status, end, (tag_node,)


def _pure_item(node: Tag | Rule) -> re.Pattern[str] | None:
    """The regex of a tag's item, or a rule's body, where it captures nothing (kept on the node)."""
    item = node.body if isinstance(node, Rule) else node.item
    pure = node.__dict__["_pure_item"] = pure_pattern(item) if item is not None else None
    return pure


def _json(node: Json, st: _State, pos: int) -> _Result:
    scan = scan_json(st.text, pos, st.partial)
    if scan.status is Status.SUCCESS:
        return _OK, scan.end, _NONE
    if scan.status is Status.NEED_MORE:
        st.last_closer = scan.closer
        end = scan.end
        if node.held:
            end = json_partial_end(node.held, st.text, pos, end)
        return st.more(node, pos, end)
    st.expect(scan.end, scan.expected)
    return _FAIL, pos, _NONE


def _schema(node: Schema, st: _State, pos: int) -> _Result:
    return _DISPATCH[type(node.item)](node.item, st, pos)


def _rule(node: Rule, st: _State, pos: int) -> _Result:
    if st.regex:
        pure = node.__dict__["_pure_item"] if "_pure_item" in node.__dict__ else _pure_item(node)
        if pure is not None:  # (a body that captures nothing: one regex, no memo needed)
            matched = pure.match(st.text, pos)
            return (_FAIL, pos, _NONE) if matched is None else (_OK, matched.end(), _NONE)
        prefix = node.__dict__["_prefix"] if "_prefix" in node.__dict__ else prefix_pattern(node)
        if prefix is not None and prefix.match(st.text, pos) is None:
            return _FAIL, pos, _NONE  # (what it must begin with is not here: a look-ahead rejected at once)
    key = (id(node), pos)
    cached = st.memo.get(key)
    if cached is not None:
        if cached[0] == _MORE:  # (what asked for more input, as when it was parsed)
            st.frontier, st.last_closer = st.more_at[key]
        return cached
    st.memo[key] = (_FAIL, pos, _NONE)  # guards against left recursion
    st.rule_stack.append(node.name)
    assert node.body is not None, f"rule {node.name} has no body"
    result = _DISPATCH[type(node.body)](node.body, st, pos)
    st.rule_stack.pop()
    st.memo[key] = result
    if result[0] == _MORE:
        st.more_at[key] = (st.frontier, st.last_closer)
    return result


def _ref(node: Ref, st: _State, pos: int) -> _Result:
    return _rule(node.rule, st, pos)


_DISPATCH: dict[type, Callable[..., _Result]] = {
    Literal: _literal,
    CharClass: _charclass,
    Sequence: _sequence,
    Choice: _choice,
    Repetition: _repetition,
    Until: _until,
    Rest: _rest,
    Space: _space,
    Eps: _eps,
    End: _end,
    Peek: _peek,
    Not: _not,
    Atomic: _atomic,
    Tag: _tag,
    Json: _json,
    Schema: _schema,
    Rule: _rule,
    Ref: _ref,
}


def parse(
    parser: Parser, text: str, partial: bool = False, start: int = 0, found: dict[tuple[int, int], int] | None = None, cut: bool = False
) -> ParseResult:
    """Run ``parser`` over ``text`` from ``start``; see the module docstring.
    ``found``: a dict the caller keeps while it parses ever longer versions of
    one text (a stream), where the ``until`` delimiters found are remembered
    (a later parse does not scan for them again).  ``cut`` (with ``partial``):
    the input was cut short and no more comes, so a look-ahead from a
    delimiter that runs out of input accepts it (a value ends at a closer
    that a cut call follows)."""
    # (first with the options that cannot begin where they are tried skipped:
    # the same outcome; where that is a failure, once more without, for the
    # complete expected set of where it failed)
    st = _State(text, partial, found=found, fast=True, regex=not partial and regex_form.SUPPORTED, cut=cut)
    try:
        status, end, nodes = _DISPATCH[type(parser)](parser, st, start)
        if status == _FAIL:
            st = _State(text, partial, found=found, cut=cut)
            status, end, nodes = _DISPATCH[type(parser)](parser, st, start)
    except RecursionError:  # input nested deeper than the interpreter's stack (``[[[[...``)
        return ParseResult(
            status=Status.FAILURE,
            end=start,
            tree=(),
            text=text,
            furthest=max(st.furthest, 0),
            expected=frozenset({"less deeply nested input"}),
            rule_stack=tuple(st.rule_stack[-3:]),
        )
    if status == _OK:
        kind = Status.SUCCESS
    elif status == _MORE:
        kind = Status.NEED_MORE
    else:
        kind = Status.FAILURE
        if st.rejected is not None and st.furthest >= len(text):
            # failed at the end, after text that a delimiter's look-ahead would have
            # ended: where that look-ahead failed says more
            st.furthest, rejected_expected, st.furthest_stack = st.rejected
            st.expected = set(rejected_expected)
    return ParseResult(
        status=kind,
        end=end,
        tree=nodes,
        text=text,
        furthest=max(st.furthest, 0),
        expected=frozenset(st.expected),
        rule_stack=st.furthest_stack,
        frontier=st.frontier if status == _MORE else None,
        rejected=st.any_rejected,
        marked=st.marked,
    )
