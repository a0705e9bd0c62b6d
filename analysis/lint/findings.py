"""What lint reports: findings with a severity, a rule id and the evidence
(the renders or the conversation that show the defect, with where to look)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    """How much a finding matters: errors fail ``lint`` and ``check --lint``."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for errors, 1 for warnings, 2 for info (sorting order)."""
        return ("error", "warning", "info").index(self.value)


#: the most of a text shown whole (evidence without a place to point at)
_WHOLE = 2000


@dataclass(frozen=True)
class Evidence:
    """One render (or a conversation) that shows a finding; ``at`` is the
    character offset to point at, None when the whole text is the evidence."""

    label: str
    text: str
    at: int | None = None
    #: the template line of the statement that wrote the text at ``at`` (None: unknown)
    line: int | None = None

    def window(self, width: int = 72) -> tuple[str, int | None]:
        """The text around ``at`` on one line (newlines shown as ``↵``, tabs
        as ``→``) at most about ``width`` characters, and the caret's column
        in it; without ``at``, the whole text (up to 2,000 characters) and None."""
        at = self.at
        if at is None:  # (the whole text is the evidence: a conversation, shown in full up to a bound)
            start, end = 0, min(len(self.text), _WHOLE)
        else:
            start = max(0, at - width // 2)
            end = min(len(self.text), start + width)
            start = max(0, min(start, end - width))
        shown = self.text[start:end]
        lead = "…" if start > 0 else ""
        tail = "…" if end < len(self.text) else ""
        line = lead + one_line(shown) + tail
        return line, (None if at is None else len(lead) + at - start)

    def to_json(self) -> dict[str, Any]:
        """``{"label", "text", "at", "line"}``."""
        return {"label": self.label, "text": self.text, "at": self.at, "line": self.line}


@dataclass(frozen=True)
class Finding:
    """One defect (or fact worth knowing) a rule found in a template."""

    rule: str
    severity: Severity
    message: str
    evidence: tuple[Evidence, ...] = ()
    #: the engines the defect breaks (None: every engine that renders the template);
    #: ``lint_template`` fills it in and keeps an error only where a linted engine is broken
    engines: tuple[str, ...] | None = None
    #: the template line (1-based) of the statement that raised or wrote the text to look at
    line: int | None = None
    #: its column (1-based), where known
    column: int | None = None

    @property
    def where(self) -> int | None:
        """The finding's template line, or its first evidence's."""
        if self.line is not None:
            return self.line
        return next((e.line for e in self.evidence if e.line is not None), None)

    def to_json(self) -> dict[str, Any]:
        """The finding as a JSON-ready dict."""
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "line": self.where,
            "column": self.column,
            "engines": list(self.engines or ()),
            "evidence": [e.to_json() for e in self.evidence],
        }


@dataclass(frozen=True)
class LintReport:
    """Every finding for one template, most severe first, and the rules that
    were silenced (``--ignore``) or could not run (with why)."""

    template_name: str
    findings: tuple[Finding, ...] = ()
    ignored: tuple[str, ...] = ()
    #: rule id -> why it did not run (the template lacks what it looks at)
    skipped: dict[str, str] = field(default_factory=dict)
    #: the engines linted for (an error is a defect for one of them)
    engines: tuple[str, ...] = ()

    @property
    def errors(self) -> tuple[Finding, ...]:
        """The findings that fail a run."""
        return tuple(f for f in self.findings if f.severity is Severity.ERROR)

    def counts(self) -> dict[str, int]:
        """Findings per severity: ``{"error": n, "warning": n, "info": n}``."""
        return {s.value: sum(f.severity is s for f in self.findings) for s in Severity}

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return {
            "template": self.template_name,
            "engines": list(self.engines),
            "counts": self.counts(),
            "findings": [f.to_json() for f in self.findings],
            "ignored": list(self.ignored),
            "skipped": dict(self.skipped),
        }


def diverge_at(a: str, b: str) -> int:
    """The first offset where ``a`` and ``b`` differ (the shorter's length when
    one is a prefix of the other)."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def common_suffix_length(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their ends."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def one_line(text: str) -> str:
    """``text`` on one line: newlines shown as ``↵``, tabs as ``→``."""
    return text.replace("\n", "↵").replace("\t", "→")
