"""``autoparser parse``: panels, JSON, streaming, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.messages.mapper import Delta, accumulate
from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES

TAGGED = PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"
OUTPUT = "<think>\nchecking\n</think>\n\nSure [INST] here.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    (tmp_path / "out.txt").write_text(OUTPUT)
    (tmp_path / "request.json").write_text(json.dumps({"messages": [{"role": "user", "content": "Weather?"}], "tools": tools, "reasoning_format": "none"}))
    return {"tools": tmp_path / "tools.json", "out": tmp_path / "out.txt", "request": tmp_path / "request.json"}


def test_parse_json(files: dict[str, Path]) -> None:
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), "--json", str(files["out"]))
    assert result.exit_code == 0, result.stderr
    message = json.loads(result.stdout)
    assert message["reasoning_content"] == "checking" and message["content"] == "Sure [INST] here."
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}


def test_parse_reads_stdin_and_prints_panels_literally(files: dict[str, Path]) -> None:
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), "-", input=OUTPUT)
    assert result.exit_code == 0, result.stderr
    assert "Sure [INST] here." in result.stdout and "tool call 0: get_weather" in result.stdout and '"city": "Paris"' in result.stdout


def test_parse_request_file_and_reasoning_format_override(files: dict[str, Path]) -> None:
    base = ["parse", "--template", str(TAGGED), "--request", str(files["request"]), "--json", str(files["out"])]
    assert "reasoning_content" not in json.loads(run_cli(*base).stdout)
    assert json.loads(run_cli(*base, "--reasoning-format", "auto").stdout)["reasoning_content"] == "checking"


def test_parse_stream_json_lines_add_up(files: dict[str, Path]) -> None:
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), "--stream", "--chunk", "3", "--json", str(files["out"]))
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    final = lines.pop()
    deltas = []
    for line in lines:
        d = line["delta"]
        if "tool_calls" in d:
            call = d["tool_calls"][0]
            deltas.append(Delta(tool_index=call["index"], tool_id=call.get("id"), tool_name=call["function"].get("name"), arguments=call["function"].get("arguments")))
        else:
            deltas.append(Delta(content=d.get("content"), reasoning_content=d.get("reasoning_content")))
    assert accumulate(deltas).to_json() == final
    assert len(lines) > 10


def test_parse_partial(files: dict[str, Path]) -> None:
    cut = OUTPUT[: OUTPUT.index("Paris") + 3]
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), "--partial", "--json", "-", input=cut)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["tool_calls"][0]["function"]["arguments"] == '{"city": "Par'


def test_parse_output_that_does_not_fit_exits_1_and_keeps_the_text(files: dict[str, Path]) -> None:
    broken = "text <tool_call>\n<function=nope!>\n</function>\n</tool_call>"
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), "--json", "-", input=broken)
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert json.loads(result.stdout)["content"] == broken
    # one error line, then the output's line with a caret under the place
    error, shown, caret = result.stderr.splitlines()
    assert error.startswith("error: a tool call block at offset 5-58 does not read (kept as text): ")
    assert "output does not fit the format at line 2, column 15" in error
    assert (shown, caret) == ("  <function=nope!>", "                ^")


def test_a_block_that_does_not_read_is_text_and_the_calls_around_it_are_calls(files: dict[str, Path]) -> None:
    call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    phantom = "<tool_call>example</tool_call>"
    for output in (f"{phantom} then\n{call}", f"{call}\n{phantom}"):
        result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), "--json", "-", input=output)
        message = json.loads(result.stdout)
        assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"], output
        assert phantom in message["content"] and result.exit_code == 1
        assert "a tool call block at offset" in result.stderr and "expected '<function='" in result.stderr
    # a marker quoted in prose is prose: no block, no warning, a note (issue 43: never silent)
    quoted = f"Use `<tool_call>` to call.\n{call}"
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), "--json", "-", input=quoted)
    assert result.exit_code == 0 and result.stderr == "note: a call marker read as text (quoted in prose: no call reads from it) at line 1, column 6 (offset 5)\n"
    assert json.loads(result.stdout)["content"] == "Use `<tool_call>` to call."


def test_parse_bad_inputs(tmp_path: Path, files: dict[str, Path]) -> None:
    assert_clean_error(run_cli("parse", "--template", str(TAGGED), str(tmp_path / "missing.txt")))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert_clean_error(run_cli("parse", "--template", str(TAGGED), "--request", str(bad), "-", input="x"))
    assert_clean_error(run_cli("parse", "--template", str(TAGGED), "--reasoning-format", "weird", "-", input="x"))
    assert_clean_error(run_cli("parse", "--template", str(TAGGED), "--request", str(files["request"]), "--tools", str(files["tools"]), "-", input="x"))


CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n</function>\n</tool_call>"


def test_hint_second_call_without_parallel_tool_calls(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "two.txt"
    out.write_text(CALL.format(city="Paris") + "\n" + CALL.format(city="Rome"))
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), str(out), "--json")
    assert result.exit_code == 0  # both calls are read (the model wrote them), with a hint
    assert "hint: the model wrote 2 tool calls but parallel_tool_calls is off" in result.stderr
    calls = json.loads(result.stdout)["tool_calls"]
    assert [json.loads(c["function"]["arguments"])["city"] for c in calls] == ["Paris", "Rome"]
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), str(out), "--json", "--parallel-tool-calls")
    assert result.exit_code == 0 and "hint" not in result.stderr
    calls = json.loads(result.stdout)["tool_calls"]
    assert [json.loads(c["function"]["arguments"])["city"] for c in calls] == ["Paris", "Rome"]


def test_hint_output_cut_short(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "cut.txt"
    out.write_text(CALL.format(city="Paris")[:55])
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), str(out))
    assert result.exit_code == 1
    assert "hint: the output ends early (cut off at max_tokens?): try --partial" in result.stderr
    assert run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), str(out), "--partial").exit_code == 0


def test_hint_call_marker_without_tools(tmp_path: Path) -> None:
    out = tmp_path / "call.txt"
    out.write_text(CALL.format(city="Paris"))
    result = run_cli("parse", "--template", str(TAGGED), str(out), "--json")
    assert "hint: the output holds the template's tool-call marker '<tool_call>' but the request has no tools" in result.stderr


def test_no_hint_when_all_is_well(files: dict[str, Path]) -> None:
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), str(files["out"]), "--json")
    assert result.exit_code == 0 and result.stderr == ""


def test_note_when_the_demo_template_is_used(tmp_path: Path) -> None:
    out = tmp_path / "o.txt"
    out.write_text("hello")
    result = run_cli("parse", str(out), "--json")
    assert result.exit_code == 0
    assert result.stderr.strip() == "note: no --template given: parsing with the built-in demo template"


def test_a_failed_parse_shows_where_with_a_caret(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "bad.txt"
    out.write_text('Sure.\n<tool_call>\n{"name": "get_weather", \x01"arguments": {"city": "Paris"}}\n</tool_call>')
    result = run_cli("parse", "--template", str(PROJECT_TEMPLATES / "demo.jinja"), "--tools", str(files["tools"]), str(out))
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("error: a tool call block at offset 6-") and "output does not fit" in line]
    assert "line 3" in lines[at]
    shown, caret = lines[at + 1], lines[at + 2]
    assert shown.endswith('"get_weather", \\x01"arguments": {"city": "Paris"}}')  # the control character escaped
    assert caret.strip() == "^"
    # the caret stands under the first character that does not fit (the escaped \x01)
    assert shown[len(caret) - 1 :].startswith("\\x01")


def test_the_excerpt_leaves_out_the_prompt() -> None:
    from peg import combinators as p
    from peg.engine import parse

    result = parse(p.literal("PROMPT") + p.literal("ab") + p.literal("c"), "PROMPTabX")
    assert result.excerpt() == "PROMPTabX\n        ^"
    assert result.excerpt(origin=6) == "abX\n  ^"


def test_a_stream_never_shows_a_call_whose_block_does_not_read(files: dict[str, Path], tmp_path: Path) -> None:
    """A call is shown once its block is complete, its closer read: here the
    output breaks the format after the arguments, so the stream never shows
    the call and ends as the whole parse does (the block kept as text, exit 1)."""
    broken = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"} oops}\n</tool_call>'
    out = tmp_path / "broken.txt"
    out.write_text(broken)
    demo = str(PROJECT_TEMPLATES / "demo.jinja")
    whole = run_cli("parse", "--template", demo, "--tools", str(files["tools"]), "--json", str(out))
    assert whole.exit_code == 1 and json.loads(whole.stdout)["content"] == broken
    streamed = run_cli("parse", "--template", demo, "--tools", str(files["tools"]), "--json", "--stream", "--chunk", "3", str(out))
    assert streamed.exit_code == 1
    lines = [json.loads(line) for line in streamed.stdout.splitlines()]
    final = lines[-1]
    assert final["content"] == broken and "tool_calls" not in final
    # the deltas add up to that message: no call was ever shown
    assert "".join(line["delta"].get("content", "") for line in lines[:-1]) == broken
    assert not any(line["delta"].get("tool_calls") for line in lines[:-1])
    assert "the stream keeps what it showed" not in streamed.stderr


def test_a_type_json_schema_does_not_know_is_not_checked_and_says_so(tmp_path: Path) -> None:
    """"float" and "str" (Python's names) are no JSON Schema types: the call
    check skips those properties with a note and the exit status is the parse's."""
    tools = tmp_path / "tools.json"
    properties = {"city": {"type": "str"}, "temp": {"type": "float"}, "unit": {"type": "string"}}
    schema = {"type": "object", "properties": properties, "required": ["city"]}
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "get_weather", "parameters": schema}}]))
    out = tmp_path / "out.txt"
    out.write_text("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=temp>\n1.5\n</parameter>\n</function>\n</tool_call>")
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(tools), str(out), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["tool_calls"][0]["function"]["name"] == "get_weather"
    assert "properties.city has type 'str', properties.temp has type 'float', which JSON Schema does not know" in result.stderr
    assert "internal error" not in result.stderr
    out.write_text("<tool_call>\n<function=get_weather>\n<parameter=unit>\n7\n</parameter>\n</function>\n</tool_call>")
    wrong = run_cli("parse", "--template", str(TAGGED), "--tools", str(tools), str(out), "--json")  # the known types are still checked
    assert wrong.exit_code == 1 and "'city' is a required property" in wrong.stderr


def test_parse_notes_each_deviation_and_exits_0_but_a_cut_exits_1(files: dict[str, Path], tmp_path: Path) -> None:
    """Issue 43: every deviation the reading used is a note with its place; a cut is an error."""
    call = "<tool_call>\n<function=get_weather>\n<parameter=city>\n{}\n</parameter>\n</function>\n</tool_call>"
    between = tmp_path / "between.txt"
    text = call.format("Paris") + "\nAnd Lyon.\n" + call.format("Lyon")
    between.write_text(text)
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), "--json", str(between))
    assert result.exit_code == 0, result.stderr
    assert [c["function"]["arguments"] for c in json.loads(result.stdout)["tool_calls"]] == ['{"city": "Paris"}', '{"city": "Lyon"}']
    where = f"line 8, column 1 (offset {text.index('And Lyon.')})"
    assert f"note: the output deviates from the template's form: text between two calls at {where}" in result.stderr
    cut = tmp_path / "cut.txt"
    cut.write_text(call.format("Paris") + "\n<tool_call>\n<function=get_weather>\n<parameter=city>\nLy")
    result = run_cli("parse", "--template", str(TAGGED), "--tools", str(files["tools"]), "--json", str(cut))
    assert result.exit_code == 1 and "ends inside a tool call" in result.stderr and "note: the output deviates" not in result.stderr
    assert json.loads(result.stdout)["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'
