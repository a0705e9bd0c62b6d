"""Requests, generation prompts, and the PEG parsers built for them (generic builder and dedicated handlers).

The names below are this layer's public API; each is imported on first use
(``analysis.parsers.NAME``), so importing one of its modules stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis._lazy import lazy_getattr

if TYPE_CHECKING:
    from analysis.parsers.builder import BuiltParser, build_parser
    from analysis.parsers.handlers import Handler, find_handler, handler_named
    from analysis.parsers.prompting import Prompt, build_prompt
    from analysis.parsers.request import ChatRequest, ReasoningFormat, ToolChoice

_EXPORTS = {
    "ChatRequest": "request",
    "ReasoningFormat": "request",
    "ToolChoice": "request",
    "Prompt": "prompting",
    "build_prompt": "prompting",
    "BuiltParser": "builder",
    "build_parser": "builder",
    "Handler": "handlers",
    "find_handler": "handlers",
    "handler_named": "handlers",
}
__all__ = ["BuiltParser", "ChatRequest", "Handler", "Prompt", "ReasoningFormat", "ToolChoice", "build_parser", "build_prompt", "find_handler", "handler_named"]
__getattr__ = lazy_getattr(__name__, _EXPORTS)
