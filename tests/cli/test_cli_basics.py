"""CLI basics: version, help, render exactness, caps output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES


def test_version() -> None:
    result = run_cli("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("autoparser ")


def test_help_lists_commands_with_examples() -> None:
    result = run_cli("--help")
    assert result.exit_code == 0
    for command in ("render", "caps"):
        assert command in result.stdout
        sub = run_cli(command, "--help")
        assert sub.exit_code == 0 and "Example:" in sub.stdout


def test_render_prints_markup_like_text_exactly(tmp_path: Path) -> None:
    template = tmp_path / "mistral.jinja"
    template.write_text("{% for m in messages %}[INST]{{ m.content }}[/INST][bold]x[/bold]{% endfor %}")
    result = run_cli("render", str(template), "--messages", str(_messages(tmp_path)))
    assert result.exit_code == 0
    assert result.stdout == "[INST]Hi [b]there[/b][/INST][bold]x[/bold]"


def _messages(tmp_path: Path) -> Path:
    path = tmp_path / "m.json"
    path.write_text(json.dumps([{"role": "user", "content": "Hi [b]there[/b]"}]))
    return path


def test_render_default_demo_and_variables(tmp_path: Path) -> None:
    result = run_cli("render", "--no-enable-thinking")
    assert result.exit_code == 0
    assert result.stdout.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    template = tmp_path / "k.jinja"
    template.write_text("{{ answer }}-{{ flag }}-{{ strftime_now('%Y') | length }}")
    result = run_cli("render", str(template), "--kwarg", "answer=42", "--kwarg", "flag=true")
    assert result.stdout == "42-True-4"


def test_render_adapt_polyfills_system_role_for_templates_without_it(tmp_path: Path) -> None:
    template = tmp_path / "nosys.jinja"
    template.write_text(
        "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    )
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]))
    result = run_cli("render", str(template), "--messages", str(messages), "--adapt")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "<user>Be brief.\n\nHi"


def test_caps_json() -> None:
    result = run_cli("caps", "--json")
    assert result.exit_code == 0
    flags = json.loads(result.stdout)
    switches = flags.pop("reasoning_switches")
    assert len(flags) == 8 and flags["supports_tool_calls"] is True and flags["supports_typed_content"] is False
    assert switches == [{"name": "enable_thinking", "changes_prompt": True, "changes_history": False}]


def test_short_help_option() -> None:
    for args in (["-h"], ["check", "-h"], ["parse", "-h"]):
        result = run_cli(*args)
        assert result.exit_code == 0 and "Usage: autoparser" in result.stdout, args


def test_gguf_without_the_optional_package(tmp_path, monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_gguf(name, *args, **kwargs):
        if name == "gguf":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_gguf)
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    err = assert_clean_error(run_cli("render", str(path)))
    assert "(the gguf extra: pip install '.[gguf]' in the checkout)" in err


SCENARIO_TEMPLATE = (
    "{% for m in messages %}[{{ m.role }}]"
    "{% if m.reasoning_content %}(think:{{ m.reasoning_content }}){% endif %}"
    "{{ m.content }}"
    "{% for c in m.tool_calls or [] %}(call:{{ c.function.name }} {{ c.function.arguments|tojson }}){% endfor %}"
    "{% endfor %}"
)


def test_render_scenarios(tmp_path: Path) -> None:
    path = tmp_path / "t.jinja"
    path.write_text(SCENARIO_TEMPLATE)
    expected = {
        "content_only": "[assistant]It is sunny in Paris.",
        "reasoning_content": "[assistant](think:The user wants the weather in Paris; the tool can tell.)It is sunny in Paris.",
        "tool_call_only": '[assistant](call:get_weather {"city": "Paris"})',
        "content_tool_call": '[assistant]Let me check the weather.(call:get_weather {"city": "Paris"})',
        "reasoning_tool_call": '[assistant](think:The user wants the weather in Paris; the tool can tell.)(call:get_weather {"city": "Paris"})',
    }
    for name, tail in expected.items():
        result = run_cli("render", str(path), "--scenario", name)
        assert result.exit_code == 0, result.stderr
        assert result.stdout == "[user]What is the weather in Paris?" + tail, name
    every = run_cli("render", str(path), "--scenario", "all").stdout
    assert [line[3:-3] for line in every.splitlines() if line.startswith("── ")] == list(expected)
    assert "--scenario 'nope'" in assert_clean_error(run_cli("render", str(path), "--scenario", "nope"))
    messages = tmp_path / "m.json"
    messages.write_text("[]")
    assert "not both" in assert_clean_error(run_cli("render", str(path), "--scenario", "all", "--messages", str(messages)))


def test_render_says_when_it_adapted_the_conversation(tmp_path: Path) -> None:
    path = tmp_path / "nosys.jinja"
    path.write_text(
        "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    )
    result = run_cli("render", str(path))
    assert result.exit_code == 0
    assert result.stderr.strip() == (
        "note: the template rejected the conversation (line 1: template raised: System role not supported); "
        "rendered it adapted to the template's capabilities"
    )
    assert result.stdout.startswith("<user>")


def test_help_uses_named_placeholders_and_paragraphs() -> None:
    out = run_cli("check", "--help", width=120).stdout
    for text in ("--lock FILE", "--templates DIR", "--shard I/N", "-j, --jobs N", "-k PATTERN", "--case ID"):
        assert text in out, text
    assert "<str>" not in out.split("Options:")[1] and "<path>" not in out.split("Options:")[1]
    parse_help = run_cli("parse", "--help", width=120).stdout
    assert "\n\n  Exit status:" in parse_help  # its own paragraph


def test_parse_never_sends_control_characters_to_the_terminal(tmp_path: Path) -> None:
    out = tmp_path / "o.txt"
    out.write_text("hi \x1b[31mred\x1b]0;title\x07 \r done")
    result = run_cli("parse", "--template", str(PROJECT_TEMPLATES / "demo.jinja"), str(out))
    assert result.exit_code == 0
    assert not any(ch in result.stdout for ch in "\x1b\x07\r")
    assert "\\x1b[31mred" in result.stdout
    as_json = run_cli("parse", "--template", str(PROJECT_TEMPLATES / "demo.jinja"), str(out), "--json")
    assert json.loads(as_json.stdout)["content"] == out.read_bytes().decode()  # JSON keeps the text exactly


@pytest.mark.slow  # (a Python run of its own: not the fast loop's)
def test_help_comes_from_the_cache_after_the_first_time(tmp_path, monkeypatch, capsys) -> None:
    """``autoparser --help`` answers without importing Typer once it has been
    written: the same text, kept under a key with the help's width."""
    import os
    import subprocess
    import sys

    from autoparser_cli import launch

    def typer_help(columns: str, *command: str) -> str:  # what Typer itself writes, in a process of its own
        env = dict(os.environ, COLUMNS=columns, AUTOPARSER_NO_CACHE="1")
        code = f"import sys; sys.argv = ['autoparser', *{list(command)!r}, '--help']; from autoparser_cli.main import app; app()"
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout

    monkeypatch.setenv("AUTOPARSER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    # (click names the program "python -m pytest.autoparser" under `python -m pytest -n 0`, whose __main__ is pytest's)
    monkeypatch.setattr(sys.modules["__main__"], "__package__", None, raising=False)
    expected = typer_help("80")
    assert expected.startswith("Usage: autoparser")
    for args in (["--help"], ["-h"], ["--help"]):
        monkeypatch.setattr(sys, "argv", ["autoparser", *args])
        launch.main()
        assert capsys.readouterr().out == expected
    assert len(list((tmp_path / "help").iterdir())) == 1
    monkeypatch.setenv("COLUMNS", "60")  # narrower: another text, another entry
    launch.main()
    assert capsys.readouterr().out == typer_help("60")
    assert len(list((tmp_path / "help").iterdir())) == 2
    for args in (["parse", "--help"], ["parse", "-h"]):  # a command's help too
        monkeypatch.setattr(sys, "argv", ["autoparser", *args])
        launch.main()
        assert capsys.readouterr().out == typer_help("60", "parse")
    assert len(list((tmp_path / "help").iterdir())) == 3
    monkeypatch.setattr(sys, "argv", ["autoparser", "--help"])
    monkeypatch.setenv("AUTOPARSER_NO_CACHE", "1")
    monkeypatch.setenv("COLUMNS", "70")
    launch.main()
    assert capsys.readouterr().out.startswith("Usage: autoparser")
    assert len(list((tmp_path / "help").iterdir())) == 3


@pytest.mark.slow  # (a Python run of its own: not the fast loop's)
def test_version_and_help_do_not_import_typer(tmp_path) -> None:
    import os
    import subprocess
    import sys

    env = dict(os.environ, AUTOPARSER_CACHE_DIR=str(tmp_path))
    probe = "import sys; from autoparser_cli import launch; sys.argv = ['autoparser', {!r}]; launch.main(); print('typer' in sys.modules)"
    subprocess.run([sys.executable, "-c", probe.format("--help")], env=env, capture_output=True, check=True)  # written once
    for arg in ("--version", "--help"):
        out = subprocess.run([sys.executable, "-c", probe.format(arg)], env=env, capture_output=True, text=True, check=True).stdout
        assert out.splitlines()[-1] == "False", arg


def test_each_command_is_a_module_of_its_own() -> None:
    """main.py holds the app and its global options; each command lives in
    autoparser_cli/cmd_<command>.py, listed in --help in the same order."""
    from autoparser_cli.main import app

    names = [c.callback.__name__ for c in app.registered_commands if c.callback]
    assert names == ["render", "caps", "analyze", "grammar", "parse", "check", "lint", "export"]
    for command in app.registered_commands:
        assert command.callback is not None
        assert command.callback.__module__ == f"autoparser_cli.cmd_{command.callback.__name__}"
    main = Path(__file__).parents[2] / "autoparser_cli" / "main.py"
    assert len(main.read_text().splitlines()) < 100
