"""Lint per engine: a finding is an error only for the engines it breaks
(analysis/lint/engines.py, one table), every error names its template line,
and defects seeded into clean templates are all still found."""

from __future__ import annotations

import re

import pytest

from analysis.errors import InputError
from analysis.lint import LintReport, Severity, lint_template
from analysis.lint.engines import DEFAULT_ENGINES, ENGINE_NAMES, ENGINES, check_engines
from analysis.template import FROZEN_CLOCK, ChatTemplate, LoadedTemplate
from tests.conftest import ROOT, ZOO, needs_shared

LINT = ROOT / "templates" / "tests" / "lint"


def lint(source: str, engines: tuple[str, ...] = DEFAULT_ENGINES, **loaded: object) -> LintReport:
    """Lint a template given as text, for ``engines``."""
    template = ChatTemplate(LoadedTemplate("inline.jinja", source, **loaded), clock=FROZEN_CLOCK)  # type: ignore[arg-type]
    return lint_template(template, engine_names=engines)


def _of(report: LintReport, rule: str) -> list[Severity]:
    return [f.severity for f in report.findings if f.rule == rule]


def test_the_table_cites_a_source_for_what_each_engine_does() -> None:
    assert len(set(ENGINE_NAMES)) == len(ENGINES) == 5
    assert DEFAULT_ENGINES == ("transformers", "vllm", "sglang", "llama.cpp")
    for engine in ENGINES:
        if engine.renders_jinja:
            for what in ("arguments", "null_content", "bos"):
                assert engine.source(what), (engine.name, what)
        else:
            assert engine.source("renders_jinja"), engine.name
        # (each fact pinned to what it was read at: a commit, a pull request or a release)
        for what, source in engine.sources:
            assert re.search(r"\bcommits? `?[0-9a-f]{12}|\bPR #\d+|\b\d+\.\d+\.\d+\b", source), (engine.name, what)


def test_an_unknown_engine_is_bad_input_named_in_one_line() -> None:
    with pytest.raises(InputError, match=r"^no engine 'vLLM' \(engines: transformers, vllm, sglang, llama.cpp, ollama\)$"):
        check_engines(["vLLM"])


def test_double_encoded_arguments_are_an_error_for_no_engine_that_parses_them() -> None:
    """Every engine in the table turns string arguments into an object before
    the template renders them: a template that applies tojson to a string is
    info, and says which engines it would break (none of the table's)."""
    report = lint((LINT / "arguments_double_encoded_defect.jinja").read_text(), ("vllm",))
    (finding,) = [f for f in report.findings if f.rule == "arguments-double-encoded"]
    assert finding.severity is Severity.INFO and finding.engines == ()
    assert "(not an error for vllm: it breaks no engine in the table" in finding.message
    assert not report.errors


def test_python_arguments_are_an_error_only_for_engines_that_render_jinja() -> None:
    source = (LINT / "arguments_python_defect.jinja").read_text()
    assert _of(lint(source, ("vllm",)), "arguments-python") == [Severity.ERROR]
    # ollama renders its own Go template, not the Jinja one: nothing of it breaks there
    ollama = lint(source, ("ollama",))
    assert _of(ollama, "arguments-python") == [Severity.INFO] and not ollama.errors


def test_a_raise_on_missing_content_names_the_engine_that_sends_it() -> None:
    """The defect raises on content that is not a string: transformers'
    documented call turn has no content (an error there); vLLM, SGLang and
    llama.cpp send "" (no error for them)."""
    source = (LINT / "raises_defect.jinja").read_text()
    report = lint(source)
    (finding,) = [f for f in report.findings if f.message.startswith("null-content-with-calls")]
    assert finding.severity is Severity.ERROR and finding.engines == ("transformers",)
    assert finding.message.endswith("(breaks transformers; not vllm, sglang, llama.cpp)")
    assert finding.line == 23  # the raise_exception beside message.content
    served = lint(source, ("vllm", "sglang"))
    assert [f.severity for f in served.findings if f.message.startswith("null-content-with-calls")] == [Severity.INFO]
    assert not served.errors


HARMONY = (
    "{%- for m in messages -%}<|start|>{{ m.role }}<|message|>{{ m.content }}"
    "{{- ('<|return|>' if END else '<|end|>') if m.role == 'assistant' and loop.last and not add_generation_prompt else '<|end|>' -}}"
    "{%- endfor -%}{%- if add_generation_prompt %}<|start|>assistant{% endif -%}"
)


def test_harmony_ending_the_last_reply_with_return_is_by_design() -> None:
    """A harmony render ends the final reply with <|return|> and stores it
    with <|end|>: info, not a history-prefix error; the same swap outside
    harmony's turns is an error."""
    report = lint(HARMONY.replace("END", "true"))
    assert _of(report, "history-prefix") == [Severity.INFO]
    assert "harmony" in next(f.message for f in report.findings if f.rule == "history-prefix")
    assert _of(lint(HARMONY.replace("END", "false")), "history-prefix") == []
    not_harmony = HARMONY.replace("END", "true").replace("<|start|>", "<|turn|>")
    assert _of(lint(not_harmony), "history-prefix") == [Severity.ERROR]


@pytest.mark.parametrize(
    "rule, line_holds",
    [
        ("history-prefix", "'<|endoftext|>' if loop.index0 == last"),
        ("generation-prompt", "<|im_start|>assistant\\n\\n"),
        ("raises", "raise_exception('assistant content must be a string')"),
        ("arguments-python", "| string"),
    ],
)
def test_an_error_names_the_line_that_wrote_or_raised_it(rule: str, line_holds: str) -> None:
    path = LINT / f"{rule.replace('-', '_')}_defect.jinja"
    report = lint(path.read_text())
    finding = next(f for f in report.errors if f.rule == rule)
    assert finding.where is not None
    assert line_holds in path.read_text().splitlines()[finding.where - 1], (finding.where, finding)
    assert finding.to_json()["line"] == finding.where


def test_every_evidence_of_a_render_names_its_line() -> None:
    report = lint((LINT / "call_whitespace_defect.jinja").read_text())
    finding = next(f for f in report.findings if f.rule == "call-whitespace")
    assert all(e.line is not None for e in finding.evidence), finding.evidence


# -- defects seeded into a clean zoo template --------------------------------

QWEN25 = "Qwen-Qwen2.5-7B-Instruct.jinja"
SOLAR = "upstage-Solar-Open-100B.jinja"

SEEDS = [
    # (template, what to replace, with what, rule, severity of the finding)
    (SOLAR, '"<|tool_response:begin|>" + message.tool_call_id + "<|tool_response:name|>"', '"<|tool_response:begin|><|tool_response:name|>"',
     "call-ids", Severity.WARNING),
    (QWEN25, "{{- tool_call.arguments | tojson }}", "{{- tool_call.arguments }}", "arguments-python", Severity.ERROR),
    (QWEN25, '(message.role == "system" and not loop.first) or ', '(message.role == "system" and not loop.first and raise_exception("no late system")) or ',
     "raises", Severity.WARNING),
    (QWEN25, "    {{- '<|im_start|>assistant\\n' }}\n{%- endif %}", "    {{- '<|im_start|>assistant:\\n' }}\n{%- endif %}",
     "generation-prompt", Severity.ERROR),
]


def _zoo(name: str) -> str:
    return (ZOO / name).read_text()


@needs_shared
@pytest.mark.parametrize("template, old, new, rule, severity", SEEDS, ids=[s[3] for s in SEEDS])
def test_a_defect_seeded_into_a_clean_template_is_found(template: str, old: str, new: str, rule: str, severity: Severity) -> None:
    clean = _zoo(template)
    assert old in clean
    twin = lint(clean)
    assert not twin.errors and severity not in _of(twin, rule), twin.findings
    seeded = lint(clean.replace(old, new))
    assert severity in _of(seeded, rule), seeded.findings
    assert bool(seeded.errors) is (severity is Severity.ERROR)
    assert all(f.where is not None for f in seeded.errors)


@needs_shared
def test_a_double_bos_seeded_into_a_clean_template_is_found() -> None:
    clean = _zoo(QWEN25)
    tokens = {"bos_token": "<|endoftext|>", "add_bos_token": True}
    assert not lint(clean, **tokens).errors
    seeded = lint("{{- bos_token }}" + clean, **tokens)
    assert [f.rule for f in seeded.errors] == ["double-bos"] and seeded.errors[0].where == 1
    assert seeded.errors[0].engines == ("transformers",)
    assert not lint("{{- bos_token }}" + clean, ("vllm", "llama.cpp"), **tokens).errors


@needs_shared
def test_vllm_sees_no_double_encoded_arguments_in_the_zoo() -> None:
    report = lint(_zoo("meta-llama-Llama-3.1-8B-Instruct.jinja"), ("vllm",))
    assert _of(report, "arguments-double-encoded") == [Severity.INFO]


def test_a_finding_gives_the_column_where_its_text_stands_once_on_its_line() -> None:
    path = LINT / "history_prefix_defect.jinja"
    finding = next(f for f in lint(path.read_text()).errors if f.rule == "history-prefix")
    line = path.read_text().splitlines()[finding.where - 1] if finding.where else ""
    assert finding.column is not None and line[finding.column - 1 :].startswith("<|endoftext|>")
    # (a value the template computes stands nowhere on its line: no column)
    raised = next(f for f in lint((LINT / "arguments_python_defect.jinja").read_text()).errors)
    assert raised.column is None and raised.where == 25
