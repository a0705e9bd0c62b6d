"""The conversations lint renders, and a renderer that keeps each render's
text, error and notes (rules share renders: each conversation renders once)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from analysis.template.rendering import ChatTemplate, RenderMemo, RenderRequest
from analysis.template.sandbox import RenderNotes

Message = dict[str, Any]

SYSTEM: Message = {"role": "system", "content": "You are a helpful assistant."}
USER_1: Message = {"role": "user", "content": "What is the weather in Paris?"}
USER_2: Message = {"role": "user", "content": "And in Rome?"}
REPLY: Message = {"role": "assistant", "content": "It is sunny in Paris."}
REPLY_REASONING: Message = {**REPLY, "reasoning_content": "The user asks about Paris, so I answer."}

#: the reasoning markers lint assumes when the analysis found none
COMMON_REASONING_MARKERS = ("<think>", "</think>")

TOOL_NAME = "get_weather"
TOOLS: list[Message] = [
    {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "options": {"type": "object"}},
                "required": ["city"],
            },
        },
    }
]


def call(call_id: str, arguments: Any) -> Message:
    """A tool call in OpenAI's shape."""
    return {"id": call_id, "type": "function", "function": {"name": TOOL_NAME, "arguments": arguments}}


def call_turn(calls: Sequence[Message], content: str | None = "") -> Message:
    """An assistant turn that makes ``calls``."""
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool_result(call_id: str, text: str = "Sunny, 24 C") -> Message:
    """A tool message answering ``call_id``."""
    return {"role": "tool", "content": text, "tool_call_id": call_id}


def as_json(messages: Sequence[Mapping[str, Any]]) -> str:
    """A conversation as compact JSON (the evidence of a finding)."""
    return json.dumps(list(messages), ensure_ascii=False)


@dataclass(frozen=True)
class Render:
    """One render: its text, or the template's own error message when it raised."""

    text: str | None
    error: str = ""
    notes: RenderNotes = field(default_factory=RenderNotes)
    #: the template line that raised (None: unknown, or the render did not raise)
    error_line: int | None = None
    #: the notes of the same render traced (the line that wrote each piece of
    #: text), rendered again when a line is first asked for
    traced: Callable[[], RenderNotes] | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.text is not None

    def line_at(self, offset: int | None) -> int | None:
        """The template line of the statement that wrote the character at
        ``offset`` (the last character for an offset at the end)."""
        if offset is None or self.text is None:
            return None
        notes = self.notes if self.notes.lines or self.traced is None else self.traced()
        return notes.line_at(min(offset, max(0, len(self.text) - 1)))


class Renderer:
    """Renders conversations of one template once each (a sandbox limit still raises)."""

    def __init__(self, template: ChatTemplate, base: Sequence[Message] = ()):
        self.template = template
        #: the messages every conversation starts with (a system turn, where the template demands one)
        self.base = list(base)
        self._renders = RenderMemo(template)
        #: the renders a finding names lines in, traced (only those: tracing costs)
        self._traced = RenderMemo(template, trace=True)
        #: every request rendered so far, by its key (what a fix is proven on)
        self.requests: dict[str, RenderRequest] = {}

    @classmethod
    def starting(cls, template: ChatTemplate) -> Renderer:
        """A renderer whose conversations start with nothing, or with a system
        turn when the template renders a lone user turn only after one."""
        renderer = cls(template)
        if not renderer.render([USER_1]).ok:
            renderer.base = [SYSTEM]
        return renderer

    def render(
        self,
        messages: Sequence[Message],
        generation_prompt: bool = True,
        tools: Sequence[Message] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Render:
        """Render ``base + messages`` (memoized)."""
        request = RenderRequest([*self.base, *messages], tools=tools, add_generation_prompt=generation_prompt, extra=dict(extra or {}))
        self.requests.setdefault(RenderMemo.key(request), request)
        attempt = self._renders.attempt(request)
        error = attempt.error
        message = "" if error is None else getattr(error, "template_message", None) or error.detail
        return Render(attempt.text, message, attempt.notes, None if error is None else error.line, partial(self._traced_notes, request))

    def _traced_notes(self, request: RenderRequest) -> RenderNotes:
        return self._traced.attempt(request).notes
