"""The values generation returns: a lazy grammar's :class:`Trigger` and a parse's :class:`ParseOutcome`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.messages.mapper import Message


@dataclass(frozen=True)
class Trigger:
    """What switches a lazy grammar on: ``word`` (1), ``pattern`` (2), ``full pattern`` (3)."""

    type: int
    value: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "value": self.value}


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
