"""Streaming degenerate output in 1-character chunks, for every zoo template with tools.

For each template: runs of newlines, of spaces and of the template's own
tool-call marker (the text that keeps a parser undecided), at 20 KB and 80 KB.
Linear streaming takes about 4x as long at 80 KB as at 20 KB; the table shows
the worst templates and the worst ratio.

    python benchmarks/bench_stream_degenerate.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.generation.generator import auto_parser
from analysis.generation.streaming import StreamParser
from analysis.parsers.calls import trigger_marker
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template

ZOO = Path(__file__).resolve().parent.parent.parent / "shared" / "templates"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def stream_seconds(generated, text: str) -> float:
    parser = StreamParser(generated)
    start = time.perf_counter()
    for ch in text:
        parser.feed(ch)
    parser.finish()
    return time.perf_counter() - start


def main() -> None:
    rows = []
    for path in sorted(ZOO.glob("*.jinja")):
        try:
            parser = auto_parser(load_template(path))
            generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}))
        except Exception:  # noqa: BLE001 - the broken template
            continue
        marker = generated.built.trigger or trigger_marker(parser.analysis) or "<tool_call>"
        for kind, unit in (("newlines", "\n"), ("spaces", " "), ("marker", marker)):
            small = stream_seconds(generated, (unit * (20_000 // len(unit) + 1))[:20_000])
            large = stream_seconds(generated, (unit * (80_000 // len(unit) + 1))[:80_000])
            rows.append((large, small, path.name, kind))
    rows.sort(reverse=True)
    print(f"{len(rows)} streams; the slowest ten at 80 KB:")
    print(f"{'template':<50} {'run':<9} {'20 KB s':>8} {'80 KB s':>8} {'ratio':>6}")
    for large, small, name, kind in rows[:10]:
        print(f"{name:<50} {kind:<9} {small:8.2f} {large:8.2f} {large / max(small, 1e-9):6.1f}")
    worst_ratio = max(large / max(small, 1e-9) for large, small, _, _ in rows if large > 0.05)
    print(f"slowest 80 KB stream: {rows[0][0]:.2f} s; worst 80/20 KB ratio among streams over 0.05 s: {worst_ratio:.1f}")


if __name__ == "__main__":
    main()
