"""Reading model output with transformers' own ``response_template`` parser.

transformers is optional (the hf extra, ``pip install '.[hf]'``; it needs no
torch): this module imports it on first use and names the missing extra when
it is absent.  The reading is transformers' ``parse_response`` with the
prompt as its ``prefix`` and the request's tools (which cast tagged argument
values by their schema), mapped to autoparser's message: ``thinking`` is the
reasoning, ``tool_calls`` the calls with their arguments as JSON text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from analysis.errors import ExportError, InputError, one_line
from analysis.messages.mapper import Message, ToolCall

#: what to install for this module
EXTRA = "the hf extra: pip install '.[hf]' in the checkout"


def _parse_response() -> Any:
    # transformers advises at import that torch is missing; it needs none here
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    try:
        from transformers.utils.chat_parsing import parse_response
    except ImportError as exc:
        raise ExportError(f"reading with transformers needs transformers >= 5.23 ({EXTRA}): {one_line(exc)}") from None
    return parse_response


def transformers_missing() -> str:
    """Why transformers' parser cannot be run here ("" when it can)."""
    try:
        _parse_response()
    except ExportError as exc:
        return str(exc)
    return ""


def check_loadable(spec: Mapping[str, Any]) -> None:
    """Raise :class:`InputError` when transformers refuses ``spec`` (unknown
    keys, a bad pattern...), with its reason on one line."""
    parse_response = _parse_response()
    try:
        parse_response("", dict(spec), prefix="")
    except (ValueError, TypeError, KeyError) as exc:
        raise InputError(f"response_template: transformers refuses it: {one_line(exc)}") from None


def transformers_reading(
    spec: Mapping[str, Any], text: str, prefix: str, tools: Sequence[Mapping[str, Any]] = ()
) -> Message | str:
    """transformers' reading of ``text`` (model output after ``prefix``) as a
    message, or why it could not read it (its error, on one line)."""
    parse_response = _parse_response()
    try:
        parsed = parse_response(text, dict(spec), prefix=prefix, tools=[dict(t) for t in tools] or None)
    except (ValueError, TypeError, KeyError, RuntimeError) as exc:
        return f"transformers could not read it: {one_line(exc)}"
    return _message(parsed)


def _message(parsed: Mapping[str, Any]) -> Message | str:
    content = parsed.get("content")
    thinking = parsed.get("thinking", parsed.get("reasoning_content"))
    calls: list[ToolCall] = []
    for call in parsed.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return f"transformers read a call without a function name: {one_line(ValueError(json.dumps(call, default=str)))}"
        arguments = function.get("arguments")
        text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        calls.append(ToolCall(function["name"], text, call.get("id")))
    return Message(
        content=content if isinstance(content, str) else ("" if content is None else json.dumps(content)),
        reasoning_content=thinking if isinstance(thinking, str) and thinking else None,
        tool_calls=tuple(calls),
    )


__all__ = ["EXTRA", "check_loadable", "transformers_missing", "transformers_reading"]
