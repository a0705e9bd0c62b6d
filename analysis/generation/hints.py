"""Hints for a parse that did not go as the user expected.

The parse itself is exact to the request; these look at *why* an output did not
fit and name the request setting that would have read it: the output holds
several tool calls but ``parallel_tool_calls`` is off (all are read; the
grammar allows one), the output is cut short (a partial parse reads it), or it
holds the template's tool-call marker but the request has no tools.  Each hint
is data (:class:`ParseHint`); a front end phrases it in its own terms (the CLI
names its options).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from analysis.generation.generated import Generated
from analysis.generation.results import ParseOutcome
from analysis.parsers.calls import trigger_marker


class HintKind(str, enum.Enum):
    """What a hint is about."""

    #: several calls read while ``parallel_tool_calls`` is off (``count``)
    PARALLEL_CALLS_OFF = "parallel_calls_off"
    #: the output is a valid beginning, cut short: a partial parse reads it
    CUT_SHORT = "cut_short"
    #: the template's call marker (``marker``) is in an output parsed without tools
    CALL_MARKER_WITHOUT_TOOLS = "call_marker_without_tools"


@dataclass(frozen=True)
class ParseHint:
    """A request setting that would have read the output otherwise."""

    kind: HintKind
    #: how many calls were read (``PARALLEL_CALLS_OFF``)
    count: int = 0
    #: the template's tool-call marker (``CALL_MARKER_WITHOUT_TOOLS``)
    marker: str = ""


def parse_hints(generated: Generated, output: str, outcome: ParseOutcome, partial: bool) -> list[ParseHint]:
    """What would have read ``output`` where ``outcome`` did not (or read no
    call where a call marker shows)."""
    request = generated.request
    hints: list[ParseHint] = []
    if len(outcome.message.tool_calls) > 1 and not request.parallel_tool_calls:
        hints.append(ParseHint(HintKind.PARALLEL_CALLS_OFF, count=len(outcome.message.tool_calls)))
    if not outcome.ok and not partial and not hints and outcome.need_more:  # a valid beginning, cut short
        hints.append(ParseHint(HintKind.CUT_SHORT))
    if not request.has_tools and not outcome.message.tool_calls:
        marker = trigger_marker(generated.analysis)
        if marker and marker in output:
            hints.append(ParseHint(HintKind.CALL_MARKER_WITHOUT_TOOLS, marker=marker))
    return hints
