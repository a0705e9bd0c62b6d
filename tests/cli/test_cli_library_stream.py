"""A serving engine that embeds the library gets exactly what the CLI prints:
``OpenAIStream``'s deltas and final message against ``parse --stream --json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.generation import OpenAIStream, auto_parser
from analysis.parsers import ChatRequest
from analysis.template import load_template
from tests.cli_helpers import run_cli
from tests.conftest import PROJECT_TEMPLATES, ZOO

TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
CASES = [
    (PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja", "<think>Plan.</think>Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"),
    (PROJECT_TEMPLATES / "demo.jinja", 'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
    (ZOO / "Mistral-Small-3.2-24B-Instruct-2506.jinja", '[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]{"city": "Paris"}'),
    (ZOO / "Mistral-Small-3.2-24B-Instruct-2506.jinja", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'),
]


@pytest.mark.parametrize(("template", "output"), CASES, ids=lambda c: c.name if isinstance(c, Path) else "")
@pytest.mark.parametrize("chunk", [1, 3, 7])
@pytest.mark.parametrize("open_arguments", [False, True])
def test_library_deltas_are_what_parse_stream_json_prints(template: Path, output: str, chunk: int, open_arguments: bool, tmp_path: Path) -> None:
    if not template.is_file():
        pytest.skip("../shared is absent")
    tools, out = tmp_path / "tools.json", tmp_path / "out.txt"
    tools.write_text(json.dumps([TOOL]))
    out.write_text(output)
    shown = ["--open-arguments"] if open_arguments else []
    printed = run_cli("parse", "--template", str(template), "--tools", str(tools), "--json", "--stream", *shown, "--chunk", str(chunk), str(out))
    lines = [json.loads(line) for line in printed.stdout.splitlines()]
    generated = auto_parser(load_template(template)).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hello"}], "tools": [TOOL]}))
    stream = OpenAIStream(generated, show_open_arguments=open_arguments)
    deltas = [d for i in range(0, len(output), chunk) for d in stream.feed(output[i : i + chunk])]
    last, outcome = stream.finish()
    assert [{"delta": d} for d in deltas + last] == lines[:-1]
    assert stream.message(outcome.message) == lines[-1]
    ids = [c["id"] for d in deltas + last for c in d.get("tool_calls", []) if "id" in c]
    assert len(ids) == len(outcome.message.tool_calls) == 1  # an id once, in a call's first chunk


def test_open_arguments_needs_stream(tmp_path: Path) -> None:
    from tests.cli_helpers import assert_clean_error

    out = tmp_path / "out.txt"
    out.write_text("Hi")
    assert "--open-arguments needs --stream" in assert_clean_error(run_cli("parse", "--open-arguments", str(out)))
