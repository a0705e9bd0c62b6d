"""``autoparser check`` at scale: a collection of N templates, with J processes.

The collection is made from the shared zoo (``../shared/templates``): each zoo
template is copied with a distinct comment appended until there are N files
(every copy is analysed from scratch: nothing is cached across templates).

    python benchmarks/bench_check_scale.py [N ...] [--jobs J ...]

Default: N = 250 500 1000 with J = 1 and 2 (this machine has 2 cores).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ZOO = Path(__file__).resolve().parent.parent.parent / "shared" / "templates"


def make_collection(folder: Path, count: int) -> None:
    sources = sorted(ZOO.glob("*.jinja"))
    for i in range(count):
        src = sources[i % len(sources)]
        target = folder / f"{i // len(sources):03d}" / src.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(src.read_text(encoding="utf-8") + f"{{# copy {i} #}}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="*", type=int, default=[250, 500, 1000])
    parser.add_argument("--jobs", nargs="*", type=int, default=[1, 2])
    args = parser.parse_args()
    command = shutil.which("autoparser") or sys.exit("autoparser is not on PATH (activate the venv)")
    if not ZOO.is_dir():
        sys.exit(f"{ZOO}: the shared zoo is needed")
    print(f"{'templates':>9} {'jobs':>4} {'wall s':>7} {'ms/template':>11} {'passed':>6} {'failed':>6}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            make_collection(Path(tmp), size)
            for jobs in args.jobs:
                start = time.monotonic()
                out = subprocess.run(
                    # --no-cache: every copy analysed from scratch (copies share
                    # their source, so a cache would serve all but the first)
                    [command, "--no-cache", "check", tmp, "--json", "--jobs", str(jobs)], capture_output=True, text=True
                )
                wall = time.monotonic() - start
                report = json.loads(out.stdout)
                print(f"{size:>9} {jobs:>4} {wall:7.1f} {1000 * wall / size:11.0f} {report['passed']:>6} {report['failed']:>6}", flush=True)


if __name__ == "__main__":
    main()
