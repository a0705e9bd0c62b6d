"""``autoparser lint`` against ``check`` on the shared templates, and the
findings per rule (the counts docs/lint.md lists).

    python benchmarks/bench_lint.py [FOLDER ...]

Default: ../shared/templates and ../shared/templates-more.  Every run uses
``--no-cache`` and one process, so each analyses every template from scratch:
``check`` alone, ``check --lint``, and ``lint`` alone (which analyses too, for
the capabilities and reasoning markers it reads); then the templates with an
error finding, for the default engines and for each engine alone.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def timed(command: list[str]) -> tuple[float, str]:
    start = time.monotonic()
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"{' '.join(command[:4])}…: exit {out.returncode}: {out.stderr.strip()}")
    return time.monotonic() - start, out.stdout


def main() -> None:
    folders = [Path(f) for f in sys.argv[1:]] or [SHARED / "templates", SHARED / "templates-more"]
    command = shutil.which("autoparser") or sys.exit("autoparser is not on PATH (activate the venv)")
    files = [str(p) for folder in folders for p in sorted(folder.glob("*.jinja"))]
    base = [command, "--no-cache"]
    check_s, _ = timed([*base, "check", *map(str, folders), "--json", "--jobs", "1"])
    both_s, _ = timed([*base, "check", *map(str, folders), "--lint", "--json", "--jobs", "1"])
    lint_s, out = timed([*base, "lint", *files, "--json"])
    reports = json.loads(out)
    print(f"{len(files)} templates, one process, nothing cached")
    print(f"  check         {check_s:6.1f} s")
    print(f"  check --lint  {both_s:6.1f} s  ({both_s / check_s:.2f}× check)")
    print(f"  lint          {lint_s:6.1f} s  ({lint_s / check_s:.2f}× check)")
    findings: Counter[tuple[str, str]] = Counter()
    templates: Counter[tuple[str, str]] = Counter()
    for report in reports:
        seen = set()
        for finding in report["findings"]:
            key = (finding["rule"], finding["severity"])
            findings[key] += 1
            seen.add(key)
        templates.update(seen)
    print(f"\n{'rule':<26} {'severity':<8} {'templates':>9} {'findings':>8}")
    for (rule, severity), count in sorted(templates.items()):
        print(f"{rule:<26} {severity:<8} {count:>9} {findings[(rule, severity)]:>8}")
    print(f"\ntemplates with an error: {sum(bool(r['counts']['error']) for r in reports)} (default engines)")
    for engine in ("transformers", "vllm", "sglang", "llama.cpp", "ollama"):
        _, out = timed([command, "lint", *files, "--json", "--engine", engine])
        print(f"  --engine {engine:<13} {sum(bool(r['counts']['error']) for r in json.loads(out)):>3}")


if __name__ == "__main__":
    main()
