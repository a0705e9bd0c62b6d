"""The ``lint`` command: template defects, found by rendering conversations."""

from __future__ import annotations

from pathlib import Path

import typer

from autoparser_cli.common import console, fail, handle_errors, show, source_or_default, write_stdout
from autoparser_cli.options import VariantOpt


@handle_errors
def lint(
    sources: list[Path] | None = typer.Argument(None, metavar="SOURCE...", help="Templates to lint (default: the built-in demo template)."),
    ignore: list[str] | None = typer.Option(None, "--ignore", metavar="RULE", help="Do not run this rule (repeatable); docs/lint.md lists them."),
    as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON (nothing else on stdout)."),
    variant: str | None = VariantOpt,
    all_variants: bool = typer.Option(
        False, "--all-variants", help="Lint every named variant of each source (tokenizer_config.json, model folder, .gguf), one report each."
    ),
) -> None:
    """Find template defects by rendering conversations: history that is not a
    prefix, a generation prompt history does not write, common conversations
    that raise, tool calls that lose their ids or arguments, a double BOS,
    thinking switches, training masks.

    Example: autoparser lint templates/demo.jinja --ignore generation-block

    A source with several variants lints the one --variant names, else the
    default; --all-variants lints each.

    Exit status: 0 no errors (warnings and info allowed), 1 an error finding, 2 bad input.
    """
    import json

    from analysis.lint import lint_template
    from analysis.template import FROZEN_CLOCK, ChatTemplate
    from analysis.template.loading import load_source
    from autoparser_cli.formatting import lint_evidence, lint_table

    if all_variants and variant is not None:
        raise fail("give --variant NAME or --all-variants, not both")
    reports = []  # (an unknown --ignore rule is bad input, raised by the first lint_template)
    for source in sources or [source_or_default(None)]:
        held = load_source(source)
        for name in sorted(held.variants) if all_variants else [variant]:
            loaded = held.pick(name)
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
