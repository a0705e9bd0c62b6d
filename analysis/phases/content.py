"""Phase 2 (C1): does the template wrap assistant content in markers?"""

from __future__ import annotations

import re

from analysis.errors import TemplateRenderError
from analysis.phases.phase_log import PhaseLog
from analysis.phases.result import ContentAnalysis, ContentMode, ReasoningAnalysis
from analysis.probing.markers import MARKER_RE, marker_after, marker_before, strip_ws
from analysis.probing.probes import (
    ASSISTANT_TEXT,
    REASONING_TEXT,
    ComparisonFailed,
    Prober,
    assistant,
    conversation,
    tool_call,
)


def _bare(text: str, reasoning: ReasoningAnalysis) -> bool:
    """Whether ``text`` is the content alone (with whitespace, at most one trailing
    end-of-turn marker, or after the reasoning closer)."""
    pattern = r"\s*" + re.escape(ASSISTANT_TEXT) + r"\s*(?:" + MARKER_RE.pattern + r")?\s*"
    if re.fullmatch(pattern, text):
        return True
    closer = strip_ws(reasoning.end)
    return bool(closer) and re.search(re.escape(closer) + r"\s*" + re.escape(ASSISTANT_TEXT), text) is not None


def analyze_content(prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis) -> ContentAnalysis:
    """Compare a content turn with a tool-call turn and with a reasoning-only turn."""
    base = conversation(assistant())
    try:
        vs_tools = prober.compare("C1 content vs tool call", base, conversation(assistant(content="", calls=[tool_call()])))
        vs_reasoning = prober.compare(
            "C1 content vs reasoning", base, conversation(assistant(content="", reasoning=REASONING_TEXT))
        )
    except ComparisonFailed as exc:
        log.degrade("content", exc)
        return ContentAnalysis(requires_nonnull_content=_requires_nonnull(prober))
    nonnull = _requires_nonnull(prober)
    if strip_ws(vs_tools.diff.left) == ASSISTANT_TEXT and _bare(vs_reasoning.diff.left, reasoning):
        return ContentAnalysis(ContentMode.PLAIN, requires_nonnull_content=nonnull)

    after_reasoning = vs_reasoning.diff.left
    closer = reasoning.end
    if closer and closer in after_reasoning:
        after_reasoning = after_reasoning[after_reasoning.index(closer) + len(closer) :]
    source = vs_reasoning if len(after_reasoning) > len(vs_tools.diff.left) else vs_tools
    pure = after_reasoning if source is vs_reasoning else vs_tools.diff.left
    pos = pure.find(ASSISTANT_TEXT)
    if pos < 0:
        return ContentAnalysis(ContentMode.PLAIN, requires_nonnull_content=nonnull)
    before = marker_before(pure, pos)
    after = marker_after(pure, pos + len(ASSISTANT_TEXT))
    start = before[0] if before else ""
    end = after[1] + after[2] if after else ""
    if not (start and end) or _opens_something_else(prober.template.source, start, end):
        return ContentAnalysis(ContentMode.PLAIN, requires_nonnull_content=nonnull)
    log.cite("content.start", source)
    log.cite("content.end", source)
    return ContentAnalysis(ContentMode.ALWAYS_WRAPPED, start, end, nonnull)


def _opens_something_else(source: str, start: str, end: str) -> bool:
    """Whether ``start`` is an XML-style tag whose own closer (``</think>`` for
    ``<think>``) the template writes, while the content ends with another marker:
    then ``start`` opens something else (an unclosed reasoning block), not content."""
    match = re.fullmatch(r"<([A-Za-z][\w:.-]*)>", start)
    return match is not None and f"</{match.group(1)}>" in source and strip_ws(end) != f"</{match.group(1)}>"


def _requires_nonnull(prober: Prober) -> bool:
    """Whether a tool-call turn needs ``content: ""`` because ``null`` makes the template fail."""
    if not prober.caps.supports_tool_calls:
        return False
    try:
        prober.render(conversation(assistant(content="", calls=[tool_call()])))
    except TemplateRenderError:
        return False
    try:
        prober.render(conversation(assistant(content=None, calls=[tool_call()])))
    except TemplateRenderError:
        return True
    return False
