"""What the phases record besides their results: evidence and degradations."""

from __future__ import annotations

from analysis.phases.result import Degradation, Evidence
from analysis.probing.diff import DiffSplit
from analysis.probing.probes import Comparison, ComparisonFailed

_KEEP = 80


def shorten(text: str, keep: int = _KEEP, from_end: bool = False) -> str:
    """``text`` cut to about ``keep`` characters, with ``…`` where it was cut."""
    if len(text) <= keep:
        return text
    return "…" + text[-keep:] if from_end else text[:keep] + "…"


def short_diff(diff: DiffSplit) -> tuple[str, str, str, str]:
    """The diff with its long common parts cut (the prefix keeps its end, the suffix its start)."""
    return (shorten(diff.prefix, from_end=True), shorten(diff.left, 400), shorten(diff.right, 400), shorten(diff.suffix))


class PhaseLog:
    """Collects, for each marker, the comparison that produced it, and each phase that degraded."""

    def __init__(self) -> None:
        self._evidence: dict[str, Evidence] = {}
        self._degraded: list[Degradation] = []

    def cite(self, field: str, comparison: Comparison | None) -> None:
        """Record that ``field`` was read from ``comparison``."""
        if comparison is None:
            return
        prefix, left, right, suffix = short_diff(comparison.diff)
        self._evidence[field] = Evidence(field, comparison.name, prefix, left, right, suffix)

    def cite_source(self, field: str, why: str, source: str = "rule", by: str = "") -> None:
        """Record that ``field`` was set by a rule over the template source:
        ``source`` says what kind ("handler", "workaround", "rule"), ``by``
        which one, ``why`` how."""
        self._evidence[field] = Evidence(field, why, "", "", "", "", source, by)

    def degrade(self, phase: str, failure: ComparisonFailed | str, comparison: str = "") -> None:
        """Record that ``phase`` could not (fully) run."""
        if isinstance(failure, ComparisonFailed):
            self._degraded.append(Degradation(phase, failure.name, failure.reason))
        else:
            self._degraded.append(Degradation(phase, comparison, failure))

    def source_citations(self) -> tuple[Evidence, ...]:
        """The handler and workarounds that shaped the result, with their rules."""
        return tuple(e for name, e in self._evidence.items() if name.startswith(("handler: ", "workaround: ")))

    def evidence_for(self, fields: dict[str, str]) -> tuple[Evidence, ...]:
        """Evidence of the markers in ``fields`` (dotted name → value), in that order."""
        return tuple(self._evidence[name] for name in fields if name in self._evidence)

    @property
    def degraded(self) -> tuple[Degradation, ...]:
        """Every degradation so far."""
        return tuple(self._degraded)
