"""Throughput of the PEG engine on large outputs (run: python benchmarks/bench_peg.py).

Prints MB/s for an until/literal-heavy reasoning+content parser and for a parser
whose tool-call arguments are large JSON objects, at 100 KB and 1 MB.
"""

from __future__ import annotations

import json
import time

from peg import combinators as p
from peg.engine import parse

REASONING = (
    p.optional(p.literal("<think>") + p.tag("reasoning", p.until("</think>")) + p.literal("</think>") + p.space())
    + p.tag("content", p.until("<tool_call>"))
    + p.zero_or_more(
        p.tag(
            "tool",
            p.literal("<tool_call>")
            + p.space()
            + p.tag("tool-args", p.schema(p.json_value(), "args", {"type": "object"}))
            + p.space()
            + p.literal("</tool_call>")
            + p.space(),
        )
    )
    + p.end()
)


def text_heavy(size: int) -> str:
    line = "Let me think about this <b>carefully</b> and consider < and > signs.\n"
    half = line * (size // (2 * len(line)))
    return f"<think>{half}</think>\n{half}"


def json_heavy(size: int) -> str:
    item = {"city": "Paris", "values": [1, 2.5, True, None], "note": "a \"quoted\" word\n"}
    n = size // len(json.dumps(item))
    args = json.dumps({"items": [item] * n})
    return f"<think>short</think>ok<tool_call>{args}</tool_call>"


def measure(name: str, text: str, repeat: int = 5) -> None:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = parse(REASONING, text)
        best = min(best, time.perf_counter() - start)
        assert result.success, result.message()
    mb = len(text.encode()) / 1e6
    print(f"{name:<28} {len(text) / 1e3:>8.0f} KB  {best * 1e3:>8.2f} ms  {mb / best:>9.1f} MB/s")


if __name__ == "__main__":
    for size in (100_000, 1_000_000):
        measure("until/literal (reasoning)", text_heavy(size))
        measure("JSON arguments", json_heavy(size))
    partial_text = json_heavy(100_000)[:-20]
    start = time.perf_counter()
    parse(REASONING, partial_text, partial=True)
    print(f"{'JSON arguments, partial':<28} {len(partial_text) / 1e3:>8.0f} KB  {(time.perf_counter() - start) * 1e3:>8.2f} ms")
