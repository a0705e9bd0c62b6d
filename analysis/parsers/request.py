"""A chat request as a serving engine receives it (the ``request`` of the conformance cases)."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analysis.errors import InputError
from analysis.userio import validate_messages, validate_tools


class ReasoningFormat(str, enum.Enum):
    """Where reasoning goes in the parsed message."""

    NONE = "none"  #: left in content, verbatim
    AUTO = "auto"  #: extracted into reasoning_content
    DEEPSEEK = "deepseek"  #: extracted into reasoning_content
    DEEPSEEK_LEGACY = "deepseek-legacy"  #: extracted, and also kept (with its markers) in content


class ToolChoice(str, enum.Enum):
    """Whether the model may, must or must not call tools."""

    AUTO = "auto"
    REQUIRED = "required"
    NONE = "none"


class ContinueFinal(str, enum.Enum):
    """Whether the last (assistant) message is continued instead of answered."""

    NONE = "none"
    AUTO = "auto"  #: continue when the last message is an assistant message
    REASONING = "reasoning"  #: continue the last message's reasoning
    CONTENT = "content"  #: continue the last message's content


#: the keys of a request object
REQUEST_KEYS = (
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning_format",
    "enable_thinking",
    "add_generation_prompt",
    "continue_final_message",
    "json_schema",
    "chat_template_kwargs",
)


def _json_kind(value: Any) -> str:
    """How JSON calls ``value``'s type (for messages)."""
    for kind, name in ((bool, "a boolean"), (dict, "an object"), (list, "a list"), (str, "a string"), ((int, float), "a number")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def _flag(data: Mapping[str, Any], name: str, default: bool) -> bool:
    value = data.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InputError(f"request: {name} must be true or false, not {_json_kind(value)}")
    return value


def _enum(cls: type[enum.Enum], value: Any, name: str) -> Any:
    try:
        return cls(value)
    except ValueError:
        choices = ", ".join(m.value for m in cls)
        raise InputError(f"request: {name} must be one of {choices}, not {value!r}") from None


@dataclass(frozen=True)
class ChatRequest:
    """Messages, tools and the options that shape the prompt, the parser and the grammar."""

    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] | None = None
    tool_choice: ToolChoice = ToolChoice.AUTO
    parallel_tool_calls: bool = False
    reasoning_format: ReasoningFormat = ReasoningFormat.AUTO
    enable_thinking: bool = True
    add_generation_prompt: bool = True
    continue_final_message: ContinueFinal = ContinueFinal.NONE
    json_schema: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def has_tools(self) -> bool:
        """Tools are given and the model may call them."""
        return bool(self.tools) and self.tool_choice is not ToolChoice.NONE

    @classmethod
    def from_json(cls, data: Any) -> ChatRequest:
        """Read the JSON request format of the conformance cases (missing keys
        take defaults).  A key it does not know (``"mesages"``), or a value of
        the wrong shape, is an :class:`InputError` naming it: a request is
        never silently read otherwise than it was written."""
        if not isinstance(data, dict):
            raise InputError(f"request: expected a JSON object with 'messages', not {_json_kind(data)}")
        unknown = sorted(str(k) for k in data if k not in REQUEST_KEYS)
        if unknown:
            raise InputError(f"request: unknown key {unknown[0]!r} (the keys are {', '.join(REQUEST_KEYS)})")
        messages = data.get("messages", [{"role": "user", "content": "Hello"}])
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise InputError("request: 'messages' must be a list of objects")
        validate_messages(messages, "request: messages")
        tools = validate_tools(data.get("tools"), "request")
        schema = data.get("json_schema")
        if schema is not None and not isinstance(schema, dict):
            raise InputError("request: 'json_schema' must be an object or null")
        extra = data.get("chat_template_kwargs")
        if extra is not None and not isinstance(extra, dict):
            raise InputError(f"request: 'chat_template_kwargs' must be an object, not {_json_kind(extra)}")
        return cls(
            messages=messages,
            tools=tools or None,
            tool_choice=_enum(ToolChoice, data.get("tool_choice", "auto"), "tool_choice"),
            parallel_tool_calls=_flag(data, "parallel_tool_calls", False),
            reasoning_format=_enum(ReasoningFormat, data.get("reasoning_format", "auto"), "reasoning_format"),
            enable_thinking=_flag(data, "enable_thinking", True),
            add_generation_prompt=_flag(data, "add_generation_prompt", True),
            continue_final_message=_enum(
                ContinueFinal, data.get("continue_final_message", "none") or "none", "continue_final_message"
            ),
            json_schema=schema,
            extra=extra or {},
        )
