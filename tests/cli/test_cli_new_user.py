"""What a new user hit on a fresh clone (file modes, checks that pass when they
should not, conflicting options, piped output, errors that point wrong, render
that shows exactly what the template does)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from analysis.userio import write_atomic
from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES, ZOO, needs_shared

DEMO = PROJECT_TEMPLATES / "demo.jinja"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


# --- 1. file modes ---------------------------------------------------------------------------


def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path: Path, umask_022: None) -> None:
    path = tmp_path / "new.json"
    write_atomic(path, "{}", "report")
    assert _mode(path) == 0o644
    os.umask(0o077)
    other = tmp_path / "private.json"
    write_atomic(other, "{}", "report")
    assert _mode(other) == 0o600


def test_a_replaced_file_keeps_its_mode(tmp_path: Path, umask_022: None) -> None:
    path = tmp_path / "kept.json"
    path.write_text("old")
    path.chmod(0o640)
    write_atomic(path, "new", "report")
    assert path.read_text() == "new" and _mode(path) == 0o640


def test_export_write_junit_and_lock_files_are_readable_by_others(tmp_path: Path, umask_022: None) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    config = folder / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": DEMO.read_text(), "eos_token": "<|im_end|>"}))
    config.chmod(0o664)
    assert run_cli("export", "--write", str(folder), "--no-verify").exit_code == 0
    assert "response_template" in json.loads(config.read_text()) and _mode(config) == 0o664
    out = tmp_path / "spec.json"
    assert run_cli("export", str(DEMO), "-o", str(out), "--no-verify").exit_code == 0
    assert _mode(out) == 0o644
    junit, lock = tmp_path / "report.xml", tmp_path / "check.lock"
    result = run_cli("check", str(DEMO), "--junit", str(junit), "--lock", str(lock), "--update-lock")
    assert result.exit_code == 0, result.stderr
    assert _mode(junit) == 0o644 and _mode(lock) == 0o644


# --- 2. check passes when it should not; 3. --update-lock after a failed run ------------------


@pytest.mark.parametrize("text", ["You are a bot.", "{# only a comment #}\n"])  # (an empty one: test_cli_new_user_2)
def test_a_template_that_renders_no_conversation_structure_fails_check(text: str, tmp_path: Path) -> None:
    path = tmp_path / "constant.jinja"
    path.write_text(text)
    result = run_cli("check", str(path), "--json")
    assert result.exit_code == 1, result.stdout
    report = json.loads(result.stdout)["results"][0]
    assert report["status"] == "failed" and "does not look like a chat template" in report["reason"]


def test_check_with_nothing_to_check_is_bad_input() -> None:
    err = assert_clean_error(run_cli("check"))
    assert "nothing to check" in err and "PATHS" in err


def test_check_with_a_pattern_that_matches_nothing_is_bad_input() -> None:
    err = assert_clean_error(run_cli("check", str(PROJECT_TEMPLATES), "-k", "nomatch"))
    assert "nothing matches -k 'nomatch'" in err
    assert run_cli("check", str(PROJECT_TEMPLATES), "-k", "demo").exit_code == 0


def test_update_lock_leaves_the_lock_file_when_the_run_fails(tmp_path: Path) -> None:
    folder = tmp_path / "coll"
    folder.mkdir()
    (folder / "demo.jinja").write_text(DEMO.read_text())
    lock = tmp_path / "check.lock"
    assert run_cli("check", str(folder), "--lock", str(lock), "--update-lock").exit_code == 0
    before = lock.read_text()
    (folder / "broken.jinja").write_text("You are a bot.")
    result = run_cli("check", str(folder), "--lock", str(lock), "--update-lock", width=200)
    assert result.exit_code == 1
    assert lock.read_text() == before and "left as it was" in result.stdout


# --- 4. every command that builds for a request takes the same request options ---------------


def test_grammar_takes_the_request_options_parse_takes() -> None:
    template = str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja")
    one = run_cli("grammar", template)
    several = run_cli("grammar", template, "--parallel-tool-calls")
    assert one.exit_code == several.exit_code == 0, several.stderr
    root = [line for line in several.stdout.splitlines() if line.startswith("root ::=")]
    assert root and root[0].endswith(")+") and root[0] not in one.stdout
    for option in ("--parallel-tool-calls", "--reasoning-format", "--enable-thinking", "--request", "--tools"):
        assert option in run_cli("grammar", "--help", width=200).stdout
        assert option in run_cli("parse", "--help", width=200).stdout
    for options in (["--no-enable-thinking"], ["--reasoning-format", "none"]):
        assert run_cli("grammar", template, *options).exit_code == 0
    assert "--reasoning-format 'x'" in assert_clean_error(run_cli("grammar", template, "--reasoning-format", "x"))


# --- 5. conflicting options are an error ------------------------------------------------------


def test_export_refuses_output_and_write_together(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": DEMO.read_text()}))
    out = tmp_path / "spec.json"
    err = assert_clean_error(run_cli("export", "-o", str(out), "--write", str(folder), "--no-verify"))
    assert "not both" in err and not out.exists()
    assert "response_template" not in json.loads((folder / "tokenizer_config.json").read_text())
    err = assert_clean_error(run_cli("export", str(DEMO), "--check", "-o", str(out)))
    assert "--check writes nothing" in err


# --- 6. piped output (a CI log): titles and summaries on one line, reasons in full -----------

LONG_NAME = "meta-llama-Llama-3.1-8B-Instruct-with-a-name-longer-than-a-log-line.jinja"


def test_piped_titles_and_summaries_never_wrap(tmp_path: Path) -> None:
    template = tmp_path / LONG_NAME
    template.write_text(DEMO.read_text())
    for command in ("analyze", "caps"):
        out = run_cli(command, str(template)).stdout  # (not a terminal: Rich's 80 columns)
        assert LONG_NAME in out.splitlines()[0], out[:300]
    broken = tmp_path / ("x" * 90 + ".jinja")
    broken.write_text("You are a bot.")
    result = run_cli("check", str(tmp_path), "--lock", str(tmp_path / "a-lock-file-with-a-long-name.lock"), "--update-lock")
    last = result.stdout.splitlines()[-1]
    assert last.startswith("2 templates, 0 cases:") and last.endswith("(the run failed)"), result.stdout[-400:]


def test_columns_is_honoured_and_a_failure_cell_is_never_cut(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jinja"
    broken.write_text("{% if x %}never closed")
    result = run_cli("check", str(tmp_path), width=250)
    table = result.stdout.split("broken.jinja\n  failed")[0]  # (the details under the table repeat it)
    assert "..." not in table and "…" not in table
    assert "closed is 'if'" in table  # (the reason's last words, in the status cell)
    wide = run_cli("analyze", str(DEMO), width=250).stdout
    assert max(len(line) for line in wide.splitlines()) > 80


# --- 7. a mistyped path is named as a missing file, not looked up on the Hub ------------------


@pytest.mark.parametrize("typed", ["coll/GLM-4.6.jinj", "elsewhere/GLM-4.6.jinja", "coll/GLM-4.6"])
def test_a_mistyped_path_says_the_file_does_not_exist(typed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "coll").mkdir()
    err = assert_clean_error(run_cli("analyze", typed))
    assert err == f"error: {typed}: no such file or folder", err


# --- 8. errors that point right ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "where"),
    [
        ("{{ a }} and {{ b }} some text {% if x }}y{% endif %}", "1:39"),  # the second '}', not the first
        ("{% for m in messages %}\n  {{ m.content }} {{ m.x | }} \n{% endfor %}", "2:28"),
        ("{%- if a -%}\n  {{- b -}} {% bad %}\n{%- endif %}", "2:16"),
        ("{% if x %}never closed", "1:23"),
        ("Hi {{ m.content }", "1:17"),
    ],
)
def test_a_syntax_error_points_at_the_token_the_parser_stopped_at(source: str, where: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jinja"
    bad.write_text(source)
    err = assert_clean_error(run_cli("analyze", str(bad)))
    assert f"bad.jinja:{where}: template syntax error" in err, err


def test_the_gguf_magic_is_reported_at_byte_zero(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGML" + b"\0" * 64)
    err = assert_clean_error(run_cli("caps", str(path)))
    assert "no GGUF magic (at byte 0)" in err, err
    path.write_bytes(b"GGUF" + (9).to_bytes(4, "little") + b"\0" * 64)
    assert "GGUF version 9 (2 and 3 are read) (at byte 4)" in assert_clean_error(run_cli("caps", str(path)))


TAGGED = str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja")
TOOLS = str(Path(__file__).parents[2] / "examples" / "tools.json")


def _parse(tmp_path: Path, output: str):
    path = tmp_path / "out.txt"
    path.write_text(output)
    return run_cli("parse", "--template", TAGGED, "--tools", TOOLS, str(path), "--json")


def test_parse_help_says_what_exit_1_keeps_and_each_case_keeps_it(tmp_path: Path) -> None:
    help_text = " ".join(run_cli("parse", "--help", width=200).stdout.split())
    assert "everything as content" not in help_text
    assert "the calls before it are kept" in help_text and "the call is kept as written" in help_text
    call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    # a call whose arguments do not fit the schema: exit 1, the call kept
    wrong = _parse(tmp_path, call.replace("<parameter=city>\nParis", "<parameter=unit>\nkelvin"))
    assert wrong.exit_code == 1 and json.loads(wrong.stdout)["tool_calls"][0]["function"]["name"] == "get_weather"
    # cut inside a second call: exit 1, the first call kept
    cut = _parse(tmp_path, call + "\n<tool_call>\n<function=get_weather>\n<parameter=city>\nLon")
    first = json.loads(cut.stdout)["tool_calls"][0]["function"]
    assert cut.exit_code == 1 and json.loads(first["arguments"]) == {"city": "Paris"}, cut.stdout
    assert "ends inside a tool call" in cut.stderr


# --- 9. render shows exactly what the template does; 10. bos/eos; 13. --kwarg ----------------

NO_SYSTEM = (
    "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
)


def test_render_messages_shows_the_templates_error_unless_adapt(tmp_path: Path) -> None:
    path = tmp_path / "nosys.jinja"
    path.write_text(NO_SYSTEM)
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]))
    err = assert_clean_error(run_cli("render", str(path), "--messages", str(messages)))
    assert "System role not supported" in err
    adapted = run_cli("render", str(path), "--messages", str(messages), "--adapt")
    assert adapted.exit_code == 0 and adapted.stdout.startswith("<user>") and "adapted" in adapted.stderr
    assert "--adapt needs --messages" in assert_clean_error(run_cli("render", str(path), "--adapt"))


def test_render_messages_never_merges_two_user_turns(tmp_path: Path) -> None:
    path = tmp_path / "alternate.jinja"
    path.write_text(
        "{% for m in messages %}{% if (m.role == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
        "<{{ m.role }}>{{ m.content }}{% endfor %}"
    )
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"role": "user", "content": "A"}, {"role": "user", "content": "B"}]))
    err = assert_clean_error(run_cli("render", str(path), "--messages", str(messages)))
    assert "roles must alternate" in err


def test_render_says_when_bos_token_is_empty_and_takes_it(tmp_path: Path) -> None:
    path = tmp_path / "bos.jinja"
    path.write_text(NO_SYSTEM)
    bare = run_cli("render", str(path))
    assert bare.exit_code == 0 and "bos_token" in bare.stderr and "--bos-token" in bare.stderr
    given = run_cli("render", str(path), "--bos-token", "<s>", "--eos-token", "</s>")
    assert given.exit_code == 0 and given.stdout.startswith("<s><user>") and "bos_token" not in given.stderr
    plain = tmp_path / "plain.jinja"
    plain.write_text("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}")
    assert "bos_token" not in run_cli("render", str(plain)).stderr  # (a template that writes none: no note)


@pytest.mark.parametrize("name", ["messages", "tools", "add_generation_prompt", "bos_token"])
def test_render_refuses_a_kwarg_that_names_a_render_argument(name: str) -> None:
    err = assert_clean_error(run_cli("render", str(DEMO), "--kwarg", f"{name}=x"))
    assert f"--kwarg {name}" in err and "render argument" in err
    assert run_cli("render", str(DEMO), "--kwarg", "custom_flag=true").exit_code == 0


# --- 12. a finished parse keeps every character that is not structure ------------------------


@needs_shared
@pytest.mark.parametrize(
    ("template", "output", "kept"),
    [
        # cut off after the call id: the id is the model's, as written
        ("Mistral-Small-3.2-24B-Instruct-2506.jinja", "[TOOL_CALLS]g[CALL_ID]qxfvnzjkh", "qxfvnzjkh"),
        # a channel harmony does not define: the message as written
        ("openai-gpt-oss-120b.jinja", "<|channel|>qxwddczrp<|message|>", "qxwddczrp"),
    ],
)
def test_a_finished_parse_keeps_every_character_that_is_not_structure(template: str, output: str, kept: str, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text(output)
    for stream in ([], ["--stream"]):
        result = run_cli("parse", "--template", str(ZOO / template), "--tools", TOOLS, str(path), "--json", *stream)
        message = json.loads(result.stdout.splitlines()[-1])
        assert kept in json.dumps(message), (stream, result.stdout)


def test_update_lock_without_lock_is_one_line_from_the_core() -> None:
    """Checked once, where the run is (the CLI had a copy of the check)."""
    err = assert_clean_error(run_cli("check", str(DEMO), "--update-lock"))
    assert err == "error: --update-lock needs --lock FILE"
