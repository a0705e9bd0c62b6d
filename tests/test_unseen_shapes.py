"""Shapes of templates not in the zoo (issue 21), each with a small template
written for the purpose in templates/tests/: the template's own rendering
reads back, through the generic mechanism."""

from __future__ import annotations

import json

from analysis.checks.checking import CheckStatus, check_template
from analysis.checks.round_trip import ProbeStatus
from analysis.generation.generate import auto_parser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from tests.conftest import PROJECT_TEMPLATES

SMALL = PROJECT_TEMPLATES / "tests"


def test_arguments_written_in_python_spelling_read_back() -> None:
    """{{ arguments }} renders a dict as {'city': 'Paris'}: the template's own
    calls read back as the same calls (they failed as broken JSON)."""
    result = check_template(SMALL / "python_args.jinja", "python_args.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert {t.probe for t in result.round_trips if t.status is ProbeStatus.OK} >= {"one call", "two arguments", "typed values"}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    generated = auto_parser(load_template(SMALL / "python_args.jinja")).generate(
        ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools})
    )
    outcome = generated.parse("<tool_call>\n{\"name\": \"f\", \"arguments\": {'a': True, 'b': None, 'c': [1, 'x']}}\n</tool_call>")
    assert outcome.ok and outcome.message.tool_calls[0].arguments == '{"a": true, "b": null, "c": [1, "x"]}'


def test_a_template_of_content_parts_only_drops_its_end_of_turn_and_skips_the_text_reply() -> None:
    """A multimodal template writes only content parts: the end-of-turn marker
    is found from a parts render (it was read as the reply's content), and the
    text-reply probe is skipped with the reason (it failed)."""
    parser = auto_parser(load_template(SMALL / "parts_only.jinja"))
    assert parser.analysis.turn_end == ("<end_of_utterance>",)
    result = check_template(SMALL / "parts_only.jinja", "parts_only.jinja")
    assert result.status is CheckStatus.OK, result.reason
    reply = next(t for t in result.round_trips if t.probe == "reply")
    assert reply.status is ProbeStatus.SKIPPED and "reply given as text" in reply.detail
    generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}))
    assert generated.parse(" It is sunny.<end_of_utterance>\n").message.content == "It is sunny."


def test_a_handler_takes_the_section_markers_the_template_writes(tmp_path) -> None:
    """DeepSeek V4 writes <｜DSML｜tool_calls> where V3.2 wrote
    <｜DSML｜function_calls>: the DSML handler takes the section from the
    template's own rendering (the differential analysis), not from V3.2."""
    from tests.conftest import ZOO

    source = (ZOO / "DeepSeek-V3.2.jinja")
    if not source.is_file():
        import pytest

        pytest.skip("../shared is absent")
    renamed = tmp_path / "v4-like.jinja"
    renamed.write_text(source.read_text().replace("function_calls", "tool_calls"))
    parser = auto_parser(load_template(renamed))
    assert parser.analysis.specialized == "deepseek-v3.2-dsml"
    assert parser.analysis.tools.format.section_start == "<｜DSML｜tool_calls>"
    result = check_template(renamed, "v4-like.jinja")
    assert result.status is not CheckStatus.FAILED, result.reason


def test_a_call_probe_that_cannot_be_cut_out_is_skipped_with_the_reason(tmp_path) -> None:
    """A template whose history turn does not start with its generation
    prompt (here "[assistant] " against "[assistant]: ") and whose calls have
    no marker: the call probes are skipped, saying why (they failed with "the
    template writes ''")."""
    source = tmp_path / "odd.jinja"
    source.write_text(
        "{%- for m in messages -%}[{{ m.role }}] {{ m.content or '' }}"
        '{%- for c in m.tool_calls or [] %}{"name": "{{ c.function.name }}", "parameters": {{ c.function.arguments | tojson }}}{% endfor %}\n'
        "{% endfor -%}{%- if add_generation_prompt %}[assistant]: {% endif -%}"
    )
    result = check_template(source, "odd.jinja")
    assert result.status is CheckStatus.OK, result.reason
    one = next(t for t in result.round_trips if t.probe == "one call")
    assert one.status is ProbeStatus.SKIPPED and "cannot be cut out of the render" in one.detail


def test_pythonic_call_lists_without_markers_are_a_generic_format() -> None:
    """[get_weather(city="Paris")] at the start of the output (Gemma 3 / Llama
    4 pythonic templates): read by the generic pythonic-list format, text after
    the calls is content, a "[" in prose is text."""
    from analysis.generation.streaming import stream_output
    from analysis.messages.mapper import accumulate
    from tests.conftest import WEATHER_TOOLS

    parser = auto_parser(load_template(SMALL / "pythonic_list.jinja"))
    assert parser.analysis.specialized == "pythonic-list"
    result = check_template(SMALL / "pythonic_list.jinja", "pythonic_list.jinja")
    assert result.status is CheckStatus.OK, result.reason
    generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": WEATHER_TOOLS}))
    for output, content, calls in [
        ('[get_weather(city="Paris", days=3)]', "", [("get_weather", {"city": "Paris", "days": 3})]),
        ('[get_weather(city="Paris")]\nChecking.', "Checking.", [("get_weather", {"city": "Paris"})]),
        ("[1] is a footnote.", "[1] is a footnote.", []),
    ]:
        outcome = generated.parse(output)
        assert outcome.message.content == content and [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls] == calls
        deltas, streamed, _ = stream_output(generated, output, 1)
        assert streamed.message == outcome.message and accumulate(deltas) == outcome.message


def test_a_section_opener_of_two_markers_may_hold_the_turns_text() -> None:
    """Llama 4 writes a calling turn's text inside <|python_start|>…<|python_end|>,
    which is empty when there is none: the text is content, the call a call."""
    from tests.conftest import WEATHER_TOOLS

    parser = auto_parser(load_template(SMALL / "python_tags.jinja"))
    assert parser.analysis.tools.format.section_start.strip() == "<|python_start|><|python_end|>"
    result = check_template(SMALL / "python_tags.jinja", "python_tags.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert next(t for t in result.round_trips if t.probe == "text and call").status is ProbeStatus.OK
    generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": WEATHER_TOOLS}))
    outcome = generated.parse('<|python_start|>Checking.<|python_end|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot|>')
    assert outcome.ok and outcome.message.content == "Checking." and json.loads(outcome.message.tool_calls[0].arguments) == {"city": "Paris"}
