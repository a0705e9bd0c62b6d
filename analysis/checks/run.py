"""A ``check`` run: template collections and case files checked as options say,
into one report (:class:`CheckRun`) whose verdict is ``report.failed``.

The CLI reads its options into :class:`CheckOptions`, calls :func:`run_check`
and formats what comes back; nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.checks.checking import CheckStatus, TemplateCheck, check_templates
from analysis.checks.conformance import CaseFailure, CaseRunner, load_cases
from analysis.checks.discovery import find_templates, shard, unique_names, with_variants
from analysis.checks.hf_compare import Agreement
from analysis.checks.known_failures import read_known_failures
from analysis.checks.lock import lock_differences, lock_entry, lock_text, read_lock
from analysis.checks.report import CheckReport
from analysis.checks.round_trip import ProbeStatus
from analysis.errors import InputError
from analysis.lint import DEFAULT_ENGINES, RULE_IDS, check_engines, check_rule_ids
from analysis.userio import ensure_writable, write_atomic

#: ``progress(total, label)``: a context whose value is called once per item done
Progress = Callable[[int, str], AbstractContextManager[Callable[[], None]]]


@dataclass(frozen=True, kw_only=True)
class CheckOptions:
    """What to check and how (the ``check`` command's options), given by name."""

    paths: tuple[Path, ...] = ()
    lock: Path | None = None
    update_lock: bool = False
    cases: Path | None = None
    templates: Path | None = None
    case_ids: tuple[str, ...] = ()
    pattern: str | None = None
    known_failures: Path | None = None
    jobs: int = 0  #: 0: the CPU count
    shard: str | None = None
    round_trip: bool = True
    #: lint each template too (``--lint``): an error finding fails the run
    lint: bool = False
    #: the lint rules not to run (``--ignore``)
    lint_ignore: tuple[str, ...] = ()
    #: the engines lint's errors are for (``--engine``; analysis.lint.engines)
    lint_engines: tuple[str, ...] = DEFAULT_ENGINES


@dataclass(frozen=True)
class CheckRun:
    """What a run found: the report (its verdict is ``report.failed``), each
    template's check, the lock drifts by template, the failed cases, and
    whether the lock file was written."""

    report: CheckReport
    checks: tuple[TemplateCheck, ...] = ()
    drifted: dict[str, list[str]] = field(default_factory=dict)
    case_failures: tuple[CaseFailure, ...] = ()
    known: dict[str, str] = field(default_factory=dict)
    #: ``update_lock`` wrote the lock file (it does only when the run passed)
    lock_written: bool = False


def _no_progress(total: int, label: str) -> AbstractContextManager[Callable[[], None]]:
    return nullcontext(lambda: None)


def run_check(options: CheckOptions, progress: Progress = _no_progress) -> CheckRun:
    """Check the templates under ``options.paths`` and the case file; compare
    with or write the lock file.  Nothing to check (no paths and no case file,
    or nothing that ``-k`` matches) is bad input.  Bad input (a missing path, a bad lock or case file)
    raises :class:`InputError` before anything runs where it can be known."""
    if options.update_lock and options.lock is None:
        raise InputError("`update_lock` needs `lock`", ("update_lock", "lock"))
    if options.lock is not None and options.update_lock:
        ensure_writable(options.lock, "lock file")
    # a lock file to compare with is read before the run (a missing one is named at once)
    locked_before = read_lock(options.lock) if options.lock is not None and not options.update_lock else None
    known = read_known_failures(options.known_failures) if options.known_failures is not None else {}
    lint_ignore = check_rule_ids(options.lint_ignore) if options.lint else None
    lint_engines = tuple(e.name for e in check_engines(options.lint_engines))
    report = CheckReport(known_failures=known)
    if not options.paths and options.cases is None:
        raise InputError("nothing to check: give template files or folders (`paths`), or a case file (`cases`)", ("paths", "cases"))
    roots = list(options.paths)
    found = find_templates(roots) if roots else []
    if roots and not found:
        raise InputError(f"no templates found in {', '.join(str(r) for r in roots)} (.jinja, .gguf, tokenizer_config.json, chat_template.json)")
    names = unique_names(found, roots)
    if options.shard is not None:
        found = shard(found, options.shard)
    if options.pattern:
        found = [p for p in found if options.pattern in names[p]]
    entries = with_variants([(p, names[p]) for p in found])  # every named template of a config or GGUF
    with progress(len(entries), "analysing templates") as advance:
        jobs = options.jobs or os.cpu_count() or 1
        checks = check_templates(entries, options.round_trip, jobs, progress=advance, lint_ignore=lint_ignore, lint_engines=lint_engines)
    report.templates = len(checks)
    for result in checks:
        report.add_template(result)
        if result.status == CheckStatus.FAILED:
            report.fail("template", result.name, _failure_kind(result), result.reason)
        if result.lint is not None:
            _lint_tests(result, report)
    case_failures = _cases(options, report, progress) if options.cases is not None else []
    if options.pattern and not checks and not report.cases:
        raise InputError(f"nothing matches -k {options.pattern!r}: no template name or case id contains it")
    drifted = _lock(options, checks, locked_before, report)
    lock_written = options.update_lock and not report.failed
    return CheckRun(report, tuple(checks), drifted, tuple(case_failures), known, lock_written)


def _lint_tests(result: TemplateCheck, report: CheckReport) -> None:
    """One test per lint rule that ran on the template, named ``TEMPLATE:RULE``
    (as the known-failures file lists it): its error findings fail it."""
    assert result.lint is not None
    ran = [rule for rule in RULE_IDS if rule not in result.lint.ignored and rule not in result.lint.skipped]
    for rule in ran:
        name = f"{result.name}:{rule}"
        report.add_test("lint", name)
        for finding in result.lint.errors:
            if finding.rule == rule:
                report.fail("lint", name, "lint", finding.message)


def _failure_kind(result: TemplateCheck) -> str:
    if any(r.agreement is Agreement.DIFFERENT for r in result.readings):
        return "response-template"
    return "round-trip" if any(t.status is ProbeStatus.FAILED for t in result.round_trips) else "analysis"


def _lock(options: CheckOptions, checks: list[TemplateCheck], locked_before: dict[str, Any] | None, report: CheckReport) -> dict[str, list[str]]:
    """Write the lock file, or compare the run with it: the drifts by template."""
    drifted: dict[str, list[str]] = {}
    if options.lock is None:
        return drifted
    current = {c.name: lock_entry(c.analysis) for c in checks if c.analysis is not None}
    if options.update_lock:
        if not report.failed:  # (a failed run leaves the lock file as it was)
            write_atomic(options.lock, lock_text(current), "lock file")
        return drifted
    locked = locked_before or {}
    if options.shard is not None or options.pattern:  # only what this run checked
        locked = {k: v for k, v in locked.items() if k in {c.name for c in checks}}
    for name in sorted(set(locked) | set(current)):
        lines = lock_differences(name, locked.get(name), current.get(name))
        if lines:
            drifted[name] = lines
            report.add_test("template", name)
            report.drift(name, "\n".join(lines))
    return drifted


def _cases(options: CheckOptions, report: CheckReport, progress: Progress) -> list[CaseFailure]:
    """Run the case file's cases (those selected), recording each in ``report``."""
    assert options.cases is not None
    case_list = load_cases(options.cases)
    if options.case_ids:
        unknown = sorted(set(options.case_ids) - {str(c["id"]) for c in case_list})
        if unknown:
            raise InputError(f"{options.cases}: no case with id {', '.join(unknown)}")
        case_list = [c for c in case_list if str(c["id"]) in options.case_ids]
    if options.pattern:
        case_list = [c for c in case_list if options.pattern in str(c["id"])]
    runner = CaseRunner(options.templates or options.cases.parent)
    missing = runner.missing_templates(case_list)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        hint = "" if options.templates else " (give `templates`: the folder the cases' templates are in)"
        raise InputError(f"{options.cases}: {len(missing)} templates the cases name are not in {runner.templates_dir}: {shown}{hint}", ("templates",))
    report.cases = len(case_list)
    failures: list[CaseFailure] = []
    with progress(len(case_list), "running cases") as advance:
        for case in case_list:
            report.add_test("case", str(case["id"]))
            for failure in runner.run(case):
                report.fail("case", failure.case_id, failure.check, failure.reason)
                failures.append(failure)
            advance()
    return failures


__all__ = ["CheckOptions", "CheckRun", "Progress", "run_check"]
