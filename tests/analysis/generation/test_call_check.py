"""Parsed calls checked against the request's tool schemas: ``parse`` warns and exits 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.generation.call_check import call_problems
from analysis.messages.mapper import Message, ToolCall
from tests.cli_helpers import run_cli
from tests.conftest import PROJECT_TEMPLATES
from tests.conftest import WEATHER_TOOLS as TOOLS


def _problems(name: str, arguments: str) -> list[str]:
    return [str(problem) for problem in call_problems(Message(tool_calls=(ToolCall(name, arguments),)), TOOLS)]


@pytest.mark.parametrize(
    "name, arguments, problem",
    [
        ("get_time", '{"city": "Paris"}', "tool call 0 (get_time): no such tool (the request has: get_weather)"),
        ("get_weather", '{"unit": "celsius"}', "tool call 0 (get_weather): 'city' is a required property"),
        ("get_weather", '{"city": "A", "city": "B"}', "tool call 0 (get_weather): argument city is given twice"),
        ("get_weather", '{"city": "Paris", "unit": "kelvin"}', "tool call 0 (get_weather): .unit: 'kelvin' is not one of ['celsius', 'fahrenheit']"),
        ("get_weather", '{"city": "Paris", "days": "two"}', "tool call 0 (get_weather): .days: 'two' is not of type 'integer'"),
        ("get_weather", '{"city": "Paris", "country": "FR"}', "tool call 0 (get_weather): Additional properties are not allowed ('country' was unexpected)"),
        ("get_weather", '["Paris"]', "tool call 0 (get_weather): the arguments are not a JSON object"),
        ("get_weather", '{"city": ', "tool call 0 (get_weather): the arguments are not JSON"),
    ],
)
def test_each_kind_of_broken_call(name: str, arguments: str, problem: str) -> None:
    assert _problems(name, arguments) == [problem]


def test_valid_calls_have_no_problems() -> None:
    assert _problems("get_weather", '{"city": "Paris", "unit": "celsius", "days": 3}') == []
    assert _problems("get_weather", '{"days": 1, "city": "Paris"}') == []  # any order


TAGGED = str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja")


def _call(*arguments: tuple[str, str]) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in arguments)
    return f"<tool_call>\n<function=get_weather>\n{body}</function>\n</tool_call>"


def test_parse_warns_and_exits_1_but_keeps_the_message(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    out = tmp_path / "o.txt"
    out.write_text(_call(("city", "A"), ("city", "B")))
    result = run_cli("parse", "--template", TAGGED, "--tools", str(tools), str(out), "--json")
    assert result.exit_code == 1
    assert result.stderr.strip() == "warning: tool call 0 (get_weather): argument city is given twice"
    assert json.loads(result.stdout)["tool_calls"][0]["function"]["name"] == "get_weather"  # still returned
    out.write_text(_call(("unit", "celsius")))
    result = run_cli("parse", "--template", TAGGED, "--tools", str(tools), str(out), "--json")
    assert result.exit_code == 1 and "'city' is a required property" in result.stderr
    out.write_text(_call(("city", "Paris"), ("unit", "celsius")))
    result = run_cli("parse", "--template", TAGGED, "--tools", str(tools), str(out), "--json")
    assert result.exit_code == 0 and result.stderr == ""


def test_a_library_user_gets_the_problems_and_hints_parse_prints(tmp_path: Path) -> None:
    """``review_parse`` returns, as data, what ``parse`` prints beside the
    message: one warning per call problem, one hint per hint."""
    from analysis.generation import CallProblem, HintKind, auto_parser, review_parse
    from analysis.parsers import ChatRequest
    from analysis.template import load_template

    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    out = tmp_path / "o.txt"
    out.write_text(_call(("city", "A"), ("city", "B")) + "\n" + _call(("unit", "celsius")))  # two broken calls, parallel off
    result = run_cli("parse", "--template", TAGGED, "--tools", str(tools), str(out), "--json")

    generated = auto_parser(load_template(TAGGED)).generate(ChatRequest([{"role": "user", "content": "hi"}], tools=TOOLS))
    text = out.read_text()
    outcome = generated.parse(text)
    review = review_parse(generated, text, outcome)
    assert review.call_problems == (
        CallProblem(0, "get_weather", "argument city is given twice"),
        CallProblem(1, "get_weather", "'city' is a required property"),
    )
    assert not review.calls_valid
    assert [h.kind for h in review.hints] == [HintKind.PARALLEL_CALLS_OFF] and review.hints[0].count == 2
    warnings = [line.removeprefix("warning: ") for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [str(problem) for problem in review.call_problems]
    assert sum(line.startswith("hint: ") for line in result.stderr.splitlines()) == len(review.hints)
    assert result.exit_code == 1
    assert review_parse(generated, text, generated.parse(text, partial=True), partial=True).call_problems == ()  # not final


def test_unknown_type_names_are_left_out_of_the_check_and_noted() -> None:
    from analysis.generation.call_check import schema_notes

    properties = {"type": {"type": "string", "enum": [{"type": "x"}]}, "n": {"type": ["float", "null"]}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": properties}}}]
    message = Message(tool_calls=(ToolCall("f", '{"type": 3, "n": 1.5}'),))
    assert [str(p) for p in call_problems(message, tools)] == [
        "tool call 0 (f): .type: 3 is not one of [{'type': 'x'}]",  # (a property named "type"; enum values are data)
        "tool call 0 (f): .type: 3 is not of type 'string'",
    ]
    assert schema_notes(message, tools) == ["tool f: properties.n has type 'float', which JSON Schema does not know: not checked"]
