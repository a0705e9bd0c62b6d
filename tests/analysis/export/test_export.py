"""``autoparser export``: the inferred parser as a Hugging Face ``response_template``,
read back by transformers' own parser (issue 23).

The zoo test exports every zoo template and has transformers 5.23 read the
template's round-trip probes: each reads exactly as autoparser does, or the
template is listed below with the reason the spec cannot express it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from analysis.checks.hf_compare import Agreement, export_checked
from analysis.errors import ExportError
from analysis.export.spec_writer import response_template
from analysis.export.tokenizer_config import (
    dump_like,
    read_response_template,
    write_response_template,
)
from analysis.fixtures import WEATHER_TOOL
from analysis.generation.generator import AutoParser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES, ZOO, needs_shared, zoo_templates

REQUEST = ChatRequest([{"role": "user", "content": "Hello"}], tools=[WEATHER_TOOL])

#: zoo templates the spec cannot express: export exits 1 and says why (a fragment of the reason)
CANNOT = {
    "Apertus-8B-Instruct.jinja": "the name is a key",
    "LFM2-8B-A1B.jinja": "Python function calls",
    "LFM2.5-8B-A1B.jinja": "Python function calls",
    "LFM2.5-Instruct.jinja": "Python function calls",
}
#: zoo templates whose own renders transformers reads differently: export exits 1 naming the probes and the cause
READS_DIFFERENTLY = {
    # <parameter=flags>[True, None, 'a']</parameter>: Python literals in tagged values
    "ByteDance-Seed-OSS.jinja": ("typed values",),
    # flags:[true,None,<|"|>a<|"|>]: the template writes None inside its JSON-like values
    "gemma4.jinja": ("typed values",),
    "google-gemma-4-31B-it.jinja": ("typed values",),
    "google-gemma-4-31B-it-interleaved.jinja": ("typed values",),
}

hf = pytest.importorskip  # (named for the tests that need transformers' parser)


def _parser(path: Path) -> AutoParser:
    return AutoParser(ChatTemplate(load_template(path, has_tools=True), clock=FROZEN_CLOCK))


# --- transformers reads the exported templates as autoparser does --------------------------


@pytest.mark.slow
@needs_shared
@pytest.mark.parametrize("path", zoo_templates(), ids=lambda p: p.name)
def test_every_zoo_template_exports_or_says_why(path: Path) -> None:
    hf("transformers.utils.chat_parsing")
    parser = _parser(path)
    if path.name in CANNOT:
        with pytest.raises(ExportError, match=CANNOT[path.name]):
            export_checked(parser, REQUEST)
        return
    report = export_checked(parser, REQUEST)
    assert not report.unverified
    differ = tuple(r.probe for r in report.differences)
    assert differ == READS_DIFFERENTLY.get(path.name, ()), [r.detail for r in report.differences]
    assert any(r.agreement is Agreement.SAME for r in report.readings)
    if differ:
        assert "Python literals" in report.difference_line()


@pytest.mark.slow
@needs_shared
def test_at_least_50_zoo_templates_with_calls_read_the_same() -> None:
    """Issue 23's bar: 50 zoo templates with tool calls, every probe read alike."""
    hf("transformers.utils.chat_parsing")
    same = 0
    for path in zoo_templates():
        parser = _parser(path)
        if parser.analysis.tools.format.mode.value == "NONE" or path.name in CANNOT or path.name in READS_DIFFERENTLY:
            continue
        report = export_checked(parser, REQUEST)
        calls = [r for r in report.readings if r.probe == "one call"]
        if calls and calls[0].agreement is Agreement.SAME and not report.differences:
            same += 1
    assert same >= 50, same


@pytest.mark.parametrize("name", ["demo.jinja", "tests/json_array_ids.jinja", "tests/tag_json_call_id.jinja", "tests/wrapped_tools_only.jinja", "tests/recipient_calls.jinja", "tests/bracketed_markers.jinja"])
def test_project_templates_read_the_same(name: str) -> None:
    hf("transformers.utils.chat_parsing")
    report = export_checked(_parser(PROJECT_TEMPLATES / name), REQUEST)
    assert report.readings and not report.differences, [r.detail for r in report.differences]


def test_python_literal_arguments_read_differently_and_say_why() -> None:
    """{'city': 'Paris'} from a template that prints a dict: no content parser reads it."""
    hf("transformers.utils.chat_parsing")
    report = export_checked(_parser(PROJECT_TEMPLATES / "tests" / "python_args.jinja"), REQUEST)
    assert "one call" in [r.probe for r in report.differences]
    assert "Python literals" in report.difference_line()


# --- streaming: what engines do with the spec ---------------------------------------------


@pytest.mark.parametrize("name", ["demo.jinja", "tests/tag_json_call_id.jinja"])
def test_the_exported_template_streams_as_it_parses(name: str) -> None:
    """transformers' streaming parser, fed the probes in random chunks, ends with the whole parse."""
    chat_parsing = hf("transformers.utils.chat_parsing")
    from analysis.checks.round_trip import ProbeStatus, round_trips

    parser = _parser(PROJECT_TEMPLATES / name)
    spec = response_template(parser.generate(REQUEST))
    rng = random.Random(7)
    for trip in round_trips(parser):
        if trip.status is not ProbeStatus.OK:
            continue
        whole = chat_parsing.parse_response(trip.text, spec, prefix=trip.prompt, tools=list(trip.tools))
        for _ in range(5):
            stream = chat_parsing.ResponseParser(spec, prefix=trip.prompt, tools=list(trip.tools))
            at = 0
            while at < len(trip.text):
                step = rng.randint(1, 6)
                stream.feed(trip.text[at : at + step])
                at += step
            assert stream.finalize()[0] == whole, (trip.probe, trip.text)


@pytest.mark.slow
@needs_shared
@pytest.mark.parametrize("path", [p for p in zoo_templates() if p.name not in CANNOT], ids=lambda p: p.name)
def test_zoo_exports_stream_as_they_parse(path: Path) -> None:
    """Character by character, as an engine streams tokens: the open and close
    patterns commit only when complete (a ``\\Z`` or an optional trailing
    marker in a close pattern would commit early)."""
    chat_parsing = hf("transformers.utils.chat_parsing")
    from analysis.checks.round_trip import ProbeStatus, round_trips

    parser = _parser(path)
    spec = response_template(parser.generate(REQUEST))
    for trip in round_trips(parser):
        if trip.status is not ProbeStatus.OK:
            continue
        try:
            whole = chat_parsing.parse_response(trip.text, spec, prefix=trip.prompt, tools=list(trip.tools))
        except ValueError:
            continue  # (a probe transformers cannot read at all: listed in READS_DIFFERENTLY)
        stream = chat_parsing.ResponseParser(spec, prefix=trip.prompt, tools=list(trip.tools))
        for ch in trip.text:
            stream.feed(ch)
        assert stream.finalize()[0] == whole, (trip.probe, trip.text)


# --- formats the spec cannot express -----------------------------------------------------------


def test_pythonic_calls_cannot_be_expressed() -> None:
    parser = _parser(PROJECT_TEMPLATES / "tests" / "pythonic_list.jinja")
    with pytest.raises(ExportError, match="Python function calls"):
        response_template(parser.generate(REQUEST))


def test_export_of_an_inexpressible_format_exits_1_with_one_line() -> None:
    result = run_cli("export", str(PROJECT_TEMPLATES / "tests" / "pythonic_list.jinja"))
    assert "Python function calls" in assert_clean_error(result, 1)
    assert result.stdout == ""


def test_export_that_reads_differently_is_not_written(tmp_path: Path) -> None:
    hf("transformers.utils.chat_parsing")
    out = tmp_path / "rt.json"
    result = run_cli("export", str(PROJECT_TEMPLATES / "tests" / "python_args.jinja"), "-o", str(out))
    line = assert_clean_error(result, 1)
    assert "probes differently" in line and "one call" in line
    assert not out.exists()
    forced = run_cli("export", str(PROJECT_TEMPLATES / "tests" / "python_args.jinja"), "-o", str(out), "--no-verify")
    assert forced.exit_code == 0 and json.loads(out.read_text())["version"] == 1


# --- the CLI: stdout, -o, --check, --write, check ----------------------------------------------


def test_export_prints_a_template_transformers_loads() -> None:
    chat_parsing = hf("transformers.utils.chat_parsing")
    result = run_cli("export")
    assert result.exit_code == 0, result.stderr
    spec = json.loads(result.stdout)
    message = chat_parsing.parse_response(
        '<think>plan</think>Hi<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>',
        spec,
        prefix="<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    )
    assert message["thinking"] == "plan" and message["content"] == "Hi"
    assert message["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": {"city": "Paris"}}


def test_export_check_reports_each_probe() -> None:
    hf("transformers.utils.chat_parsing")
    result = run_cli("export", "--check", width=160)
    assert result.exit_code == 0, result.stderr
    for probe in ("one call", "two calls", "typed values", "reply", "reasoning"):
        assert probe in result.stdout
    assert "different" not in result.stdout


def _model_folder(tmp_path: Path, template: Path, **extra: Any) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    config = {"bos_token": None, "chat_template": template.read_text(), "eos_token": "<|im_end|>", **extra}
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=4) + "\n")
    return folder


def test_write_then_check_passes(tmp_path: Path) -> None:
    hf("transformers.utils.chat_parsing")
    folder = _model_folder(tmp_path, PROJECT_TEMPLATES / "demo.jinja", model_max_length=4096)
    before = json.loads((folder / "tokenizer_config.json").read_text())
    result = run_cli("export", "--write", str(folder))
    assert result.exit_code == 0, result.stderr
    after = json.loads((folder / "tokenizer_config.json").read_text())
    assert list(after) == list(before) + ["response_template"]
    assert {k: v for k, v in after.items() if k != "response_template"} == before
    checked = run_cli("check", str(folder), "--json")
    assert checked.exit_code == 0, checked.stdout
    readings = json.loads(checked.stdout)["results"][0]["response_template"]
    assert readings and all(r["agreement"] in ("same", "skipped") for r in readings)


def test_check_reports_a_wrong_hand_written_template_probe_by_probe(tmp_path: Path) -> None:
    hf("transformers.utils.chat_parsing")
    folder = _model_folder(tmp_path, PROJECT_TEMPLATES / "demo.jinja")
    spec = response_template(_parser(PROJECT_TEMPLATES / "demo.jinja").generate(REQUEST))
    spec["fields"]["thinking"]["close"] = "</thinking>"  # a publisher's typo
    write_response_template(folder, spec)
    result = run_cli("check", str(folder), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)["results"][0]
    differ = {r["probe"] for r in report["response_template"] if r["agreement"] == "different"}
    assert "reasoning" in differ and "one call" not in differ
    assert "response_template (reasoning)" in report["reason"]


def test_check_names_a_response_template_transformers_refuses(tmp_path: Path) -> None:
    hf("transformers.utils.chat_parsing")
    folder = _model_folder(tmp_path, PROJECT_TEMPLATES / "demo.jinja", response_template={"version": 1, "fields": {}})
    result = run_cli("check", str(folder), "--json")
    assert result.exit_code == 1
    assert "transformers refuses it" in json.loads(result.stdout)["results"][0]["reason"]


def test_write_needs_a_tokenizer_config(tmp_path: Path) -> None:
    result = run_cli("export", str(PROJECT_TEMPLATES / "demo.jinja"), "--write", str(tmp_path))
    assert "no tokenizer_config.json" in assert_clean_error(result, 2)


# --- tokenizer_config.json keeps its style -----------------------------------------------------


@pytest.mark.parametrize(
    "original",
    [
        '{\n  "a": 1,\n  "b": "x"\n}\n',
        '{\n    "a": 1,\n    "b": "x"\n}',
        '{\n\t"a": 1,\n\t"b": "x"\n}\n',
        '{"a": 1, "b": "x"}',
        '{\r\n  "a": 1,\r\n  "b": "x"\r\n}\r\n',
    ],
    ids=["2 spaces", "4 spaces, no final newline", "tabs", "one line", "CRLF"],
)
def test_dump_like_keeps_the_file_style(original: str) -> None:
    data = json.loads(original)
    assert dump_like(original, data) == original  # the same data writes the same bytes
    changed = dump_like(original, {**data, "response_template": {"version": 1}})
    assert json.loads(changed)["response_template"] == {"version": 1}
    assert changed.endswith("\n") == original.endswith("\n") and ("\r\n" in changed) == ("\r\n" in original)


def test_dump_like_keeps_non_ascii_as_the_file_writes_it() -> None:
    assert "\\u00ce" in dump_like('{\n  "a": "\\u00cele"\n}', {"a": "Île", "b": "é"})
    assert "Île" in dump_like('{\n  "a": "Île"\n}', {"a": "Île"})


def test_write_replaces_a_response_template_in_place(tmp_path: Path) -> None:
    (tmp_path / "tokenizer_config.json").write_text('{\n  "a": 1,\n  "response_template": {"old": true},\n  "z": 2\n}\n')
    write_response_template(tmp_path, {"version": 1, "fields": {}})
    data = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert list(data) == ["a", "response_template", "z"] and data["response_template"] == {"version": 1, "fields": {}}
    assert read_response_template(tmp_path / "tokenizer_config.json") == {"version": 1, "fields": {}}
    assert read_response_template(tmp_path / "other.jinja") is None


@needs_shared
@pytest.mark.parametrize("name", ["vllm-tool-xlam_llama.jinja", "vllm-tool-xlam_qwen.jinja"])
def test_a_bare_json_array_of_calls_reads_the_same(name: str) -> None:
    """xLAM writes the turn as a JSON array of calls with no marker: the open pattern looks ahead for [{"name"."""
    hf("transformers.utils.chat_parsing")
    report = export_checked(_parser(ZOO.parent / "templates-more" / name), REQUEST)
    assert "one call" in [r.probe for r in report.readings if r.agreement is Agreement.SAME]
    assert not report.differences


# --- without transformers ------------------------------------------------------------------------


def test_without_transformers_export_writes_and_says_it_was_not_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    import analysis.checks.hf_compare as hf_compare

    monkeypatch.setattr(hf_compare, "transformers_missing", lambda: "reading with transformers needs transformers >= 5.23")
    result = run_cli("export")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["version"] == 1
    assert "not read back by transformers" in result.stderr
    checked = run_cli("export", "--check")
    assert "needs transformers" in assert_clean_error(checked, 1)


def test_without_transformers_check_of_a_response_template_fails_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import analysis.checks.checking as checking

    folder = _model_folder(tmp_path, PROJECT_TEMPLATES / "demo.jinja", response_template={"version": 1, "fields": {"content": {}}})
    monkeypatch.setattr(checking, "transformers_missing", lambda: "reading with transformers needs transformers >= 5.23")
    result = run_cli("check", str(folder), "--json", "--jobs", "1")
    assert result.exit_code == 1
    assert "cannot be checked: reading with transformers needs" in json.loads(result.stdout)["results"][0]["reason"]
