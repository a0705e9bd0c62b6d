"""Generation reuses the parser it built for a request like one seen before
(issue 43: generation from a cached analysis at its old speed): the same
tools and options, whatever the messages, give the same parser; other tools,
options or another generation prompt, a parser of their own."""

from __future__ import annotations

from typing import Any

from analysis.generation.generator import AutoParser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from tests.conftest import PROJECT_TEMPLATES

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}}}}


def _request(content: str, tools: list[dict[str, Any]], **options: Any) -> ChatRequest:
    return ChatRequest.from_json({"messages": [{"role": "user", "content": content}], "tools": tools, **options})


def test_the_same_tools_reuse_the_parser_and_read_the_same() -> None:
    parser = AutoParser(ChatTemplate(load_template(PROJECT_TEMPLATES / "demo.jinja"), clock=FROZEN_CLOCK))
    first = parser.generate(_request("Weather in Paris?", [WEATHER]))
    again = parser.generate(_request("And in Lyon?", [WEATHER]))
    assert again.built is first.built and again.prompt.text != first.prompt.text
    output = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"}}\n</tool_call>'
    assert again.parse(output) == first.parse(output) and again.grammar == first.grammar


def test_other_tools_or_options_build_their_own() -> None:
    parser = AutoParser(ChatTemplate(load_template(PROJECT_TEMPLATES / "demo.jinja"), clock=FROZEN_CLOCK))
    base = parser.generate(_request("Weather?", [WEATHER]))
    others = [
        parser.generate(_request("Weather?", [WEATHER, TIME])),
        parser.generate(_request("Weather?", [WEATHER], tool_choice="required")),
        parser.generate(_request("Weather?", [WEATHER], parallel_tool_calls=True)),
        parser.generate(_request("Weather?", [])),
    ]
    assert all(g.built is not base.built for g in others)
    assert len({id(g.built) for g in others}) == len(others)
    # (the parser reads the tools it was built for: get_time only where it was given)
    output = '<tool_call>\n{"name": "get_time", "arguments": {"zone": "CET"}}\n</tool_call>'
    assert [c.name for c in others[0].parse(output).message.tool_calls] == ["get_time"]
    assert parser.generate(_request("Weather?", [WEATHER])).built is base.built
