"""The report of a `check` run: one test per template and per case, the verdict, and the run as a JSON summary or JUnit XML (strings; nothing is printed)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from analysis.checks.checking import CheckStatus, TemplateCheck
from analysis.checks.round_trip import PROBED_SUPPORT


@dataclass
class CheckReport:
    """Everything ``autoparser check`` found: one test per template and per case."""

    templates: int = 0
    cases: int = 0
    #: id or template name -> why it is expected to fail (``--known-failures``)
    known_failures: dict[str, str] = field(default_factory=dict)
    #: (kind, name, check, reason) with kind "template" or "case"
    failures: list[tuple[str, str, str, str]] = field(default_factory=list)
    #: every test run: (kind, name)
    tests: list[tuple[str, str]] = field(default_factory=list)
    #: per-template results, by name
    results: dict[str, TemplateCheck] = field(default_factory=dict)
    #: (template name, its differences) for each template whose analysis drifted
    #: from the lock file: not a failure, a verdict of its own
    drifts: list[tuple[str, str]] = field(default_factory=list)

    def add_test(self, kind: str, name: str) -> None:
        """Count one test (once)."""
        if (kind, name) not in self.tests:
            self.tests.append((kind, name))

    def add_template(self, result: TemplateCheck) -> None:
        """Record one template's result (its test, status, probes and time)."""
        self.add_test("template", result.name)
        self.results[result.name] = result

    def fail(self, kind: str, name: str, check: str, reason: str) -> None:
        """Record a failure of one test."""
        self.failures.append((kind, name, check, reason))

    def drift(self, name: str, differences: str) -> None:
        """Record that a template's analysis differs from the lock file's."""
        self.drifts.append((name, differences))

    @property
    def drifted(self) -> int:
        """Templates whose analysis drifted from the lock file."""
        return len({name for name, _ in self.drifts})

    def _failed_names(self) -> set[tuple[str, str]]:
        return {(kind, name) for kind, name, _, _ in self.failures}

    @property
    def failed(self) -> int:
        """Tests that failed and are not listed as known failures."""
        return len({(k, n) for k, n in self._failed_names() if n not in self.known_failures})

    @property
    def known(self) -> int:
        """Tests that failed as listed in ``--known-failures``."""
        return len({(k, n) for k, n in self._failed_names() if n in self.known_failures})

    @property
    def fixed(self) -> list[str]:
        """Listed known failures that were run and passed."""
        failed = {n for _, n in self._failed_names()}
        return sorted(n for _, n in self.tests if n in self.known_failures and n not in failed)

    @property
    def passed(self) -> int:
        """Tests that neither failed nor drifted."""
        failed, drifted = self._failed_names(), {("template", name) for name, _ in self.drifts}
        return sum(1 for test in self.tests if test not in failed and test not in drifted)

    @property
    def degraded(self) -> int:
        return sum(r.status == CheckStatus.DEGRADED for r in self.results.values())

    def summary_line(self) -> str:
        """``N templates, M cases: P passed (D degraded), F failed, L drifted from the lock, K known failures, X fixed``
        (and ``L lint checks`` after the cases, when lint ran)."""
        lints = sum(kind == "lint" for kind, _ in self.tests)
        linted = f", {_count(lints, 'lint check')}" if lints else ""
        text = f"{_count(self.templates, 'template')}, {_count(self.cases, 'case')}{linted}: {self.passed} passed"
        if self.degraded:
            text += f" ({self.degraded} degraded)"
        text += f", {self.failed} failed"
        if self.drifts:
            text += f", {self.drifted} drifted from the lock"
        if self.known_failures:
            text += f", {_count(self.known, 'known failure')}, {len(self.fixed)} fixed"
        gaps = self.not_probed()
        if any(gaps.values()):
            text += "; not probed: " + ", ".join(f"{support} in {count}" for support, count in gaps.items())
        return text

    def not_probed(self) -> dict[str, int]:
        """How many templates each support ("tool calls", "reasoning") could not be probed in."""
        counts = dict.fromkeys(PROBED_SUPPORT, 0)
        for result in self.results.values():
            for support in result.not_probed:
                counts[support] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        """The summary object of ``--json``, with every template's result."""
        failures: list[dict[str, Any]] = []
        for kind, name, check, reason in self.failures:
            key = {"case": "id", "lint": "lint"}.get(kind, "template")
            entry = {key: name, "check": check, "reason": reason}
            if name in self.known_failures:
                entry["known"] = self.known_failures[name]
            failures.append(entry)
        data = {
            "templates": self.templates,
            "cases": self.cases,
            "passed": self.passed,
            "failed": self.failed,
            "drifted": self.drifted,
            "drifts": [{"template": name, "differences": differences} for name, differences in self.drifts],
            "degraded": self.degraded,
            "not_probed": self.not_probed(),
            "known_failures": self.known,
            "fixed": self.fixed,
            "failures": failures,
            "results": [r.to_json() for r in self.results.values()],
        }
        return data

    def to_junit(self) -> str:
        """JUnit XML: a ``templates`` and a ``cases`` suite, one test case each,
        with times, skipped probes and degraded phases as system-out."""
        suites = ET.Element("testsuites", name="autoparser check", tests=str(len(self.tests)), failures=str(self.failed + self.drifted))
        by_test: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for kind, name, check, reason in self.failures:
            by_test.setdefault((kind, name), []).append((check, reason))
        for name, differences in self.drifts:  # (a failure to JUnit, which knows no other verdict)
            by_test.setdefault(("template", name), []).append(("lock", differences))
        for kind in ("template", "case", "lint"):
            tests = [name for k, name in self.tests if k == kind]
            if not tests:
                continue
            failed = sum(1 for name in tests if (kind, name) in by_test and name not in self.known_failures)
            skipped = sum(1 for name in tests if (kind, name) in by_test and name in self.known_failures)
            total_time = sum(self.results[n].seconds for n in tests if kind == "template" and n in self.results)
            suite = ET.SubElement(
                suites, "testsuite", name=f"{kind}s", tests=str(len(tests)), failures=str(failed),
                skipped=str(skipped), time=f"{total_time:.3f}",
            )
            for name in tests:
                result = self.results.get(name) if kind == "template" else None
                attrs = {"classname": f"autoparser.{kind}s", "name": name}
                if result is not None:
                    attrs["time"] = f"{result.seconds:.3f}"
                case = ET.SubElement(suite, "testcase", attrs)
                problems = by_test.get((kind, name), [])
                if problems and name in self.known_failures:
                    ET.SubElement(case, "skipped", message=f"known failure: {self.known_failures[name]}")
                else:
                    for check, reason in problems:
                        failure = ET.SubElement(case, "failure", message=f"{check}: {reason.splitlines()[0] if reason else ''}", type=check)
                        failure.text = reason
                if result is not None:
                    out = [f"status: {result.status.value}"]
                    if result.status == CheckStatus.DEGRADED and result.reason:
                        out.append(f"degraded: {result.reason}")
                    out += [
                        f"round trip {t.probe}: {t.status.value}" + (f" ({t.detail})" if t.detail and t.status.value != "ok" else "")
                        for t in result.round_trips
                    ]
                    ET.SubElement(case, "system-out").text = "\n".join(out)
        return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _count(n: int, noun: str) -> str:
    """``1 template``, ``2 templates``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
