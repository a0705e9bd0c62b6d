"""Check reports as strings: JSON summary and JUnit XML (no printing here)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CheckReport:
    """Everything ``autoparser check`` found: one test per template and per case."""

    templates: int = 0
    cases: int = 0
    #: (kind, name, check, reason) with kind "template" or "case"
    failures: list[tuple[str, str, str, str]] = field(default_factory=list)
    #: every test run: (kind, name)
    tests: list[tuple[str, str]] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return len({(kind, name) for kind, name, _, _ in self.failures})

    @property
    def passed(self) -> int:
        return len(self.tests) - self.failed

    def to_json(self) -> str:
        """The summary object of ``--json``."""
        failures: list[dict[str, Any]] = []
        for kind, name, check, reason in self.failures:
            key = "id" if kind == "case" else "template"
            failures.append({key: name, "check": check, "reason": reason})
        data = {
            "templates": self.templates,
            "cases": self.cases,
            "passed": self.passed,
            "failed": self.failed,
            "failures": failures,
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def to_junit(self) -> str:
        """JUnit XML: a ``templates`` and a ``cases`` suite, one test case each."""
        suites = ET.Element("testsuites", name="autoparser check", tests=str(len(self.tests)), failures=str(self.failed))
        by_test: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for kind, name, check, reason in self.failures:
            by_test.setdefault((kind, name), []).append((check, reason))
        for kind in ("template", "case"):
            tests = [name for k, name in self.tests if k == kind]
            if not tests:
                continue
            failed = sum(1 for name in tests if (kind, name) in by_test)
            suite = ET.SubElement(suites, "testsuite", name=f"{kind}s", tests=str(len(tests)), failures=str(failed))
            for name in tests:
                case = ET.SubElement(suite, "testcase", classname=f"autoparser.{kind}s", name=name)
                for check, reason in by_test.get((kind, name), []):
                    failure = ET.SubElement(case, "failure", message=f"{check}: {reason.splitlines()[0] if reason else ''}", type=check)
                    failure.text = reason
        return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
