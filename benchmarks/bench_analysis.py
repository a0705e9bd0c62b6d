"""Time of the differential analysis over the zoo (run: python benchmarks/bench_analysis.py [ZOO]).

Analyses every template named in ../shared/reference/analysis.jsonl (57), each in
a fresh process state (caps probes included), and prints the median, maximum and
total wall time.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from analysis.generation.analyzer import analyze_template
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def main() -> None:
    zoo = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED / "templates"
    names = [json.loads(line)["template"] for line in (SHARED / "reference" / "analysis.jsonl").read_text().splitlines()]
    times: list[tuple[float, str]] = []
    for name in names:
        start = time.perf_counter()
        analyze_template(ChatTemplate(load_template(zoo / name), clock=FROZEN_CLOCK))
        times.append((time.perf_counter() - start, name))
    values = [t for t, _ in times]
    slowest = max(times)
    print(f"{len(times)} templates: median {statistics.median(values) * 1000:.0f} ms, "
          f"max {slowest[0] * 1000:.0f} ms ({slowest[1]}), total {sum(values):.2f} s")


if __name__ == "__main__":
    main()
