"""Built-in conversations and tools used by `render` and by probe renders."""

from __future__ import annotations

from typing import Any

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}

GENERATION_PROMPT_CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "What is the weather in Paris?"},
]

FULL_CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Hello!"},
    {"role": "assistant", "content": "Hi! Let me check the weather in Paris."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_0001",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_0001", "name": "get_weather", "content": "{\"temperature\": 21}"},
    {"role": "user", "content": "Thanks!"},
]


_ASK: dict[str, Any] = {"role": "user", "content": "What is the weather in Paris?"}
_CALL: dict[str, Any] = {
    "id": "call_0001",
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
}
_REASONING = "The user wants the weather in Paris; the tool can tell."

#: One-exchange conversations, one per kind of assistant turn (as llama.cpp's
#: template debugger offers): how the template writes each kind.
SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "content_only": [_ASK, {"role": "assistant", "content": "It is sunny in Paris."}],
    "reasoning_content": [
        _ASK,
        {"role": "assistant", "reasoning_content": _REASONING, "content": "It is sunny in Paris."},
    ],
    "tool_call_only": [_ASK, {"role": "assistant", "content": "", "tool_calls": [_CALL]}],
    "content_tool_call": [
        _ASK,
        {"role": "assistant", "content": "Let me check the weather.", "tool_calls": [_CALL]},
    ],
    "reasoning_tool_call": [
        _ASK,
        {"role": "assistant", "reasoning_content": _REASONING, "content": "", "tool_calls": [_CALL]},
    ],
}


def default_messages() -> list[dict[str, Any]]:
    """The one-message conversation of a request a command makes when given none (a new list each time)."""
    return [{"role": "user", "content": "Hello"}]
