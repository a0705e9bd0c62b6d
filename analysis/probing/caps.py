"""Template capabilities, detected by probe renders.

Each flag is decided by rendering a small conversation that carries a *needle*
(a string that cannot occur by chance) and looking for it in the output.  A
probe whose render raises counts as "not supported".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from analysis.errors import TemplateRenderError
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


def _tool_conversation(calls: list[dict[str, Any]], content: str | None = "") -> list[dict[str, Any]]:
    return [
        _USER,
        {"role": "assistant", "content": content, "tool_calls": calls},
        {"role": "tool", "content": "Tool response", "tool_call_id": calls[0]["id"]},
        {"role": "assistant", "content": "The tool response was 'tool response'"},
        _USER,
    ]


def _try_render(template: ChatTemplate, request: RenderRequest) -> str | None:
    """The render's text, None when the template raises (a sandbox limit still raises)."""
    return template.probe(request).text


def detect_capabilities(template: ChatTemplate) -> Capabilities:
    """Run the probe renders and return the capability flags."""
    # String content: a single user turn renders, with a null tool entry and
    # strict undefined-to-JSON, as the reference probes it (see README: caps).
    string_out = template.probe(
        RenderRequest(
            [{"role": "user", "content": "PROBE_STRING_CONTENT"}],
            tools=[None],  # type: ignore[list-item]
            add_generation_prompt=True,
        ),
        strict_undefined_json=True,
    ).text
    supports_string = string_out is not None and "PROBE_STRING_CONTENT" in string_out

    # Typed content: the template indexes content as a list.
    probe = IndexTrackingStr("content")
    typed = template.probe(RenderRequest([{"role": "user", "content": probe}], add_generation_prompt=True))
    supports_typed = typed.indexed_strings > 0

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

    # Tool calls: object arguments first, then JSON-string arguments; the
    # turn's content empty first, then null (a template may write calls only
    # for a turn whose content is null).
    supports_calls = supports_object = False
    call_content: str | None = ""
    shapes: tuple[tuple[Any, str | None], ...] = tuple(
        (arguments, content) for arguments in ({"arg": "PROBE_ARG_VALUE"}, '{"arg": "PROBE_ARG_VALUE"}') for content in ("", None)
    )
    for arguments, content in shapes:
        rendered = template.probe(
            RenderRequest(
                _tool_conversation([_call("call00001", "probe_call_one", arguments)], content),
                tools=tools,
                add_generation_prompt=True,
            )
        )
        if rendered.text is not None and "probe_call_one" in rendered.text:
            supports_calls = True
            supports_object = isinstance(arguments, dict) and rendered.stringified_containers == 0
            call_content = content
            break

    parallel_out = _try_render(
        template,
        RenderRequest(
            _tool_conversation(
                [
                    _call("call00001", "probe_call_one", {"arg": "value"}),
                    _call("call00002", "probe_call_two", {"arg": "value"}),
                ],
                call_content,
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
    for messages, generation_prompt in (([_USER, reasoning_turn, _USER], True), ([_USER, reasoning_turn], False)):
        out = _try_render(template, RenderRequest(messages, add_generation_prompt=generation_prompt))
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


#: a user message's text no template writes of its own accord
_PROBE_TEXT = "autoparser probe text 7431"


def chat_template_problem(template: ChatTemplate) -> str:
    """Why ``template`` does not look like a chat template ("" when it does):
    no render of a user message, as a string or as text parts, alone or after
    a system turn (which some templates demand), without tools or with them
    (some render nothing without), shows the message's text (an
    empty file, a constant one, a model output, a template of another kind)."""
    system = {"role": "system", "content": "Be brief."}
    for tools in (None, [_tool_def("probe_tool_definition")]):  # (a template may render nothing without tools)
        for content in (_PROBE_TEXT, [{"type": "text", "text": _PROBE_TEXT}]):
            for before in ([], [system]):
                request = RenderRequest([*before, {"role": "user", "content": content}], tools, add_generation_prompt=True)
                try:
                    rendered = template.render(request)
                except TemplateRenderError:
                    continue
                if _PROBE_TEXT in rendered:
                    return ""
    return (
        "the source does not look like a chat template: no render of a user message shows its text "
        "(an empty file, or a model output?)"
    )
