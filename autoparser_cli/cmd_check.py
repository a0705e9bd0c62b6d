"""The ``check`` command: template collections and expected-parse cases, for CI."""

from __future__ import annotations

from pathlib import Path

import typer

from autoparser_cli.common import console, handle_errors, note, show, write_stdout

#: the exit status of a run whose lock drifted and where nothing failed
DRIFT_EXIT = 3


@handle_errors
def check(
    paths: list[Path] | None = typer.Argument(None, metavar="PATHS", help="Template files or folders to check (at least one, unless --cases is given)."),
    lock: Path | None = typer.Option(None, "--lock", metavar="FILE", help="Lock file: fail on any change from the recorded analyses."),
    update_lock: bool = typer.Option(False, "--update-lock", help="Write or refresh the --lock file."),
    cases: Path | None = typer.Option(None, "--cases", metavar="FILE", help="JSONL file of expected-parse cases to run."),
    templates: Path | None = typer.Option(None, "--templates", metavar="DIR", help="Folder the cases' templates are in (default: the case file's)."),
    case_ids: list[str] | None = typer.Option(None, "--case", metavar="ID", help="Run only the case with this id (repeatable)."),
    pattern: str | None = typer.Option(None, "-k", metavar="PATTERN", help="Run only cases and templates whose id or name contains PATTERN."),
    known_failures: Path | None = typer.Option(
        None, "--known-failures", metavar="FILE", help="JSON object {id or template name: reason}: listed failures pass, listed passes are reported as fixed."
    ),
    jobs: int = typer.Option(0, "--jobs", "-j", metavar="N", min=0, show_default=False, help="Processes to check templates in (default: the CPU count)."),
    shard_spec: str | None = typer.Option(None, "--shard", metavar="I/N", help="I/N: check only the I-th of N shares of the templates (for a CI matrix)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary (nothing else on stdout)."),
    junit: Path | None = typer.Option(None, "--junit", metavar="FILE", help="Also write JUnit XML to this file."),
    round_trip: bool = typer.Option(
        True, "--round-trip/--no-round-trip", help="Check that each template's own renderings (tool calls, a reply, reasoning) parse back."
    ),
    lint: bool = typer.Option(False, "--lint", help="Lint each template too (as `autoparser lint`): an error finding fails its TEMPLATE:RULE test."),
    ignore: list[str] | None = typer.Option(None, "--ignore", metavar="RULE", help="With --lint: do not run this rule (repeatable)."),
    engine_names: list[str] | None = typer.Option(
        None, "--engine", metavar="NAME", help="With --lint: an engine the templates are served with (repeatable; as lint's --engine)."
    ),
) -> None:
    """Check template collections and expected-parse case files (for CI).

    Example: autoparser check templates/ --jobs 2 --junit check.xml

    Exit status: 0 everything passed, 1 a failure, 2 bad input, 3 no failure
    but the lock drifted (a template's analysis changed from the --lock file's).
    """
    import json

    from rich.text import Text

    from analysis.checks import CheckOptions, run_check
    from analysis.userio import ensure_writable, write_atomic
    from autoparser_cli.formatting import check_details, check_table, progress_bar

    if junit is not None:
        ensure_writable(junit, "JUnit report")
    options = CheckOptions(
        paths=tuple(paths or ()),
        lock=lock,
        update_lock=update_lock,
        cases=cases,
        templates=templates,
        case_ids=tuple(case_ids or ()),
        pattern=pattern,
        known_failures=known_failures,
        jobs=jobs,
        shard=shard_spec,
        round_trip=round_trip,
        lint=lint,
        lint_ignore=tuple(ignore or ()),
        **({"lint_engines": tuple(engine_names)} if engine_names else {}),
    )
    run = run_check(options, lambda total, label: progress_bar(total, label, enabled=not as_json))
    report, checks, drifted, known = run.report, list(run.checks), run.drifted, run.known
    if junit is not None:
        write_atomic(junit, report.to_junit(), "JUnit report")
    if as_json:
        write_stdout(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        if checks:
            show(check_table(checks, set(drifted), console().width))
        for text in check_details(checks, drifted, known):
            console().print(text, soft_wrap=True)  # in full, never cut
        for failure in run.case_failures:
            known_note = f" (known: {known[failure.case_id]})" if failure.case_id in known else ""
            console().print(Text(f"{failure.case_id} — {failure.check}{known_note}", style="yellow" if known_note else "bold red"), soft_wrap=True)
            console().print(Text(failure.reason), soft_wrap=True)
        for name in report.fixed:
            console().print(Text(f"{name}: listed in --known-failures but passes now (fixed? remove it from the list)", style="green"))
        if drifted and not update_lock:
            note("--update-lock takes the new readings into the lock file", "hint")
        written = f"; lock file {lock} written" if run.lock_written else f"; lock file {lock} left as it was (the run failed)" if update_lock else ""
        console().print(Text(report.summary_line() + written), soft_wrap=True)  # (one line in a CI log)
    if report.failed:
        raise typer.Exit(1)
    if report.drifted:
        raise typer.Exit(DRIFT_EXIT)
