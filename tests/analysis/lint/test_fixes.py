"""lint's mechanical fixes: applied only when re-rendering proves the
finding gone and every other render unchanged."""

from __future__ import annotations

from analysis.lint import Severity, lint_template
from analysis.lint.fixes import fix_template
from analysis.template import FROZEN_CLOCK, ChatTemplate, LoadedTemplate, load_template
from analysis.template.rendering import RenderRequest
from tests.conftest import ROOT

LINT = ROOT / "templates" / "tests" / "lint"
USER = [{"role": "user", "content": "hi"}]


def _fixed(loaded: LoadedTemplate, source: str) -> ChatTemplate:
    return ChatTemplate(LoadedTemplate(loaded.name, source, bos_token=loaded.bos_token, add_bos_token=loaded.add_bos_token), clock=FROZEN_CLOCK)


def test_a_double_bos_is_fixed_and_the_prompt_is_what_the_model_saw_less_one_bos() -> None:
    loaded = load_template(LINT / "double_bos_defect" / "tokenizer_config.json")
    result = fix_template(ChatTemplate(loaded, clock=FROZEN_CLOCK))
    (fix,) = result.fixes
    assert (fix.rule, fix.applied, fix.line, fix.before, fix.after) == ("double-bos", True, 9, "{{- bos_token -}}", "{{- '' -}}")
    fixed = _fixed(loaded, result.after)
    assert not [f for f in lint_template(fixed).findings if f.rule == "double-bos"]
    old = ChatTemplate(loaded, clock=FROZEN_CLOCK).render(RenderRequest(USER, add_generation_prompt=True))
    assert old == "<s>" + fixed.render(RenderRequest(USER, add_generation_prompt=True))
    assert result.diff("t.jinja").count("\n-") == 1


def test_arguments_encoded_twice_are_fixed_and_object_arguments_render_as_before() -> None:
    loaded = load_template(LINT / "arguments_double_encoded_defect.jinja")
    result = fix_template(ChatTemplate(loaded, clock=FROZEN_CLOCK))
    (fix,) = result.fixes
    assert fix.applied and fix.rule == "arguments-double-encoded" and fix.line == 25
    assert "(call.function.arguments if call.function.arguments is string else call.function.arguments | tojson)" in fix.after
    report = lint_template(_fixed(loaded, result.after))
    assert not [f for f in report.findings if f.rule == "arguments-double-encoded"]
    assert result.after == (LINT / "arguments_double_encoded_defect.jinja").read_text().replace(fix.before, fix.after)


def test_a_finding_whose_line_holds_nothing_to_rewrite_is_left_with_the_reason() -> None:
    source = (LINT / "arguments_double_encoded_defect.jinja").read_text().replace(
        "(call.function.arguments | tojson)", "(call.function.arguments | tojson(indent=None))"
    )
    loaded = LoadedTemplate("t.jinja", source)
    assert [f.severity for f in lint_template(ChatTemplate(loaded, clock=FROZEN_CLOCK)).findings if f.rule == "arguments-double-encoded"] == [Severity.INFO]
    result = fix_template(ChatTemplate(loaded, clock=FROZEN_CLOCK))
    (fix,) = result.fixes
    assert not fix.applied and fix.why == "line 25 does not hold one 'ARGUMENTS | tojson' to rewrite"
    assert not result.changed
