"""The prompt of a request and its generation prompt.

The generation prompt is what the template appends for the model's turn: the
``add_generation_prompt`` false/true diff, or, when the final assistant message
is continued, everything the prompt adds after the earlier messages (role
header, reasoning so far, content so far).  The parser reads it before the
model's output, so what it opened (``<think>``) or closed is known.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analysis.parsers.request import ChatRequest, ContinueFinal
from analysis.phases.result import ReasoningAnalysis, ReasoningMode
from analysis.probing.adapting import render_adapted
from analysis.probing.caps import Capabilities
from analysis.probing.diff import appended
from analysis.template.rendering import ChatTemplate, RenderRequest


@dataclass(frozen=True)
class Prompt:
    """The rendered prompt and its generation prompt."""

    text: str
    generation_prompt: str
    continued: str | None  #: "reasoning" or "content" when the last message is continued
    continued_text: str = ""  #: the continued message's own text, at the end of the generation prompt


def render_messages(
    template: ChatTemplate, caps: Capabilities, request: ChatRequest, messages: Sequence[Mapping[str, Any]], generation_prompt: bool
) -> str:
    """Render ``messages`` with the request's tools and options, adapting the
    conversation to the template's capabilities if it rejects it."""
    render_request = RenderRequest(
        _arguments_as_objects(messages) if caps.supports_object_arguments else list(messages),
        request.tools or None, add_generation_prompt=generation_prompt, enable_thinking=request.enable_thinking, extra=request.extra
    )
    return render_adapted(template, render_request, caps)


def _arguments_as_objects(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Tool-call arguments given as JSON text, parsed (templates that iterate
    ``arguments|items`` need objects, as OpenAI clients send strings)."""
    out: list[Mapping[str, Any]] = []
    for message in messages:
        calls = message.get("tool_calls")
        if not calls:
            out.append(message)
            continue
        fixed = []
        for call in calls:
            function = dict(call.get("function") or {})
            if isinstance(function.get("arguments"), str):
                try:
                    function["arguments"] = json.loads(function["arguments"])
                except ValueError:
                    pass
            fixed.append({**call, "function": function})
        out.append({**message, "tool_calls": fixed})
    return out


def _continued_part(request: ChatRequest) -> str | None:
    messages = request.messages
    if not messages or messages[-1].get("role") != "assistant":
        return None
    mode = request.continue_final_message
    last = messages[-1]
    if mode is ContinueFinal.AUTO:
        return "reasoning" if last.get("reasoning_content") and not last.get("content") else "content"
    if mode is ContinueFinal.REASONING:
        return "reasoning"
    if mode is ContinueFinal.CONTENT:
        return "content"
    return None


def _new_turn_prompt(template: ChatTemplate, caps: Capabilities, request: ChatRequest, messages: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    with_prompt = render_messages(template, caps, request, messages, True)
    without = render_messages(template, caps, request, messages, False)
    return with_prompt, appended(without, with_prompt)


def _open_reasoning(before: str, start: str, end: str) -> str:
    """``before`` with a reasoning block opened at its end: an empty or closed
    block the template wrote for the turn is removed first, and an already open
    start marker is reused."""
    s_start, s_end = start.strip(), end.strip()
    trimmed = before.rstrip()
    if s_end and trimmed.endswith(s_end):
        trimmed = trimmed[: -len(s_end)].rstrip()
        if s_start and trimmed.endswith(s_start):
            trimmed = trimmed[: -len(s_start)]
        return trimmed + start
    if s_start and trimmed.endswith(s_start):
        return before
    return before + start


#: Stands in for the continued message's content, to find where content goes.
CONTINUATION_PROBE = "Zcontinuation_probe_textZ"


def build_prompt(
    template: ChatTemplate,
    caps: Capabilities,
    request: ChatRequest,
    reasoning: ReasoningAnalysis | None = None,
    content_start: str = "",
) -> Prompt:
    """Render the request's prompt and find its generation prompt.

    A continued final message is rendered with a probe as its content; the
    prompt is cut where the probe stands (or right after the reasoning so far),
    and what the template does not render is written with the analysed markers
    (reasoning start, reasoning, end) and the message's own text."""
    continued = _continued_part(request)
    if continued is None:
        if not request.add_generation_prompt:
            text = render_messages(template, caps, request, request.messages, False)
            return Prompt(text, "", None)
        text, generation = _new_turn_prompt(template, caps, request, request.messages)
        return Prompt(text, generation, None)
    last = dict(request.messages[-1])
    earlier = request.messages[:-1]
    base = render_messages(template, caps, request, earlier, False)
    probed = render_messages(template, caps, request, [*earlier, {**last, "content": CONTINUATION_PROBE}], False)
    at = probed.find(CONTINUATION_PROBE)
    before = probed[:at] if at >= 0 else base + _new_turn_prompt(template, caps, request, earlier)[1]
    thought = str(last.get("reasoning_content") or "")
    content = str(last.get("content") or "")
    start = reasoning.start if reasoning and reasoning.mode is not ReasoningMode.NONE else ""
    end = reasoning.end if reasoning is not None and (start or reasoning.end) else ""
    # the content's own header the template wrote for the probe (harmony's final channel)
    header = content_start if content_start and before.endswith(content_start) else ""
    if continued == "reasoning":
        if thought and thought in before:
            text = before[: before.rfind(thought) + len(thought)]
        else:  # reasoning comes before the content's header, which the model writes later
            text = _open_reasoning(before[: len(before) - len(header)], start, end) + thought
    else:
        if thought and (start or end) and thought not in before:
            before = _open_reasoning(before[: len(before) - len(header)], start, end) + thought + end + header
        text = before + content
    own = thought if continued == "reasoning" else content
    return Prompt(text, appended(base, text), continued, own)
