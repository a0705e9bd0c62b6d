"""What several commands read the same way: the model output (a file or
stdin), the request built from the request options, and the warning for a
source that is not a chat template."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analysis.fixtures import default_messages
from autoparser_cli.common import fail, note, read_json_file

if TYPE_CHECKING:
    from analysis.parsers import ChatRequest


def warn_if_not_a_chat_template(parser: Any) -> None:
    """A warning on stderr where the source does not look like a chat template."""
    if parser.template_problem:
        note(parser.template_problem, "warning")


def read_output(output: str | None) -> str:
    """The model output: the file ``output``, or stdin for None or ``-`` (said
    on stderr when stdin is a terminal)."""
    from analysis.userio import MAX_INPUT_BYTES, decode_utf8, read_bytes, read_stream

    if output is None or output == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        if sys.stdin is not None and sys.stdin.isatty():
            note("reading the model output from the terminal: end it with Ctrl-D (or give a file)")
        if stdin is None:
            return sys.stdin.read(MAX_INPUT_BYTES)
        return decode_utf8(read_stream(stdin, "stdin"), "stdin")
    path = Path(output)
    if not path.exists() and not path.is_symlink():
        raise fail(f"{output}: no such file (give a file, or - for stdin)")
    return decode_utf8(read_bytes(path), output)


def build_request(
    request: Path | None,
    tools: Path | None,
    reasoning_format: str | None,
    enable_thinking: bool | None,
    parallel_tool_calls: bool | None = None,
    default_tools: list[dict[str, Any]] | None = None,
) -> ChatRequest:
    """The request every command that builds for one reads from the same
    options: --request's, else one message "Hello" (with ``default_tools``,
    where the command has a default), then --tools, --reasoning-format,
    --enable-thinking and --parallel-tool-calls over it."""
    from analysis.parsers import ChatRequest
    from analysis.userio import validate_tools

    if request is not None and tools is not None:
        raise fail("give --request or --tools, not both")
    if request is not None:
        data = read_json_file(request, "request")
    else:
        data = {"messages": default_messages(), **({"tools": default_tools} if default_tools else {})}
    if isinstance(data, dict):
        data = dict(data)
        if tools is not None:
            data["tools"] = validate_tools(read_json_file(tools, "tools"), str(tools))
        if reasoning_format is not None:
            data["reasoning_format"] = reasoning_format
        if enable_thinking is not None:
            data["enable_thinking"] = enable_thinking
        if parallel_tool_calls is not None:
            data["parallel_tool_calls"] = parallel_tool_calls
    return ChatRequest.from_json(data)
