"""Template capabilities, detected by probe renders.

Each flag is decided by rendering a small conversation that carries a *needle*
(a string that cannot occur by chance) and looking for it in the output.  A
probe whose render raises counts as "not supported".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from analysis.errors import RenderLimitError, TemplateRenderError
from analysis.template.rendering import ChatTemplate, RenderRequest
from analysis.template.sandbox import IndexTrackingStr

_USER = {"role": "user", "content": "User message"}


@dataclass(frozen=True)
class Capabilities:
    """The eight capability flags, named as in the reference analysis."""

    supports_tools: bool = False
    supports_tool_calls: bool = False
    supports_system_role: bool = False
    supports_parallel_tool_calls: bool = False
    supports_preserve_reasoning: bool = False
    supports_string_content: bool = False
    supports_typed_content: bool = False
    supports_object_arguments: bool = False

    def to_dict(self) -> dict[str, bool]:
        """The flags as a JSON-ready dict (sorted keys, as in the reference)."""
        return dict(sorted(asdict(self).items()))


def _tool_def(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "Tool description",
            "parameters": {
                "type": "object",
                "properties": {"arg": {"type": "string", "description": "Arg description"}},
                "required": ["arg"],
            },
        },
    }


def _call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _tool_conversation(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        _USER,
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "content": "Tool response", "tool_call_id": calls[0]["id"]},
        {"role": "assistant", "content": "The tool response was 'tool response'"},
        _USER,
    ]


def _try_render(template: ChatTemplate, request: RenderRequest) -> str | None:
    try:
        return template.render(request)
    except RenderLimitError:
        raise  # a runaway template is an error, not a missing capability
    except TemplateRenderError:
        return None


def detect_capabilities(template: ChatTemplate) -> Capabilities:
    """Run the probe renders and return the capability flags."""
    # String content: a single user turn renders, with a null tool entry and
    # strict undefined-to-JSON, as the reference probes it (see README: caps).
    template.strict_undefined_json = True
    try:
        string_out = _try_render(
            template,
            RenderRequest(
                [{"role": "user", "content": "PROBE_STRING_CONTENT"}],
                tools=[None],  # type: ignore[list-item]
                add_generation_prompt=True,
            ),
        )
    finally:
        template.strict_undefined_json = False
    supports_string = string_out is not None and "PROBE_STRING_CONTENT" in string_out

    # Typed content: the template indexes content as a list.
    probe = IndexTrackingStr("content")
    _try_render(template, RenderRequest([{"role": "user", "content": probe}], add_generation_prompt=True))
    supports_typed = template.indexed_strings > 0

    system_out = _try_render(
        template,
        RenderRequest(
            [{"role": "system", "content": "PROBE_SYSTEM_NEEDLE"}, _USER], add_generation_prompt=True
        ),
    )
    supports_system = system_out is not None and "PROBE_SYSTEM_NEEDLE" in system_out

    tools = [_tool_def("probe_tool_definition")]
    tools_out = _try_render(template, RenderRequest([_USER], tools=tools, add_generation_prompt=True))
    supports_tools = tools_out is not None and "probe_tool_definition" in tools_out

    # Tool calls: object arguments first, then JSON-string arguments.
    supports_calls = supports_object = False
    for arguments in ({"arg": "PROBE_ARG_VALUE"}, '{"arg": "PROBE_ARG_VALUE"}'):
        template.stringified_containers = 0
        out = _try_render(
            template,
            RenderRequest(
                _tool_conversation([_call("call00001", "probe_call_one", arguments)]),
                tools=tools,
                add_generation_prompt=True,
            ),
        )
        if out is not None and "probe_call_one" in out:
            supports_calls = True
            supports_object = isinstance(arguments, dict) and template.stringified_containers == 0
            break

    parallel_out = _try_render(
        template,
        RenderRequest(
            _tool_conversation(
                [
                    _call("call00001", "probe_call_one", {"arg": "value"}),
                    _call("call00002", "probe_call_two", {"arg": "value"}),
                ]
            ),
            tools=tools,
            add_generation_prompt=True,
        ),
    )
    supports_parallel = supports_calls and parallel_out is not None and "probe_call_two" in parallel_out

    # Preserved reasoning: reasoning of an earlier assistant turn shows in the
    # history, either before a later user turn or as the last turn.
    reasoning_turn = {"role": "assistant", "content": "Assistant message", "reasoning_content": "PROBE_REASONING"}
    supports_reasoning = False
    for messages, agp in (([_USER, reasoning_turn, _USER], True), ([_USER, reasoning_turn], False)):
        out = _try_render(template, RenderRequest(messages, add_generation_prompt=agp))
        if out is not None and "PROBE_REASONING" in out:
            supports_reasoning = True
            break

    return Capabilities(
        supports_tools=supports_tools,
        supports_tool_calls=supports_calls,
        supports_system_role=supports_system,
        supports_parallel_tool_calls=supports_parallel,
        supports_preserve_reasoning=supports_reasoning,
        supports_string_content=supports_string,
        supports_typed_content=supports_typed,
        supports_object_arguments=supports_object,
    )


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


#: a user message's text no template writes of its own accord
_PROBE_TEXT = "autoparser probe text 7431"


def chat_template_problem(template: ChatTemplate) -> str:
    """Why ``template`` does not look like a chat template ("" when it does):
    no render of a user message, as a string or as text parts, shows the
    message's text (an empty file, a model output, a template of another kind)."""
    for content in (_PROBE_TEXT, [{"type": "text", "text": _PROBE_TEXT}]):
        try:
            rendered = template.render(RenderRequest([{"role": "user", "content": content}], add_generation_prompt=True))
        except TemplateRenderError:
            continue
        if _PROBE_TEXT in rendered:
            return ""
    return (
        "the source does not look like a chat template: no render of a user message shows its text "
        "(an empty file, or a model output?)"
    )
