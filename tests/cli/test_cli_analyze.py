"""``autoparser analyze``: tables, JSON, diffs and clean errors."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES, SHARED, ZOO, needs_shared


def test_analyze_json_on_the_demo_is_only_json() -> None:
    result = run_cli("analyze", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    # (the demo writes an empty block with thinking off, none with it on: the model opens its own)
    assert data["reasoning"] == {"mode": "TAG_BASED", "start": "<think>\n", "end": "\n</think>\n\n", "switched": True, "always": False}
    assert data["tools"]["format"]["per_call_start"] == "<tool_call>\n"
    assert data["generation_prompt"] == "<|im_start|>assistant\n"


def test_analyze_no_enable_thinking_changes_the_generation_prompt() -> None:
    data = json.loads(run_cli("analyze", "--json", "--no-enable-thinking").stdout)
    assert data["generation_prompt"].endswith("<think>\n\n</think>\n\n")
    assert data["reasoning_prefill"] == "OPENED_AND_CLOSED"


def test_analyze_tables_show_markers_visibly() -> None:
    result = run_cli("analyze", str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"))
    assert result.exit_code == 0, result.stderr
    for text in ("Reasoning", "TAG_WITH_TAGGED", "<parameter=", "</parameter>↵", "↵</think>↵↵"):
        assert text in result.stdout


def test_analyze_diffs_shows_every_comparison() -> None:
    result = run_cli("analyze", str(PROJECT_TEMPLATES / "tests" / "json_array_ids.jinja"), "--diffs")
    assert result.exit_code == 0, result.stderr
    for name in ("R1 reasoning presence", "T1 no call vs one call", "T2 one call vs two calls", "generation prompt"):
        assert name in result.stdout
    assert "{+[TOOL_CALLS][" in result.stdout  # bracket text printed as is, not as Rich markup


@needs_shared
def test_analyze_prints_bracket_markers_literally() -> None:
    result = run_cli("analyze", str(ZOO / "mistralai-Mistral-Nemo-Instruct-2407.jinja"))
    assert result.exit_code == 0, result.stderr
    assert "[INST]" in result.stdout and "[TOOL_CALLS]" in result.stdout


@needs_shared
def test_analyze_broken_template_is_a_one_line_error() -> None:
    broken = sorted((SHARED / "templates-broken").glob("*"))[0]
    err = assert_clean_error(run_cli("analyze", str(broken)))
    assert "syntax error" in err


def test_analyze_bad_inputs(tmp_path: Path, runaway_limits: float) -> None:
    assert_clean_error(run_cli("analyze", str(tmp_path / "missing.jinja")))
    runaway = tmp_path / "runaway.jinja"
    runaway.write_text("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}")
    assert "runaway template" in assert_clean_error(run_cli("analyze", str(runaway)))
    tools = tmp_path / "tools.json"
    tools.write_text("[]")
    assert_clean_error(run_cli("analyze", "--tools", str(tools), "--no-tools"))


def test_analyze_shows_the_generated_parser_and_grammar() -> None:
    result = run_cli("analyze", str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"), "--all")
    assert result.exit_code == 0, result.stderr
    for text in ("Generated for the request", "PEG parser", "Tag(tool-name)", "GBNF grammar (lazy)", 'word "<tool_call>"', "root ::="):
        assert text in result.stdout, text
    assert "trigger kinds: word = " in result.stdout  # the legend


def test_analyze_summary_fits_80_columns_and_quotes_markers() -> None:
    result = run_cli("analyze", str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"), width=80)
    assert result.exit_code == 0, result.stderr
    summary = result.stdout.split("Capabilities")[0]
    assert summary.lstrip().startswith("Summary of tagged_xml.jinja")
    assert all(len(line.rstrip()) <= 80 for line in summary.splitlines())
    for text in ('TAG_BASED "<think>↵" … "↵</think>↵↵"', 'call "<tool_call>↵" … "</tool_call>"', 'lazy, from word "<tool_call>"'):
        assert text in summary.replace("\n            ", " "), text


def test_diffs_say_no_difference(tmp_path: Path) -> None:
    template = tmp_path / "plain.jinja"
    template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    result = run_cli("analyze", str(template), "--diffs", "--no-tools")
    assert result.exit_code == 0, result.stderr
    assert "no difference: the two renders are the same" in result.stdout
    assert "[--]{++}" not in result.stdout


def test_analyze_json_carries_the_generation(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]))
    data = json.loads(run_cli("analyze", str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"), "--json", "--tools", str(tools)).stdout)
    generated = data["generated"]
    assert generated["grammar_lazy"] is True and generated["grammar_triggers"] == [{"type": 1, "value": "<tool_call>"}]
    assert "lookup" in generated["grammar"] and "lookup" in generated["parser"]
    no_tools = json.loads(run_cli("analyze", str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"), "--json", "--no-tools").stdout)
    assert no_tools["generated"]["grammar"] == "" and no_tools["generated"]["grammar_lazy"] is False


@needs_shared
def test_analyze_shows_content_after_calls() -> None:
    """llama-cpp-lfm2 writes a calling turn's text after the calls: the table and --json say so (the demo does not)."""
    result = run_cli("analyze", str(ZOO / "llama-cpp-lfm2.jinja"), width=200)
    assert result.exit_code == 0 and "content_after_calls" in result.stdout
    data = json.loads(run_cli("analyze", "--json", str(ZOO / "llama-cpp-lfm2.jinja")).stdout)
    assert data["tools"]["format"]["content_after_calls"] is True
    assert json.loads(run_cli("analyze", "--json").stdout)["tools"]["format"]["content_after_calls"] is False


def test_analyze_never_cuts_markers_at_narrow_widths() -> None:
    from tests.conftest import ZOO

    source = ZOO / "moonshotai-Kimi-K2.jinja"
    if not source.is_file():
        import pytest

        pytest.skip("../shared is absent")
    result = run_cli("analyze", str(source), width=40)
    assert result.exit_code == 0, result.stderr
    import re

    assert not re.search(r"[^\s]…", result.stdout)  # nothing cut (" … " separates a start and an end marker)


@needs_shared
def test_marker_tables_say_where_each_marker_came_from() -> None:
    result = run_cli("analyze", str(ZOO / "google-gemma-4-31B-it.jinja"), width=200)
    assert result.exit_code == 0, result.stderr
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") == 4}
    assert "T2 one call vs two calls" in rows["per_call_start"]  # read from a comparison
    assert "handler gemma4" in rows["function.close"]  # set by the dedicated handler


def test_analyze_is_short_by_default_and_expands_on_request() -> None:
    """The default shows the summary, the markers and their evidence; the
    parser and the grammar come with --parser, --grammar or --all."""
    source = str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja")
    default = run_cli("analyze", source, width=100).stdout
    assert "PEG parser (over" not in default and "root ::=" not in default and "--all show" in default
    assert "Summary of tagged_xml.jinja" in default and "<parameter=" in default
    assert len(default.splitlines()) < 110
    assert "PEG parser (over" in run_cli("analyze", source, "--parser").stdout
    grammar_only = run_cli("analyze", source, "--grammar").stdout
    assert "root ::=" in grammar_only and "PEG parser (over" not in grammar_only
    assert len(run_cli("analyze", source, "--all", width=100).stdout.splitlines()) > len(default.splitlines())
