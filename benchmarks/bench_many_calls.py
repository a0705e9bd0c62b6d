"""Outputs of many calls with text between them: the look-ahead from each call
marker reads one call block, never the rest of the output again, so the time
grows linearly with the number of calls (it used to nest one look-ahead per
call and ran out of stack after about a hundred).  Uses the project's own
templates: the generic reading (``demo.jinja``), Functionary v2's recipients
and Muse Glimmer's messages.

Prints the whole parse's and a 16-character stream's time per count, and how
each grows for 4 times the calls (linear: about 4x).

    python benchmarks/bench_many_calls.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.generation.generator import auto_parser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from tests.analysis.generation.test_many_calls import TOOLS
from tests.conftest import PROJECT_TEMPLATES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_false_closers import growth  # (the same measurement and table)

CASES = {
    "generic: text, call": ("demo.jinja", 'Checking. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n', "Done."),
    "Functionary v2: reply, call": (
        "tests/recipient_calls.jinja",
        'all\n<|content|>Checking.\n<|from|>assistant\n<|recipient|>get_weather\n<|content|>{"city": "Paris"}\n<|from|>assistant\n<|recipient|>',
        "all\n<|content|>Done.",
    ),
    "Muse Glimmer: reasoning, call": (
        "tests/recipient_xml.jinja",
        ' to=self<|message|>Checking.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
        '<atem:parameter name="city">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|><|start|>assistant',
        " to=user<|message|>Done.<|eot|>",
    ),
}


def main() -> None:
    print(f"{'output':<36}{'calls':>7}{'size':>9}{'parse':>11}{'stream/16':>11}")
    for name, (template, unit, last) in CASES.items():
        parser = auto_parser(load_template(PROJECT_TEMPLATES / template))
        generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": TOOLS}))
        growth(name, generated, lambda n, u=unit, t=last: u * n + t, (250, 1000), lambda n: n)


if __name__ == "__main__":
    main()
