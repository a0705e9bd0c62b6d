"""Adversarial outputs for the exact reading: thousands of false closers and
quoted call markers, each of which a look-ahead must reject (needs
../shared/templates).

- prose that names ``<tool_call>`` N times, then a real call (Qwen3);
- a Qwen3-Coder string value quoting ``</parameter>`` and ``</function>`` N times;
- a GLM value quoting ``</arg_value>`` and ``</tool_call>`` N times.

Prints the whole parse's time and a 16-character stream's time per size, and
how each grows for 4 times the false closers (linear: about 4x).

    python benchmarks/bench_false_closers.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.generation.streaming import StreamParser
from tests.reading import zoo_generated

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stream import timed  # (the same timing loop)

CASES: dict[str, tuple[str, Callable[[int], str]]] = {
    "prose naming <tool_call>": (
        "Qwen-Qwen3-0.6B.jinja",
        lambda n: "Use `<tool_call>` to call. " * n + '\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    ),
    "Qwen3-Coder value quoting closers": (
        "Qwen3-Coder.jinja",
        lambda n: "<tool_call>\n<function=get_weather>\n<parameter=city>\n"
        + "print('</parameter>') or ('</function>') " * n
        + "\n</parameter>\n</function>\n</tool_call>",
    ),
    "GLM value quoting closers": (
        "GLM-4.6.jinja",
        lambda n: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>" + "a </arg_value> b </tool_call> " * n + "</arg_value>\n</tool_call>",
    ),
}


def _stream(generated: object, text: str) -> None:
    stream = StreamParser(generated)  # type: ignore[arg-type]
    for i in range(0, len(text), 16):
        stream.feed(text[i : i + 16])
    stream.finish()


def growth(name: str, generated: Any, make: Callable[[int], str], counts: tuple[int, int], calls: Callable[[int], int | None]) -> None:
    """Print the whole parse's and a 16-character stream's time of ``make(n)``
    for each of ``counts``, and how each grows; each parse must be ok with
    ``calls(n)`` calls (None: at least one)."""
    times = []
    for n in counts:
        text = make(n)
        outcome = generated.parse(text)
        expected = calls(n)
        read = len(outcome.message.tool_calls)
        assert outcome.ok and (read == expected if expected is not None else read > 0), (name, outcome.warning)
        parse_s = timed(lambda t=text, g=generated: g.parse(t), 5)
        stream_s = timed(lambda t=text, g=generated: _stream(g, t), 1)
        times.append((parse_s, stream_s))
        print(f"{name:<36}{n:>7}{len(text):>9}{parse_s * 1000:>9.2f}ms{stream_s * 1000:>9.0f}ms")
    ratio = counts[1] // counts[0]
    print(f"{'':<36}{f'x{ratio}:':>7}{'':>9}{times[1][0] / times[0][0]:>10.1f}x{times[1][1] / times[0][1]:>10.1f}x")


def main() -> None:
    print(f"{'output':<36}{'false':>7}{'size':>9}{'parse':>11}{'stream/16':>11}")
    for name, (template, make) in CASES.items():
        growth(name, zoo_generated(template), make, (1000, 4000), lambda n: None)


if __name__ == "__main__":
    main()
