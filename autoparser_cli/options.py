"""The options several commands share, declared once (Typer's parameter
defaults): the template SOURCE and its variant, the request's tools and
thinking switch, the reasoning format as its enum, ``--json``."""

from __future__ import annotations

import typer

from analysis.parsers import ReasoningFormat

SourceArg = typer.Argument(
    None,
    metavar="SOURCE",
    help="Template: .jinja, tokenizer_config.json, chat_template.json, model folder or .gguf "
    "(default: the built-in demo template).",
    show_default=False,
)
VariantOpt = typer.Option(None, "--variant", metavar="NAME", help="Named template variant (default, tool_use, ...).")
#: (each command's help says what it uses without --tools)
ToolsOpt = typer.Option(None, "--tools", metavar="FILE", help="JSON file: a list of tools.")
RequestOpt = typer.Option(None, "--request", metavar="FILE", help="JSON file: the request (messages, tools, options).")
#: the thinking switch, on unless turned off
ThinkingOpt = typer.Option(True, "--enable-thinking/--no-enable-thinking", help="enable_thinking for the generation prompt.")
#: the thinking switch, where leaving it out keeps the request's (or the template's) own
ThinkingOrRequestOpt = typer.Option(
    None, "--enable-thinking/--no-enable-thinking", help="enable_thinking (default: the request's, else on)."
)


#: whether the request allows several tool calls
ParallelToolCallsOpt = typer.Option(
    None, "--parallel-tool-calls/--no-parallel-tool-calls", help="Allow several tool calls (default: the request's, else off)."
)


def _reasoning_format(value: str | None) -> str | None:
    """``--reasoning-format`` checked against its enum at the boundary (a wrong
    one is one line, naming the option), in the enum's spelling."""
    if value is None:
        return None
    try:
        return ReasoningFormat(value).value
    except ValueError:
        from autoparser_cli.common import fail

        raise fail(f"--reasoning-format {value!r}: expected one of {', '.join(f.value for f in ReasoningFormat)}") from None


ReasoningFormatOpt = typer.Option(
    None,
    "--reasoning-format",
    metavar="FORMAT",
    callback=_reasoning_format,
    help=" | ".join(f.value for f in ReasoningFormat) + " (default: the request's, else auto).",
)

__all__ = [
    "ParallelToolCallsOpt",
    "ReasoningFormat",
    "ReasoningFormatOpt",
    "RequestOpt",
    "SourceArg",
    "ThinkingOpt",
    "ThinkingOrRequestOpt",
    "ToolsOpt",
    "VariantOpt",
]
