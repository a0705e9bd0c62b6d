"""The ``lint`` command: template defects, found by rendering conversations."""

from __future__ import annotations

from pathlib import Path

import typer

from autoparser_cli.common import console, fail, handle_errors, note, show, source_or_default, write_stdout
from autoparser_cli.options import VariantOpt

#: the output formats of ``--format``
FORMATS = ("text", "json", "sarif")


@handle_errors
def lint(
    sources: list[Path] | None = typer.Argument(None, metavar="SOURCE...", help="Templates to lint (default: the built-in demo template)."),
    ignore: list[str] | None = typer.Option(None, "--ignore", metavar="RULE", help="Do not run this rule (repeatable); docs/lint.md lists them."),
    engine_names: list[str] | None = typer.Option(
        None,
        "--engine",
        metavar="NAME",
        help="An engine the template is served with (repeatable): transformers, vllm, sglang, llama.cpp, ollama; "
        "a finding is an error only for the engines it breaks (default: the four that render Jinja templates).",
    ),
    output_format: str = typer.Option(
        "text", "--format", metavar="FORMAT", help="text (tables and evidence), json, or sarif (SARIF 2.1.0, for code scanning)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON (nothing else on stdout): --format json."),
    show_diff: bool = typer.Option(False, "--diff", help="Print the mechanical fixes re-rendering proves, as a unified diff (nothing is written)."),
    apply_fix: bool = typer.Option(False, "--fix", help="Apply the mechanical fixes re-rendering proves to each .jinja SOURCE, in place."),
    variant: str | None = VariantOpt,
    all_variants: bool = typer.Option(
        False, "--all-variants", help="Lint every named variant of each source (tokenizer_config.json, model folder, .gguf), one report each."
    ),
) -> None:
    """Find template defects by rendering conversations: history that is not a
    prefix, a generation prompt history does not write, common conversations
    that raise, tool calls that lose their ids or arguments, a double BOS,
    thinking switches, training masks.  Each finding names its template line
    and, for an error, the engines it breaks.

    Example: autoparser lint templates/demo.jinja --ignore generation-block

    A source with several variants lints the one --variant names, else the
    default; --all-variants lints each.  --diff shows, and --fix applies, the
    mechanical fixes (a double BOS, arguments encoded twice) that re-rendering
    proves: the finding gone, every other render unchanged.

    Exit status: 0 no errors (warnings and info allowed), 1 an error finding
    (after --fix, one that is left), 2 bad input.
    """
    import json

    from analysis.lint import DEFAULT_ENGINES, Artifact, check_engines, lint_template, sarif_log
    from analysis.template import FROZEN_CLOCK, ChatTemplate
    from analysis.template.loading import load_source
    from autoparser_cli import __version__
    from autoparser_cli.formatting import lint_evidence, lint_table

    if all_variants and variant is not None:
        raise fail("give --variant NAME or --all-variants, not both")
    if output_format not in FORMATS:
        raise fail(f"--format must be one of {', '.join(FORMATS)}, not {output_format!r}")
    if as_json and output_format not in ("text", "json"):
        raise fail(f"give --json or --format {output_format}, not both")
    output_format = "json" if as_json else output_format
    if (show_diff or apply_fix) and output_format != "text":
        raise fail(f"--{'fix' if apply_fix else 'diff'} prints the fixes as text: it does nothing beside --format {output_format}")
    engines = tuple(e.name for e in check_engines(engine_names or DEFAULT_ENGINES))
    if show_diff or apply_fix:
        raise typer.Exit(_fix(sources or [source_or_default(None)], tuple(ignore or ()), engines, variant, all_variants, apply_fix))
    reports = []  # (an unknown --ignore rule is bad input, raised by the first lint_template)
    for source in sources or [source_or_default(None)]:
        held = load_source(source)
        for name in sorted(held.variants) if all_variants else [variant]:
            loaded = held.pick(name)
            report = lint_template(ChatTemplate(loaded, clock=FROZEN_CLOCK), ignore or (), engine_names=engines)
            reports.append((report, Artifact(_uri(source), source.suffix == ".jinja")))
    if output_format == "json":
        write_stdout(json.dumps([r.to_json() for r, _ in reports], indent=2, ensure_ascii=False) + "\n")
    elif output_format == "sarif":
        write_stdout(sarif_log(reports, __version__))
    else:
        for report, _ in reports:
            show(lint_table(report))
            for text in lint_evidence(report, console().width):
                console().print(text, soft_wrap=True)
    if any(r.errors for r, _ in reports):
        raise typer.Exit(1)


def _uri(source: Path) -> str:
    """``source`` as SARIF names it: relative to the working folder where it
    is inside it (a repository's root, in CI), with ``/``."""
    try:
        return source.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return source.as_posix()


def _fix(sources: list[Path], ignore: tuple[str, ...], engines: tuple[str, ...], variant: str | None, all_variants: bool, write: bool) -> int:
    """--diff and --fix: each source's proven fixes, shown or applied; the exit status."""
    from dataclasses import replace

    from analysis.lint import lint_template
    from analysis.lint.fixes import fix_template
    from analysis.template import FROZEN_CLOCK, ChatTemplate
    from analysis.template.loading import load_source
    from analysis.userio import write_atomic

    errors = False
    for source in sources:
        held = load_source(source)
        for name in sorted(held.variants) if all_variants else [variant]:
            loaded = held.pick(name)
            result = fix_template(ChatTemplate(loaded, clock=FROZEN_CLOCK), ignore, engines)
            for fix in result.fixes:
                where = f"{loaded.name}:{fix.line}" if fix.line else loaded.name
                if fix.applied:
                    note(f"{where}: {fix.rule}: fixed (re-rendered: the finding is gone, every other render unchanged)", "fix")
                else:
                    note(f"{where}: {fix.rule}: not fixed: {fix.why}", "fix")
            if not result.fixes:
                note(f"{loaded.name}: no finding with a mechanical fix", "fix")
            if result.changed and not write:
                write_stdout(result.diff(_uri(source) if source.suffix == ".jinja" else f"{_uri(source)} (its chat template)"))
            elif result.changed and source.suffix != ".jinja":
                note(f"{source}: not written: the template is inside {source.name} (--diff shows the fix)", "fix")
                errors = errors or bool(lint_template(ChatTemplate(loaded, clock=FROZEN_CLOCK), ignore, engine_names=engines).errors)
                continue
            elif result.changed:
                write_atomic(source, result.after, "template")
            fixed = replace(loaded, source=result.after)
            errors = errors or bool(lint_template(ChatTemplate(fixed, clock=FROZEN_CLOCK), ignore, engine_names=engines).errors)
    return 1 if errors else 0
