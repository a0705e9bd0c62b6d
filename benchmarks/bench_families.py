"""Whole-output parse and 4-character streaming on real-family outputs
(run: python benchmarks/bench_families.py [SHARED_TEMPLATES_DIR]).

The happy path of each family's own format, at about 100-200 KB: Hermes-style
content then a call (Qwen3), reasoning and content (Qwen3.5), a tagged
argument (Qwen3-Coder), GLM's arg_key/arg_value; and values that a recovery
could end early (a JSON argument, a Gemma 4 or pythonic string).  Prints the best of several
runs per workload, so two checkouts can be compared in one run (the machine
varies by +-30% from run to run)."""

from __future__ import annotations

import sys
from pathlib import Path

from analysis.generation.generator import AutoParser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small import CODE, TOOLS  # (the same workloads at 100 KB, and two more)
from bench_small import workloads as small_workloads
from bench_stream import stream, timed  # (the same timing loop and 4-character stream)


def _generated(path: Path):
    parser = AutoParser(ChatTemplate(load_template(path), clock=FROZEN_CLOCK))
    return parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}))


def workloads(folder: Path):
    yield from small_workloads(100_000)
    code = CODE[:100_000]
    gemma = '<|tool_call>call:python{code:<|"|>' + code + '<|"|>,n:3}<tool_call|>'
    yield "Gemma 4 string argument", "google-gemma-4-31B-it.jinja", gemma
    yield "LFM2 pythonic string", "LFM2-8B-A1B.jinja", "<|tool_call_start|>[python(code=" + repr(code) + ", n=3)]<|tool_call_end|>"


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "templates")
    print(f"{'workload':<28}{'size':>8}{'parse':>11}{'stream/4':>11}")
    for name, template, text in workloads(folder):
        generated = _generated(folder / template)
        assert generated.parse(text).ok, name
        full = timed(lambda g=generated, t=text: g.parse(t), repeat=15)
        streamed = timed(lambda g=generated, t=text: stream(g, t), repeat=5)
        print(f"{name:<28}{len(text):>8}{full * 1000:>9.3f}ms{streamed * 1000:>9.1f}ms")


if __name__ == "__main__":
    main()
