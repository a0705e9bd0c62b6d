"""What a new user hit on a fresh clone, round 2 (issue 45): a template that
recursed, closed pipes, options given beside nothing they act on, empty
templates, carets under wide characters, lock drift, ..."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES, ZOO, needs_shared

DEMO = PROJECT_TEMPLATES / "demo.jinja"
TAGGED = PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"

#: a Python-typed tool, as users write them ("str" is no JSON Schema type)
STR_TOOL = {
    "type": "function",
    "function": {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {"a": {"type": "str", "description": "x"}}}},
}

#: Hermes 2 Pro's json_to_python_type in short: a type it does not map is iterated, as a union
RECURSING = """{%- macro py_type(spec) %}
{%- if spec.type == "string" %}str
{%- elif spec.type is iterable %}
{%- for t in spec.type %}{{ py_type({"type": t}) }}{% endfor %}
{%- endif %}
{%- endmacro %}
{%- for tool in tools or [] %}{% for name, p in tool.function.parameters.properties.items() %}{{ name }}: {{ py_type(p) }}
{% endfor %}{% endfor %}
{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}
{%- if add_generation_prompt %}<|assistant|>{% endif %}"""


def test_a_template_that_recurses_on_the_request_says_so_with_its_macro_and_line(tmp_path: Path) -> None:
    template, tools = tmp_path / "recursing.jinja", tmp_path / "tools.json"
    template.write_text(RECURSING)
    tools.write_text(json.dumps([STR_TOOL]))
    err = assert_clean_error(run_cli("render", str(template), "--tools", str(tools)))
    assert err.splitlines() == ["error: recursing.jinja:4: the template recursed without end on this request: macro py_type calls itself"]


@needs_shared
def test_hermes_2_pro_recursing_on_a_str_type_names_its_macro(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([STR_TOOL]))
    template = ZOO / "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"
    err = assert_clean_error(run_cli("parse", "--template", str(template), "--tools", str(tools), "-", input="Hi"))
    assert ":22: the template recursed without end on this request: macro json_to_python_type calls itself" in err


def _run_into_closed_pipe(*args: str) -> tuple[int, str]:
    """Run ``autoparser ARGS`` with stdout a pipe whose reader is already gone
    (``| head -1`` once head has exited): its exit status and stderr."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "autoparser_cli", *args], stdout=write_end, stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(write_end)
    return done.returncode, done.stderr


@pytest.mark.slow  # (a Python run of its own: not the fast loop's)
def test_a_closed_pipe_is_quiet_and_exits_0() -> None:
    for args in (["analyze", str(TAGGED)], ["analyze", str(TAGGED), "--json"]):  # (Rich's output, and plain text)
        code, err = _run_into_closed_pipe(*args)
        assert (code, err) in ((0, ""), (-13, "")), (args, code, err)  # (-13: ended by SIGPIPE, 141 in a shell)


def test_parse_with_the_template_first_says_where_the_template_goes() -> None:
    out = Path(__file__).parents[2] / "examples" / "tagged_call.txt"
    err = assert_clean_error(run_cli("parse", str(TAGGED), str(out)))
    assert err == f"error: parse takes one OUTPUT; the template goes after --template: autoparser parse --template {TAGGED} {out}"


@pytest.mark.parametrize(
    "args, message",
    [
        (["render", "--adapt"], "--adapt needs --messages"),
        (["parse", "--chunk", "8", "-"], "--chunk needs --stream"),
        (["parse", "--open-arguments", "-"], "--open-arguments needs --stream"),
        (["grammar", "--partial"], "--partial needs --check"),
        (["grammar", "--check", "-", "--output-only"], "--output-only does nothing beside --check"),
        (["analyze", "--json", "--diffs"], "--diffs does nothing beside --json"),
        (["analyze", "--json", "--all"], "--all does nothing beside --json"),
        (["export", "--check", "--no-verify"], "--no-verify does nothing beside --check"),  # (the off side of a pair)
        (["check", str(DEMO), "--ignore", "raises"], "--ignore needs --lint"),
        (["check", str(DEMO), "--case", "x"], "--case needs --cases"),
        (["check", str(DEMO), "--templates", str(PROJECT_TEMPLATES)], "--templates needs --cases"),
    ],
)
def test_an_option_that_acts_only_beside_another_is_refused(args: list[str], message: str) -> None:
    assert message in assert_clean_error(run_cli(*args, input="Hi"))


def test_each_option_requirement_names_the_commands_own_parameters() -> None:
    import inspect

    from autoparser_cli import main
    from autoparser_cli.requires import EXCLUDES, REQUIRES

    commands = {c.callback.__name__: c.callback for c in main.app.registered_commands if c.callback}
    for table in (REQUIRES, EXCLUDES):
        for command, entries in table.items():
            parameters = inspect.signature(commands[command]).parameters
            assert all(option in parameters and other in parameters for option, other, _ in entries), command


def test_an_option_at_its_default_or_beside_what_it_needs_is_accepted() -> None:
    assert run_cli("parse", "--stream", "--chunk", "8", "-", input="Hi").exit_code == 0
    assert run_cli("parse", "--chunk", "4", "-", input="Hi").exit_code == 0  # (the default changes nothing)


def test_install_hints_name_a_command_that_works_from_the_checkout() -> None:
    """No registry serves the package "autoparser": every hint installs an
    extra from the checkout (pip install '.[gguf]')."""
    root = Path(__file__).parents[2]
    hints = []
    for package in ("analysis", "autoparser_cli", "peg"):
        for path in (root / package).rglob("*.py"):
            text = path.read_text()
            assert "autoparser[" not in text, path
            hints += [line for line in text.splitlines() if "pip install" in line]
    assert hints and all("pip install '.[" in line for line in hints), hints


@pytest.mark.slow  # (a pytest run of its own)
def test_the_gguf_tests_skip_cleanly_without_the_gguf_extra() -> None:
    """Without gguf and numpy (the gguf extra), the tests that write .gguf
    files are skipped, as the ../shared ones are, and the rest pass."""
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    files = ["tests/analysis/template/test_loading.py", "tests/analysis/template/test_hostile.py"]
    code = (
        "import sys; sys.modules['gguf'] = None; sys.modules['numpy'] = None; import pytest; "
        f"sys.exit(pytest.main(['-q', '-n', '0', '-p', 'no:cacheprovider', '-k', 'gguf', *{files!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-2000:]
    assert " skipped" in done.stdout and " failed" not in done.stdout and " error" not in done.stdout


@pytest.mark.parametrize(
    "command",
    [["analyze"], ["caps"], ["render"], ["lint"], ["grammar"], ["export"], ["parse", "-", "--template"]],
)
def test_an_empty_template_is_one_error_in_every_command(tmp_path: Path, command: list[str]) -> None:
    empty = tmp_path / "empty.jinja"
    empty.write_text(" \n")
    err = assert_clean_error(run_cli(*command, str(empty), input="Hi"))
    assert err == "error: empty.jinja: the template is empty"


def test_check_fails_an_empty_template_for_the_same_reason(tmp_path: Path) -> None:
    (tmp_path / "empty.jinja").write_text("")
    result = run_cli("check", str(tmp_path / "empty.jinja"), str(DEMO), "--json")
    assert result.exit_code == 1
    failed = [r for r in json.loads(result.stdout)["results"] if r["status"] == "failed"]
    assert [r["reason"] for r in failed] == ["empty.jinja: the template is empty"]


def test_the_error_caret_is_placed_by_display_width(capsys: pytest.CaptureFixture[str]) -> None:
    """Full-width characters take two columns: the caret goes under the
    character the parse stopped at, not one column per character."""
    from autoparser_cli.common import write_excerpt

    write_excerpt("東京😀 x\n    ^")  # (the library's caret: under the fifth character, "x")
    line, caret = capsys.readouterr().err.splitlines()
    assert line == "  東京😀 x" and caret == "  " + " " * 7 + "^"


def test_an_error_in_a_template_held_in_json_names_the_line_of_the_file(tmp_path: Path) -> None:
    broken = "{% for m in messages %}\n{{ m.content }}\n{% if x %}\n{% endfor %}"
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"bos_token": "<s>", "chat_template": broken}, indent=2))
    err = assert_clean_error(run_cli("analyze", str(config)))
    assert err.startswith("error: tokenizer_config.json:4:4: template syntax error")  # (the template's own line 4)
    assert err.endswith(f"(the template is the JSON string on line 3 of {config})")
    variants = [{"name": "default", "template": "{{ messages }}"}, {"name": "tool_use", "template": broken}]
    config.write_text(json.dumps({"chat_template": variants}, indent=2))
    err = assert_clean_error(run_cli("render", str(tmp_path), "--variant", "tool_use"))
    assert err.endswith(f"(the template is the JSON string on line 9 of {config})")
    plain = tmp_path / "t.jinja"
    plain.write_text(broken)
    assert "JSON string" not in assert_clean_error(run_cli("render", str(plain)))


def test_grammar_check_shows_where_and_hints_when_the_output_does_not_fit(tmp_path: Path) -> None:
    tools = Path(__file__).parents[2] / "examples" / "tools.json"
    out = tmp_path / "out.txt"
    out.write_text('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>')  # JSON where the template writes tags
    result = run_cli("grammar", str(TAGGED), "--tools", str(tools), "--check", str(out))
    assert result.exit_code == 1
    err = result.stderr.splitlines()
    assert err[0].startswith("error: does not fit at line 2, column 1")
    assert err[1:3] == ['  {"name": "get_weather", "arguments": {"city": "Paris"}}', "  ^"]
    assert err[3].startswith("hint: ") and "autoparser parse, with the same options" in err[3]  # (whether the parser reads it: the parser's leniency)
    call = "<tool_call>\n<function=get_weather>\n<parameter=city>\n{}\n</parameter>\n</function>\n</tool_call>"
    out.write_text(call.format("Paris") + "\n" + call.format("Rome"))  # two calls, one allowed
    result = run_cli("grammar", str(TAGGED), "--tools", str(tools), "--check", str(out))
    assert result.exit_code == 1 and "hint: the model wrote 2 tool calls but parallel_tool_calls is off" in result.stderr


@pytest.mark.parametrize(
    "args",
    [["analyze", str(TAGGED), "--diffs", "--all"], ["caps", str(DEMO)], ["check", str(DEMO)], ["lint", str(PROJECT_TEMPLATES / "tests" / "lint" / "call_ids_defect.jinja")]],
)
def test_piped_output_has_no_trailing_spaces(args: list[str]) -> None:
    result = run_cli(*args, width=120)
    assert result.stdout.strip()
    assert [line for line in result.stdout.splitlines() if line.endswith(" ")] == []


def test_the_cli_tests_build_the_click_command_once() -> None:
    """Typer builds the click command from the signatures and type hints at each
    invoke: the tests build it once per process (the fast loop's largest cost)."""
    import typer.testing

    from autoparser_cli.main import app

    assert typer.testing._get_command(app) is typer.testing._get_command(app)  # type: ignore[attr-defined]


def test_the_fast_loop_leaves_out_the_runs_of_a_process_of_their_own() -> None:
    """A test that starts a pytest run of its own is slow; so are the zoo-wide round trips."""
    from tests.analysis.checks import test_round_trip

    slow = {m.name for m in getattr(test_the_gguf_tests_skip_cleanly_without_the_gguf_extra, "pytestmark", [])}
    zoo = {m.name for m in getattr(test_round_trip.test_zoo_template_reads_its_own_rendering, "pytestmark", [])}
    assert "slow" in slow and "slow" in zoo
