"""``autoparser lint`` and ``check --lint``: tables with evidence, JSON,
exit codes, --ignore, JUnit and known failures."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import ROOT

LINT = ROOT / "templates" / "tests" / "lint"


def test_an_error_finding_exits_1_with_its_evidence() -> None:
    result = run_cli("lint", str(LINT / "history_prefix_defect.jinja"), width=120)
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "Lint of history_prefix_defect.jinja: 1 errors" in out
    assert "history-prefix" in out and "history is not a prefix" in out
    lines = out.splitlines()
    caret = next(i for i, line in enumerate(lines) if line.strip() == "^")
    shown = lines[caret - 1]
    assert shown[lines[caret].index("^") :].startswith("<|endoftext|>")  # where the next prompt parts from the reply


def test_warnings_and_info_exit_0() -> None:
    result = run_cli("lint", str(LINT / "call_ids_defect.jinja"))
    assert result.exit_code == 0 and "call-ids" in result.stdout


def test_json_lists_every_source() -> None:
    result = run_cli("lint", str(LINT / "raises_defect.jinja"), str(LINT / "raises_fixed.jinja"), "--json")
    assert result.exit_code == 1
    reports = json.loads(result.stdout)
    assert [r["template"] for r in reports] == ["raises_defect.jinja", "raises_fixed.jinja"]
    assert reports[0]["counts"]["error"] == 1 and reports[1]["counts"]["error"] == 0
    finding = reports[0]["findings"][0]
    assert finding["rule"] == "raises" and finding["evidence"][0]["label"] == "conversation"


def test_ignore_silences_a_rule() -> None:
    result = run_cli("lint", str(LINT / "raises_defect.jinja"), "--ignore", "raises", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)[0]["ignored"] == ["raises"]


def test_an_unknown_rule_is_one_line() -> None:
    err = assert_clean_error(run_cli("lint", "--ignore", "raise"))
    assert "no lint rule 'raise'" in err and "raises" in err


def test_a_missing_template_is_one_line() -> None:
    assert "no such file" in assert_clean_error(run_cli("lint", "nowhere/missing.jinja"))


def test_rich_markup_in_a_template_is_shown_not_read(tmp_path: Path) -> None:
    path = tmp_path / "markup.jinja"
    path.write_text("{% for m in messages %}[bold]{{ m.content }}[/bold]\n{% endfor %}{% if add_generation_prompt %}[red]A:{% endif %}")
    result = run_cli("lint", str(path), width=200)
    assert result.exit_code in (0, 1) and "[red]A:" in result.stdout


def test_check_lint_fails_a_template_rule_and_the_known_failures_file_lists_it(tmp_path: Path) -> None:
    junit = tmp_path / "check.xml"
    result = run_cli("check", str(LINT / "raises_defect.jinja"), str(LINT / "raises_fixed.jinja"), "--lint", "--junit", str(junit), "-j", "1")
    assert result.exit_code == 1, result.output
    assert "lint error raises (line 23): null-content-with-calls" in result.stdout
    assert "2 templates, 0 cases, 22 lint checks: 23 passed, 1 failed" in result.stdout
    # (the error is transformers': the engines that send "" for content null pass)
    served = run_cli("check", str(LINT / "raises_defect.jinja"), "--lint", "--engine", "vllm", "--engine", "sglang", "-j", "1")
    assert served.exit_code == 0, served.output
    suites = {s.get("name"): s for s in ET.parse(junit).getroot()}
    assert suites["lints"].get("failures") == "1"
    failed = [c.get("name") for c in suites["lints"] if c.find("failure") is not None]
    assert failed == ["raises_defect.jinja:raises"]

    known = tmp_path / "known.json"
    known.write_text(json.dumps({"raises_defect.jinja:raises": "raises on purpose, for the test"}))
    listed = run_cli("check", str(LINT / "raises_defect.jinja"), "--lint", "--known-failures", str(known), "-j", "1")
    assert listed.exit_code == 0, listed.output
    assert "(known failure: raises on purpose, for the test)" in listed.stdout


def test_check_lint_ignore() -> None:
    result = run_cli("check", str(LINT / "raises_defect.jinja"), "--lint", "--ignore", "raises", "-j", "1", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["results"][0]["lint"]["ignored"] == ["raises"]


def test_caps_shows_the_reasoning_switches() -> None:
    result = run_cli("caps", str(LINT / "thinking_switches_fixed.jinja"), width=160)
    assert result.exit_code == 0
    assert "reasoning switches" in result.stdout and "enable_thinking (changes the generation prompt)" in result.stdout
    plain = run_cli("caps", str(LINT / "call_ids_fixed.jinja"), width=160)
    assert "none read" in plain.stdout


def test_all_variants_lints_each_variant_of_a_source(tmp_path: Path) -> None:
    config = tmp_path / "tokenizer_config.json"
    variants = [
        {"name": "default", "template": (LINT / "raises_fixed.jinja").read_text()},
        {"name": "tool_use", "template": (LINT / "raises_defect.jinja").read_text()},
    ]
    config.write_text(json.dumps({"chat_template": variants}))
    one = run_cli("lint", str(config), "--json")
    assert [r["template"] for r in json.loads(one.stdout)] == ["tokenizer_config.json[default]"] and one.exit_code == 0
    every = run_cli("lint", str(config), "--all-variants", "--json")
    reports = json.loads(every.stdout)
    assert [r["template"] for r in reports] == ["tokenizer_config.json[default]", "tokenizer_config.json[tool_use]"]
    assert every.exit_code == 1 and reports[1]["counts"]["error"] == 1
    both = assert_clean_error(run_cli("lint", str(config), "--all-variants", "--variant", "default"))
    assert "--all-variants" in both


def test_engine_decides_what_is_an_error_and_an_unknown_one_is_one_line() -> None:
    defect = str(LINT / "raises_defect.jinja")
    everyone = run_cli("lint", defect, "--json")
    assert everyone.exit_code == 1
    (error,) = [f for f in json.loads(everyone.stdout)[0]["findings"] if f["severity"] == "error"]
    assert error["engines"] == ["transformers"] and error["line"] == 23
    assert run_cli("lint", defect, "--engine", "vllm").exit_code == 0
    err = assert_clean_error(run_cli("lint", defect, "--engine", "tgi"))
    assert "no engine 'tgi'" in err and "llama.cpp" in err
    assert "--engine needs --lint" in assert_clean_error(run_cli("check", defect, "--engine", "vllm"))


def test_text_output_names_each_findings_line() -> None:
    result = run_cli("lint", str(LINT / "history_prefix_defect.jinja"), width=160)
    assert "error history-prefix (line 29:14; breaks transformers, vllm, sglang, llama.cpp): history is not a prefix" in result.stdout
    assert "│   29 │" in result.stdout  # (the table's line column)


def test_format_sarif_prints_one_log_for_every_source() -> None:
    result = run_cli("lint", str(LINT / "raises_defect.jinja"), str(LINT / "call_ids_defect.jinja"), "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"templates/tests/lint/raises_defect.jinja", "templates/tests/lint/call_ids_defect.jinja"}
    assert "give --json or --format sarif" in assert_clean_error(run_cli("lint", "--json", "--format", "sarif"))
    assert "--format must be one of text, json, sarif" in assert_clean_error(run_cli("lint", "--format", "xml"))


def test_diff_shows_and_fix_applies_a_proven_fix(tmp_path: Path) -> None:
    path = tmp_path / "args.jinja"
    path.write_text((LINT / "arguments_double_encoded_defect.jinja").read_text())
    before = path.read_text()
    diff = run_cli("lint", str(path), "--diff")
    assert diff.exit_code == 0, diff.output
    assert "-" + "{{- '<tool_call>{'" in diff.stdout and "(call.function.arguments if call.function.arguments is string else" in diff.stdout
    assert path.read_text() == before  # (--diff writes nothing)
    fixed = run_cli("lint", str(path), "--fix")
    assert fixed.exit_code == 0 and "arguments-double-encoded: fixed" in fixed.stderr
    assert path.read_text() != before and "is string else call.function.arguments | tojson" in path.read_text()
    again = run_cli("lint", str(path), "--fix")
    assert "no finding with a mechanical fix" in again.stderr and again.exit_code == 0


def test_a_fix_re_rendering_does_not_prove_is_not_applied(tmp_path: Path) -> None:
    """BOS kept in a variable written twice: taking it from the line that
    sets it changes more than the first BOS, so the fix is not applied."""
    source = (LINT / "double_bos_defect" / "tokenizer_config.json").read_text()
    config = json.loads(source)
    config["chat_template"] = "{%- set b = bos_token -%}{{- b -}}{{- b -}}\n" + config["chat_template"].replace("{{- bos_token -}}", "")
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    result = run_cli("lint", str(folder), "--diff")
    assert result.exit_code == 1 and result.stdout == ""
    assert "double-bos: not fixed: a render the fix should not change changed" in result.stderr


def test_fix_rewrites_a_template_in_a_tokenizer_config_in_place(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    config = folder / "tokenizer_config.json"
    config.write_text((LINT / "double_bos_defect" / "tokenizer_config.json").read_text())
    before = config.read_text()
    sarif = json.loads(run_cli("lint", str(folder), "--format", "sarif").stdout)
    (error,) = [r for r in sarif["runs"][0]["results"] if r["level"] == "error"]
    assert error["locations"][0]["physicalLocation"]["region"] == {"startLine": 5}  # (the line of "chat_template")
    diff = run_cli("lint", str(folder), "--diff")
    assert diff.exit_code == 0 and diff.stdout.count("\n-  \"chat_template\"") == 1 and "model/tokenizer_config.json" in diff.stdout
    fixed = run_cli("lint", str(folder), "--fix")
    assert fixed.exit_code == 0, fixed.output
    after = config.read_text()
    assert [a for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b] == [before.splitlines()[4]]
    assert json.loads(after)["chat_template"] == json.loads(before)["chat_template"].replace("{{- bos_token -}}", "{{- '' -}}")
    assert run_cli("lint", str(folder)).exit_code == 0
