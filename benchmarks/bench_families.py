"""Whole-output parse and 4-character streaming on real-family outputs
(run: python benchmarks/bench_families.py [SHARED_TEMPLATES_DIR]).

The happy path of each family's own format, at about 100-200 KB: Hermes-style
content then a call (Qwen3), reasoning and content (Qwen3.5), a tagged
argument (Qwen3-Coder), GLM's arg_key/arg_value; and values that a recovery
could end early (a JSON argument, a Gemma 4 or pythonic string).  Prints the best of several
runs per workload, so two checkouts can be compared in one run (the machine
varies by +-30% from run to run)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from analysis.generation.generator import AutoParser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stream import stream, timed  # (the same timing loop and 4-character stream)

TOOLS = [
    {"type": "function", "function": {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "string"}, "n": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
]
PROSE = ("The answer is < 42 > and so on, with <b>markup</b> and words. " * 4000)


def _generated(path: Path):
    parser = AutoParser(ChatTemplate(load_template(path), clock=FROZEN_CLOCK))
    return parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}))


def workloads(folder: Path):
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    yield "Hermes content + call", "Qwen-Qwen3-0.6B.jinja", "<think>\nplan\n</think>\n\n" + PROSE[:100_000] + "\n" + call
    yield "Qwen3.5 reasoning+content", "Qwen3.5-4B.jinja", PROSE[:98_000] + "\n</think>\n\n" + PROSE[:98_000]
    code = ("def f(x):\n    return x < 3 and x > 1\n" * 3000)[:100_000]
    coder = "<tool_call>\n<function=python>\n<parameter=code>\n" + code + "\n</parameter>\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>"
    yield "Qwen3-Coder tagged", "Qwen3-Coder.jinja", coder
    glm = "<tool_call>python\n<arg_key>code</arg_key>\n<arg_value>" + code + "</arg_value>\n<arg_key>n</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
    yield "GLM-4.6 arg_key/value", "GLM-4.6.jinja", glm
    # values a recovery could end early: held back only where one might
    json_code = json.dumps({"code": code, "n": 3})
    yield "Hermes JSON argument", "Qwen-Qwen3-0.6B.jinja", '<think>\nplan\n</think>\n\n<tool_call>\n{"name": "python", "arguments": ' + json_code + "}\n</tool_call>"
    yield "Llama 3 JSON argument", "meta-llama-Llama-3.1-8B-Instruct.jinja", '{"name": "python", "parameters": ' + json_code + "}"
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
