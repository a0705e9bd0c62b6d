"""The ``grammar`` command: the GBNF grammar for a request, and ``--check``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from autoparser_cli.common import error_line, excerpt_at, fail, handle_errors, note, source_or_default, write_excerpt, write_stdout
from autoparser_cli.inputs import build_request, read_output, warn_if_not_a_chat_template
from autoparser_cli.options import (
    ParallelToolCallsOpt,
    ReasoningFormatOpt,
    RequestOpt,
    SourceArg,
    ThinkingOrRequestOpt,
    ToolsOpt,
    VariantOpt,
)


@handle_errors
def grammar(
    source: Path | None = SourceArg,
    request: Path | None = RequestOpt,
    tools: Path | None = ToolsOpt,
    reasoning_format: str | None = ReasoningFormatOpt,
    enable_thinking: bool | None = ThinkingOrRequestOpt,
    parallel_tool_calls: bool | None = ParallelToolCallsOpt,
    check_output_path: str | None = typer.Option(
        None, "--check", metavar="OUTPUT", help="Model output file (or - for stdin) to test against the grammar."
    ),
    partial: bool = typer.Option(False, "--partial", help="With --check: the output is cut short (a valid prefix fits)."),
    output_only: bool = typer.Option(
        False, "--output-only", help="The grammar of the output alone (a non-lazy grammar otherwise starts with the generation prompt)."
    ),
    variant: str | None = VariantOpt,
) -> None:
    """Print the GBNF grammar generated for a request, as plain text to copy.

    The request is --request's, else one message "Hello" with --tools, else
    with the built-in weather tool; --reasoning-format, --enable-thinking and
    --parallel-tool-calls set the request's own (the same options as parse).
    The lazy flag, triggers and preserved tokens come first as GBNF comments, so
    the whole output is a grammar file. With --check, the built-in matcher runs
    over the part of the output the grammar constrains (from the first trigger
    after the reasoning when the grammar is lazy).

    Example: autoparser grammar templates/tests/tagged_xml.jinja --tools examples/tools.json --check examples/tagged_call.txt

    Exit status: 0 printed (with --check: the output fits), 1 it does not fit, 2 bad input.
    """
    from analysis.fixtures import WEATHER_TOOL
    from analysis.generation import auto_parser, check_output
    from analysis.template import load_template
    from autoparser_cli.formatting import grammar_text

    default_tools = [WEATHER_TOOL] if request is None and tools is None else None
    chat_request = build_request(request, tools, reasoning_format, enable_thinking, parallel_tool_calls, default_tools)
    loaded = load_template(source_or_default(source), variant, has_tools=chat_request.has_tools)
    parser = auto_parser(loaded)
    generated = parser.generate(chat_request)
    warn_if_not_a_chat_template(parser)
    if check_output_path is not None:
        output = read_output(check_output_path)
        fit = check_output(generated, output, partial)
        if not generated.grammar:
            raise fail(f"no grammar for this request: {generated.grammar_error or 'nothing to constrain'}")
        if fit.fits:
            write_stdout(fit.message() + "\n")
            return
        error_line(fit.message())
        if fit.position is not None and fit.position < len(output):
            write_excerpt(excerpt_at(output, fit.position))
        _misfit_hints(generated, output, partial)
        raise typer.Exit(1)
    text = grammar_text(generated, output_only)
    write_stdout(text)
    if output_only and "# no output-only grammar:" in text:
        raise typer.Exit(1)


def _misfit_hints(generated: Any, output: str, partial: bool) -> None:
    """Hints for an output the grammar does not accept: what the parse of the
    same output suggests (a request option), else whether the parser reads it."""
    from analysis.generation import review_parse
    from autoparser_cli.formatting import hint_text

    outcome = generated.parse(output, partial=partial)
    hints = review_parse(generated, output, outcome, partial).hints
    for hint in hints:
        note(hint_text(hint), "hint")
    if hints:
        return
    if outcome.ok:
        note("the parser reads this output (autoparser parse, with the same options), but the grammar is stricter: "
             "it allows only what the template writes, with the request's tools and their schemas", "hint")
    else:
        note("autoparser parse, with the same options, shows what of this output reads and where it stops", "hint")
