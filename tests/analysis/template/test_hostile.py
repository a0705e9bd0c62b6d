"""Hostile templates and bad input: limits that hold, one-line errors, nothing half-written.

Runaway tests use short limits (``AUTOPARSER_CPU_S=0.5``) so the suite stays fast;
``benchmarks/bench_hostile.py`` runs the same templates with the default limits
through the installed command and reports time and memory.
"""

from __future__ import annotations

import json
import struct
import threading
import time
from pathlib import Path

import pytest

from analysis.errors import RenderLimitError, TemplateSyntaxError
from analysis.template.loading import LoadedTemplate
from analysis.template.rendering import ChatTemplate, RenderRequest
from analysis.template.sandbox import RenderLimits
from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES, needs_gguf

#: the zoo-wide and fuzzing runs: left out of the fast loop (pytest -m 'not slow')
pytestmark = pytest.mark.slow

BIG = 1_000_000_000

#: name -> (template, a word the one-line error must hold)
HOSTILE: dict[str, tuple[str, str]] = {
    # constant folding at compile time (before any render watchdog could run)
    "slice_sum": ("{{ [1]|slice(1000000000)|sum(start=[]) }}", "limit"),
    "batch": ("{{ [1]|batch(1000000000, 0)|first|length }}", "limit"),
    # long C-level operations
    "power_tower": ("{{ ((10**1000)**1000)**1000 }}", "integer"),
    "int_product": ("{% set ns = namespace(n=10**900) %}{% for i in range(30) %}{% set ns.n = ns.n * ns.n %}{% endfor %}{{ ns.n }}", "integer"),
    "nested_repr": ("{% set ns = namespace(l=[]) %}{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}", "CPU"),
    "nested_eq": ("{% set ns = namespace(a=[], b=[]) %}{% for i in range(40) %}{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}{{ ns.a == ns.b }}", "CPU"),
    "tojson_indent": ("{{ messages|tojson(indent=1000000000) }}", "limit"),
    "ljust": ("{{ 'a'.ljust(1000000000, '😀') }}", "limit"),
    "center": ("{{ 'a'|center(1000000000) }}", "limit"),
    "indent": ("{{ 'a\nb'|indent(1000000000) }}", "limit"),
    "wordwrap": ("{{ 'a b'|wordwrap(1000000000) }}", "limit"),
    "format_padding": ("{{ '{:>1000000000}'.format('a') }}", "memory"),
    "percent_padding": ("{{ '%1000000000s'|format('a') }}", "memory"),
    "percent_operator": ("{{ '%1000000000s' % 'a' }}", "memory"),
    "python_loop": ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "CPU"),
    "recursion": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "recursion"),
    "string_doubling": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "limit"),
    # compile-time limits of Python and of the template's shape
    "int_literal": ("{{ 1" + "0" * 5000 + " }}", "compiled"),
    "nested_for": ("{% for i in [1] %}" * 21 + "x" + "{% endfor %}" * 21, "compiled"),
    "nested_if": ("{% if true %}" * 99 + "x" + "{% endif %}" * 99, "nests"),
    "chained_filters": ("{{ 'a'" + "|lower" * 200 + " }}", "nests"),
    "deep_parens": ("{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}", "nests"),
    # output that cannot be shown, or that leaks the process
    "lone_surrogate": ("{{ '\\ud800' }}", "surrogate"),
    "function_repr": ("{{ range }}", "Python object"),
    "method_repr": ("{{ messages.append }}", "Python object"),
    "class_repr": ("{{ cycler }}", "Python object"),
}


@pytest.fixture
def short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOPARSER_CPU_S", "0.5")
    monkeypatch.setenv("AUTOPARSER_TEMPLATE_CPU_S", "1.5")


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_template_is_stopped_with_one_line(name: str, tmp_path: Path, short_limits: None) -> None:
    source, word = HOSTILE[name]
    path = tmp_path / f"{name}.jinja"
    path.write_text(source, encoding="utf-8")
    start = time.process_time()
    err = assert_clean_error(run_cli("render", str(path)))
    assert time.process_time() - start < 3.0  # (CPU time here; the worker's own is its limit's)
    assert word in err, err
    assert f"{name}.jinja" in err


def test_oversized_template_is_refused_before_compiling(tmp_path: Path) -> None:
    path = tmp_path / "big.jinja"
    path.write_text("{{ messages }}" + "x" * 5_000_000, encoding="utf-8")
    start = time.process_time()
    err = assert_clean_error(run_cli("analyze", str(path)))
    assert time.process_time() - start < 2.0  # (CPU time: a loaded machine does not fail it)
    assert "over the limit of 256,000" in err


def test_memory_limit_holds_and_is_configurable() -> None:
    source = "{{ ('x' * 900000) * 1 }}{% set ns = namespace(l=[]) %}{% for i in range(300) %}{% set ns.l = ns.l + ['y' * 900000] %}{% endfor %}{{ ns.l|length }}"
    template = ChatTemplate(LoadedTemplate("mem.jinja", source), limits=RenderLimits(memory_mb=100, max_string_chars=10**9))
    with pytest.raises(RenderLimitError, match="100 MB"):
        template.render(RenderRequest([]))
    # the same template renders with room to spare
    roomy = ChatTemplate(LoadedTemplate("mem.jinja", source), limits=RenderLimits(memory_mb=1000, max_string_chars=10**9))
    assert roomy.render(RenderRequest([])).endswith("300")


def test_worker_recovers_after_a_runaway() -> None:
    limits = RenderLimits(cpu_s=0.3)
    with pytest.raises(RenderLimitError, match="CPU time in one render"):
        ChatTemplate(LoadedTemplate("loop.jinja", HOSTILE["python_loop"][0]), limits=limits).render(RenderRequest([]))
    ok = ChatTemplate(LoadedTemplate("ok.jinja", "{{ messages[0].content }}"), limits=limits)
    assert ok.render(RenderRequest([{"role": "user", "content": "still here"}])) == "still here"


def test_template_cpu_budget_bounds_a_whole_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ~0.15 s of CPU per render: every render is under the per-render limit, but
    # an analysis makes dozens of them.
    path = tmp_path / "slow.jinja"
    path.write_text("{% for i in range(20000) %}{% for j in range(30) %}{% endfor %}{% endfor %}{{ messages[0].content }}")
    monkeypatch.setenv("AUTOPARSER_TEMPLATE_CPU_S", "1")
    start = time.process_time()
    err = assert_clean_error(run_cli("analyze", str(path)))
    assert time.process_time() - start < 4.0  # (CPU time here; the renders' is the budget's)
    assert "CPU time in all" in err


def test_cpu_limit_is_not_wall_clock_under_many_threads() -> None:
    """16 threads analysing at once: renders queue for the worker, but only CPU
    time counts, so none of them times out."""
    from analysis.generation.analyzer import analyze_template

    source = (PROJECT_TEMPLATES / "demo.jinja").read_text(encoding="utf-8")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            template = ChatTemplate(LoadedTemplate("demo.jinja", source), limits=RenderLimits(cpu_s=0.2))
            analyze_template(template)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_limits_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert RenderLimits.from_env({"AUTOPARSER_CPU_S": "0.25", "AUTOPARSER_MEMORY_MB": "64"}) == RenderLimits(cpu_s=0.25, memory_mb=64)
    monkeypatch.setenv("AUTOPARSER_MEMORY_MB", "lots")
    err = assert_clean_error(run_cli("render"))
    assert "AUTOPARSER_MEMORY_MB='lots'" in err
    monkeypatch.setenv("AUTOPARSER_MEMORY_MB", "64")
    monkeypatch.setenv("AUTOPARSER_MAX_TEMPLATE_CHARS", "10")
    assert "over the limit of 10 " in assert_clean_error(run_cli("render"))


def test_compile_errors_carry_the_template_name() -> None:
    with pytest.raises(TemplateSyntaxError, match=r"deep\.jinja"):
        ChatTemplate(LoadedTemplate("deep.jinja", HOSTILE["nested_if"][0]))


# -- bad input ---------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


def _write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "option,command",
    [("--messages", "render"), ("--tools", "render"), ("--tools", "analyze"), ("--request", "parse"), ("--tools", "parse")],
)
def test_deeply_nested_json_options(option: str, command: str, tmp_path: Path) -> None:
    args = [command, option, _write(tmp_path, "deep.json", DEEP)]
    if command == "parse":
        args.append(_write(tmp_path, "out.txt", "hello"))
    err = assert_clean_error(run_cli(*args))
    assert "deep.json" in err and "nests" in err


def test_moderately_deep_json_is_refused_before_it_reaches_a_template(tmp_path: Path) -> None:
    deep = json.dumps([{"role": "user", "content": "x", "meta": json.loads("[" * 500 + "]" * 500)}])
    err = assert_clean_error(run_cli("render", "--messages", _write(tmp_path, "m.json", deep)))
    assert "deeper than 100 levels" in err


def test_deep_json_schema_and_tokenizer_config(tmp_path: Path) -> None:
    request = '{"messages": [{"role": "user", "content": "hi"}], "json_schema": ' + DEEP + "}"
    err = assert_clean_error(run_cli("parse", "--request", _write(tmp_path, "r.json", request), _write(tmp_path, "o.txt", "x")))
    assert "nests" in err
    config = '{"chat_template": ' + DEEP + "}"
    assert "nests" in assert_clean_error(run_cli("analyze", _write(tmp_path, "tokenizer_config.json", config)))


def test_deep_kwarg() -> None:
    assert "nests" in assert_clean_error(run_cli("render", "--kwarg", "x=" + DEEP))


def test_lone_surrogate_in_messages(tmp_path: Path) -> None:
    path = _write(tmp_path, "m.json", '[{"role": "user", "content": "a\\ud800b"}]')
    err = assert_clean_error(run_cli("render", "--messages", path))
    assert "lone surrogate U+D800" in err and "$[0].content" in err


@pytest.mark.parametrize(
    "tools,message",
    [
        ("[1, 2]", "tool 0 must be an object"),
        ('[{"type": "function", "function": null}]', "'function' must be an object"),
        ('[{"type": "function", "function": {"parameters": {}}}]', "non-empty string 'name'"),
        ('[{"type": "function", "function": {"name": "f", "parameters": [1]}}]', "'parameters' must be a JSON schema object"),
        ('{"name": "f"}', "tools must be a JSON list"),
    ],
)
@pytest.mark.parametrize("command", ["render", "analyze", "parse"])
def test_malformed_tools(tools: str, message: str, command: str, tmp_path: Path) -> None:
    args = [command, "--tools", _write(tmp_path, "tools.json", tools)]
    if command == "parse":
        args.append(_write(tmp_path, "out.txt", "hello"))
    assert message in assert_clean_error(run_cli(*args))


def test_malformed_tools_in_request() -> None:
    from analysis.errors import InputError
    from analysis.parsers.request import ChatRequest

    with pytest.raises(InputError, match="request: tool 1 must be an object"):
        ChatRequest.from_json({"messages": [], "tools": [{"type": "function", "function": {"name": "f"}}, 7]})


@pytest.mark.parametrize(
    "line,message",
    [
        ('{"template": 5, "request": {}, "output": "", "expected": {}}', "'template' must be a str"),
        ('{"template": "t.jinja", "request": [], "output": "", "expected": {}}', "'request' must be a object"),
        ('{"template": "t.jinja", "request": {}, "output": null, "expected": {}}', "'output' must be a str"),
        ('{"template": "t.jinja", "request": {}, "output": "", "expected": {}, "partial": "yes"}', "'partial' must be a boolean"),
        ('{"template": "t.jinja", "request": {}, "output": "", "expected": {"tool_calls": 3}}', "expected.tool_calls"),
        ('{"template": "t.jinja", "request": {}, "output": "", "expected": {"content": 3}}', "expected.content"),
        ("[1]", "a case must be a JSON object"),
        (DEEP, "nests"),
    ],
)
def test_bad_case_lines(line: str, message: str, tmp_path: Path) -> None:
    path = _write(tmp_path, "cases.jsonl", line + "\n")
    err = assert_clean_error(run_cli("check", "--cases", path))
    assert "cases.jsonl:1" in err and message in err


def test_non_utf8_model_output(tmp_path: Path) -> None:
    err = assert_clean_error(run_cli("parse", _write(tmp_path, "out.txt", b"hello \xff world")))
    assert "not UTF-8" in err and "byte 6" in err


def test_non_utf8_stdin() -> None:
    from typer.testing import CliRunner

    from autoparser_cli.main import app

    result = CliRunner().invoke(app, ["parse", "-"], input=b"a\xffb")
    err = assert_clean_error(result)
    assert "stdin: not UTF-8" in err


@pytest.mark.parametrize("option", ["--junit", "--lock"])
def test_unwritable_output_path_fails_before_the_run(option: str, tmp_path: Path) -> None:
    target = tmp_path / "missing-folder" / "out.file"
    args = ["check", str(PROJECT_TEMPLATES / "demo.jinja"), option, str(target)]
    if option == "--lock":
        args.append("--update-lock")
    start = time.process_time()
    err = assert_clean_error(run_cli(*args))
    assert "does not exist" in err
    assert time.process_time() - start < 1.0  # refused before analysing anything (CPU time)
    assert not target.exists()


def test_output_files_are_written_whole(tmp_path: Path) -> None:
    lock = tmp_path / "a.lock"
    result = run_cli("check", str(PROJECT_TEMPLATES / "demo.jinja"), "--lock", str(lock), "--update-lock")
    assert result.exit_code == 0, result.output
    assert json.loads(lock.read_text())["templates"]
    assert [p.name for p in tmp_path.iterdir()] == ["a.lock"]  # no temporary file left behind


def _gguf(tmp_path: Path, value: object) -> Path:
    import gguf

    path = tmp_path / "model.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    if isinstance(value, str):
        writer.add_string("tokenizer.chat_template", value)
    else:
        writer.add_uint32("tokenizer.chat_template", 7)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


@needs_gguf
def test_gguf_template_that_is_not_a_string(tmp_path: Path) -> None:
    err = assert_clean_error(run_cli("render", str(_gguf(tmp_path, 7))))
    assert "is a uint32, expected a string" in err


@needs_gguf
@pytest.mark.parametrize("how", ["declared_longer", "cut_short"])
def test_corrupt_gguf_string_length(how: str, tmp_path: Path) -> None:
    path = _gguf(tmp_path, "{{ messages[0].content }}")
    data = path.read_bytes()
    at = data.index(b"{{ messages")
    if how == "declared_longer":
        data = data[: at - 8] + struct.pack("<Q", 10_025) + data[at:]
    else:
        data = data[: at + 5]
    path.write_bytes(data)
    err = assert_clean_error(run_cli("render", str(path)))
    assert "truncated or corrupt" in err


# -- check over a collection with hostile members ---------------------------------


def test_check_carries_on_past_hostile_templates(tmp_path: Path, short_limits: None) -> None:
    folder = tmp_path / "zoo"
    folder.mkdir()
    for name in ("python_loop", "power_tower", "nested_for", "function_repr", "format_padding"):
        (folder / f"{name}.jinja").write_text(HOSTILE[name][0], encoding="utf-8")
    (folder / "always_raises.jinja").write_text("{{ raise_exception('no conversation is good enough') }}")
    (folder / "demo.jinja").write_text((PROJECT_TEMPLATES / "demo.jinja").read_text())
    junit = tmp_path / "report.xml"
    result = run_cli("check", str(folder), "--json", "--junit", str(junit))
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert (report["templates"], report["passed"], report["failed"]) == (7, 1, 6)
    failed = {f["template"] for f in report["failures"]}
    assert "demo.jinja" not in failed and "always_raises.jinja" in failed
    reasons = {f["template"]: f["reason"] for f in report["failures"]}
    assert "renders no conversation" in reasons["always_raises.jinja"]
    assert junit.read_text().count("<failure") == 6
