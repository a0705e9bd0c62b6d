"""Streaming values that a recovery holds back while they are written, in
1-character chunks, at two sizes (needs ../shared/templates):

- a JSON string argument holding the call's closers (``}}</tool_call>``) many
  times: a broken value would end there, so the stream shows the string short
  of each until it closes;
- a Gemma 4 or pythonic string holding the next argument's name many times
  (an unclosed string would end there);
- unopened reasoning (``word word … </think>answer``): held until decided.

Each stream must end as the whole parse does; the table shows the time, the
full parses and how the time grows for 4 times the text.

    python benchmarks/bench_held.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import time

from analysis.generation.streaming import StreamParser
from tests.reading import zoo_generated

CASES = {
    "Qwen3 JSON string of held texts": (
        "Qwen-Qwen3-0.6B.jinja",
        lambda n: (
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "'
            + "}}</tool_call>" * n
            + '"}}\n</tool_call>'
        ),
    ),
    "Llama3 JSON string of held texts": (
        "meta-llama-Llama-3.1-8B-Instruct.jinja",
        lambda n: '{"name": "get_weather", "parameters": {"city": "' + "}}<|eot_id|>" * n + '"}}',
    ),
    "Gemma string of boundaries": (
        "google-gemma-4-31B-it.jinja",
        lambda n: '<|tool_call>call:get_weather{city:<|"|>' + ",days:1" * n + '<|"|>}<tool_call|>',
    ),
    "LFM2 string of boundaries": (
        "LFM2-8B-A1B.jinja",
        lambda n: (
            "<|tool_call_start|>[get_weather(city='" + ", days=1" * n + "')]<|tool_call_end|>"
        ),
    ),
    "Qwen3 unopened reasoning": ("Qwen-Qwen3-0.6B.jinja", lambda n: "word " * n + "</think>answer"),
}


def main() -> None:
    for name, (template, make) in CASES.items():
        g = zoo_generated(template)
        times = []
        for n in (1000, 4000):
            text = make(n)
            sp = StreamParser(g)
            t = time.perf_counter()
            for c in text:
                sp.feed(c)
            _, outcome = sp.finish()
            times.append((len(text), time.perf_counter() - t, sp.full_parses))
            assert outcome.message == g.parse(text).message
        print(
            f"{name:<36}",
            " ".join(f"{n}: {t * 1000:.0f} ms ({fp} parses)" for n, t, fp in times),
            f"ratio {times[1][1] / times[0][1]:.1f}",
        )


if __name__ == "__main__":
    main()
