"""Numbers the documentation quotes stay true: the template and case counts
are checked against what they count, and no test count or test time is
quoted (they drift with every change; benchmarks measure times)."""

from __future__ import annotations

import json
import re

from tests.conftest import ROOT, SHARED, needs_shared, zoo_templates

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: the docs that quote the zoo's and the corpus's counts
COUNTED = [ROOT / "README.md", ROOT / "docs" / "cli.md", ROOT / "docs" / "development.md"]


def test_the_docs_quote_no_test_counts_or_test_times() -> None:
    quoted = []
    for doc in DOCS:
        text = doc.read_text()
        quoted += [f"{doc.name}: {m.group(0)}" for m in re.finditer(r"\b\d[\d,]* (?:tests|property tests)\b", text)]
        quoted += [f"{doc.name}: {m.group(0)}" for m in re.finditer(r"(?:fast loop|test command|the suite)[^.\n]*?\b\d+(?:[–.]\d+)? s\b", text)]
    assert quoted == []


def _numbers(pattern: str) -> list[tuple[str, int]]:
    out = []
    for doc in COUNTED:
        out += [(doc.name, int(m.group(1).replace(",", ""))) for m in re.finditer(pattern, doc.read_text())]
    return out


@needs_shared
def test_the_zoo_counts_the_docs_quote() -> None:
    from tests.analysis.export.test_export import CANNOT, READS_DIFFERENTLY

    zoo = len(zoo_templates())
    totals = _numbers(r"of the ([\d,]+) zoo templates")
    assert totals and all(n == zoo for _, n in totals), (totals, zoo)
    refused = len(CANNOT) + len(READS_DIFFERENTLY)  # (export exits 1 for these: tests/analysis/export)
    alike = _numbers(r"([\d,]+) of the [\d,]+ zoo templates read back alike")
    assert alike and all(n == zoo - refused for _, n in alike), (alike, zoo, refused)
    exits = _numbers(r"exits 1 for ([\d,]+) of the [\d,]+ zoo templates") + _numbers(r"the ([\d,]+) it refuses")
    assert exits and all(n == refused for _, n in exits), (exits, refused)


@needs_shared
def test_the_conformance_counts_the_docs_quote() -> None:
    cases = sum(1 for line in (SHARED / "conformance" / "cases.jsonl").read_text().splitlines() if line.strip())
    quoted = _numbers(r"the ([\d,]+) conformance cases")
    assert quoted and all(n == cases for _, n in quoted), (quoted, cases)
    known = len(json.loads((ROOT / "tests" / "shared-known-failures.json").read_text()))
    words = {"six": 6, "five": 5, "seven": 7, "eight": 8}
    said = [words[m.group(1)] for m in re.finditer(r"the (\w+)\s+failures are the ones listed", (ROOT / "docs" / "cli.md").read_text())]
    assert said == [known]


def test_the_capability_count_the_docs_quote() -> None:
    import dataclasses

    from analysis.probing.caps import Capabilities

    words = {"eight": 8, "nine": 9, "seven": 7, "ten": 10}
    said = [words[m.group(1)] for doc in DOCS for m in re.finditer(r"the (\w+) capability flags", doc.read_text())]
    assert said and all(n == len(dataclasses.fields(Capabilities)) for n in said)

