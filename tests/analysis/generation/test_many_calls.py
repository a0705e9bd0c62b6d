"""An output of a thousand calls or messages, with text between them, reads
whole.  Text before a call marker looks ahead to whether the rest of the
output reads from it; that look-ahead used to ask the same of the next text,
one nested look-ahead per call, and ran out of stack after about a hundred
(the whole output then became content).  The count of calls read is the
assertion; ``benchmarks/bench_many_calls.py`` measures the time."""

from __future__ import annotations

import json

import pytest

from analysis.generation.generator import auto_parser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from tests.conftest import PROJECT_TEMPLATES

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
MANY = 1_000


def _generated(template: str):  # type: ignore[no-untyped-def]
    parser = auto_parser(load_template(PROJECT_TEMPLATES / template))
    return parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": TOOLS}))


@pytest.mark.parametrize(
    ("template", "unit", "last"),
    [
        # the generic reading: text, then a call, again and again
        ("demo.jinja", 'Checking. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n', "Done."),
        # Functionary's recipients (v2's marker and separator): a reply, then a call
        ("tests/recipient_calls.jinja", 'all\n<|content|>Checking.\n<|from|>assistant\n<|recipient|>get_weather\n<|content|>{"city": "Paris"}\n<|from|>assistant\n<|recipient|>', "all\n<|content|>Done."),
        # Muse Glimmer's messages: reasoning, then a call
        (
            "tests/recipient_xml.jinja",
            ' to=self<|message|>Checking.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
            '<atem:parameter name="city">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|><|start|>assistant',
            " to=user<|message|>Done.<|eot|>",
        ),
    ],
    ids=["generic", "functionary", "recipient-xml"],
)
def test_a_thousand_calls_with_text_between_them_read(template: str, unit: str, last: str) -> None:
    generated = _generated(template)
    outcome = generated.parse(unit * MANY + last)
    assert outcome.ok, outcome.warning
    assert len(outcome.message.tool_calls) == MANY
    assert all(json.loads(call.arguments) == {"city": "Paris"} for call in outcome.message.tool_calls)
    assert outcome.message.content.endswith("Done.")
