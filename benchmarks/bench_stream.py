"""Streaming cost vs one full parse (run: python benchmarks/bench_stream.py).

For ~100 KB outputs of three shapes it prints the time of one full parse, the
time to stream the same output in 4-character chunks (every delta produced),
their ratio, and how many full parses streaming needed; then streaming time
by output size (linear), and for contrast the quadratic approach (a partial
parse of every prefix) on 20 KB.

It also measures the floor any chunk-by-chunk streamer pays in this Python: the
same loop over the same chunks calling a ``feed`` that does nothing but keep the
chunk (``floor``).  Where the floor alone exceeds 5x a full parse, no per-chunk
Python API can meet "streaming costs < 5x one full parse".
"""

from __future__ import annotations

import json
import time

from analysis.generation.generator import AutoParser
from analysis.generation.streaming import StreamParser
from analysis.parsers.request import ChatRequest
from analysis.template.builtin import demo_template_path
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate

TOOLS = [
    {"type": "function", "function": {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "write", "parameters": {"type": "object", "properties": {"data": {"type": "object"}}}}},
]


def _generated(template_path, tools):
    parser = AutoParser(ChatTemplate(load_template(template_path), clock=FROZEN_CLOCK))
    return parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": tools}))


def workloads():
    demo = _generated(demo_template_path(), TOOLS)
    line = "Some reasoning with <b>tags</b>, a < b and more words here.\n"
    reasoning = line * (50_000 // len(line))
    content = ("The answer is < 42 > and so on. " * 2000)[:50_000]
    yield "reasoning + content", demo, "<think>\n" + reasoning + "</think>\n\n" + content
    data = json.dumps({"items": [{"k": i, "v": "x" * 40, "ok": i % 2 == 0} for i in range(1700)]})
    yield "JSON arguments", demo, '<tool_call>\n{"name": "write", "arguments": {"data": ' + data + "}}\n</tool_call>"
    try:
        from pathlib import Path

        coder = Path(__file__).resolve().parent.parent / "templates" / "tests" / "tagged_xml.jinja"
        tagged = _generated(coder, TOOLS)
        code = ("def f(x):\n    return x < 3 and x > 1\n" * 3000)[:100_000]
        yield "tagged string argument", tagged, "<tool_call>\n<function=python>\n<parameter=code>\n" + code + "\n</parameter>\n</function>\n</tool_call>"
    except OSError:
        pass


def timed(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def stream(generated, text, size=4):
    parser = StreamParser(generated)
    for i in range(0, len(text), size):
        parser.feed(text[i : i + size])
    parser.finish()
    return parser


class _KeepOnly:
    """A streamer that does nothing but keep each chunk: the floor of any streamer."""

    def __init__(self) -> None:
        self.chunks: list[str] = []

    def feed(self, chunk: str) -> list[str]:
        self.chunks.append(chunk)
        return []


def floor(text, size=4):
    """The benchmark's own loop with a do-nothing ``feed``."""
    parser = _KeepOnly()
    for i in range(0, len(text), size):
        parser.feed(text[i : i + size])
    return parser


def main() -> None:
    print(f"{'output':<24}{'size':>8}{'full parse':>12}{'stream/4':>10}{'ratio':>8}{'floor':>9}{'floor ratio':>13}{'full parses':>13}")
    for name, generated, text in workloads():
        full = timed(lambda g=generated, t=text: g.parse(t), repeat=9)
        streamed = timed(lambda g=generated, t=text: stream(g, t), repeat=9)
        least = timed(lambda t=text: floor(t), repeat=9)
        parses = stream(generated, text).full_parses
        print(
            f"{name:<24}{len(text):>8}{full * 1000:>10.2f}ms{streamed * 1000:>8.1f}ms{streamed / full:>7.1f}x"
            f"{least * 1000:>7.2f}ms{least / full:>12.1f}x{parses:>13}"
        )
    _, generated, text = next(workloads())
    scaling = []
    for size in (25_000, 50_000, 100_000, 200_000):
        sample = (text * 2)[:size]
        scaling.append(f"{size // 1000} KB {timed(lambda s=sample: stream(generated, s), repeat=3) * 1000:.0f} ms")
    print("streaming time by size (4-char chunks): " + ", ".join(scaling))
    text = text[:20_000]
    quadratic = timed(lambda: [generated.parse(text[:i], partial=True) for i in range(4, len(text) + 4, 4)], repeat=1)
    linear = timed(lambda: stream(generated, text), repeat=3)
    print(f"20 KB in 4-char chunks: re-parsing every prefix {quadratic * 1000:.0f} ms, streaming {linear * 1000:.1f} ms")


if __name__ == "__main__":
    main()
