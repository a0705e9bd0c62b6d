"""The ``caps`` command: a template's capabilities and reasoning switches."""

from __future__ import annotations

from pathlib import Path

import typer

from autoparser_cli.common import handle_errors, note, show, source_or_default, write_stdout
from autoparser_cli.options import SourceArg, VariantOpt


@handle_errors
def caps(
    source: Path | None = SourceArg,
    as_json: bool = typer.Option(False, "--json", help="Print the flags as JSON."),
    variant: str | None = VariantOpt,
) -> None:
    """Detect a template's capabilities by probe renders, and the reasoning
    switches it reads (enable_thinking, reasoning_effort…) with what each changes.

    Example: autoparser caps templates/demo.jinja --json
    """
    import json

    from analysis.lint import reasoning_switches
    from analysis.probing import chat_template_problem, detect_capabilities
    from analysis.template import ChatTemplate, load_template
    from autoparser_cli.formatting import caps_table

    loaded = load_template(source_or_default(source), variant)
    template = ChatTemplate(loaded)
    flags = detect_capabilities(template)
    switches = reasoning_switches(template)
    problem = chat_template_problem(template)
    if problem:
        note(problem, "warning")
    if as_json:
        write_stdout(json.dumps({**flags.to_dict(), "reasoning_switches": [s.to_json() for s in switches]}, indent=2) + "\n")
    else:
        show(caps_table(loaded.name, flags, switches))
