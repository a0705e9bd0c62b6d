"""A ``response_template`` read by transformers, probe by probe, against autoparser.

The probes are ``check``'s round trips: the template's own rendering of a
reply, of reasoning, of one call, two calls, typed values, text and a call.
Each probe that autoparser reads back is read again by transformers'
``parse_response`` with the given ``response_template`` (the prompt as its
prefix, the probe's tools for argument types), and the two messages are
compared: content and reasoning after stripping surrounding whitespace,
calls by name and by arguments as JSON.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analysis.checks.round_trip import ProbeStatus, RoundTrip, loads_or_text, round_trips
from analysis.export.hf_reading import check_loadable, transformers_missing, transformers_reading
from analysis.export.spec_writer import response_template
from analysis.messages.mapper import Message

if TYPE_CHECKING:
    from analysis.generation.generator import AutoParser
    from analysis.parsers.request import ChatRequest


class Agreement(str, enum.Enum):
    """How transformers' reading of a probe compares with autoparser's."""

    SAME = "same"
    DIFFERENT = "different"
    SKIPPED = "skipped"  #: autoparser's round trip did not run or did not read back (``detail`` says why)


@dataclass(frozen=True)
class ProbeReading:
    """One probe: whether transformers reads it as autoparser does, and if not, both readings."""

    probe: str
    agreement: Agreement
    detail: str = ""
    #: what a differing probe's output shows the spec cannot read ("" when it is not known)
    cause: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"probe": self.probe, "agreement": self.agreement.value, "detail": self.detail, "cause": self.cause}


@dataclass(frozen=True)
class ExportReport:
    """An exported ``response_template`` and, when transformers could run,
    its reading of every probe against autoparser's."""

    spec: Mapping[str, Any]
    readings: tuple[ProbeReading, ...] = ()
    #: why it was not read back ("" when it was)
    unverified: str = ""

    @property
    def differences(self) -> tuple[ProbeReading, ...]:
        """The probes transformers reads differently."""
        return tuple(r for r in self.readings if r.agreement is Agreement.DIFFERENT)

    def difference_line(self) -> str:
        """The differences on one line: how many probes, which, and the cause where it is known."""
        differ = self.differences
        line = f"the response_template reads {len(differ)} of {len(self.readings)} probes differently from autoparser ({', '.join(r.probe for r in differ)})"
        causes = sorted({c for r in differ if (c := r.cause)})
        return line + "".join(f": {c}" for c in causes)


def export_checked(parser: AutoParser, request: ChatRequest, verify: bool = True) -> ExportReport:
    """``parser``'s template as a ``response_template`` for ``request`` (its
    tools and thinking switch), read back by transformers on every probe when
    ``verify`` and transformers is installed.  Raises ``ExportError`` when the
    format cannot be expressed."""
    spec = response_template(parser.generate(request))
    if not verify:
        return ExportReport(spec, unverified="not read back (asked not to)")
    missing = transformers_missing()
    if missing:
        return ExportReport(spec, unverified=missing)
    check_loadable(spec)
    return ExportReport(spec, compare_readings(parser, spec))


def compare_readings(parser: AutoParser, spec: Mapping[str, Any], trips: tuple[RoundTrip, ...] | None = None) -> tuple[ProbeReading, ...]:
    """transformers' reading with ``spec`` of every round-trip probe of
    ``parser``'s template (or of ``trips``, already run), against autoparser's."""
    out = []
    for trip in round_trips(parser) if trips is None else trips:
        if trip.status is not ProbeStatus.OK or trip.message is None:
            why = trip.detail if trip.status is ProbeStatus.SKIPPED else "autoparser does not read the template's own rendering back"
            out.append(ProbeReading(trip.probe, Agreement.SKIPPED, why))
            continue
        theirs = transformers_reading(spec, trip.text, trip.prompt, trip.tools)
        if isinstance(theirs, str):
            out.append(ProbeReading(trip.probe, Agreement.DIFFERENT, f"output {trip.text!r}: {theirs}", _cause(trip.text)))
        elif same_message(theirs, trip.message):
            out.append(ProbeReading(trip.probe, Agreement.SAME))
        else:
            detail = f"output {trip.text!r}: transformers read {_shown(theirs)}, autoparser {_shown(trip.message)}"
            out.append(ProbeReading(trip.probe, Agreement.DIFFERENT, detail, _cause(trip.text)))
    return tuple(out)


#: Python spellings of values: True, False, None, or a quoted string opening a value
_PYTHON_VALUES = re.compile(r"\b(?:True|False|None)\b|[\[{,:]\s*'|=\s*'")


def _cause(output: str) -> str:
    """What in a probe's output a response_template cannot read, where it shows."""
    if _PYTHON_VALUES.search(output):
        return "the template writes values as Python literals (True, None, 'text'), which transformers reads as JSON or keeps as text"
    return ""


def same_message(a: Message, b: Message) -> bool:
    """Content and reasoning equal after stripping, calls equal by name and arguments (as JSON)."""
    return (
        a.content.strip() == b.content.strip()
        and (a.reasoning_content or "").strip() == (b.reasoning_content or "").strip()
        and [(c.name, loads_or_text(c.arguments)) for c in a.tool_calls] == [(c.name, loads_or_text(c.arguments)) for c in b.tool_calls]
    )


def _shown(message: Message) -> str:
    return json.dumps(message.to_json(), ensure_ascii=False)


__all__ = ["Agreement", "ExportReport", "ProbeReading", "compare_readings", "export_checked", "same_message"]
