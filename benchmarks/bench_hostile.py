"""Hostile templates through the installed ``autoparser`` with the default limits.

For each template of ``tests/test_hostile.py`` (and a 5 MB and a 50 MB
template), runs ``autoparser analyze`` as a subprocess and reports the exit
code, wall time and the peak memory of the command and its render worker.

    python benchmarks/bench_hostile.py            # from the checkout, venv active
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_hostile import HOSTILE

_MEASURE = (
    "import json, resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(json.dumps([r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.stderr.strip()]))\n"
)


def main() -> None:
    command = shutil.which("autoparser") or sys.exit("autoparser is not on PATH (activate the venv)")
    with tempfile.TemporaryDirectory() as tmp:
        sources = dict(HOSTILE)
        sources["template_5mb"] = ("{{ messages }}" + "x" * 5_000_000, "")
        sources["template_50mb"] = ("{{ messages }}" + "x" * 50_000_000, "")
        print(f"{'template':<18} {'exit':>4} {'wall s':>7} {'peak MB':>8} lines  message")
        worst_time = worst_mem = 0.0
        for name, (source, _) in sources.items():
            path = Path(tmp) / f"{name}.jinja"
            path.write_text(source, encoding="utf-8")
            start = time.monotonic()
            code, peak_kb, stderr = json.loads(
                subprocess.run(
                    [sys.executable, "-c", _MEASURE, command, "analyze", str(path)], capture_output=True, text=True
                ).stdout
            )
            wall = time.monotonic() - start
            lines, message = len(stderr.splitlines()), stderr[:100]
            worst_time, worst_mem = max(worst_time, wall), max(worst_mem, peak_kb / 1024)
            print(f"{name:<18} {code:>4} {wall:7.2f} {peak_kb / 1024:8.0f} {lines:>5}  {message}")
        print(f"worst: {worst_time:.2f} s wall, {worst_mem:.0f} MB peak")


if __name__ == "__main__":
    main()
