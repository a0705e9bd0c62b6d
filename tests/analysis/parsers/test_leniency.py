"""What real models write that their template does not render, read as they meant it.

Outputs written in each family's real format, one test per category of the
leniency the README lists.  The grammar stays strict; the parser reads these.
"""

from __future__ import annotations

import pytest

from tests.conftest import needs_shared
from tests.reading import call, read, reasoning_closed, zoo_generated

pytestmark = needs_shared



# -- whitespace between markers ---------------------------------------------------


@pytest.mark.parametrize(
    "template, output",
    [
        ("mistralai-Ministral-3-14B-Reasoning-2512.jinja", '[TOOL_CALLS] get_weather[ARGS]{"city": "Paris"}'),
        ("mistralai-Ministral-3-14B-Reasoning-2512.jinja", '[TOOL_CALLS]get_weather [ARGS] {"city": "Paris"}'),
        ("moonshotai-Kimi-K2.jinja", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>'),
        ("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", '<tool_call>\n\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n\n</tool_call>\n'),
        ("GLM-4.6.jinja", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"),
        ("Qwen3-Coder.jinja", "<tool_call>\n<function=get_weather>\n\n<parameter=city>\nParis\n</parameter>\n\n</function>\n</tool_call>\n"),
    ],
)
def test_whitespace_between_markers(template: str, output: str) -> None:
    assert read(template, output) == {"content": "", "tool_calls": [call(city="Paris")], "ok": True}


def test_whitespace_inside_values_stays_exact() -> None:
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\n  two  spaces \n</parameter>\n</function>\n</tool_call>"
    assert read("Qwen3-Coder.jinja", output)["tool_calls"] == [call(city="  two  spaces ")]


# -- output cut off at max_tokens (a final parse) -----------------------------------


def test_unclosed_reasoning_is_reasoning() -> None:
    assert read("Qwen-Qwen3-0.6B.jinja", "<think>I need to", tools=False) == {"content": "", "reasoning_content": "I need to", "ok": True}
    assert read("Qwen-Qwen3-0.6B.jinja", "<think>I need to") == {"content": "", "reasoning_content": "I need to", "ok": True}


def test_a_call_inside_an_unclosed_think_block_is_a_call() -> None:
    """While the block is open the stream holds the reasoning from the call marker
    on (</think> could still come); at the end it is a call."""
    output = '<think>I will call\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    assert read("Qwen-Qwen3-0.6B.jinja", output) == {
        "content": "", "reasoning_content": "I will call", "tool_calls": [call(city="Paris")], "ok": True
    }
    # what the stream shows while the block is open: the reasoning before the marker
    generated = zoo_generated("Qwen-Qwen3-0.6B.jinja")
    assert generated.parse(output[:40], partial=True).message.reasoning_content == "I will call"


def test_a_call_cut_off_inside_an_unclosed_think_block_stays_reasoning() -> None:
    """The stream held the reasoning from the call marker on; the output ends
    there, so nothing held is dropped: it is reasoning (never a call invented)."""
    for output in ("<think>I will call\n<tool_call>\n{\"name\": \"get_wea", "<think>Hi there <tool_call>\x07broken"):
        got = read("Qwen-Qwen3-0.6B.jinja", output)
        assert got["reasoning_content"] == output[len("<think>") :].strip(), got
        assert not got.get("tool_calls") and not got["ok"]


def test_a_call_marker_in_reasoning_that_closes_stays_reasoning() -> None:
    output = "<think>I could write <tool_call> here.</think>\nNo call needed."
    assert read("Qwen-Qwen3-0.6B.jinja", output) == {
        "content": "No call needed.", "reasoning_content": "I could write <tool_call> here.", "ok": True
    }


def test_an_output_cut_inside_a_message_header_is_a_cut_its_text_kept() -> None:
    # (issue 43: this was read as adding nothing, ok, and the header's text was lost
    # without a word; a cut is reported, and text kept as content is the output's own)
    assert read("openai-gpt-oss-120b.jinja", "<|channel|>") == {"content": "<|channel|>", "ok": False}
    output = "<|channel|>analysis<|message|>Thinking.<|end|><|start|>assistant<|channel|>"
    assert read("openai-gpt-oss-120b.jinja", output) == {"content": "<|channel|>", "reasoning_content": "Thinking.", "ok": False}
    outcome = zoo_generated("openai-gpt-oss-120b.jinja").parse(" to=functions.get_weather<|channel|>comme")
    assert outcome.message.content == "to=functions.get_weather<|channel|>comme" and outcome.cut_short
    assert [(d.start, d.end) for d in outcome.deviations] == [(1, 41)]


def test_a_call_cut_off_is_kept_as_text_and_reported() -> None:
    """Mid-arguments: no call (a finished parse never emits arguments that are
    not a JSON object); its text stays content, ``ok`` False, the warning says
    it was cut.  Cut in its closers, its values whole: the call is closed."""
    generated = zoo_generated("Qwen3-Coder.jinja")
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar"
    outcome = generated.parse(output)
    assert not outcome.ok and outcome.need_more and "cut off at max_tokens" in outcome.warning
    assert outcome.message.tool_calls == () and outcome.message.content == output
    in_closers = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool"
    # (cut in its closers, its value whole: the call, the cut reported, the closer's
    # fragment as written; before issue 43 a value held until what followed it
    # decided kept the whole call as text)
    kept = generated.parse(in_closers)
    assert not kept.ok and kept.need_more and kept.cut_short and kept.message.content == "</tool"
    assert [(c.name, c.arguments) for c in kept.message.tool_calls] == [("get_weather", '{"city": "Paris"}')]
    hermes = zoo_generated("Qwen-Qwen3-0.6B.jinja")
    closed = hermes.parse('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool')
    assert [(c.name, c.arguments) for c in closed.message.tool_calls] == [("get_weather", '{"city": "Paris"}')]
    assert not closed.ok and closed.need_more
    # mid-header: no call invented from a name cut short; its text stays, as content
    assert read("Qwen3-Coder.jinja", "<tool_call>\n<function=get_wea") == {"content": "<tool_call>\n<function=get_wea", "ok": False}
    assert read("Qwen3-Coder.jinja", "Sure.\n<tool_call>\n<function=get_wea") == {"content": "Sure.\n<tool_call>\n<function=get_wea", "ok": False}


def test_a_second_parallel_call_cut_off_keeps_the_first() -> None:
    first = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>\n"
    cut = "<tool_call>\n<function=get_weather>\n<parameter=city>\nRo"
    outcome = zoo_generated("Qwen3-Coder.jinja", parallel=True).parse(first + cut)
    assert not outcome.ok and outcome.need_more
    assert [(c.name, c.arguments) for c in outcome.message.tool_calls] == [("get_weather", '{"city": "Paris"}')]
    assert outcome.message.content == cut  # (the call cut off is kept as text)


def test_a_broken_call_keeps_the_output_unchanged() -> None:
    """(An argument named outside the schema is kept: tests/analysis/parsers/test_recovery.py.)"""
    output = 'Sure.\n<tool_call>\n<function=get_weather>\n<parameter name="city">Paris</parameter>\n</function>\n</tool_call>'
    outcome = zoo_generated("Qwen3-Coder.jinja").parse(output)
    assert not outcome.ok and not outcome.need_more
    assert outcome.message.content == output and not outcome.message.tool_calls


# -- known spellings of the same call ------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '<|python_tag|>{"name": "get_weather", "arguments": {"city": "Paris"}}',
    ],
)
def test_llama3_python_tag_and_arguments_spelling(output: str) -> None:
    assert read("meta-llama-Llama-3.1-8B-Instruct.jinja", output) == {"content": "", "tool_calls": [call(city="Paris")], "ok": True}


def test_bare_function_without_the_tool_call_wrapper() -> None:
    output = "Checking.\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>"
    assert read("Qwen3-Coder.jinja", output) == {"content": "Checking.", "tool_calls": [call(city="Paris")], "ok": True}


def test_missing_parameter_closer_before_function_close() -> None:
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n</tool_call>"
    assert read("Qwen3-Coder.jinja", output) == {"content": "", "tool_calls": [call(city="Paris")], "ok": True}


def test_json_literals_in_tagged_values() -> None:
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    assert read("Qwen3-Coder.jinja", output)["tool_calls"] == [call(city="Paris", days=3)]


@pytest.mark.parametrize(
    "template, written",
    [
        ("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
        ("Qwen3-Coder.jinja", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"),
        ("deepseek-ai-DeepSeek-V3.1.jinja", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'),
    ],
)
def test_text_before_and_after_the_calls(template: str, written: str) -> None:
    """The text around the calls, as written: the whitespace on both sides of
    a call stays with the text ("check.<call> I" is no "check.I")."""
    before = reasoning_closed(template)  # (DeepSeek V3.1's prompt opens <think>)
    message = read(template, before + "Let me check.\n" + written + "\nI will report back.")
    assert message["tool_calls"] == [call(city="Paris")] and message["ok"]
    assert message["content"] == "Let me check.\n\nI will report back."
    assert read(template, before + "Let me check." + written + " I will report back.")["content"] == "Let me check. I will report back."


# -- marker text inside argument values -------------------------------------------------


def test_call_markers_inside_a_json_string_value() -> None:
    output = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "a </tool_call> b <tool_call>"}}\n</tool_call>'
    assert read("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", output)["tool_calls"] == [call(city="a </tool_call> b <tool_call>")]


def test_a_tagged_value_holding_its_own_closer() -> None:
    """`</parameter>` inside a value, where the call does not go on after it, is text:
    the reading under which the rest of the output parses."""
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nx </parameter> y\n</parameter>\n</function>\n</tool_call>"
    assert read("Qwen3-Coder.jinja", output)["tool_calls"] == [call(city="x </parameter> y")]
    two = "<tool_call>\n<function=get_weather>\n<parameter=city>\na</parameter>b\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"
    assert read("Qwen3-Coder.jinja", two)["tool_calls"] == [call(city="a</parameter>b", days=2)]
