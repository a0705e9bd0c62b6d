"""Generation from an analysis already made: what a server pays per request
(the prompt, the parser and the GBNF grammar for the request's tools), on
a few families, with and without tools, and with tools never seen before
(a checkout that keeps the parsers it built reuses them for the same tools).  Uses only the package-level API, so
it runs on older checkouts too (PYTHONPATH=CHECKOUT python
benchmarks/bench_generate.py [SHARED_TEMPLATES_DIR]).  Prints the best of
many runs per template, in ms."""

from __future__ import annotations

import sys
from pathlib import Path

from analysis.generation import AutoParser
from analysis.parsers import ChatRequest
from analysis.template import FROZEN_CLOCK, ChatTemplate, load_template

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small import best  # (the same timing loop)

TEMPLATES = (
    "Qwen-Qwen3-0.6B.jinja",
    "Qwen3-Coder.jinja",
    "GLM-4.6.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "openai-gpt-oss-120b.jinja",
    "moonshotai-Kimi-K2-Thinking.jinja",
)
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}}}},
]


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "templates")
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    with_tools = ChatRequest.from_json({"messages": messages, "tools": TOOLS})
    without = ChatRequest.from_json({"messages": messages})
    print(f"{'template':<42}{'tools':>9}{'no tools':>10}{'new tools':>11}")
    counter = iter(range(10**9))

    def fresh() -> ChatRequest:  # (tools never seen before: the parser is built, not reused)
        tools = [{**t, "function": {**t["function"], "description": f"v{next(counter)}"}} for t in TOOLS]
        return ChatRequest.from_json({"messages": messages, "tools": tools})

    for name in TEMPLATES:
        parser = AutoParser(ChatTemplate(load_template(folder / name), clock=FROZEN_CLOCK))  # (the analysis, made once)
        tools = best(lambda p=parser: p.generate(with_tools), 30) * 1000
        plain = best(lambda p=parser: p.generate(without), 30) * 1000
        new = best(lambda p=parser: p.generate(fresh()), 30) * 1000
        print(f"{name:<42}{tools:>7.2f}ms{plain:>8.2f}ms{new:>9.2f}ms")


if __name__ == "__main__":
    main()
