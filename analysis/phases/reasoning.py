"""Phase 1: reasoning markers (R1 presence, R2 ``enable_thinking``, R3 scope, R4 a\ntag the generation prompt opens)."""

from __future__ import annotations

import re
from dataclasses import replace

from analysis.errors import TemplateRenderError
from analysis.phases.phase_log import PhaseLog
from analysis.phases.result import PrefillOutcome, ReasoningAnalysis, ReasoningMode
from analysis.probing.diff import diff_split
from analysis.probing.markers import MARKER_RE, last_marker, marker_after, marker_before, strip_ws
from analysis.probing.probes import (
    ASSISTANT_TEXT,
    REASONING_TEXT,
    USER_TEXT,
    Comparison,
    ComparisonFailed,
    Prober,
    assistant,
    conversation,
    tool_call,
)


def markers_around(text: str, needle: str) -> tuple[str, str]:
    """``(start, end)`` markers around the first ``needle`` in ``text``.

    ``start`` is the marker right before the needle with the whitespace the
    template puts after it (``"<think>\\n"``); ``end`` is the marker right after
    with the whitespace on both sides (``"\\n</think>\\n\\n"``).  Either is ``""``
    when plain text, not a marker, touches the needle."""
    pos = text.find(needle)
    if pos < 0:
        return "", ""
    before = marker_before(text, pos)
    after = marker_after(text, pos + len(needle))
    start = before[0] + before[1] if before else ""
    end = "".join(after) if after else ""
    return start, end


def analyze_reasoning(prober: Prober, log: PhaseLog) -> ReasoningAnalysis:
    """Run R1–R5 and return the reasoning mode and markers."""
    result = ReasoningAnalysis()
    result = _r1_presence(prober, log, result)
    result = _r2_thinking_switch(prober, log, result)
    if prober.caps.supports_tool_calls:
        result = _r3_scope(prober, log, result)
    if result.mode is ReasoningMode.NONE:
        result = _r4_opened_by_prompt(prober, log, result)
    return always_opened(prober, log, result)


def always_opened(prober: Prober, log: PhaseLog, result: ReasoningAnalysis) -> ReasoningAnalysis:
    """A reply without reasoning, rendered in history: whether the template
    writes an empty block before it (``<think></think>``), so that its models
    always open one (an output that closes a block with no opener lost the
    opener to the prompt or an engine).  R5; run again on a dedicated
    handler's markers."""
    if result.mode is not ReasoningMode.TAG_BASED or result.always or not (strip_ws(result.start) and strip_ws(result.end)):
        return result
    try:
        reply = prober.render(conversation(assistant(), tools=False))
    except TemplateRenderError:
        return result
    start, end = strip_ws(result.start), strip_ws(result.end)
    before = reply[: reply.rfind(ASSISTANT_TEXT)] if ASSISTANT_TEXT in reply else ""
    at = before.rfind(start)
    if at < 0 or not before[at + len(start) :].lstrip().startswith(end):
        return result
    log.cite_source("reasoning.always", f"a reply without reasoning is written after an empty {start}{end}", "rule", "R5")
    return replace(result, always=True)


def _r1_presence(prober: Prober, log: PhaseLog, result: ReasoningAnalysis) -> ReasoningAnalysis:
    """An assistant turn without vs with ``reasoning_content``: markers around the reasoning."""
    try:
        cmp = prober.compare(
            "R1 reasoning presence",
            conversation(assistant(), tools=False),
            conversation(assistant(reasoning=REASONING_TEXT), tools=False),
        )
    except ComparisonFailed as exc:
        log.degrade("reasoning", exc)
        return result
    if REASONING_TEXT not in cmp.diff.right:
        return result
    found = _around_reasoning(cmp, log, ReasoningMode.TAG_BASED, result)
    header = _header_reasoning(cmp, found)
    if header is None:
        return found
    log.cite("reasoning.start", cmp)
    log.cite("reasoning.end", cmp)
    return header


def _header_reasoning(cmp: Comparison, found: ReasoningAnalysis) -> ReasoningAnalysis | None:
    """Reasoning written as a message of its own whose role header goes on
    with a word (HyperCLOVA X's ``<|im_start|>assistant/think\n…<|im_end|>\n``
    before ``<|im_start|>assistant\n`` and the reply): where no marker opens
    it, the text the reasoning render adds before it (``/think\n``) opens it,
    and what it adds after it, up to the reply's own header, closes it."""
    right = cmp.diff.right
    at = right.find(REASONING_TEXT)
    start, end = right[:at], right[at + len(REASONING_TEXT) :]
    if found.start or not strip_ws(start) or MARKER_RE.search(start) or " " in strip_ws(start) or not strip_ws(end).startswith(strip_ws(found.end)):
        return None
    return ReasoningAnalysis(ReasoningMode.TAG_BASED, start, end)


def _around_reasoning(cmp: Comparison, log: PhaseLog, mode: ReasoningMode, result: ReasoningAnalysis) -> ReasoningAnalysis:
    """The markers around the probe reasoning in ``cmp``'s second render (``result`` when there is no end marker)."""
    start, end = markers_around(cmp.output_b, REASONING_TEXT)
    if not end:
        return result
    log.cite("reasoning.end", cmp)
    if start:
        log.cite("reasoning.start", cmp)
    return ReasoningAnalysis(mode, start, end)


def _r2_thinking_switch(prober: Prober, log: PhaseLog, result: ReasoningAnalysis) -> ReasoningAnalysis:
    """The generation prompt with ``enable_thinking`` false vs true: markers the template adds."""
    try:
        cmp = prober.compare(
            "R2 enable_thinking off/on",
            conversation(tools=False, generation_prompt=True, thinking=False),
            conversation(tools=False, generation_prompt=True, thinking=True),
        )
    except ComparisonFailed as exc:
        log.degrade("reasoning", exc)
        return result
    # only the generation prompts matter (SmolLM3 also switches a system-prompt flag)
    tail_a = cmp.output_a.rsplit(USER_TEXT, 1)[-1]
    tail_b = cmp.output_b.rsplit(USER_TEXT, 1)[-1]
    diff = diff_split(tail_a, tail_b)
    left, right = strip_ws(diff.left), strip_ws(diff.right)
    start, end = result.start, result.end
    left_markers = [m.group() for m in MARKER_RE.finditer(left)]
    right_markers = [m.group() for m in MARKER_RE.finditer(right)]
    # thinking off writes an empty block, on writes nothing: the model opens its own
    switched = bool(left and not right and len(left_markers) >= 2)
    if right and not left and len(right_markers) == 1 and strip_ws(tail_b).endswith(right):
        # thinking on opens reasoning in the generation prompt
        start = start or right
    elif left and not right and len(left_markers) >= 2:
        # thinking off writes an empty block: <think></think>
        start = start or left_markers[0]
        end = end or left_markers[-1]
    elif left and not right and len(left_markers) == 1:
        # thinking off closes a block the common prompt opened: <think> + </think>
        opener = marker_before(diff.prefix, len(diff.prefix))
        end = end or diff.left.rstrip()
        if opener and not start:
            start = opener[0]
    elif len(left_markers) == 1 and len(right_markers) == 1 and left == left_markers[0] and right == right_markers[0]:
        # off appends the closer, on appends the opener
        start = start or right_markers[0]
        end = end or left_markers[0]
    if (start, end) == (result.start, result.end):
        return replace(result, switched=switched)
    if start != result.start:
        log.cite("reasoning.start", cmp)
    if end != result.end:
        log.cite("reasoning.end", cmp)
    return ReasoningAnalysis(ReasoningMode.TAG_BASED, start, end, switched)


def _r3_scope(prober: Prober, log: PhaseLog, result: ReasoningAnalysis) -> ReasoningAnalysis:
    """Reasoning with content vs reasoning with a tool call: reasoning shown only with calls."""
    try:
        cmp = prober.compare(
            "R3 reasoning scope",
            conversation(assistant(reasoning=REASONING_TEXT)),
            conversation(assistant(content=None, reasoning=REASONING_TEXT, calls=[tool_call()])),
        )
    except ComparisonFailed as exc:
        log.degrade("reasoning", exc)
        return result
    if REASONING_TEXT in cmp.output_a or REASONING_TEXT not in cmp.output_b:
        return result
    return _around_reasoning(cmp, log, ReasoningMode.TOOLS_ONLY, result)


#: a tag that may open reasoning: ``<think>``, ``<thought>``, ``<reasoning>``
_OPEN_TAG = re.compile(r"<([A-Za-z][\w.:-]*)>")


def _r4_opened_by_prompt(prober: Prober, log: PhaseLog, result: ReasoningAnalysis) -> ReasoningAnalysis:
    """A generation prompt that ends by opening a tag (``<thought>``) whose
    closing tag the template's source writes (to cut it out of the history),
    while no reply in the history opens it: the model reasons inside it, and
    the history leaves the reasoning out, so R1–R3 see nothing."""
    try:
        prompt = prober.render(conversation(tools=False, generation_prompt=True))
        reply = prober.render(conversation(assistant(), tools=False))
    except TemplateRenderError:
        return result
    tail = prompt.rstrip()
    match = last_marker(tail)
    tag = _OPEN_TAG.fullmatch(match.group()) if match is not None and match.end() == len(tail) else None
    if tag is None or f"</{tag.group(1)}>" not in prober.template.source or tag.group() in reply:
        return result
    why = f"the generation prompt ends with {tag.group()} and the template writes </{tag.group(1)}> (the history leaves the reasoning out)"
    log.cite_source("reasoning.start", why)
    log.cite_source("reasoning.end", f"the closing tag of the {tag.group()} the generation prompt opens")
    return ReasoningAnalysis(ReasoningMode.TAG_BASED, tag.group(), f"</{tag.group(1)}>")


def prefill_outcome(generation_prompt: str, reasoning: ReasoningAnalysis) -> PrefillOutcome:
    """Classify the generation prompt's reasoning markers (the spec's three outcomes)."""
    if reasoning.mode is ReasoningMode.NONE:
        return PrefillOutcome.NONE
    start, end = strip_ws(reasoning.start), strip_ws(reasoning.end)
    at = generation_prompt.rfind(start) if start else -1
    if at >= 0:
        if end and end in generation_prompt[at + len(start) :]:
            return PrefillOutcome.OPENED_AND_CLOSED
        if strip_ws(generation_prompt[at + len(start) :]) == "":
            return PrefillOutcome.OPENED
        return PrefillOutcome.ARTIFACT
    if end and end in generation_prompt:
        return PrefillOutcome.OPENED_AND_CLOSED
    return PrefillOutcome.NONE
