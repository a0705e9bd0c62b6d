"""The deviations from a template's form that parsing reads, declared once.

A model does not always write what its template renders: text between two
calls, a value's closer left out, a closer written twice, an output cut at
``max_tokens``.  The parser reads each such deviation where no reading in the
template's exact form exists, or where the exact reading is one no person
would take (a value that holds a whole call, closers and all).  Each kind is
declared here, once, with its cost (the exact form costs 0; a reading that
needs a costlier deviation loses to one that needs a cheaper one) and an
example; ``docs/parsing.md`` lists them (a test keeps the two in step).

A parser marks a deviation by wrapping what it reads so in :func:`deviation`
(a capture named ``deviation:KIND``); :func:`deviations_in` finds those
captures in a parse tree and returns them as :class:`Deviation` records, with
their span, line and column in the model's output.  The captures hold no
reply text of their own: the readers of a message walk through them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from peg import combinators as p
from peg.combinators import Parser
from peg.engine import ParseResult, TagNode
from peg.text import WS

#: the prefix of a deviation capture's name
PREFIX = "deviation:"


class DeviationKind(enum.Enum):
    """One way a model's output departs from its template's form.

    The value is the kind's name in data (JSON, the capture's name)."""

    TEXT_BETWEEN_CALLS = "text-between-calls"
    TEXT_AFTER_CALLS = "text-after-calls"
    VALUE_CLOSER_LEFT_OUT = "value-closer-left-out"
    CALL_CLOSER_LEFT_OUT = "call-closer-left-out"
    SECTION_CLOSER_LEFT_OUT = "section-closer-left-out"
    CLOSER_REPEATED = "closer-repeated"
    CALL_WITHOUT_WRAPPER = "call-without-wrapper"
    OTHER_CALL_SYNTAX = "other-call-syntax"
    ROLE_HEADER_REPEATED = "role-header-repeated"
    UNKNOWN_HEADER_WORD = "unknown-header-word"
    REASONING_OPENER_IN_PROMPT = "reasoning-opener-in-prompt"
    CUT_SHORT = "cut-short"
    CALL_MARKER_IN_TEXT = "call-marker-in-text"

    @property
    def cost(self) -> int:
        """What a reading pays for this deviation (the exact form pays 0)."""
        return _DECLARED[self][0]

    @property
    def description(self) -> str:
        """What the model wrote, in a few words."""
        return _DECLARED[self][1]

    @property
    def example(self) -> str:
        """An output that shows it (the template's form: Qwen3's or Hermes')."""
        return _DECLARED[self][2]


#: kind -> (cost, description, example).  Costs order the readings: text is the
#: cheapest deviation, a marker left out costs more, a call written in another
#: syntax more again; a cut output is reported whatever else it holds.
_DECLARED: dict[DeviationKind, tuple[int, str, str]] = {
    DeviationKind.TEXT_BETWEEN_CALLS: (1, "text between two calls", "<tool_call>…</tool_call>\nAlso Lyon.\n<tool_call>…</tool_call>"),
    DeviationKind.TEXT_AFTER_CALLS: (1, "text after the calls", "<tool_call>…</tool_call>\nDone."),
    DeviationKind.VALUE_CLOSER_LEFT_OUT: (
        2,
        "a value's closer left out before the next argument",
        "<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>",
    ),
    DeviationKind.CALL_CLOSER_LEFT_OUT: (2, "a call's closer left out", "<tool_call>…</function>\n<tool_call>…"),
    DeviationKind.SECTION_CLOSER_LEFT_OUT: (2, "the calls section's closer left out", "<|tool_calls_section_begin|>…<|tool_call_end|>"),
    DeviationKind.CLOSER_REPEATED: (1, "a closer written twice, or one with nothing to close", "…</tool_call></tool_call>"),
    DeviationKind.CALL_WITHOUT_WRAPPER: (2, "a call without its wrapping marker", "<function=get_weather>…</function>"),
    DeviationKind.OTHER_CALL_SYNTAX: (3, "a call in the family's other syntax", '[TOOL_CALLS][{"name": "get_weather", "arguments": {…}}]'),
    DeviationKind.ROLE_HEADER_REPEATED: (1, "the role header the prompt ends with, written again", "<|start|>assistant<|channel|>final<|message|>…"),
    DeviationKind.UNKNOWN_HEADER_WORD: (
        1,
        "a word in a message header the format does not define (a misspelt channel or content type, a recipient another one follows)",
        '<|channel|>commentson<|message|>{"city": "Paris"}<|call|>',
    ),
    DeviationKind.REASONING_OPENER_IN_PROMPT: (
        1,
        "reasoning closed with no opener (the opener was in the prompt, or dropped)",
        "I should answer.</think>It is sunny.",
    ),
    DeviationKind.CALL_MARKER_IN_TEXT: (0, "a call marker read as text (quoted in prose: no call reads from it)", "Use `<tool_call>` to call a tool."),
    DeviationKind.CUT_SHORT: (4, "the output ends inside a call (cut off at max_tokens?)", '{"name": "get_weather", "parameters": {"city": "Par'),
}

#: the kinds whose captures are text: one that holds only whitespace is no deviation
_TEXT_KINDS = frozenset({DeviationKind.TEXT_BETWEEN_CALLS, DeviationKind.TEXT_AFTER_CALLS})

_BY_NAME = {PREFIX + kind.value: kind for kind in DeviationKind}
#: every deviation capture's name
DEVIATION_TAGS = frozenset(_BY_NAME)


def deviation(kind: DeviationKind, item: Parser) -> Parser:
    """``item``, a reading of ``kind``: its capture marks where the output used it."""
    return p.tag(PREFIX + kind.value, item, marked=True)


@dataclass(frozen=True)
class Deviation:
    """A deviation the chosen reading used: its kind, its span in the model's
    output (``end`` exclusive; a left-out closer is an empty span where it
    belongs), and the line and column (1-based) where it starts."""

    kind: DeviationKind
    start: int
    end: int
    line: int
    column: int

    @property
    def cost(self) -> int:
        return self.kind.cost

    def describe(self) -> str:
        """One line: what, and where in the output."""
        return f"{self.kind.description} at line {self.line}, column {self.column} (offset {self.start})"

    def to_json(self) -> dict[str, Any]:
        """``{kind, start, end, line, column, cost}``."""
        return {"kind": self.kind.value, "start": self.start, "end": self.end, "line": self.line, "column": self.column, "cost": self.cost}


def deviations_in(result: ParseResult, origin: int = 0) -> tuple[Deviation, ...]:
    """The deviations a parse tree's reading used, in output order, with
    positions counted from ``origin`` (the length of the generation prompt the
    parse read first).  Text deviations that hold only whitespace are none."""
    if not result.marked:  # (no deviation capture matched: no walk)
        return ()
    spans: list[tuple[int, int, DeviationKind]] = []
    text = result.text
    for node in _deviation_nodes(result.tree):
        kind, start, end = _BY_NAME[node.name], node.start, node.end
        if kind in _TEXT_KINDS:  # (the text itself, not the whitespace around it)
            stripped = text[start:end].strip(WS)
            if not stripped:
                continue
            start = text.index(stripped, start)
            end = start + len(stripped)
        spans.append((max(start, origin), max(end, origin), kind))
    if not spans:
        return ()
    spans.sort(key=lambda span: (span[0], span[1]))
    # (lines counted from one deviation to the next: linear in the output, however many there are)
    found: list[Deviation] = []
    line, counted = 1, origin
    for start, end, kind in spans:
        line += text.count("\n", counted, start)
        counted = start
        column = start - max(text.rfind("\n", origin, start) + 1, origin) + 1
        found.append(Deviation(kind, start - origin, end - origin, line, column))
    return tuple(found)


def _deviation_nodes(nodes: tuple[TagNode, ...]) -> list[TagNode]:
    """The deviation captures in ``nodes`` and below (one walk that builds no index: this runs on every parse)."""
    found: list[TagNode] = []
    stack = list(nodes)
    names = _BY_NAME
    while stack:
        node = stack.pop()
        if node.name in names:
            found.append(node)
        if node.children:
            stack.extend(node.children)
    return found


def at(kind: DeviationKind, text: str, start: int, end: int, origin: int = 0) -> Deviation:
    """A deviation of ``kind`` over ``text[start:end]``, placed in the output that begins at ``origin``."""
    start, end = max(start, origin), max(end, origin)
    line = text.count("\n", origin, start) + 1
    column = start - max(text.rfind("\n", origin, start) + 1, origin) + 1
    return Deviation(kind, start - origin, end - origin, line, column)


def total_cost(deviations: tuple[Deviation, ...]) -> int:
    """What a reading that used ``deviations`` pays."""
    return sum(d.cost for d in deviations)
