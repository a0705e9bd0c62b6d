"""Readings that exist only for output a model wrote wrong (parsing, never the
grammar): closers left out or repeated, and calls written without their
wrapper.
"""

from __future__ import annotations

from collections.abc import Sequence

from analysis.messages.deviations import DeviationKind, deviation
from analysis.parsers.pieces import call_closers
from analysis.phases.result import (
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.markers import strip_ws
from peg import combinators as p
from peg.combinators import Parser


def stray_closers(analysis: TemplateAnalysis) -> Parser:
    """Closers a model repeats after its calls (``</tool_call></tool_call>``): dropped."""
    closers = call_closers(analysis.tools.format)
    if not closers:
        return p.eps()
    return repeated_closers(closers)


def repeated_closers(closers: Sequence[str]) -> Parser:
    """Any of ``closers`` written again after a call (dropped; the repeat noted, a deviation)."""
    return p.optional(deviation(DeviationKind.CLOSER_REPEATED, p.one_or_more(p.space() + p.choice(*(p.literal(c) for c in closers)))))


def value_closer(closer: Parser) -> Parser:
    """A value's ``closer``, or none (noted, a deviation) where more than
    whitespace follows: a value the output ends in was cut, not closed."""
    return p.choice(closer, deviation(DeviationKind.VALUE_CLOSER_LEFT_OUT, p.negate(p.space() + p.end())))


def or_left_out(closer: str, nexts: Sequence[str], for_grammar: bool) -> Parser:
    """``closer``; when parsing, also nothing where one of ``nexts`` or the
    output's end follows (a model left the closer out: the next call's opener,
    the turn's end marker or the output's end ends what it closes)."""
    exact = p.literal(closer)
    follows = [n for n in dict.fromkeys(nexts) if n and n != closer]
    if for_grammar or not closer:
        return exact
    # (or the output's end: a call complete but for its closer is a call, the closer noted as left out)
    ends = p.peek(p.space() + p.choice(*(p.literal(n) for n in follows), p.end()))
    return p.choice(exact, deviation(DeviationKind.CALL_CLOSER_LEFT_OUT, ends))


def section_closer(closer: str, for_grammar: bool) -> Parser:
    """A calls section's ``closer``; when parsing, also nothing (the closer left
    out or broken, ``</tool_cal<garbage>``): each call in the section that reads
    is a call, and what follows the last one is text, not the whole section."""
    exact = p.literal(closer)
    return exact if for_grammar or not closer else p.choice(exact, deviation(DeviationKind.SECTION_CLOSER_LEFT_OUT, p.eps()))


def bare_call_start(analysis: TemplateAnalysis) -> str:
    """The function-name marker that models write without the per-call wrapper
    (Qwen3-Coder's ``<function=`` without ``<tool_call>``), or "": only a
    markup-like tagged prefix qualifies."""
    fmt, prefix = analysis.tools.format, strip_ws(analysis.tools.function.name_prefix)
    if fmt.mode is not ToolFormat.TAG_WITH_TAGGED or not fmt.per_call_start or fmt.tools_array_wrapped:
        return ""
    return prefix if prefix.startswith("<") and len(prefix) >= 3 else ""
