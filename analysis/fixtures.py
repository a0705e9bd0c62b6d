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
