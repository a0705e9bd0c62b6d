"""Whole-output parses of small real-family outputs (2 KB and 10 KB), the
size most replies have: the fixed cost per parse (building nothing: the
parser is made once) and the per-character cost, on the same workloads as
``bench_families.py``.  Uses only the package-level API, so it runs on older
checkouts too (run from a checkout: PYTHONPATH=CHECKOUT python
benchmarks/bench_small.py [SHARED_TEMPLATES_DIR]).  Prints the best of many
runs per workload."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from analysis.generation import AutoParser
from analysis.parsers import ChatRequest
from analysis.template import FROZEN_CLOCK, ChatTemplate, load_template

TOOLS = [
    {"type": "function", "function": {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "string"}, "n": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
]
PROSE = "The answer is < 42 > and so on, with <b>markup</b> and words. " * 4000
CODE = "def f(x):\n    return x < 3 and x > 1\n" * 3000


def workloads(size: int):
    """The families' happy paths at about ``size`` characters (``bench_families`` runs them at 100 KB)."""
    prose, code = PROSE[:size], CODE[:size]
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    yield "Hermes content + call", "Qwen-Qwen3-0.6B.jinja", "<think>\nplan\n</think>\n\n" + prose + "\n" + call
    yield "Qwen3.5 reasoning+content", "Qwen3.5-4B.jinja", prose + "\n</think>\n\n" + prose
    coder = "<tool_call>\n<function=python>\n<parameter=code>\n" + code + "\n</parameter>\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>"
    yield "Qwen3-Coder tagged", "Qwen3-Coder.jinja", coder
    glm = "<tool_call>python\n<arg_key>code</arg_key>\n<arg_value>" + code + "</arg_value>\n<arg_key>n</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
    yield "GLM-4.6 arg_key/value", "GLM-4.6.jinja", glm
    json_code = json.dumps({"code": code, "n": 3})
    yield "Hermes JSON argument", "Qwen-Qwen3-0.6B.jinja", '<think>\nplan\n</think>\n\n<tool_call>\n{"name": "python", "arguments": ' + json_code + "}\n</tool_call>"
    yield "Llama 3 JSON argument", "meta-llama-Llama-3.1-8B-Instruct.jinja", '{"name": "python", "parameters": ' + json_code + "}"


def best(run, repeat: int = 200) -> float:
    """The best of ``repeat`` runs (bench_stream's loop, written here so that
    this runs on checkouts that do not have it)."""
    out = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        out = min(out, time.perf_counter() - start)
    return out


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "templates")
    request = ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS})
    print(f"{'workload':<28}{'size':>7}{'parse':>11}")
    for size in (2_000, 10_000):
        for name, template, text in workloads(size):
            generated = AutoParser(ChatTemplate(load_template(folder / template), clock=FROZEN_CLOCK)).generate(request)
            assert generated.parse(text).ok, name
            print(f"{name:<28}{len(text):>7}{best(lambda g=generated, t=text: g.parse(t)) * 1000:>9.3f}ms")


if __name__ == "__main__":
    main()
