"""The turns around the model's part: what opens a user turn and an assistant
turn (:func:`role_starts`), the markers that close an assistant turn
(:func:`turn_end`), and what the generation prompt appends
(:func:`generation_prompt`)."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import Any

from analysis.errors import TemplateRenderError
from analysis.phases.phase_log import PhaseLog
from analysis.phases.quirks import END_OF_MESSAGE, OPENS_A_TURN
from analysis.phases.reasoning import prefill_outcome
from analysis.phases.result import ContentAnalysis, GenerationPromptAnalysis, ReasoningAnalysis
from analysis.probing.diff import appended, segment_diff
from analysis.probing.markers import MARKER_RE, lstrip_ws, strip_ws
from analysis.probing.probes import (
    ASSISTANT_TEXT,
    USER,
    USER_TEXT,
    USER_TEXT_2,
    ComparisonFailed,
    Prober,
    assistant,
    conversation,
)
from analysis.template.rendering import RenderRequest


def _text_before(haystack: str, needle: str) -> str:
    pos = haystack.find(needle)
    return strip_ws(haystack[:pos]) if pos >= 0 else ""


def _common_suffix(a: str, b: str) -> str:
    """The longest text both ``a`` and ``b`` end with, from a marker boundary
    (never cutting a ``<…>``/``[…]`` marker), with no leading whitespace."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    start = len(b) - n
    if n == 0:
        return ""
    if start > 0 and not (b[start - 1].isspace() or b[start - 1] in ">]▷"):  # mid-token: to the next marker
        match = re.compile(r"[<\[◁]").search(b, start)
        if not match:
            return ""
        start = match.start()
    return strip_ws(b[start:])


#: MiniMax's role and end markers (``]~b]``, ``]~!b[``, ``[e~[``): brackets
#: around a tilde, which the generic marker pattern does not read
_TILDE_MARKER = re.compile(r"[\[\]][a-z!]{0,2}~[a-z!]{0,2}[\[\]]")


def _is_marker(token: str) -> bool:
    return bool(MARKER_RE.fullmatch(token) or _TILDE_MARKER.fullmatch(token))


def _first_token(text: str) -> str:
    """The marker, or the run of non-space characters, that ``text`` starts with (after spaces)."""
    text = lstrip_ws(text)
    match = MARKER_RE.match(text) or _TILDE_MARKER.match(text)
    if match:
        return match.group()
    if not text.strip():
        return ""
    word = re.match(r"[^\s<\[◁]+", text)
    return word.group() if word else text[0]


def _tokens(text: str) -> list[str]:
    """``text`` as markers and runs of other non-space characters."""
    out: list[str] = []
    rest = lstrip_ws(text)
    while rest:
        token = _first_token(rest)
        out.append(token)
        rest = lstrip_ws(rest[len(token) :])
    return out


def _drop_leading(text: str, tokens: set[str], keep_one: bool = True) -> str:
    """``text`` without the leading ``tokens`` (turn closers); with ``keep_one``
    it never empties it."""
    text = strip_ws(text)
    while True:
        for token in tokens:
            if token and text.startswith(token) and (strip_ws(text[len(token) :]) or not keep_one):
                text = strip_ws(text[len(token) :])
                break
        else:
            return text


def _drop_trailing(text: str, tokens: list[str]) -> str:
    """``text`` without the trailing ``tokens``, in order; never empties it."""
    for token in tokens:
        token = strip_ws(token)
        if token and text.endswith(token) and strip_ws(text[: -len(token)]):
            text = strip_ws(text[: -len(token)])
    return text


def role_starts(
    prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, content: ContentAnalysis
) -> tuple[str, str]:
    """The text that opens a user turn and an assistant turn.

    One user turn is compared with user, assistant, user.  The assistant start is
    what precedes the assistant's text in the added part (less content and
    reasoning markers that follow it); the user start is what precedes the second
    user text, less the tokens that close a turn (those after the last turn's
    text).  A template that does not write the probe texts gives empty starts."""
    # a template given no end-of-sequence token is shown one, so that a turn
    # closed by it is told apart from the next turn's opening
    eos = {} if prober.template.loaded.eos_token else {"eos_token": "<eos>"}
    try:
        cmp = prober.compare(
            "role starts",
            replace(conversation(tools=False), extra=eos),
            _reply_then_user(eos),
        )
    except ComparisonFailed as exc:
        log.degrade("roles", exc)
        return "", ""
    added = segment_diff(cmp.output_a, cmp.output_b).right
    between = added.partition(ASSISTANT_TEXT)[2]
    closers = {
        _first_token(cmp.output_a.partition(USER_TEXT)[2]),
        _first_token(cmp.output_b.rpartition(USER_TEXT_2)[2]),
    }
    try:
        last_assistant = prober.render(replace(conversation(assistant(), tools=False), extra=eos))
        tail = last_assistant.rpartition(ASSISTANT_TEXT)[2]
        tokens = _tokens(tail)
        closers.update(tokens if len(tokens) <= 3 else tokens[:1])  # what closes the last turn
    except TemplateRenderError:
        pass
    closers.add(_first_token(between))
    opening = added.split(ASSISTANT_TEXT, 1)[0] if ASSISTANT_TEXT in added else ""
    if not strip_ws(opening):  # the template always ends with the assistant opening: it is in the common prefix
        after_user = cmp.output_b.partition(USER_TEXT)[2]
        opening = _drop_leading(after_user.partition(ASSISTANT_TEXT)[0] if ASSISTANT_TEXT in after_user else "", closers, keep_one=False)
    assistant_start = _drop_trailing(strip_ws(opening), [content.start])
    if reasoning.end and assistant_start.endswith(strip_ws(reasoning.end)):  # an empty reasoning block
        assistant_start = _drop_trailing(assistant_start, [reasoning.end, reasoning.start])
    user_start = _drop_leading(_text_before(between, USER_TEXT_2), closers)
    # What opens every user turn also stands before the first user text: where
    # the text between turns holds more (Kimi K3's "response<|sep|><|close|>
    # message…": the end of the assistant turn, spelled with generic tokens),
    # keep only the part the two user openings share.
    first_opening = _text_before(cmp.output_b, USER_TEXT)
    shared = _common_suffix(first_opening, user_start)
    if shared and shared != user_start and MARKER_RE.match(shared):
        # less the turn closer it may still start with (what follows a user text)
        closer = strip_ws(cmp.output_b.partition(USER_TEXT)[2])
        same = 0
        while same < min(len(shared), len(closer)) and shared[same] == closer[same]:
            same += 1
        cut = max((i for i in range(1, same + 1) if i < len(shared) and shared[i] in "<[◁"), default=0)
        user_start = strip_ws(shared[cut:])
    log.cite("user_start", cmp)
    log.cite("assistant_start", cmp)
    return user_start, assistant_start


def tools_reply_lead(prober: Prober, log: PhaseLog) -> str:
    """What the history writes before a reply's text only when tools are
    given (vLLM's Hunyuan tool template writes ``助手：`` before a reply then,
    and its system prompt asks the model to begin so), which a model so
    prompted writes first; "" where the tools change nothing there.  A reply
    and the same reply with the probe tools are compared: the text between
    the user's text and the reply's must be the same but for what the tools
    add at its end."""
    if not prober.caps.supports_tools:
        return ""
    try:  # (renders the reasoning and content phases made: no new render)
        cmp = prober.compare("reply lead with tools", conversation(assistant(), tools=False), conversation(assistant()))
    except ComparisonFailed:
        return ""
    plain, with_tools = _before_reply(cmp.output_a), _before_reply(cmp.output_b)
    if plain is None or with_tools is None or not with_tools.startswith(plain):
        return ""
    lead = strip_ws(with_tools[len(plain) :])
    if lead:
        log.cite("tools_reply_lead", cmp)
    return lead


def _before_reply(rendered: str) -> str | None:
    """The text between the (last) user text and the reply's text (None: either is not written)."""
    if USER_TEXT not in rendered or ASSISTANT_TEXT not in rendered:
        return None
    return rendered.rpartition(ASSISTANT_TEXT)[0].rpartition(USER_TEXT)[2]


#: the end-of-sequence token shown to a template that was given none
_PROBE_EOS = "<eos>"


def turn_end(prober: Prober, log: PhaseLog, user_start: str) -> tuple[str, ...]:
    """The markers that close an assistant turn: the leading markers of what the
    template writes after the last assistant text (``<|im_end|>``, Command R7B's
    ``<|END_RESPONSE|><|END_OF_TURN_TOKEN|>``), up to anything that opens a turn,
    with the template's end-of-sequence token (known from a model's files; the
    probe's stand-in token is not kept)."""
    real_eos = prober.template.loaded.eos_token
    eos = {} if real_eos else {"eos_token": _PROBE_EOS}
    rendered = ""
    # (a multimodal template writes only content parts: the text as a part too)
    for content in (ASSISTANT_TEXT, [{"type": "text", "text": ASSISTANT_TEXT}]):
        request = replace(conversation(assistant(), tools=False), extra=eos)
        parts = [{**m, "content": content} if m.get("role") == "assistant" else _as_parts(dict(m), content) for m in request.messages]
        try:
            rendered = prober.render(replace(request, messages=parts))
        except TemplateRenderError:
            continue
        if ASSISTANT_TEXT in rendered:
            break
    # (the assistant start may begin with the previous turn's closer: Command R's does)
    opener = _first_token(user_start)
    found = _closing_markers(rendered.rpartition(ASSISTANT_TEXT)[2] if ASSISTANT_TEXT in rendered else "", opener, real_eos)
    if not found:
        # (a template that writes the last reply without its end marker writes it
        # after an earlier one, before the next user turn: Hy3)
        later = _reply_then_user(eos)  # (the role starts' own render: the prober renders it once)
        try:
            between = prober.render(later)
        except TemplateRenderError:
            between = ""
        if ASSISTANT_TEXT in between and USER_TEXT_2 in between:
            found = _closing_markers(between[between.find(ASSISTANT_TEXT) + len(ASSISTANT_TEXT) : between.rfind(USER_TEXT_2)], opener, real_eos)
            # (a marker that opens every user turn, the first too, opens one: GLM-4's [Round 1])
            first_turn = _numberless(between[: between.find(USER_TEXT)])
            found = list(itertools.takewhile(lambda token: _numberless(token) not in first_turn, found))
    if real_eos and _is_marker(strip_ws(real_eos)):
        found.append(strip_ws(real_eos))
    # (a family's marker no probe renders: quirks.END_OF_MESSAGE)
    if found and END_OF_MESSAGE.marker in prober.template.loaded.source:
        found.append(END_OF_MESSAGE.marker)
    markers = tuple(dict.fromkeys(found))
    if markers:
        log.cite_source("turn_end", "the markers after an assistant turn's text (and the end-of-sequence token)")
    return markers


def _reply_then_user(eos: dict[str, str]) -> RenderRequest:
    """User, assistant reply, user: the conversation that shows what closes a
    reply before the next turn."""
    return RenderRequest([USER, assistant(), {"role": "user", "content": USER_TEXT_2}], enable_thinking=True, extra=eos)


def _numberless(text: str) -> str:
    """``text`` with each number as ``#`` (a turn's marker may count turns)."""
    return re.sub(r"[0-9]+", "#", text)


def _closing_markers(after: str, opener: str, real_eos: str) -> list[str]:
    """The markers that begin ``after`` (what follows an assistant turn's
    text), up to one that opens a turn; the probe's stand-in end-of-sequence
    token is not kept."""
    found: list[str] = []
    for token in _tokens(after):
        if not _is_marker(token) or token == opener or OPENS_A_TURN.search(token):
            break
        if token != _PROBE_EOS or real_eos:
            found.append(token)
    return found


def _as_parts(message: dict[str, Any], like: Any) -> dict[str, Any]:
    """``message`` with its text content as parts when ``like`` is parts."""
    text = message.get("content")
    if isinstance(like, list) and isinstance(text, str):
        return {**message, "content": [{"type": "text", "text": text}]}
    return message


def generation_prompt(
    prober: Prober, log: PhaseLog, reasoning: ReasoningAnalysis, enable_thinking: bool
) -> GenerationPromptAnalysis:
    """What ``add_generation_prompt=true`` appends, and what it does to reasoning."""
    try:
        cmp = prober.compare(
            "generation prompt",
            conversation(tools=False, generation_prompt=False, thinking=enable_thinking),
            conversation(tools=False, generation_prompt=True, thinking=enable_thinking),
        )
    except ComparisonFailed as exc:
        log.degrade("generation prompt", exc)
        return GenerationPromptAnalysis(enable_thinking=enable_thinking)
    text = appended(cmp.output_a, cmp.output_b)
    return GenerationPromptAnalysis(text, prefill_outcome(text, reasoning), enable_thinking)


__all__ = ["generation_prompt", "role_starts", "turn_end"]
