"""The ``lint`` command: template defects, found by rendering conversations."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from autoparser_cli.common import console, fail, handle_errors, note, show, source_or_default, write_stdout
from autoparser_cli.options import VariantOpt

if TYPE_CHECKING:
    from analysis.lint import Artifact
    from analysis.lint.fixes import FixResult
    from analysis.template import LoadedTemplate

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

    from analysis.lint import DEFAULT_ENGINES, check_engines, lint_template, sarif_log
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
            reports.append((report, _artifact(source, loaded)))
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


def _holder(source: Path, variant: str) -> tuple[Path, bool] | None:
    """The file that holds a template of ``source``, and whether that file is
    the template's text (a ``.jinja``) or JSON holding it as a string; None
    for a source whose template cannot be written (a GGUF file, the Hub)."""
    if source.is_dir():
        for jinja in (source / "chat_template.jinja", source / "additional_chat_templates" / f"{variant}.jinja"):
            if jinja.is_file() and (jinja.name != "chat_template.jinja" or variant == "default"):
                return jinja, True
        held = [source / name for name in ("chat_template.json", "tokenizer_config.json") if (source / name).is_file()]
        return (held[0], False) if held else None
    if source.suffix == ".json":
        return source, False
    if source.suffix == ".gguf" or not source.is_file():
        return None
    return source, True


def _artifact(source: Path, loaded: LoadedTemplate) -> Artifact:
    """Where SARIF puts a template's findings: the file holding it; in a JSON
    file, at the line its string starts on (its own lines are in the message)."""
    from analysis.lint import Artifact
    from analysis.template.loading import json_template_lines

    holder = _holder(source, loaded.variant)
    if holder is None:
        return Artifact(_uri(source), False)
    path, is_text = holder
    if is_text:
        return Artifact(_uri(path), True)
    where = json_template_lines(source).get(loaded.name)
    return Artifact(_uri(path), False, where[1] if where else None)


def _json_with(text: str, before: str, after: str) -> str | None:
    """A JSON file's ``text`` with the template string ``before`` written as
    ``after`` (as json.dumps writes strings, with or without ASCII escapes);
    None when ``before`` is not written so exactly once."""
    import json

    for ascii_only in (False, True):
        old = json.dumps(before, ensure_ascii=ascii_only)
        if text.count(old) == 1:
            return text.replace(old, json.dumps(after, ensure_ascii=ascii_only))
    return None


def _fix(sources: list[Path], ignore: tuple[str, ...], engines: tuple[str, ...], variant: str | None, all_variants: bool, write: bool) -> int:
    """--diff and --fix: each source's proven fixes, shown or applied; the exit status."""
    from analysis.lint import lint_template
    from analysis.lint.fixes import fix_template
    from analysis.template import FROZEN_CLOCK, ChatTemplate
    from analysis.template.loading import load_source

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
            kept = loaded
            if result.changed:
                kept = _write_fixed(source, loaded, result, write) or loaded
            errors = errors or bool(lint_template(ChatTemplate(kept, clock=FROZEN_CLOCK), ignore, engine_names=engines).errors)
    return 1 if errors else 0


def _write_fixed(source: Path, loaded: LoadedTemplate, result: FixResult, write: bool) -> LoadedTemplate | None:
    """Show (``--diff``) or write (``--fix``) the fixed template into the file
    that holds it: the template with the fixes, or None when it cannot be written (and why, on stderr)."""
    from dataclasses import replace

    from analysis.lint.fixes import unified_diff
    from analysis.userio import read_text, write_atomic

    holder = _holder(source, loaded.variant)
    if holder is None:
        note(f"{source}: not written: its template cannot be written back (a GGUF file, or the Hub)", "fix")
        return None
    path, is_text = holder
    before = read_text(path)
    after = result.after if is_text else _json_with(before, result.before, result.after)
    if after is None or (is_text and before != result.before):
        note(f"{path}: not written: the template is not written there as it was read", "fix")
        return None
    if write:
        write_atomic(path, after, "template")
    else:
        write_stdout(unified_diff(before, after, _uri(path)))
    return replace(loaded, source=result.after)
