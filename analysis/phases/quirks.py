"""Family quirks the generic reading knows of, declared in one table.

The differential analysis finds a template's markers from its renders; a few
facts about a family's models cannot be rendered: a marker the models write
that the template writes only elsewhere, or a marker the template writes only
in a turn no probe makes.  Each is declared here, with its family, its marker
and where the generic code reads it; nothing else in the generic code names a
family's marker.  (Patches to the analysis itself are in :mod:`workarounds`;
formats a handler owns are in ``analysis.parsers.handlers``.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class FamilyQuirk:
    """A family's marker that the generic reading accepts, and where."""

    name: str
    family: str
    marker: str
    #: where the generic code reads it, and when
    reads: str


#: Llama 3 models write ``<|python_tag|>`` before a JSON call, which their
#: templates write only for built-in tools
PYTHON_TAG = FamilyQuirk(
    "python-tag",
    "Llama 3.x",
    "<|python_tag|>",
    "parsing: before a call, in a JSON format whose calls have no marker of their own; what can start such a call",
)
#: Llama 3.1 ends a turn that waits for a tool's result with ``<|eom_id|>``
#: (one with text ends with ``<|eot_id|>``), which no probe renders
END_OF_MESSAGE = FamilyQuirk(
    "end-of-message",
    "Llama 3.1",
    "<|eom_id|>",
    "analysis: a turn-end marker, where the template's source writes it and the turn ends with a marker",
)

QUIRKS: tuple[FamilyQuirk, ...] = (PYTHON_TAG, END_OF_MESSAGE)

#: a heuristic, not a family: a marker named for opening something
#: (``<|start_header_id|>``, ``<|begin_of_text|>``) opens the next turn, so it
#: ends the markers that close an assistant turn
OPENS_A_TURN = re.compile(r"start|begin", re.IGNORECASE)


def quirk_named(name: str) -> FamilyQuirk:
    """The quirk of that name (KeyError: none)."""
    for quirk in QUIRKS:
        if quirk.name == name:
            return quirk
    raise KeyError(name)
