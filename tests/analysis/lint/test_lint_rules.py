"""Each lint rule on the pair of templates written for it (templates/tests/lint):
the defect template shows the rule's finding, the fixed one does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.errors import InputError
from analysis.lint import RULE_IDS, LintReport, Severity, lint_template
from analysis.template import FROZEN_CLOCK, ChatTemplate, LoadedTemplate, load_template
from tests.conftest import ROOT

LINT = ROOT / "templates" / "tests" / "lint"

#: each rule's worst finding on its defect template, for the default engines
#: (arguments-double-encoded breaks only an engine that passes arguments as
#: strings, and none of them does: docs/lint.md, the engines)
EXPECTED = {
    "history-prefix": Severity.ERROR,
    "generation-prompt": Severity.ERROR,
    "generation-prompt-flag": Severity.WARNING,
    "raises": Severity.ERROR,
    "call-ids": Severity.WARNING,
    "arguments-python": Severity.ERROR,
    "arguments-double-encoded": Severity.INFO,
    "call-whitespace": Severity.WARNING,
    "double-bos": Severity.ERROR,
    "thinking-switches": Severity.WARNING,
    "generation-block": Severity.INFO,
    "date-in-prompt": Severity.INFO,
}


def _source(rule: str, kind: str) -> Path:
    stem = f"{rule.replace('-', '_')}_{kind}"
    folder = LINT / stem
    return folder if folder.is_dir() else LINT / f"{stem}.jinja"


def lint(path: Path, ignore: tuple[str, ...] = ()) -> LintReport:
    return lint_template(ChatTemplate(load_template(path), clock=FROZEN_CLOCK), ignore)


def lint_source(source: str) -> LintReport:
    """Lint a template given as text."""
    return lint_template(ChatTemplate(LoadedTemplate("inline.jinja", source), clock=FROZEN_CLOCK))


def severities(report: LintReport, rule: str) -> list[Severity]:
    """The severities of ``rule``'s findings in ``report``."""
    return [f.severity for f in report.findings if f.rule == rule]


def test_every_rule_has_its_pair_of_templates() -> None:
    assert set(EXPECTED) == set(RULE_IDS)
    for rule in RULE_IDS:
        assert _source(rule, "defect").exists() and _source(rule, "fixed").exists(), rule


@pytest.mark.parametrize("rule", sorted(EXPECTED))
def test_the_defect_template_shows_the_finding(rule: str) -> None:
    report = lint(_source(rule, "defect"))
    found = [f for f in report.findings if f.rule == rule]
    assert found, (rule, report.findings)
    assert min(f.severity.rank for f in found) == EXPECTED[rule].rank, found
    # (the defect templates differ from their fix in one thing: nothing else is wrong)
    assert {f.rule for f in report.findings if f.severity is not Severity.INFO} <= {rule}, report.findings


@pytest.mark.parametrize("rule", sorted(EXPECTED))
def test_the_fixed_template_does_not(rule: str) -> None:
    report = lint(_source(rule, "fixed"))
    assert not [f for f in report.findings if f.rule == rule and f.severity.rank <= EXPECTED[rule].rank], report.findings
    assert not report.errors, report.errors


def test_raises_names_each_shape_with_the_templates_own_message() -> None:
    messages = [f.message for f in lint(_source("raises", "defect")).findings if f.rule == "raises"]
    assert len(messages) == 4, messages
    expected = {
        "null-content-with-calls": "assistant content must be a string",
        "content-parts": "content must be a string",
        "system-mid-conversation": "System message must be at the beginning.",
        "two-user-turns": "Conversation roles must alternate",
    }
    for shape, said in expected.items():
        assert any(m.startswith(shape + ":") and said in m for m in messages), (shape, messages)
    evidence = next(f for f in lint(_source("raises", "defect")).findings if f.message.startswith("two-user-turns")).evidence
    assert '"What is the weather in Paris?"}, {"role": "user"' in evidence[0].text  # the conversation that raises


def test_history_prefix_points_where_the_next_prompt_parts_from_the_reply() -> None:
    finding = next(f for f in lint(_source("history-prefix", "defect")).findings if f.rule == "history-prefix")
    last, later = finding.evidence
    assert last.text[: last.at] == later.text[: later.at]
    assert last.text[last.at :].startswith("<|endoftext|>") and later.text[later.at :].startswith("<|im_start|>user")


def test_dropped_reasoning_is_info_with_its_cost() -> None:
    """A template that leaves earlier turns' reasoning out of history (on
    purpose, as Qwen3 does) is reported as info, not as an error."""
    source = (
        "{%- for m in messages -%}<|im_start|>{{ m.role }}\n"
        "{%- if m.role == 'assistant' and m.reasoning_content and loop.last %}<think>{{ m.reasoning_content }}</think>{% endif -%}"
        "{{ m.content }}<|im_end|>\n{% endfor -%}{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif -%}"
    )
    report = lint_source(source)
    assert severities(report, "history-prefix") == [Severity.INFO], report.findings
    assert "lose their reasoning" in next(f.message for f in report.findings if f.rule == "history-prefix")


def test_switches_say_what_they_change() -> None:
    info = [f for f in lint(_source("thinking-switches", "fixed")).findings if f.rule == "thinking-switches"]
    assert [f.severity for f in info] == [Severity.INFO]
    assert "enable_thinking (changes the generation prompt)" in info[0].message
    assert "reasoning of earlier turns is kept in history" in info[0].message


def test_double_bos_needs_the_tokenizer_setting() -> None:
    plain = lint(LINT / "double_bos_defect" / "tokenizer_config.json")
    assert [f.rule for f in plain.errors] == ["double-bos"]
    jinja_only = lint(_source("raises", "fixed"))
    assert "double-bos" in jinja_only.skipped and "tokenizer" in jinja_only.skipped["double-bos"]


def test_ignore_leaves_a_rule_out_and_an_unknown_rule_is_named() -> None:
    report = lint(_source("raises", "defect"), ignore=("raises",))
    assert not [f for f in report.findings if f.rule == "raises"] and report.ignored == ("raises",)
    with pytest.raises(InputError, match="no lint rule 'raise'"):
        lint(_source("raises", "defect"), ignore=("raise",))


def test_rules_that_cannot_run_say_why() -> None:
    chat = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
    report = lint_source(chat)
    assert report.skipped["call-ids"] == "the template writes no tool calls"
    assert report.skipped["call-whitespace"] == "the template writes no tool calls"


def test_a_call_turn_written_differently_in_history_is_an_error() -> None:
    """The markers a template writes after a call depend on whether the turn
    is the last one (as Nemotron Nano v2's closer does): the next prompt
    rewrites the call the model wrote."""
    source = (LINT / "history_prefix_fixed.jinja").read_text().replace(
        "{{- '<|im_end|>' -}}", "{{- '<|im_end|>' if loop.index0 != last or message.content else '\\n<|im_end|>' -}}"
    )
    assert source != (LINT / "history_prefix_fixed.jinja").read_text()
    report = lint_source(source)
    assert severities(report, "history-prefix") == [Severity.ERROR], report.findings
    finding = next(f for f in report.findings if f.rule == "history-prefix")
    assert "rewrites the tool-call turn" in finding.message
    assert finding.evidence[0].label == "the tool-call turn as the last turn"


def test_arguments_written_differently_by_whitespace_are_a_warning() -> None:
    """A tagged format whose first argument is followed by a blank line and
    the others by a newline (``loop.first`` in the argument loop)."""
    source = (
        "{%- for m in messages -%}<|im_start|>{{ m.role }}\n{{ m.content or '' }}"
        "{%- for c in m.tool_calls or [] %}<tool_call>\n<function={{ c.function.name }}>\n"
        "{% for k, v in c.function.arguments.items() %}<parameter={{ k }}>{{ v }}</parameter>{{ '\n\n' if loop.first else '\n' }}{% endfor %}"
        "</function>\n</tool_call>{% endfor %}<|im_end|>\n{% endfor -%}"
        "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif -%}"
    )
    report = lint_source(source)
    assert severities(report, "call-whitespace") == [Severity.WARNING], report.findings
    assert next(f.message for f in report.findings if f.rule == "call-whitespace").startswith("arguments are written differently by whitespace")
    fixed = lint_source(source.replace("if loop.first else", "if false else"))  # (a newline after every argument)
    assert severities(fixed, "call-whitespace") == [], fixed.findings


def test_a_first_call_opened_with_other_whitespace_is_a_warning() -> None:
    """``<tool_call>\\n{`` for the first call, ``<tool_call>{`` for the others."""
    source = (LINT / "call_whitespace_fixed.jinja").read_text()
    defect = source.replace("'<tool_call>{'", "'<tool_call>' + ('\\n' if loop.first else '') + '{'")
    assert defect != source
    report = lint_source(defect)
    assert severities(report, "call-whitespace") == [Severity.WARNING], report.findings
    finding = next(f for f in report.findings if f.rule == "call-whitespace")
    assert finding.message.startswith("the first call is opened differently from the second by whitespace")
    first, second = finding.evidence
    assert first.text[first.at : first.at + 1] == "\n" and second.text[second.at : second.at + 1] == "{"
    assert severities(lint_source(source), "call-whitespace") == []


def test_a_header_written_only_with_the_generation_prompt_keeps_the_cache() -> None:
    """A system block written only with add_generation_prompt (as Muse
    Glimmer's): every prompt starts with it, so the next prompt starts with
    this prompt and the reply (no history-prefix error); a conversation
    rendered for training lacks it (a generation-prompt error)."""
    source = (
        "{%- if add_generation_prompt %}<sys>Be brief.</sys>{% endif -%}"
        "{%- for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor -%}"
        "{%- if add_generation_prompt %}<assistant>{% endif -%}"
    )
    report = lint_source(source)
    assert severities(report, "history-prefix") == [] and severities(report, "generation-prompt") == [Severity.ERROR], report.findings
    dropped = lint_source(source.replace("{%- for m in messages %}", "{%- for m in messages if m.role != 'user' or loop.last %}"))
    assert Severity.ERROR in severities(dropped, "history-prefix")  # (an earlier turn dropped is still found)
