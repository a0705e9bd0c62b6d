"""Checking templates: each one's status (ok, degraded, failed) and the run over many.

``check_template`` analyses one, runs the round-trip probes (its own renderings
must parse back) and, when its model folder carries a ``response_template``,
transformers' reading of them; ``check_templates`` runs many in processes.
Finding them is :mod:`analysis.checks.discovery`, lock files
:mod:`analysis.checks.lock`, known failures :mod:`analysis.checks.known_failures`.
"""

from __future__ import annotations

import enum
import multiprocessing
import os
import signal
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from analysis.checks.hf_compare import Agreement, ProbeReading, compare_readings
from analysis.checks.round_trip import ProbeStatus, RoundTrip, round_trips, unprobed
from analysis.errors import TemplateRenderError, one_line
from analysis.export.hf_reading import check_loadable, transformers_missing
from analysis.export.tokenizer_config import read_response_template
from analysis.generation.analysis_cache import cached_analysis
from analysis.generation.generator import AutoParser
from analysis.lint import DEFAULT_ENGINES, LintReport, lint_template
from analysis.phases.result import TemplateAnalysis
from analysis.probing.caps import chat_template_problem
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate, RenderRequest
from peg.errors import AutoparserError


class CheckStatus(str, enum.Enum):
    """A template's outcome in ``check``."""

    OK = "ok"
    DEGRADED = "degraded"  #: some analysis phases could not run (still a pass)
    FAILED = "failed"


@dataclass(frozen=True)
class TemplateCheck:
    """The outcome for one template: ``ok``, ``degraded`` (some phases could not run) or ``failed``."""

    path: Path
    name: str
    status: CheckStatus
    reason: str = ""
    analysis: TemplateAnalysis | None = None
    round_trips: tuple[RoundTrip, ...] = ()
    #: transformers' reading of the probes with the model folder's ``response_template``
    readings: tuple[ProbeReading, ...] = ()
    #: Wall-clock seconds the check took.
    seconds: float = 0.0
    #: the lint findings (``check --lint``; None when lint did not run)
    lint: LintReport | None = None

    def to_json(self) -> dict[str, Any]:
        """Per-template results for ``--json``: status, reason, degraded phases, probes, time."""
        return {
            "template": self.name,
            "path": str(self.path),
            "status": self.status.value,
            "reason": self.reason,
            "degraded": sorted({d.phase for d in self.analysis.degraded}) if self.analysis else [],
            "specialized": (self.analysis.handler or "") if self.analysis else "",
            "round_trips": [{"probe": t.probe, "status": t.status.value, "detail": t.detail} for t in self.round_trips],
            "not_probed": self.not_probed,
            "response_template": [r.to_json() for r in self.readings],
            **({"lint": self.lint.to_json()} if self.lint is not None else {}),
            "seconds": round(self.seconds, 3),
        }

    @property
    def summary(self) -> str:
        """A status: the degraded phases, or the failure with its whole reason
        (never cut: a CI log is read for it)."""
        if self.status == CheckStatus.DEGRADED and self.analysis is not None:
            return "degraded: " + ", ".join(sorted({d.phase for d in self.analysis.degraded}))
        if self.status == CheckStatus.FAILED:
            return "failed: " + self.reason
        return str(self.status.value)

    @property
    def not_probed(self) -> dict[str, str]:
        """The support ("tool calls", "reasoning") no round-trip probe read
        back, each with why (none when the probes did not run at all)."""
        return unprobed(self.round_trips) if self.round_trips else {}

    @property
    def passed(self) -> bool:
        """Degraded analyses pass (they are reported); failures do not."""
        return self.status != CheckStatus.FAILED


def _check_one(item: tuple[Path, str, bool, str | None, tuple[str, ...] | None, tuple[str, ...]]) -> TemplateCheck:
    return check_template(*item)


def check_templates(
    named: Sequence[tuple[Path, str] | tuple[Path, str, str | None]],
    round_trip: bool = True,
    jobs: int = 1,
    progress: Callable[[], None] | None = None,
    lint_ignore: tuple[str, ...] | None = None,
    lint_engines: tuple[str, ...] = DEFAULT_ENGINES,
) -> list[TemplateCheck]:
    """``check_template`` over many templates (``(path, name)``, or ``(path,
    name, variant)``), in ``jobs`` processes (each with its own render
    worker); results in the order given.  With ``lint_ignore`` (a tuple, maybe
    empty), each template is linted too, but for those rules, its errors
    those of ``lint_engines``."""
    items = [(entry[0], entry[1], round_trip, entry[2] if len(entry) > 2 else None, lint_ignore, lint_engines) for entry in named]
    if jobs <= 1 or len(items) <= 1:
        results = []
        for item in items:
            results.append(_check_one(item))
            if progress:
                progress()
        return results
    context = multiprocessing.get_context("fork")
    out: dict[int, TemplateCheck] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork beside the progress thread (3.12+)
        # the job processes ignore Ctrl-C: the parent handles it (no traceback from them)
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=context, initializer=_ignore_interrupts)
    try:
        futures = {pool.submit(_check_one, item): i for i, item in enumerate(items)}
        for future in as_completed(futures):
            i = futures[future]
            try:
                out[i] = future.result()
            except Exception as exc:  # noqa: BLE001 - a job process that died: that template fails
                path, name, *_ = items[i]
                out[i] = TemplateCheck(path, name, CheckStatus.FAILED, f"the check process died ({type(exc).__name__})")
            if progress:
                progress()
    except BaseException:  # Ctrl-C (or any failure here): stop now, not after the queued work
        _stop(pool)
        raise
    pool.shutdown(wait=True)
    return [out[i] for i in range(len(items))]


def _ignore_interrupts() -> None:  # pragma: no cover - runs in the job processes
    """A job process leads a process group of its own (its render workers join
    it), so the terminal's Ctrl-C reaches only the parent, which can end a job
    and its workers together; and it ignores SIGINT sent to it alone."""
    os.setpgrp()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued checks and end the job processes with their render
    workers (each job's process group) at once."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # (CPython's executor keeps them there)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.pid is not None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                process.kill()
    for process in processes:
        process.join(timeout=1)


def check_template(
    path: Path,
    name: str,
    round_trip: bool = True,
    variant: str | None = None,
    lint_ignore: tuple[str, ...] | None = None,
    lint_engines: tuple[str, ...] = DEFAULT_ENGINES,
) -> TemplateCheck:
    """Load and analyse one template (a named ``variant`` of its source), then
    (unless ``round_trip`` is off) check that its own renderings parse back: a
    probe that does not fails the template.  With ``lint_ignore`` (a tuple,
    maybe empty), lint it too, but for those rules: lint's findings are
    reported, not a status (the run decides what fails), its errors those
    of ``lint_engines``."""
    start = time.monotonic()
    result = _check_template(path, name, round_trip, variant, lint_ignore, lint_engines)
    return replace(result, seconds=time.monotonic() - start)


def _check_template(
    path: Path,
    name: str,
    round_trip: bool,
    variant: str | None = None,
    lint_ignore: tuple[str, ...] | None = None,
    lint_engines: tuple[str, ...] = DEFAULT_ENGINES,
) -> TemplateCheck:
    readings: tuple[ProbeReading, ...] = ()
    try:
        template = ChatTemplate(load_template(path, variant), clock=FROZEN_CLOCK)
        template.one_budget = True  # (a hostile template spends one budget on its whole check)
        analysis = cached_analysis(template)
        if analysis.degraded:
            unrenderable = renders_nothing(template)
            if unrenderable:
                return TemplateCheck(path, name, CheckStatus.FAILED, unrenderable, analysis)
        no_structure = chat_template_problem(template)  # (an empty or constant file: nothing to check)
        if no_structure:
            return TemplateCheck(path, name, CheckStatus.FAILED, no_structure, analysis)
        parser = AutoParser(template, analysis)
        trips = round_trips(parser) if round_trip else ()
        spec = read_response_template(path) if round_trip else None
        if spec is not None:
            missing = transformers_missing()
            if missing:
                return TemplateCheck(path, name, CheckStatus.FAILED, f"the model folder's response_template cannot be checked: {missing}", analysis)
            check_loadable(spec)
            readings = compare_readings(parser, spec, trips)
        linted = lint_template(template, lint_ignore, analysis, lint_engines) if lint_ignore is not None else None
    except AutoparserError as exc:
        return TemplateCheck(path, name, CheckStatus.FAILED, str(exc))
    except RecursionError:
        return TemplateCheck(path, name, CheckStatus.FAILED, "the template nests too deeply to analyse")
    except Exception as exc:  # noqa: BLE001 - a bug must fail this template, not the whole run
        return TemplateCheck(path, name, CheckStatus.FAILED, f"internal error ({type(exc).__name__}: {one_line(exc)})")
    trips = tuple(replace(t, message=None) for t in trips)  # (what crosses back from a worker stays small)
    failed = [t for t in trips if t.status is ProbeStatus.FAILED]
    differ = [r for r in readings if r.agreement is Agreement.DIFFERENT]
    if failed or differ:
        reason = "; ".join([f"round trip ({t.probe}): {t.detail}" for t in failed] + [f"response_template ({r.probe}): {r.detail}" for r in differ])
        return TemplateCheck(path, name, CheckStatus.FAILED, reason, analysis, trips, readings, lint=linted)
    if analysis.degraded:
        reason = "; ".join(f"{d.phase}: {d.comparison}: {d.reason}" for d in analysis.degraded)
        return TemplateCheck(path, name, CheckStatus.DEGRADED, reason, analysis, trips, readings, lint=linted)
    return TemplateCheck(path, name, CheckStatus.OK, "", analysis, trips, readings, lint=linted)


#: Conversations any chat template should render: a user turn, with a system
#: turn, with typed (list) content; with and without the generation prompt.
_BASIC_CONVERSATIONS: tuple[RenderRequest, ...] = tuple(
    RenderRequest(messages, add_generation_prompt=prompt)
    for messages in (
        [{"role": "user", "content": "Hello"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}],
        [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
        [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}],
    )
    for prompt in (True, False)
)


def renders_nothing(template: ChatTemplate) -> str:
    """Why ``template`` renders none of a few basic conversations ("" when one
    renders): a template that renders nothing is broken, not degraded."""
    first_error = ""
    for request in _BASIC_CONVERSATIONS:
        try:
            template.render(request)
            return ""
        except TemplateRenderError as exc:
            first_error = first_error or str(exc)
    return f"the template renders no conversation: {first_error}"


# --- lock files -----------------------------------------------------------------------
