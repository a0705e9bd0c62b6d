"""The values generation returns: a lazy grammar's :class:`Trigger` and a parse's :class:`ParseOutcome`."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from analysis.messages.deviations import Deviation, DeviationKind
from analysis.messages.mapper import Message


class TriggerKind(enum.IntEnum):
    """How a trigger switches a lazy grammar on (llama.cpp's
    ``common_grammar_trigger`` types, whose numbers the JSON keeps)."""

    WORD = 1  #: the grammar starts at this text
    PATTERN = 2  #: at the first match of this regex
    FULL_PATTERN = 3  #: when the whole output matches this regex

    @property
    def label(self) -> str:
        """``word``, ``pattern``, ``full pattern``."""
        return self.name.lower().replace("_", " ")


@dataclass(frozen=True)
class Trigger:
    """What switches a lazy grammar on: a :class:`TriggerKind` and its text or regex."""

    type: TriggerKind
    value: str

    def to_json(self) -> dict[str, Any]:
        """``{"type": 1|2|3, "value"}``, as the reference writes it."""
        return {"type": int(self.type), "value": self.value}


@dataclass(frozen=True)
class ParseOutcome:
    """A parsed message; ``ok`` is False when the output did not fit the format
    (the message then holds the output as content) or ended inside a tool call
    (``need_more``: the calls before it are kept); ``warning`` says where
    parsing stopped."""

    message: Message
    ok: bool
    warning: str = ""
    need_more: bool = False
    #: on a failure, the output's line where parsing stopped, with a caret under the place
    excerpt: str = ""
    #: the deviations from the template's form the reading used, in output order
    deviations: tuple[Deviation, ...] = ()

    @classmethod
    def read(cls, message: Message, deviations: tuple[Deviation, ...] = ()) -> ParseOutcome:
        """An output that reads (``ok``), built without the frozen dataclass's
        ``__init__``: every parse of well-formed output makes one (measured
        1.0 against 2.0 us)."""
        out = object.__new__(cls)
        out.__dict__.update(message=message, ok=True, warning="", need_more=False, excerpt="", deviations=deviations)
        return out

    @property
    def cut_short(self) -> bool:
        """Whether the output ends inside a call (a :class:`DeviationKind` ``CUT_SHORT``)."""
        return any(d.kind is DeviationKind.CUT_SHORT for d in self.deviations)
