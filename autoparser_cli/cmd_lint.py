"""The ``lint`` command: template defects, found by rendering conversations."""

from __future__ import annotations

from pathlib import Path

import typer

from autoparser_cli.common import console, handle_errors, show, source_or_default, write_stdout
from autoparser_cli.options import VariantOpt


@handle_errors
def lint(
    sources: list[Path] | None = typer.Argument(None, metavar="SOURCE...", help="Templates to lint (default: the built-in demo template)."),
    ignore: list[str] | None = typer.Option(None, "--ignore", metavar="RULE", help="Do not run this rule (repeatable); docs/lint.md lists them."),
    as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON (nothing else on stdout)."),
    variant: str | None = VariantOpt,
) -> None:
    """Find template defects by rendering conversations: history that is not a
    prefix, a generation prompt history does not write, common conversations
    that raise, tool calls that lose their ids or arguments, a double BOS,
    thinking switches, training masks.

    Example: autoparser lint templates/demo.jinja --ignore generation-block

    Exit status: 0 no errors (warnings and info allowed), 1 an error finding, 2 bad input.
    """
    import json

    from analysis.lint import lint_template
    from analysis.template import FROZEN_CLOCK, ChatTemplate, load_template
    from autoparser_cli.formatting import lint_evidence, lint_table

    reports = []  # (an unknown --ignore rule is bad input, raised by the first lint_template)
    for source in sources or [source_or_default(None)]:
        loaded = load_template(source, variant)
        reports.append(lint_template(ChatTemplate(loaded, clock=FROZEN_CLOCK), ignore or ()))
    if as_json:
        write_stdout(json.dumps([r.to_json() for r in reports], indent=2, ensure_ascii=False) + "\n")
    else:
        for report in reports:
            show(lint_table(report))
            for text in lint_evidence(report, console().width):
                console().print(text, soft_wrap=True)
    if any(r.errors for r in reports):
        raise typer.Exit(1)
