"""Rendering a conversation a template rejects: adapted to the template's
capabilities (the polyfills llama.cpp applies) and rendered once more."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from analysis.errors import RenderLimitError, TemplateRenderError
from analysis.probing.caps import Capabilities, detect_capabilities
from analysis.template.rendering import ChatTemplate, RenderRequest


def adapt_messages(messages: list[dict[str, Any]], caps: Capabilities) -> list[dict[str, Any]]:
    """Reshape a conversation for a template's capabilities (the polyfills
    llama.cpp applies): system turns merged into the next user turn when the
    template has no system role; object arguments turned into JSON strings when
    it expects strings; for templates without tool calls, calls written into the
    assistant's content as JSON and tool results sent as user turns, with
    consecutive turns of one role merged."""
    import json

    out: list[dict[str, Any]] = []
    pending_system: list[str] = []
    for message in messages:
        message = dict(message)
        role = message.get("role")
        if role == "system" and not caps.supports_system_role:
            pending_system.append(str(message.get("content") or ""))
            continue
        calls = message.get("tool_calls")
        if calls and not caps.supports_tool_calls:
            text = json.dumps({"tool_calls": [c.get("function", c) for c in calls]}, ensure_ascii=False)
            message = {"role": role, "content": "\n\n".join(filter(None, [str(message.get("content") or ""), text]))}
        elif calls and not caps.supports_object_arguments:
            fixed = []
            for call in calls:
                function = dict(call.get("function", {}))
                if not isinstance(function.get("arguments"), str):
                    function["arguments"] = json.dumps(function.get("arguments"), ensure_ascii=False)
                fixed.append({**call, "function": function})
            message["tool_calls"] = fixed
        if role == "tool" and not caps.supports_tool_calls:
            message = {"role": "user", "content": json.dumps({"tool_response": message.get("content")}, ensure_ascii=False)}
        if pending_system and message.get("role") == "user":
            message["content"] = "\n\n".join([*pending_system, str(message.get("content") or "")])
            pending_system = []
        if (
            out
            and not caps.supports_tool_calls
            and out[-1].get("role") == message.get("role")
            and isinstance(out[-1].get("content"), str)
        ):
            out[-1] = {**out[-1], "content": out[-1]["content"] + "\n\n" + str(message.get("content") or "")}
            continue
        out.append(message)
    if pending_system:
        out.insert(0, {"role": "user", "content": "\n\n".join(pending_system)})
    return out


def render_adapted(
    template: ChatTemplate,
    request: RenderRequest,
    caps: Capabilities | None = None,
    on_adapt: Callable[[str], None] | None = None,
) -> str:
    """Render ``request``; if the template rejects it, adapt the conversation to the
    template's capabilities (:func:`adapt_messages`; detected unless ``caps`` is
    given) and render once more, telling ``on_adapt`` the template's own error."""
    try:
        return template.render(request)
    except RenderLimitError:
        raise
    except TemplateRenderError as first_error:
        caps = caps or detect_capabilities(template)
        adapted = adapt_messages([dict(m) for m in request.messages], caps)
        if adapted == list(request.messages):
            raise first_error from None
        text = template.render(
            RenderRequest(
                adapted, request.tools, request.add_generation_prompt, request.enable_thinking, request.extra
            )
        )
        if on_adapt is not None:  # (only when the adapted conversation rendered)
            on_adapt(first_error.detail if first_error.line is None else f"line {first_error.line}: {first_error.detail}")
        return text


def tokens_written(template: ChatTemplate, names: list[str], request: RenderRequest) -> list[str]:
    """Which of ``names`` (``bos_token``, ``eos_token``) the template writes
    into this render: those whose stand-in value shows in a render made with
    them (adapted where the template rejects the conversation: only what it
    writes is asked).  A template that raises writes none."""
    marks = {name: f"\x00{name}\x00" for name in names}
    try:
        probe = render_adapted(template, replace(request, extra={**request.extra, **marks}))
    except TemplateRenderError:
        return []
    return [name for name, mark in marks.items() if mark in probe]
