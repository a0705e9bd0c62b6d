"""Checking template collections: discovery, per-template status, lock files.

``find_templates`` walks files and folders for chat templates; ``check_template``
analyses one, runs the round-trip probes (its own renderings must parse back)
and says ok / degraded / failed; a lock file records each
analysis (sorted, stable JSON) so that a later run can report, field by field,
what changed.
"""

from __future__ import annotations

import enum
import json
import multiprocessing
import os
import signal
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from analysis.checks.hf_compare import Agreement, ProbeReading, compare_readings
from analysis.checks.round_trip import ProbeStatus, RoundTrip, round_trips
from analysis.errors import InputError, TemplateLoadError, TemplateRenderError, one_line
from analysis.export.hf_reading import check_loadable, transformers_missing
from analysis.export.tokenizer_config import read_response_template
from analysis.generation.analysis_cache import cached_analysis
from analysis.generation.generator import AutoParser
from analysis.phases.result import TemplateAnalysis
from analysis.template.loading import DEFAULT_VARIANT, load_source, load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate, RenderRequest
from analysis.userio import loads, read_text
from peg.errors import AutoparserError

TEMPLATE_FILE_NAMES = ("tokenizer_config.json", "chat_template.json")
_SEPARATE_FILES = ("chat_template.jinja", "chat_template.json")


def _is_template_file(path: Path) -> bool:
    return path.name.endswith((".jinja", ".gguf")) or path.name in TEMPLATE_FILE_NAMES


def find_templates(paths: Iterable[Path]) -> list[Path]:
    """Every template under ``paths``: ``.jinja``, ``tokenizer_config.json``,
    ``chat_template.json`` and ``.gguf`` files, recursively, sorted.  In a model
    folder with a separate chat template file, ``tokenizer_config.json`` is
    skipped (the separate file wins, as in transformers)."""
    found: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise TemplateLoadError(f"{path}: no such file or folder")
        if path.is_file() and not _is_template_file(path):
            raise InputError(
                f"{path}: not a template file (expected .jinja, .gguf, tokenizer_config.json or chat_template.json)"
            )
        candidates = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for candidate in candidates:
            name = candidate.name
            if _is_template_file(candidate):
                if name == "tokenizer_config.json" and any((candidate.parent / s).is_file() for s in _SEPARATE_FILES):
                    continue
                found.add(candidate)
    return sorted(found)


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

    def to_json(self) -> dict[str, Any]:
        """Per-template results for ``--json``: status, reason, degraded phases, probes, time."""
        return {
            "template": self.name,
            "path": str(self.path),
            "status": self.status.value,
            "reason": self.reason,
            "degraded": sorted({d.phase for d in self.analysis.degraded}) if self.analysis else [],
            "specialized": (self.analysis.specialized or "") if self.analysis else "",
            "round_trips": [{"probe": t.probe, "status": t.status.value, "detail": t.detail} for t in self.round_trips],
            "response_template": [r.to_json() for r in self.readings],
            "seconds": round(self.seconds, 3),
        }

    @property
    def summary(self) -> str:
        """A short status: the degraded phases, or the failure's first words."""
        if self.status == CheckStatus.DEGRADED and self.analysis is not None:
            return "degraded: " + ", ".join(sorted({d.phase for d in self.analysis.degraded}))
        if self.status == CheckStatus.FAILED:
            return "failed: " + (self.reason if len(self.reason) <= 90 else self.reason[:87] + "...")
        return str(self.status.value)

    @property
    def passed(self) -> bool:
        """Degraded analyses pass (they are reported); failures do not."""
        return self.status != CheckStatus.FAILED


def display_name(path: Path, roots: Iterable[Path]) -> str:
    """``path`` relative to the root it was found under (posix style)."""
    for root in roots:
        base = root if root.is_dir() else root.parent
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def unique_names(paths: Sequence[Path], roots: Sequence[Path]) -> dict[Path, str]:
    """A name per template, unique across every root: relative to its root
    when that is unique (``GLM-4.6.jinja``), else relative to the roots' common
    folder (``a/GLM-4.6.jinja`` and ``b/GLM-4.6.jinja``).  Lock entries and
    reports are keyed by these names."""
    names = {path: display_name(path, roots) for path in paths}
    if len(set(names.values())) == len(names):
        return names
    resolved = {path: path.resolve() for path in paths}
    common = Path(os.path.commonpath([str(r.parent) for r in resolved.values()]))
    return {path: resolved[path].relative_to(common).as_posix() for path in paths}


def shard(paths: Sequence[Path], spec: str) -> list[Path]:
    """The ``I/N`` share of ``paths`` (1-based ``I``): every N-th template from
    the I-th, so a CI matrix of N jobs checks each template exactly once."""
    index_text, _, count_text = spec.partition("/")
    try:
        index, count = int(index_text), int(count_text)
    except ValueError:
        index = count = 0
    if not (count >= 1 and 1 <= index <= count):
        raise InputError(f"--shard {spec!r}: expected I/N with 1 <= I <= N (for example 2/4)")
    return [p for i, p in enumerate(sorted(paths)) if i % count == index - 1]


def _check_one(item: tuple[Path, str, bool, str | None]) -> TemplateCheck:
    return check_template(*item)


def check_templates(
    named: Sequence[tuple[Path, str] | tuple[Path, str, str | None]],
    round_trip: bool = True,
    jobs: int = 1,
    progress: Callable[[], None] | None = None,
) -> list[TemplateCheck]:
    """``check_template`` over many templates (``(path, name)``, or ``(path,
    name, variant)``), in ``jobs`` processes (each with its own render
    worker); results in the order given."""
    items = [(entry[0], entry[1], round_trip, entry[2] if len(entry) > 2 else None) for entry in named]
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
                path, name, _, _ = items[i]
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


def check_template(path: Path, name: str, round_trip: bool = True, variant: str | None = None) -> TemplateCheck:
    """Load and analyse one template (a named ``variant`` of its source), then
    (unless ``round_trip`` is off) check that its own renderings parse back: a
    probe that does not fails the template."""
    start = time.monotonic()
    result = _check_template(path, name, round_trip, variant)
    return replace(result, seconds=time.monotonic() - start)


def with_variants(named: Sequence[tuple[Path, str]]) -> list[tuple[Path, str, str | None]]:
    """Every template variant of each source (a ``tokenizer_config.json`` or
    GGUF with named templates: ``default``, ``tool_use``...): the default one
    keeps the source's name, the others are ``name#variant``.  A source that
    cannot be read stays one entry (its check reports why)."""
    out: list[tuple[Path, str, str | None]] = []
    for path, name in named:
        variants: list[str] = []
        if path.suffix in (".json", ".gguf"):
            try:
                variants = sorted(load_source(path).variants)
            except AutoparserError:
                variants = []
        if len(variants) <= 1:
            out.append((path, name, None))
            continue
        for variant in variants:
            out.append((path, name if variant == DEFAULT_VARIANT else f"{name}#{variant}", variant))
    return out


def _check_template(path: Path, name: str, round_trip: bool, variant: str | None = None) -> TemplateCheck:
    readings: tuple[ProbeReading, ...] = ()
    try:
        template = ChatTemplate(load_template(path, variant), clock=FROZEN_CLOCK)
        template.one_budget = True  # (a hostile template spends one budget on its whole check)
        analysis = cached_analysis(template)
        if analysis.degraded:
            unrenderable = renders_nothing(template)
            if unrenderable:
                return TemplateCheck(path, name, CheckStatus.FAILED, unrenderable, analysis)
        parser = AutoParser(template, analysis)
        trips = round_trips(parser) if round_trip else ()
        spec = read_response_template(path) if round_trip else None
        if spec is not None:
            missing = transformers_missing()
            if missing:
                return TemplateCheck(path, name, CheckStatus.FAILED, f"the model folder's response_template cannot be checked: {missing}", analysis)
            check_loadable(spec)
            readings = compare_readings(parser, spec, trips)
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
        return TemplateCheck(path, name, CheckStatus.FAILED, reason, analysis, trips, readings)
    if analysis.degraded:
        reason = "; ".join(f"{d.phase}: {d.comparison}: {d.reason}" for d in analysis.degraded)
        return TemplateCheck(path, name, CheckStatus.DEGRADED, reason, analysis, trips, readings)
    return TemplateCheck(path, name, CheckStatus.OK, "", analysis, trips, readings)


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

_LOCKED = ("caps", "user_start", "assistant_start", "reasoning", "content", "tools", "preserved_tokens", "generation_prompt")


def lock_entry(analysis: TemplateAnalysis) -> dict[str, Any]:
    """The parts of an analysis a lock file records (and the dedicated handler, if any)."""
    data = analysis.to_json()
    entry = {key: data[key] for key in _LOCKED}
    entry["specialized"] = analysis.specialized or ""
    return entry


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(_flatten(sub, f"{prefix}.{key}" if prefix else key))
        return out
    return {prefix: value}


def lock_differences(name: str, locked: dict[str, Any] | None, current: dict[str, Any] | None) -> list[str]:
    """Field-by-field differences, one line each:
    ``Qwen3-Coder.jinja: tools.arguments.value_suffix '</parameter>\\n' -> '</parameter>'``."""
    if locked is None:
        return [f"{name}: not in the lock file (run with --update-lock to add it)"]
    if current is None:
        return [f"{name}: in the lock file but not checked (removed, or failed to analyse)"]
    old, new = _flatten(locked), _flatten(current)
    lines = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            lines.append(f"{name}: {key} {old.get(key, '(absent)')!r} -> {new.get(key, '(absent)')!r}")
    return lines


def read_lock(path: Path) -> dict[str, Any]:
    """A lock file's entries (an absent file is an error naming it)."""
    if not path.exists():
        raise InputError(f"{path}: no such lock file (create it with --update-lock)")
    data = loads(read_text(path), f"{path} (lock file)")
    templates = data.get("templates") if isinstance(data, dict) else None
    if not isinstance(templates, dict):
        raise InputError(f"{path}: not a lock file (expected an object with 'templates')")
    return templates


def lock_text(entries: dict[str, Any]) -> str:
    """Stable lock file text: sorted keys, two-space indent, one trailing newline."""
    return json.dumps({"version": 1, "templates": entries}, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_known_failures(path: Path) -> dict[str, str]:
    """``--known-failures``: a JSON object mapping a case id or template name to
    the reason it is expected to fail."""
    data = loads(read_text(path), f"{path} (known failures)")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise InputError(f"{path}: known failures must be a JSON object {{\"id or template\": \"reason\"}}")
    return data
