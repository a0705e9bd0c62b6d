"""Lint over the zoo: every template lints, and findings checked by hand
(docs/lint.md lists them) stay found."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.lint import LintReport, Severity, lint_template
from analysis.template import FROZEN_CLOCK, ChatTemplate, load_template
from tests.conftest import SHARED, ZOO, needs_shared

pytestmark = [needs_shared, pytest.mark.slow]


def _lint(name: str) -> LintReport:
    return lint_template(ChatTemplate(load_template(ZOO / name), clock=FROZEN_CLOCK))


def _found(report: LintReport, rule: str, severity: Severity, words: str = "") -> bool:
    return any(f.rule == rule and f.severity is severity and words in f.message for f in report.findings)


def test_every_zoo_template_lints() -> None:
    for path in sorted(ZOO.glob("*.jinja")):
        report = _lint(path.name)
        assert report.template_name == path.name
        # every finding carries a message, an error its template line, and evidence points inside its text
        for finding in report.findings:
            assert finding.message
            assert finding.severity is not Severity.ERROR or finding.where is not None, (path.name, finding)
            assert all(e.at is None or 0 <= e.at <= len(e.text) for e in finding.evidence), (path.name, finding)


@pytest.mark.parametrize(
    "template, rule, severity, words",
    [
        # Qwen3 tests 'in content' without a None check: content null beside tool calls raises, but
        # every engine passes "" or (transformers' documented shape) no content, and those render
        ("Qwen-Qwen3-0.6B.jinja", "raises", Severity.INFO, "null-content-with-calls: the template raises"),
        # QwQ splits the content of every assistant turn: a call turn without content raises (transformers)
        ("Qwen-QwQ-32B.jinja", "raises", Severity.ERROR, "(breaks transformers; not vllm, sglang, llama.cpp)"),
        # Qwen3 leaves earlier turns' reasoning out, on purpose
        ("Qwen-Qwen3-0.6B.jinja", "history-prefix", Severity.INFO, "lose their reasoning"),
        # Seed-OSS writes a nested object argument with Python's str()
        ("ByteDance-Seed-OSS.jinja", "arguments-python", Severity.ERROR, "'exact': True"),
        # Llama 3.1 writes arguments with tojson whatever they are: every engine passes objects
        ("meta-llama-Llama-3.1-8B-Instruct.jinja", "arguments-double-encoded", Severity.INFO, "not an error for"),
        # gpt-oss ends a finished turn with <|return|> and writes <|end|> in history, as harmony says
        ("openai-gpt-oss-120b.jinja", "history-prefix", Severity.INFO, "harmony: the last reply ends with <|return|>"),
        # Gemma 2 demands alternating roles
        ("google-gemma-2-2b-it.jinja", "raises", Severity.WARNING, "two-user-turns"),
        # Command R7B writes its generation prompt whatever add_generation_prompt says
        ("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "generation-prompt-flag", Severity.WARNING, ""),
        # Llama 3.2 writes today's date (strftime_now)
        ("meta-llama-Llama-3.2-3B-Instruct.jinja", "date-in-prompt", Severity.INFO, ""),
        # Qwen3.5 reads enable_thinking, and it changes the generation prompt
        ("Qwen3.5-4B.jinja", "thinking-switches", Severity.INFO, "enable_thinking (changes the generation prompt"),
    ],
)
def test_hand_checked_findings(template: str, rule: str, severity: Severity, words: str) -> None:
    report = _lint(template)
    assert _found(report, rule, severity, words), report.findings


def test_templates_that_keep_ids_and_json_arguments_are_not_flagged() -> None:
    report = _lint("upstage-Solar-Open-100B.jinja")  # (ids written, arguments as JSON either way)
    assert "call-ids" not in report.skipped
    assert not [f for f in report.findings if f.rule in ("call-ids", "arguments-python", "arguments-double-encoded")], report.findings


#: the shared templates with an error finding for the default engines, and the
#: rules of their errors: each read by hand (docs/lint.md, "Precision")
ERRORS = {
    "Apriel-1.6-15b-Thinker-fixed.jinja": {"history-prefix", "generation-prompt"},
    "unsloth-Apriel-1.5.jinja": {"history-prefix"},
    "ByteDance-Seed-OSS.jinja": {"arguments-python"},
    "CohereForAI-c4ai-command-r-plus-tool_use.jinja": {"history-prefix", "generation-prompt"},
    "DeepSeek-V3.2.jinja": {"generation-prompt"},
    "NVIDIA-Nemotron-Nano-v2.jinja": {"history-prefix"},
    "Qwen-QwQ-32B.jinja": {"raises"},
    "vllm-tool-nemotron_json.jinja": {"raises"},
    "functionary-cogito.jinja": {"arguments-python"},
    "functionary-llama4.jinja": {"arguments-python"},
    "functionary-qwen2-5.jinja": {"arguments-python"},
    "llamacpp-openbmb-MiniCPM5-1B.jinja": {"arguments-python"},
    "vllm-tool-llama4_pythonic.jinja": {"arguments-python"},
    "vllm-tool-phi4_mini.jinja": {"arguments-python"},
    "vllm-chat-inkbot.jinja": {"generation-prompt"},
    "vllm-tool-deepseekv31.jinja": {"generation-prompt"},
    "vllm-tool-mistral_parallel.jinja": {"history-prefix"},
    "vllm-tool-muse_glimmer.jinja": {"generation-prompt"},
}

SHARED_TEMPLATES = sorted(p for folder in ("templates", "templates-more") for p in (SHARED / folder).glob("*.jinja"))


def test_at_most_20_shared_templates_get_an_error() -> None:
    assert len(ERRORS) <= 20
    assert {p.name for p in SHARED_TEMPLATES} >= set(ERRORS)


@pytest.mark.parametrize("path", SHARED_TEMPLATES, ids=lambda p: p.name)
def test_a_shared_templates_errors_are_the_checked_ones_and_name_their_line(path: Path) -> None:
    report = lint_template(ChatTemplate(load_template(path), clock=FROZEN_CLOCK))
    assert {f.rule for f in report.errors} == ERRORS.get(path.name, set()), report.errors
    assert all(f.where is not None for f in report.errors), report.errors
    # (arguments encoded twice break no engine of the table: no error for vllm, nor any other)
    assert all(f.engines == () for f in report.findings if f.rule == "arguments-double-encoded")
