"""Each analysis phase on small templates written for the purpose (templates/tests/)."""

from __future__ import annotations

import functools

import pytest

from analysis.errors import RenderLimitError
from analysis.generation.analyzer import analyze_template, prefill_outcome
from analysis.phases.result import (
    CallIdPosition,
    ContentMode,
    PrefillOutcome,
    ReasoningAnalysis,
    ReasoningMode,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.caps import Capabilities
from analysis.probing.probes import (
    PROBE_STRINGS,
    USER,
    ComparisonFailed,
    Prober,
    assistant,
    conversation,
)
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate, RenderRequest
from tests.conftest import PROJECT_TEMPLATES

SMALL = PROJECT_TEMPLATES / "tests"


def _template(name_or_source: str) -> ChatTemplate:
    path = SMALL / name_or_source
    if path.is_file():
        return ChatTemplate(load_template(path), clock=FROZEN_CLOCK)
    return ChatTemplate(load_template_from_text(name_or_source), clock=FROZEN_CLOCK)


def load_template_from_text(source: str):
    from analysis.template.loading import LoadedTemplate

    return LoadedTemplate(name="inline.jinja", source=source, variant="default", bos_token="", eos_token="", extra={})


@functools.cache
def analysis_of(name: str) -> TemplateAnalysis:
    return analyze_template(_template(name))


def test_tagged_xml_all_phases() -> None:
    a = analysis_of("tagged_xml.jinja")
    assert (a.reasoning.mode, a.reasoning.start, a.reasoning.end) == (ReasoningMode.TAG_BASED, "<think>\n", "\n</think>\n\n")
    assert a.content.mode is ContentMode.PLAIN
    fmt, fn, args = a.tools.format, a.tools.function, a.tools.arguments
    assert fmt.mode is ToolFormat.TAG_WITH_TAGGED
    # T2: the second call repeats <tool_call>, so the markers are per call
    assert (fmt.section_start, fmt.per_call_start, fmt.per_call_end) == ("", "<tool_call>\n", "</tool_call>")
    assert (fn.name_prefix, fn.name_suffix, fn.close) == ("<function=", ">\n", "</function>\n")
    assert (args.name_prefix, args.name_suffix, args.value_prefix, args.value_suffix) == (
        "<parameter=",
        ">\n",
        "",
        "</parameter>\n",
    )
    assert args.separator == "" and args.start == "" and args.end == ""
    assert a.tools.call_id.pos is CallIdPosition.NONE
    assert (a.user_start, a.assistant_start) == ("<|im_start|>user", "<|im_start|>assistant")
    assert a.generation_prompt.text == "<|im_start|>assistant\n"


def test_thinking_off_prefill_is_opened_and_closed() -> None:
    a = analyze_template(_template("tagged_xml.jinja"), enable_thinking=False)
    assert a.generation_prompt.text == "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert a.generation_prompt.prefill is PrefillOutcome.OPENED_AND_CLOSED


def test_json_native_array_with_id_field() -> None:
    a = analysis_of("json_array_ids.jinja")
    fmt = a.tools.format
    assert fmt.mode is ToolFormat.JSON_NATIVE
    assert fmt.tools_array_wrapped and fmt.section_start == "[TOOL_CALLS]" and fmt.section_end == ""
    assert (fmt.name_field, fmt.args_field, fmt.id_field) == ("name", "arguments", "id")
    assert fmt.parameter_order == ("name", "arguments", "id")
    assert a.reasoning.mode is ReasoningMode.NONE and a.user_start == "[INST]"


def test_tag_with_json_call_id_between_name_and_args_with_full_width_markers() -> None:
    a = analysis_of("tag_json_call_id.jinja")
    assert a.tools.format.mode is ToolFormat.TAG_WITH_JSON
    assert a.tools.format.per_call_start == "<｜tool▁call｜>"
    assert a.tools.function.name_suffix == "[ARGS]"
    cid = a.tools.call_id
    assert (cid.pos, cid.prefix, cid.suffix) == (CallIdPosition.BETWEEN_FUNC_AND_ARGS, "[CALL_ID]", "[ARGS]")
    assert a.preserved_tokens == ("<｜tool▁call｜>", "[ARGS]", "[CALL_ID]")


def test_wrapped_content_and_tools_only_reasoning() -> None:
    a = analysis_of("wrapped_tools_only.jinja")
    assert (a.reasoning.mode, a.reasoning.start, a.reasoning.end) == (
        ReasoningMode.TOOLS_ONLY,
        "<|START_THINKING|>",
        "<|END_THINKING|>",
    )
    assert (a.content.mode, a.content.start, a.content.end) == (
        ContentMode.ALWAYS_WRAPPED,
        "<|START_RESPONSE|>",
        "<|END_RESPONSE|>",
    )
    fmt = a.tools.format
    assert (fmt.mode, fmt.name_field, fmt.args_field) == (ToolFormat.JSON_NATIVE, "tool_name", "parameters")
    assert (fmt.section_start, fmt.section_end, fmt.tools_array_wrapped) == ("<|START_ACTION|>", "<|END_ACTION|>", True)


def test_reasoning_from_enable_thinking_only_with_non_ascii_markers() -> None:
    a = analysis_of("thinking_switch.jinja")
    assert (a.reasoning.mode, a.reasoning.start, a.reasoning.end) == (ReasoningMode.TAG_BASED, "◁think▷", "◁/think▷")
    assert a.generation_prompt.prefill is PrefillOutcome.OPENED
    assert a.evidence[0].comparison == "R2 enable_thinking off/on"


def test_plain_template_has_no_markers() -> None:
    a = analysis_of("plain.jinja")
    assert a.reasoning.mode is ReasoningMode.NONE and a.content.mode is ContentMode.PLAIN
    assert a.tools.format.mode is ToolFormat.NONE and a.preserved_tokens == ()
    assert (a.user_start, a.assistant_start) == ("<start_of_turn>user", "<start_of_turn>model")
    assert a.degraded == ()


def test_rejected_shapes_are_retried_and_failures_degrade_one_phase() -> None:
    """picky.jinja wants a system turn first and raises on tool calls: reasoning is
    still found (retried with a system turn), content degrades with the reason."""
    a = analysis_of("picky.jinja")
    assert (a.reasoning.start, a.reasoning.end) == ("<think>", "</think>")
    assert [d.phase for d in a.degraded] == ["content"]
    assert "This model does not call tools" in a.degraded[0].reason
    assert "must start with a system message" in a.degraded[0].reason


def test_comparisons_retry_with_a_system_turn() -> None:
    prober = Prober(_template("picky.jinja"), Capabilities(supports_tool_calls=True, supports_object_arguments=True))
    cmp = prober.compare("c", conversation(assistant(), tools=False), conversation(assistant("other"), tools=False))
    assert cmp.shape.startswith("with system turn")
    assert cmp.diff.right == "other"
    with pytest.raises(ComparisonFailed, match="does not call tools"):
        prober.compare("c", conversation(), conversation(assistant("", calls=[{"id": "x", "type": "function", "function": {"name": "f", "arguments": {}}}])))


def test_template_that_always_raises_degrades_every_phase_without_failing() -> None:
    a = analyze_template(_template("{{ raise_exception('nope') }}"))
    assert a.reasoning.mode is ReasoningMode.NONE
    assert {d.phase for d in a.degraded} >= {"reasoning", "content", "roles", "generation prompt"}
    assert all("nope" in d.reason for d in a.degraded)


def test_runaway_template_fails_the_analysis_with_a_limit_error(runaway_limits: float) -> None:
    with pytest.raises(RenderLimitError):
        analyze_template(_template("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"))


@pytest.mark.parametrize("name", sorted(p.name for p in SMALL.glob("*.jinja")))
def test_markers_never_carry_probe_text(name: str) -> None:
    a = analysis_of(name)
    for field, value in a.marker_fields().items():
        assert not any(probe in value for probe in PROBE_STRINGS), (field, value)
    assert not any(probe in t for t in a.preserved_tokens for probe in PROBE_STRINGS)


def test_evidence_names_the_comparison_of_each_marker() -> None:
    a = analysis_of("tagged_xml.jinja")
    by_field = {e.field: e for e in a.evidence}
    assert by_field["tools.function.name_prefix"].comparison == "T3 function A vs B"
    assert "aaa_probe_first_fn_a" in by_field["tools.function.name_prefix"].left
    assert by_field["tools.arguments.value_suffix"].comparison == "A2 argument value A vs B"
    assert set(by_field) >= set(a.marker_fields())


def test_json_uses_reference_field_names() -> None:
    data = analysis_of("tagged_xml.jinja").to_json()
    assert set(data) >= {"caps", "user_start", "assistant_start", "reasoning", "content", "tools", "preserved_tokens", "generation_prompt", "evidence"}
    assert set(data["tools"]) == {"format", "function", "arguments", "call_id"}
    assert data["tools"]["format"]["mode"] == "TAG_WITH_TAGGED" and data["tools"]["call_id"]["pos"] == "NONE"
    assert "specialized" not in data


@pytest.mark.parametrize(
    "prompt, outcome",
    [
        ("<|im_start|>assistant\n", PrefillOutcome.NONE),
        ("<|im_start|>assistant\n<think>\n", PrefillOutcome.OPENED),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", PrefillOutcome.OPENED_AND_CLOSED),
        ("<think>boilerplate\nmore", PrefillOutcome.ARTIFACT),
    ],
)
def test_prefill_outcomes(prompt: str, outcome: PrefillOutcome) -> None:
    assert prefill_outcome(prompt, ReasoningAnalysis(ReasoningMode.TAG_BASED, "<think>\n", "\n</think>\n\n")) is outcome


def test_request_helpers_build_user_first_conversations() -> None:
    request = conversation(assistant())
    assert isinstance(request, RenderRequest) and request.messages[0] == USER and request.tools


@pytest.mark.parametrize("source", ["hello", "{% for m in messages %}{{ m.role }}{% endfor %}"])
def test_template_that_does_not_write_the_messages_analyses_to_nothing(source: str) -> None:
    """No probe text in any render: every marker is empty, nothing raises."""
    a = analyze_template(_template(source))
    assert (a.user_start, a.assistant_start, a.reasoning.mode, a.tools.format.mode) == ("", "", ReasoningMode.NONE, ToolFormat.NONE)
