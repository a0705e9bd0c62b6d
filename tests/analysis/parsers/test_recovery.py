"""Local recovery: one deviation in a real output affects only itself.

Outputs written in each family's real format (issue 20): end-of-turn markers an
engine passes through, closers a model repeats, reasoning edges, values that do
not fit their schema.  Every output is also streamed (1- and 3-character
chunks) and must end as the whole parse does (:func:`tests.reading.read`).
"""

from __future__ import annotations

import json

import pytest

from analysis.generation.generator import auto_parser
from analysis.generation.streaming import stream_output
from analysis.messages.mapper import Message, accumulate
from analysis.parsers.pieces import turn_end_markers
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from tests.conftest import ZOO, needs_shared
from tests.reading import (
    call,
    parsed_as_streamed,
    read,
    reasoning_closed,
    zoo_generated,
    zoo_parser,
)

pytestmark = needs_shared

HERMES_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CODER_CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"


# -- end-of-turn markers --------------------------------------------------------------


@pytest.mark.parametrize(
    "template, markers",
    [
        ("Qwen-Qwen3-0.6B.jinja", ("<|im_end|>",)),
        # (Llama 3.1 ends a turn that waits for a tool's result with <|eom_id|>)
        ("meta-llama-Llama-3.1-8B-Instruct.jinja", ("<|eot_id|>", "<|eom_id|>")),
        ("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", ("<|END_RESPONSE|>", "<|END_OF_TURN_TOKEN|>")),
        ("CohereForAI-c4ai-command-r-plus-tool_use.jinja", ("<|END_OF_TURN_TOKEN|>",)),
        ("google-gemma-2-2b-it.jinja", ("<end_of_turn>",)),
        ("deepseek-ai-DeepSeek-V3.1.jinja", ("<｜end▁of▁sentence｜>",)),
        ("microsoft-Phi-3.5-mini-instruct.jinja", ("<|end|>",)),
        # no end-of-sequence token given: the probe's stand-in is not a marker of the template
        ("mistralai-Mistral-Nemo-Instruct-2407.jinja", ()),
        # GLM ends a turn by opening the next one: nothing to drop
        ("GLM-4.6.jinja", ()),
    ],
)
def test_the_analysis_finds_the_end_of_turn_markers(template: str, markers: tuple[str, ...]) -> None:
    assert zoo_parser(template).analysis.turn_end == markers


def test_the_end_of_sequence_token_of_a_models_files_is_an_end_marker(tmp_path) -> None:
    source = (ZOO / "mistralai-Mistral-Nemo-Instruct-2407.jinja").read_text()
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": source, "eos_token": "</s>", "bos_token": "<s>"}))
    assert auto_parser(load_template(config)).analysis.turn_end == ("</s>",)


@pytest.mark.parametrize(
    "template, stop",
    [
        ("Qwen-Qwen3-0.6B.jinja", "<|im_end|>"),
        ("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", "<|im_end|>"),
    ],
)
def test_an_end_of_turn_marker_after_a_reply_or_the_calls_is_not_content(template: str, stop: str) -> None:
    assert read(template, "The weather is fine." + stop) == {"content": "The weather is fine.", "ok": True}
    assert read(template, "The weather is fine.\n" + stop + "\n") == {"content": "The weather is fine.", "ok": True}
    assert read(template, HERMES_CALL + stop) == {"content": "", "tool_calls": [call(city="Paris")], "ok": True}
    assert read(template, "Checking.\n" + HERMES_CALL + "\n" + stop) == {
        "content": "Checking.",
        "tool_calls": [call(city="Paris")],
        "ok": True,
    }


@pytest.mark.parametrize(
    "template, output",
    [
        ("Qwen3-Coder.jinja", CODER_CALL + "<|im_end|>"),
        ("meta-llama-Llama-3.1-8B-Instruct.jinja", '{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>'),
        ("google-gemma-2-2b-it.jinja", "The weather is fine.<end_of_turn>"),
        ("deepseek-ai-DeepSeek-V3.1.jinja", "The weather is fine.<｜end▁of▁sentence｜>"),
        (
            "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
            "<|START_RESPONSE|>The weather is fine.<|END_RESPONSE|><|END_OF_TURN_TOKEN|>",
        ),
    ],
)
def test_each_familys_stop_marker_is_dropped(template: str, output: str) -> None:
    got = read(template, output)
    assert got["ok"], got
    assert "<|" not in got["content"] and "<end_of_turn>" not in got["content"] and "｜" not in got["content"], got


def test_an_end_of_turn_marker_followed_by_more_text_stays_text() -> None:
    output = "Use <|im_end|> to end a turn in ChatML."
    assert read("Qwen-Qwen3-0.6B.jinja", output) == {"content": output, "ok": True}
    # and a call after such text is still a call
    got = read("Qwen-Qwen3-0.6B.jinja", "Use <|im_end|> here.\n" + HERMES_CALL)
    assert got == {"content": "Use <|im_end|> here.", "tool_calls": [call(city="Paris")], "ok": True}


def test_an_end_of_turn_marker_after_reasoning_alone() -> None:
    got = read("Qwen-Qwen3-0.6B.jinja", "<think>\nNothing to say.\n</think>\n\n<|im_end|>")
    assert got == {"content": "", "reasoning_content": "Nothing to say.", "ok": True}


def test_end_markers_are_not_dropped_where_the_format_uses_them() -> None:
    """GigaChat 3 writes a call as its own turn after <|message_sep|>: that
    marker starts calls there, so it is not a stop."""
    assert zoo_parser("GigaChat3-10B-A1.8B.jinja").analysis.turn_end == ("<|message_sep|>",)
    assert turn_end_markers(zoo_parser("GigaChat3-10B-A1.8B.jinja").analysis) == ()


def test_the_grammar_does_not_take_end_markers() -> None:
    """The grammar is what a model must write before the engine stops it."""
    generated = zoo_generated("Qwen-Qwen3-0.6B.jinja")
    assert "im_end" not in generated.grammar


# -- closers a model repeats ----------------------------------------------------------------


@pytest.mark.parametrize(
    "template, output",
    [
        ("Qwen-Qwen3-0.6B.jinja", HERMES_CALL + "</tool_call>"),
        ("Qwen-Qwen3-0.6B.jinja", HERMES_CALL + "\n</tool_call>\n</tool_call><|im_end|>"),
        ("Qwen3-Coder.jinja", CODER_CALL + "\n</tool_call>"),
    ],
)
def test_duplicated_closers_after_a_call_are_dropped(template: str, output: str) -> None:
    assert read(template, output) == {"content": "", "tool_calls": [call(city="Paris")], "ok": True}


def test_text_after_a_duplicated_closer_is_content() -> None:
    got = read("Qwen-Qwen3-0.6B.jinja", HERMES_CALL + "</tool_call>\nDone.")
    assert got == {"content": "Done.", "tool_calls": [call(city="Paris")], "ok": True}


# -- reasoning edges --------------------------------------------------------------------


@pytest.mark.parametrize("output", ["<think><think>Plan.</think>Answer.", "<think>\n<think>\nPlan.\n</think>\n\nAnswer."])
def test_a_repeated_reasoning_opener_opens_one_block(output: str) -> None:
    assert read("Qwen-Qwen3-0.6B.jinja", output) == {"content": "Answer.", "reasoning_content": "Plan.", "ok": True}


@pytest.mark.parametrize(
    "template, output",
    [
        ("Qwen-Qwen3-0.6B.jinja", "<think>Plan.</think></think>Answer."),
        ("Qwen-Qwen3-0.6B.jinja", "<think>\nPlan.\n</think>\n\n</think>\n\nAnswer."),
        # (DeepSeek R1's prompt opens the block: the model writes the reasoning, then the closer twice)
        ("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "Plan.\n</think>\n</think>\n\nAnswer."),
        ("GLM-4.6.jinja", "<think>Plan.</think></think>\nAnswer."),
    ],
)
def test_a_reasoning_end_marker_written_again_at_once_is_dropped(template: str, output: str) -> None:
    assert read(template, output) == {"content": "Answer.", "reasoning_content": "Plan.", "ok": True}


def test_an_end_marker_later_in_the_reply_stays_text() -> None:
    """Only a closer written again right after the block is dropped: one in the
    reply is the reply's text (quoted, or the reply's own)."""
    got = read("Qwen-Qwen3-0.6B.jinja", "<think>Plan.</think>Write `</think>` to end a block.")
    assert got == {"content": "Write `</think>` to end a block.", "reasoning_content": "Plan.", "ok": True}


def test_the_opener_the_prompt_wrote_repeated_by_the_model() -> None:
    """Qwen3.5's generation prompt opens <think>; a model that writes it again
    opens no second block (the reference keeps '<think>' as reasoning text:
    Qwen3.5-4B#11 in tests/shared-known-failures.json)."""
    generated = zoo_generated("Qwen3.5-4B.jinja")
    assert generated.generation_prompt.endswith("<think>\n")
    assert read("Qwen3.5-4B.jinja", "<think>\nPlan.\n</think>\n\nAnswer.") == {
        "content": "Answer.",
        "reasoning_content": "Plan.",
        "ok": True,
    }


@pytest.mark.parametrize("output", ["</think>Answer.", "\n</think>\n\nAnswer.", "<think></think>Answer.", "<think>\n\n</think>\n\nAnswer."])
def test_an_empty_or_bare_closed_block_is_no_reasoning_and_not_content(output: str) -> None:
    assert read("Qwen-Qwen3-0.6B.jinja", output) == {"content": "Answer.", "ok": True}


def test_a_bare_closer_cut_short_is_not_shown_until_it_is_decided() -> None:
    assert read("Qwen-Qwen3-0.6B.jinja", "</thinking about it") == {"content": "</thinking about it", "ok": True}


@pytest.mark.parametrize(
    "output, reasoning, content",
    [
        ("Plan.</think>Answer.", "Plan.", "Answer."),
        ("Plan.\n</think>\n\nAnswer.", "Plan.", "Answer."),
        ("Plan.\nStep 2.\n</think>\n\n", "Plan.\nStep 2.", ""),
    ],
)
def test_text_before_an_end_marker_with_no_opener_is_reasoning(output: str, reasoning: str, content: str) -> None:
    """Qwen3's prompt neither opens nor closes <think>: an end marker with no
    opener before it (an engine dropped the opener) makes the text before it
    reasoning.  A stream shows nothing of that text until the end marker
    comes (read() checks the streams end as the whole parse)."""
    expected = {"content": content, "reasoning_content": reasoning, "ok": True}
    assert read("Qwen-Qwen3-0.6B.jinja", output) == expected
    generated = zoo_generated("Qwen-Qwen3-0.6B.jinja")
    end = output.index("</think>")
    for cut in range(end + 1):
        assert generated.parse(output[:cut], partial=True).message == Message(content=""), cut


@pytest.mark.parametrize(
    "output, expected",
    [
        # no end marker: a reply (shown only at the end of a stream)
        ("Just an answer.", {"content": "Just an answer.", "ok": True}),
        # a call marker first: the text before it is content, the marker after the call is text
        (HERMES_CALL, {"content": "", "tool_calls": [call(city="Paris")], "ok": True}),
        ("Let me check.\n" + HERMES_CALL, {"content": "Let me check.", "tool_calls": [call(city="Paris")], "ok": True}),
        # the end marker, then a call
        ("Plan.</think>\n" + HERMES_CALL, {"content": "", "reasoning_content": "Plan.", "tool_calls": [call(city="Paris")], "ok": True}),
        # a block that opens mid-output: the text before it is no reasoning
        ("Intro <think>plan</think>answer", {"content": "Intro <think>plan</think>answer", "ok": True}),
    ],
)
def test_unopened_reasoning_needs_its_end_marker_before_any_call(output: str, expected: dict) -> None:
    assert read("Qwen-Qwen3-0.6B.jinja", output) == expected


@pytest.mark.parametrize(
    "template, switched",
    [("Qwen-Qwen3-0.6B.jinja", True), ("HuggingFaceTB-SmolLM3-3B.jinja", True), ("ibm-granite-granite-3.3-2B-Instruct.jinja", False)],
)
def test_only_a_template_that_leaves_the_opener_to_the_model_holds_a_reply(template: str, switched: bool) -> None:
    """Granite 3.3's thinking is off unless its system prompt asks for it, and
    its generation prompt is the same either way: a reply streams as it comes."""
    assert zoo_parser(template).analysis.reasoning.switched is switched
    generated = zoo_generated(template)
    shown = generated.parse("The weather is", partial=True).message.content
    assert shown == ("" if switched else "The weather is")


def test_no_unopened_reasoning_where_the_prompt_closed_it() -> None:
    """enable_thinking false: Qwen3's prompt writes <think>\n\n</think>; an end
    marker after that is text as written."""
    request = {"messages": [{"role": "user", "content": "Weather?"}], "chat_template_kwargs": {"enable_thinking": False}}
    generated = zoo_parser("Qwen-Qwen3-0.6B.jinja").generate(ChatRequest.from_json(request))
    assert generated.generation_prompt.endswith("</think>\n\n")
    assert generated.parse("Plan.</think>Answer.").message == Message(content="Plan.</think>Answer.")


def test_the_grammar_keeps_one_opener() -> None:
    """The leniency is the parser's: a constrained model writes one opener."""
    generated = zoo_generated("Qwen-Qwen3-0.6B.jinja")
    strict = generated.build_for_grammar() if generated.build_for_grammar else generated.built
    assert "Repetition(Sequence(Literal(<think>)" not in strict.parser.dump()
    assert "Repetition(Sequence(Literal(<think>)" in generated.built.parser.dump()


# -- a value that does not fit its schema -----------------------------------------------------

CODER = "Qwen3-Coder.jinja"
GLM = "GLM-4.6.jinja"


def _coder(*arguments: tuple[str, str]) -> str:
    args = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in arguments)
    return f"<tool_call>\n<function=get_weather>\n{args}</function>\n</tool_call>"


def _glm(*arguments: tuple[str, str]) -> str:
    args = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in arguments)
    return f"<tool_call>get_weather\n{args}</tool_call>"


@pytest.mark.parametrize("written, value", [("007", "007"), ("3 days", "3 days"), ("{not json", "{not json"), ("[1,", "[1,")])
@pytest.mark.parametrize("family", [_coder, _glm])
def test_a_value_that_does_not_fit_its_type_keeps_the_call_as_written(family, written: str, value: str) -> None:
    """days is an integer: a value that reads as none keeps the call, the value
    a string as written (the schema check reports it: parse warns)."""
    got = read(CODER if family is _coder else GLM, family(("city", "Paris"), ("days", written)))
    assert got == {"content": "", "tool_calls": [call(city="Paris", days=value)], "ok": True}
    from analysis.generation.call_check import call_problems
    from analysis.messages.mapper import Message, ToolCall
    from tests.conftest import WEATHER_TOOLS

    message = Message(tool_calls=(ToolCall("get_weather", json.dumps({"city": "Paris", "days": value})),))
    assert any("days" in str(problem) for problem in call_problems(message, WEATHER_TOOLS))


@pytest.mark.parametrize("written, value", [("3", 3), ("-2", -2), ("True", True), ("null", None), ("None", None)])
def test_values_that_fit_read_as_their_type(written: str, value: object) -> None:
    for family, template in ((_coder, CODER), (_glm, GLM)):
        got = read(template, family(("city", "Paris"), ("days", written)))
        assert got["tool_calls"] == [call(city="Paris", days=value)], (template, got)


def test_an_argument_not_in_the_schema_keeps_the_call() -> None:
    got = read(CODER, _coder(("city", "Paris"), ("units", "metric"), ("count", "2")))
    assert got == {"content": "", "tool_calls": [call(city="Paris", units="metric", count=2)], "ok": True}
    got = read(GLM, _glm(("town", "Paris")))
    assert got == {"content": "", "tool_calls": [call(town="Paris")], "ok": True}


def test_a_name_is_shown_once_what_follows_confirms_it() -> None:
    """'city' is a prefix of the unknown 'city_name': a stream never shows 'city'."""
    assert read(CODER, _coder(("city_name", "Paris")))["tool_calls"] == [call(city_name="Paris")]


def test_a_missing_value_closer_ends_at_the_next_argument() -> None:
    """Where no value's closer reads (a repair): the next argument's name ends it."""
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n<parameter=days>\n3\n</function>\n</tool_call>"
    assert read(CODER, output)["tool_calls"] == [call(city="Paris", days=3)]
    output = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris\n<arg_key>days</arg_key>\n<arg_value>3\n</tool_call>"
    assert read(GLM, output)["tool_calls"] == [call(city="Paris", days=3)]


def test_another_declared_arguments_opener_inside_a_value_ends_it() -> None:
    """The plausible reading (issue 43): a value holding the opener of another
    argument its function declares, followed by that argument's value, is two
    arguments, the first one's closer left out (a deviation, noted), even
    where a closer later in the output would make one value of it all (before:
    one value, ``Paris\n<parameter=days>\n3``: a correct closer later made
    the answer worse).  The argument's own opener stays its text (a key
    given twice is no reading)."""
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    assert read(CODER, output)["tool_calls"] == [call(city="Paris", days=3)]
    assert [d.kind.value for d in zoo_generated(CODER).parse(output).deviations] == ["value-closer-left-out"]
    output = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
    assert read(GLM, output)["tool_calls"] == [call(city="Paris", days=3)]
    value = "Paris\n<parameter=city>\nLyon"
    output = f"<tool_call>\n<function=get_weather>\n<parameter=city>\n{value}\n</parameter>\n</function>\n</tool_call>"
    assert read(CODER, output)["tool_calls"] == [call(city=value)]


def test_closers_quoted_inside_a_value_are_its_text() -> None:
    """Exact first: where the value's own closer ends it and the call reads on,
    the closers it quotes are its text (a coding agent's value that quotes the
    format), never a repair."""
    # a value quoting the function's and the call's closers
    for quoted in ("print('</function>')", "print('</tool_call>')", "a </parameter> b"):
        output = f"<tool_call>\n<function=get_weather>\n<parameter=city>\n{quoted}\n</parameter>\n</function>\n</tool_call>"
        assert read(CODER, output)["tool_calls"] == [call(city=quoted)], quoted


def test_a_value_quoting_every_closer_after_it_is_read_by_what_follows() -> None:
    """Exact first, to the output's end (issue 34): a value that quotes all the
    template writes after a value (``</arg_value>\n</tool_call>``) reads through
    the quote to the closers after which the output ends or the next call
    opens; the reading that would end it at the quote leaves text that fits no
    form, so it is only a repair.  Streamed, the value is held until what
    follows its closers decides."""
    for quoted in ("print('</arg_value>\n</tool_call>')", "a</arg_value>\n</tool_call>b</arg_value>\n</tool_call>", "a</arg_value>\n</tool_call>\n<tool_call>b"):
        output = f"<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>{quoted}</arg_value>\n</tool_call>"
        assert read(GLM, output)["tool_calls"] == [call(city=quoted)], quoted
        two = output + "\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lyon</arg_value>\n</tool_call>"
        assert read(GLM, two, parallel=True)["tool_calls"] == [call(city=quoted), call(city="Lyon")], quoted
    quoted = "print('</parameter>\n</function>\n</tool_call>')"
    output = f"<tool_call>\n<function=get_weather>\n<parameter=city>\n{quoted}\n</parameter>\n</function>\n</tool_call>"
    assert read(CODER, output)["tool_calls"] == [call(city=quoted)]
    # a later run of the closers makes the reading through them the one that fits the whole output
    late = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\nDone: x</arg_value></tool_call>"
    assert read(GLM, late)["tool_calls"] == [call(city="Paris</arg_value>\n</tool_call>\nDone: x")]
    # where no reading fits the whole output (text after the calls), the value ends at the first closer, as before
    done = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\nDone."
    assert read(GLM, done)["tool_calls"] == [call(city="Paris")] and read(GLM, done)["content"] == "Done."


@pytest.mark.parametrize(
    "template, output",
    [
        # the function's close left out: the call's own closer ends it
        (CODER, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</tool_call>"),
        # the value's closer and the function's close left out
        (CODER, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</tool_call>"),
        (GLM, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris\n</tool_call>"),
        # the function's close left out in the other families: the section's or the call's end ends it
        ("MiniMax-M2.jinja", '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</minimax:tool_call>'),
        ("DeepSeek-V3.2.jinja", '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜function_calls>'),
        ("google-gemma-4-31B-it.jinja", '<|tool_call>call:get_weather{city:<|"|>Paris<|"|><tool_call|>'),
        ("LFM2-8B-A1B.jinja", "<|tool_call_start|>[get_weather(city='Paris']<|tool_call_end|>"),
    ],
)
def test_a_missing_closer_ends_at_the_calls_closer(template: str, output: str) -> None:
    before = reasoning_closed(template)  # (DeepSeek V3.2's prompt opens <think>: the reasoning ends first)
    assert read(template, before + output) == {"content": "", "tool_calls": [call(city="Paris")], "ok": True}
    # and a call after it reads as usual
    two = before + output + "\n" + output.replace("Paris", "Lyon")
    assert read(template, two, parallel=True)["tool_calls"] == [call(city="Paris"), call(city="Lyon")]


@pytest.mark.parametrize(
    "template, output",
    [
        # before the turn's end marker
        ("Qwen-Qwen3-0.6B.jinja", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n<|im_end|>'),
        (CODER, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n<|im_end|>"),
        ("MiniMax-M2.jinja", '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n[e~['),
        ("Kimi-K3.jinja", '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|close|>tools<|sep|><|close|>message<|sep|>'),
        ("meetkai-functionary-medium-v3.1.jinja", '<function=get_weather>{"city": "Paris"}<|eom_id|>'),
    ],
)
def test_a_calls_closer_left_out_ends_at_the_turns_end(template: str, output: str) -> None:
    before = reasoning_closed(template)
    assert read(template, before + output) == {"content": "", "tool_calls": [call(city="Paris")], "ok": True}


def test_a_calls_closer_left_out_ends_at_the_next_call() -> None:
    one = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    two = one + one.replace("Paris", "Lyon") + "</tool_call>"
    assert read("Qwen-Qwen3-0.6B.jinja", "Hi " + two, parallel=True) == {
        "content": "Hi",
        "tool_calls": [call(city="Paris"), call(city="Lyon")],
        "ok": True,
    }


@pytest.mark.parametrize(
    "template, stop",
    [("MiniMax-M2.jinja", "[e~["), ("meta-llama-Llama-3.1-8B-Instruct.jinja", "<|eom_id|>")],
)
def test_family_end_markers_found_in_the_template(template: str, stop: str) -> None:
    """MiniMax's end marker is bracketed around a tilde; Llama 3.1 ends a turn
    that waits for a tool's result with <|eom_id|>: both end an output."""
    assert stop in zoo_parser(template).analysis.turn_end
    before = reasoning_closed(template)
    assert read(template, before + "Fine." + stop)["content"] == "Fine."


@pytest.mark.parametrize(
    "invoke, parameter",
    [
        ('<invoke name="get_weather" description="Weather in a city">', '<parameter name="city" type="string">'),
        ('<invoke name="get_weather">', '<parameter name="city" description="(e.g. Paris)" type="string">'),
    ],
)
def test_attributes_a_model_adds_to_a_tag_are_read_over(invoke: str, parameter: str) -> None:
    """MiniMax M2's models echo a tool's description or a parameter's type as
    attributes of the tags the template closes after the name."""
    output = f"<minimax:tool_call>\n{invoke}\n{parameter}Paris</parameter>\n</invoke>\n</minimax:tool_call>"
    template = "MiniMax-M2.jinja"
    assert read(template, reasoning_closed(template) + output) == {"content": "", "tool_calls": [call(city="Paris")], "ok": True}


def test_the_grammar_takes_no_added_attributes() -> None:
    """The parser reads added attributes (an attribute's '="' beyond the
    template's own 'name="'); the grammar's form does not."""
    generated = zoo_generated("MiniMax-M2.jinja")
    strict = generated.build_for_grammar() if generated.build_for_grammar else generated.built
    assert '="' in generated.built.parser.dump().replace('name="', "")
    assert '="' not in strict.parser.dump().replace('name="', "")


@pytest.mark.parametrize(
    "template, one",
    [
        ("Qwen-Qwen3-0.6B.jinja", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
        (GLM, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"),
        (CODER, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"),
    ],
)
def test_text_between_calls_is_content_and_the_calls_after_it_are_calls(template: str, one: str) -> None:
    output = "Let me check.\n" + one + "\n\nAnd Lyon too.\n" + one.replace("Paris", "Lyon") + "\nDone."
    got = read(template, reasoning_closed(template) + output, parallel=True)
    assert got["tool_calls"] == [call(city="Paris"), call(city="Lyon")]
    assert " ".join(got["content"].split()) == "Let me check. And Lyon too. Done."


def test_a_missing_name_closer_ends_at_the_value_opener() -> None:
    output = _glm(("city", "Paris")).replace("<arg_key>city</arg_key>", "<arg_key>city")
    assert "</arg_key>" not in output
    assert read(GLM, output) == {"content": "", "tool_calls": [call(city="Paris")], "ok": True}
    two = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days\n<arg_value>3</arg_value>\n</tool_call>"
    assert read(GLM, two) == {"content": "", "tool_calls": [call(city="Paris", days=3)], "ok": True}


def test_a_missing_value_opener_is_read() -> None:
    output = "<tool_call>get_weather\n<arg_key>city</arg_key>\nParis</arg_value>\n<arg_key>days</arg_key>3</arg_value>\n</tool_call>"
    assert read(GLM, output)["tool_calls"] == [call(city="Paris", days=3)]


def test_glm_object_arguments_escaped_as_a_json_string() -> None:
    tools = [{"type": "function", "function": {"name": "configure", "parameters": {"type": "object", "properties": {
        "config": {"type": "object"}, "tags": {"type": "array"}, "note": {"type": "string"}}}}}]
    generated = zoo_parser(GLM).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    output = '<tool_call>configure\n<arg_key>config</arg_key>\n<arg_value>"{\\"a\\": 1}"</arg_value>\n<arg_key>tags</arg_key>\n<arg_value>"[1, 2]"</arg_value>\n<arg_key>note</arg_key>\n<arg_value>"{\\"b\\": 2}"</arg_value>\n</tool_call>'
    outcome = parsed_as_streamed(generated, output)
    assert outcome.ok
    # the string parameter keeps its text as written
    assert json.loads(outcome.message.tool_calls[0].arguments) == {"config": {"a": 1}, "tags": [1, 2], "note": '"{\\"b\\": 2}"'}


# -- values read by the tool's schema --------------------------------------------------------

TYPED_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "nullable": {"type": ["string", "null"]},
    "either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "object"}, {"type": "array"}]},
    "flag": {"type": "string", "nullable": True},
    "text": {"type": "string"},
}}}}]


@pytest.mark.parametrize(
    "name, written, value",
    [
        ("nullable", "null", None),
        ("nullable", "Paris", "Paris"),
        ("flag", "null", None),
        ("either", "42", 42),
        ("either", '{"a": 1}', {"a": 1}),
        ("either", "[1]", [1]),
        ("either", "2 dollars", "2 dollars"),
        ("either", "{not json", "{not json"),
        ("text", "null", "null"),  # a string schema's value is its text
        ("text", "42", "42"),
    ],
)
def test_a_value_is_the_first_non_string_type_its_schema_allows_that_it_reads_as(name: str, written: str, value: object) -> None:
    generated = zoo_parser(CODER).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": TYPED_TOOLS}))
    output = f"<tool_call>\n<function=f>\n<parameter={name}>\n{written}\n</parameter>\n</function>\n</tool_call>"
    outcome = generated.parse(output)
    assert outcome.ok and json.loads(outcome.message.tool_calls[0].arguments) == {name: value}
    for size in (1, 3):
        deltas, streamed, _ = stream_output(generated, output, size)
        assert streamed.message == outcome.message and accumulate(deltas) == outcome.message


def test_a_typed_value_cut_short_is_kept_as_written() -> None:
    """A stream shows a typed value once decided; an output cut short inside
    one is no call (its arguments are no JSON object): its text stays content,
    as written (never lost), and the outcome says the output was cut."""
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n12"
    outcome = zoo_generated(CODER).parse(output)
    assert not outcome.ok and outcome.need_more and "cut off" in outcome.warning
    assert outcome.message.tool_calls == () and outcome.message.content == output
    deltas, streamed, _ = stream_output(zoo_generated(CODER), output, 1)
    assert accumulate(deltas) == streamed.message  # (the stream ends with what it showed)


# -- dedicated formats: end markers, closers written twice, arguments that are not JSON --------


KIMI_K2_CALL = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_calls_section_end|>"
HARMONY_CALL = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>"


@pytest.mark.parametrize(
    "template, output, extra",
    [
        ("moonshotai-Kimi-K2.jinja", KIMI_K2_CALL, "<|im_end|>"),
        ("moonshotai-Kimi-K2.jinja", KIMI_K2_CALL, "<|tool_calls_section_end|>"),
        ("moonshotai-Kimi-K2.jinja", KIMI_K2_CALL, "<|tool_call_end|>"),
        ("openai-gpt-oss-120b.jinja", HARMONY_CALL, "<|return|>"),
        ("openai-gpt-oss-120b.jinja", HARMONY_CALL, "<|call|>"),
        ("meetkai-functionary-medium-v3.2.jinja", "get_weather\n{\"city\": \"Paris\"}", "<|eot_id|>"),
        ("google-gemma-4-31B-it.jinja", "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>", "<|tool_response>"),
        ("google-gemma-4-31B-it.jinja", "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>", "<turn|>"),
        ("google-gemma-4-31B-it.jinja", "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>", "<tool_call|>"),
    ],
)
def test_dedicated_formats_drop_end_markers_and_repeated_closers(template: str, output: str, extra: str) -> None:
    plain = read(template, output)
    assert plain["tool_calls"] == [call(city="Paris")], plain
    assert read(template, output + "\n" + extra) == plain
    assert read(template, output + extra + "\n") == plain


@pytest.mark.parametrize(
    "template, output, arguments",
    [
        ("Qwen-Qwen3-0.6B.jinja", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 007}}\n</tool_call>', '{"city": "Paris", "days": 007}'),
        ("moonshotai-Kimi-K2.jinja", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": Paris}<|tool_call_end|><|tool_calls_section_end|>', '{"city": Paris}'),
        ("deepseek-ai-DeepSeek-V3.1.jinja", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris",}<｜tool▁call▁end｜><｜tool▁calls▁end｜>', '{"city": "Paris",}'),
        ("Apertus-8B-Instruct.jinja", '<|tools_prefix|>[{"get_weather": {"city": "Paris", "days": 3 days}}]<|tools_suffix|>', '{"city": "Paris", "days": 3 days}'),
        # the closing brace left out: the arguments end before the marker that ends the call
        ("moonshotai-Kimi-K2.jinja", '<|tool_calls_section_begin|> <|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|> {"city": "Paris" <|tool_call_end|> <|tool_calls_section_end|>', '{"city": "Paris"'),
        ("deepseek-ai-DeepSeek-V3.1.jinja", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"<｜tool▁call▁end｜><｜tool▁calls▁end｜>', '{"city": "Paris"'),
        # a string left open: the arguments end where the call's closers follow (not in the string)
        ("Qwen-Qwen3-0.6B.jinja", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris}}\n</tool_call>', '{"city": "Paris}'),
        # no end marker: the call's last brace before the output's end (or its end-of-turn marker)
        ("meta-llama-Llama-3.1-8B-Instruct.jinja", '{"name": "get_weather", "parameters": {"city": "Paris", "days": [1,}}', '{"city": "Paris", "days": [1,}'),
        ("meta-llama-Llama-3.3-70B-Instruct.jinja", '{"name": "get_weather", "parameters": {"city": "Paris", "days": {x}}}<|eot_id|>', '{"city": "Paris", "days": {x}}'),
        ("GigaChat3.1-10B-A1.8B.jinja", '<|function_call|>{"name": "get_weather", "arguments": {"city": "Paris", "days": 007}}', '{"city": "Paris", "days": 007}'),
        # an id after the arguments: they end before its key
        ("mistralai-Mistral-Nemo-Instruct-2407.jinja", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris", "days": {x}, "id": "abcdefghi"}]', '{"city": "Paris", "days": {x}'),
        ("llama-cpp-lfm2.jinja", '<|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3 days}, "id": "call_0"}]<|tool_call_end|>', '{"city": "Paris", "days": 3 days}'),
        # an array of calls: the array's end, or the next call
        ("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris", "days": [1,}}\n]<|END_ACTION|>', '{"city": "Paris", "days": [1,}'),
    ],
)
def test_json_arguments_that_are_not_json_keep_the_call_as_text(template: str, output: str, arguments: str) -> None:
    """A finished parse never emits arguments that are not a JSON object: the
    call is no call, its text (arguments as written) stays content, the text
    around it unchanged, and the outcome says so.  (A stream showed the call
    while it was written: it ends with what it showed, and says the whole
    output reads otherwise.)"""
    generated = zoo_generated(template)
    # (DeepSeek V3.1's generation prompt opens <think>: the reasoning ends first)
    text = reasoning_closed(template) + "Checking.\n" + output
    outcome = generated.parse(text)
    assert not outcome.ok and not outcome.message.tool_calls
    assert outcome.message.content.startswith("Checking.") and arguments in outcome.message.content
    assert "kept as text: arguments that are not a JSON object" in outcome.warning
    _, streamed, _ = stream_output(generated, text, 3)
    assert not streamed.ok and all(c.name == "get_weather" for c in streamed.message.tool_calls)


def test_an_unclosed_argument_object_keeps_the_next_call() -> None:
    """The arguments of a call whose closing brace is left out end at its own
    end marker: the next call is its own (they had been read as one)."""
    one = '<|tool_call_begin|>functions.get_weather:{i} <|tool_call_argument_begin|> {{"city": "{city}"{brace} <|tool_call_end|> '
    output = "<|tool_calls_section_begin|> " + one.format(i=0, city="Paris", brace="") + one.format(i=1, city="Lyon", brace="}") + "<|tool_calls_section_end|>"
    generated = zoo_generated("moonshotai-Kimi-K2.jinja", parallel=True)
    outcome = generated.parse(output)
    # (the first call's arguments are no JSON object: it is kept as text, reported)
    assert [(c.name, c.arguments) for c in outcome.message.tool_calls] == [("get_weather", '{"city": "Lyon"}')]
    assert '{"city": "Paris" <|tool_call_end|>' in outcome.message.content and not outcome.ok


@pytest.mark.parametrize(
    "template, two",
    [
        ("fireworks-ai-llama-3-firefunction-v2.jinja", ' functools[{"name": "get_weather", "arguments": {"days": 007}}, {"name": "get_weather", "arguments": {"city": "Lyon"}}]'),
        ("mistralai-Mistral-Nemo-Instruct-2407.jinja", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"days": 007}, "id": "abcdefghi"}, {"name": "get_weather", "arguments": {"city": "Lyon"}, "id": "bcdefghij"}]'),
        # the next call indented as the template writes it
        (
            "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
            '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"days": 007}},\n'
            '    {"tool_call_id": "1", "tool_name": "get_weather", "parameters": {"city": "Lyon"}}\n]<|END_ACTION|>',
        ),
    ],
)
def test_json_arguments_that_are_not_json_end_before_the_next_call(template: str, two: str) -> None:
    """The broken call ends before the next one, which reads; the broken one
    is kept as text (its arguments are no JSON object), reported."""
    generated = zoo_generated(template, parallel=True)
    outcome = generated.parse(two)
    assert [(c.name, c.arguments) for c in outcome.message.tool_calls] == [("get_weather", '{"city": "Lyon"}')]
    assert '{"days": 007}' in outcome.message.content and "kept as text" in outcome.warning


def test_a_stream_shows_json_arguments_short_of_where_a_broken_value_would_end_them() -> None:
    """A string in the arguments that holds the call's closers is shown up to
    them until the value is decided: the arguments might end there."""
    generated = zoo_generated("Qwen-Qwen3-0.6B.jinja")
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "a}}</tool_call> b'
    for end in range(len(text) - 16, len(text) + 1):  # from "a" on
        assert generated.parse(text[:end], partial=True).message.tool_calls[0].arguments == '{"city": "a', end
    whole = text + '"}}\n</tool_call>'  # the string closes: it held the closers
    assert read("Qwen-Qwen3-0.6B.jinja", whole)["tool_calls"] == [call(city="a}}</tool_call> b")]


def test_json_arguments_cut_short_are_still_reported_as_cut_short() -> None:
    outcome = zoo_generated("Qwen-Qwen3-0.6B.jinja").parse('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par')
    assert not outcome.ok and outcome.need_more and "cut off" in outcome.warning


# -- nothing lost ---------------------------------------------------------------------------


def test_harmony_words_before_the_message_are_never_dropped() -> None:
    """One content type may follow the channel (commentary json); other words
    break the format, and the output is kept unchanged (was: dropped, exit 0)."""
    generated = zoo_generated("openai-gpt-oss-120b.jinja")
    output = "<|channel|>analysis garbage text<|message|>Hi<|end|>"
    outcome = generated.parse(output)
    assert not outcome.ok and outcome.message.content == output
    good = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>"
    assert read("openai-gpt-oss-120b.jinja", good)["tool_calls"] == [call(city="Paris")]
    good = " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>"
    assert read("openai-gpt-oss-120b.jinja", good)["tool_calls"] == [call(city="Paris")]


def test_gemma_text_around_a_stray_channel_opener_is_kept() -> None:
    assert read("google-gemma-4-31B-it.jinja", "Hello<|channel>world") == {"content": "Hello<|channel>world", "ok": True}
    assert read("google-gemma-4-31B-it.jinja", "<channel|>Hello") == {"content": "Hello", "ok": True}


@pytest.mark.parametrize(
    "template, two",
    [
        ("google-gemma-4-31B-it.jinja", '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><|tool_call>call:get_weather{city:<|"|>Rome<|"|>}<tool_call|>'),
        ("Qwen-Qwen3-0.6B.jinja", HERMES_CALL + "\n" + HERMES_CALL.replace("Paris", "Rome")),
    ],
)
def test_a_second_call_while_parallel_calls_are_off_is_read(template: str, two: str) -> None:
    got = read(template, two)  # (the request has parallel_tool_calls off)
    assert got == {"content": "", "tool_calls": [call(city="Paris"), call(city="Rome")], "ok": True}


def test_a_call_cut_off_after_its_id_keeps_the_id_as_text() -> None:
    """Cut before its arguments: no call (no arguments object); its text, the id in it, stays."""
    output = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    outcome = zoo_generated("moonshotai-Kimi-K2.jinja").parse(output)
    assert outcome.need_more and not outcome.message.tool_calls
    assert outcome.message.content.endswith("<|tool_call_begin|>functions.get_weather:0")


# -- Llama 3.x bare JSON calls ------------------------------------------------------------

LLAMA = "meta-llama-Llama-3.1-8B-Instruct.jinja"
LLAMA_CALL = '{"name": "get_weather", "parameters": {"city": "Paris"}}'


@pytest.mark.parametrize(
    "output, content",
    [
        ("Sure, checking: " + LLAMA_CALL, "Sure, checking:"),
        (LLAMA_CALL + "\nI will report back.", "I will report back."),
        ("Checking.\n<|python_tag|>" + LLAMA_CALL, "Checking."),
        (LLAMA_CALL + "<|eot_id|>", ""),
    ],
)
def test_llama3_calls_with_text_before_or_after(output: str, content: str) -> None:
    got = read(LLAMA, output)
    assert got["tool_calls"] == [call(city="Paris")], got
    assert got["content"].startswith(content) and got["ok"], got


def test_llama3_calls_joined_by_semicolons() -> None:
    output = LLAMA_CALL + "; " + LLAMA_CALL.replace("Paris", "Rome")
    assert read(LLAMA, output) == {"content": "", "tool_calls": [call(city="Paris"), call(city="Rome")], "ok": True}


def test_a_json_object_that_is_no_call_stays_content_and_is_never_shown_as_one() -> None:
    for output in ('{"name": "Bob"}', 'My data: {"name": "Bob", "age": 3}'):
        assert read(LLAMA, output) == {"content": output, "ok": True}


# -- several call blocks where the template writes one -----------------------------------------


@pytest.mark.parametrize(
    "template, one",
    [
        ("LFM2-8B-A1B.jinja", "<|tool_call_start|>[get_weather(city='{city}')]<|tool_call_end|>"),
        ("llama-cpp-lfm2.jinja", '<|tool_call_start|>[{{"name": "get_weather", "arguments": {{"city": "{city}"}}}}]<|tool_call_end|>'),
        ("moonshotai-Kimi-K2.jinja", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{{"city": "{city}"}}<|tool_call_end|><|tool_calls_section_end|>'),
        ("deepseek-ai-DeepSeek-V3.1.jinja", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{{"city": "{city}"}}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'),
        ("DeepSeek-V3.2.jinja", '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">{city}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'),
    ],
)
def test_calls_in_several_blocks(template: str, one: str) -> None:
    output = one.format(city="Paris") + "\n" + one.format(city="Rome")
    generated = zoo_generated(template)
    if generated.generation_prompt.endswith("<think>"):
        output = "</think>" + output
    got = read(template, output)
    assert got["tool_calls"] == [call(city="Paris"), call(city="Rome")] and got["ok"], got


def test_lfm2_json_calls_without_their_brackets() -> None:
    output = '<|tool_call_start|>{"name": "get_weather", "arguments": {"city": "Paris"}}<|tool_call_end|>'
    assert read("llama-cpp-lfm2.jinja", output)["tool_calls"] == [call(city="Paris")]


@pytest.mark.parametrize(
    "written, value",
    [('"Paris"', "Paris"), ("'Paris'", "Paris"), ("Paris", "Paris"), ("New York", "New York"), ('<|"|>Paris<|"|>', "Paris")],
)
def test_gemma4_values_spelled_otherwise(written: str, value: str) -> None:
    output = "<|tool_call>call:get_weather{city:" + written + ",days:3}<tool_call|>"
    got = read("google-gemma-4-31B-it.jinja", output)
    assert got == {"content": "", "tool_calls": [call(city=value, days=3)], "ok": True}


@pytest.mark.parametrize(
    "template, output",
    [
        ("DeepSeek-V3.2.jinja", '</think><｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name="days" string="false">{days}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'),
        ("Kimi-K3.jinja", '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|open|>argument key="days" type="number"<|sep|>{days}<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>'),
        ("google-gemma-4-31B-it.jinja", '<|tool_call>call:get_weather{{city:<|"|>Paris<|"|>,days:{days}}}<tool_call|>'),
        ("LFM2-8B-A1B.jinja", "<|tool_call_start|>[get_weather(city='Paris', days={days})]<|tool_call_end|>"),
    ],
)
@pytest.mark.parametrize(
    "days, value", [("3", 3), ("007", "007"), ("3 days", "3 days"), ("True", True), ("[1,", "[1,"), ("{x}", "{x}"), ("1.2.3", "1.2.3")]
)
def test_dedicated_formats_read_values_by_the_same_coercion(template: str, output: str, days: str, value: object) -> None:
    """DSML's string="false", Kimi K3's type="number", Gemma 4's and pythonic
    calls' bare values go through the one coercion rule (builder.typed_value)."""
    generated = zoo_generated(template)
    text = output.format(days=days)
    if template == "Kimi-K3.jinja" and not generated.generation_prompt.endswith("<|sep|>"):
        pytest.fail(generated.generation_prompt)
    outcome = parsed_as_streamed(generated, text)
    assert outcome.ok, outcome.warning
    assert json.loads(outcome.message.tool_calls[0].arguments) == {"city": "Paris", "days": value}


@pytest.mark.parametrize(
    "template, output",
    [
        ("google-gemma-4-31B-it.jinja", '<|tool_call>call:get_weather{{city:<|"|>Paris<|"|>,days:{days},unit:<|"|>celsius<|"|>}}<tool_call|>'),
        ("google-gemma-4-31B-it.jinja", '<|tool_call>call:get_weather{{city:<|"|>Paris<|"|>,days:{days}, unit:<|"|>celsius<|"|>}}<tool_call|>'),
        ("LFM2-8B-A1B.jinja", "<|tool_call_start|>[get_weather(city='Paris', days={days}, unit='celsius')]<|tool_call_end|>"),
    ],
)
@pytest.mark.parametrize("days", ["[1,", "[1,,", "{x", "(1", "3 days, 4"])
def test_a_bare_value_that_breaks_its_format_ends_at_the_next_argument(template: str, output: str, days: str) -> None:
    """Gemma 4 and pythonic values are written bare between separators: one
    that is no value ends where the next argument's name starts, kept as
    written; the arguments after it read as before."""
    got = read(template, output.format(days=days))
    assert got == {"content": "", "tool_calls": [call(city="Paris", days=days, unit="celsius")], "ok": True}


@pytest.mark.parametrize(
    "template, output",
    [
        ("google-gemma-4-31B-it.jinja", '<|tool_call>call:get_weather{city:<|"|>Paris,days:3}<tool_call|>'),
        ("google-gemma-4-31B-it.jinja", '<|tool_call>call:get_weather{days:3,city:<|"|>Paris}<tool_call|>'),
        ("LFM2-8B-A1B.jinja", "<|tool_call_start|>[get_weather(city='Paris, days=3)]<|tool_call_end|>"),
        ("LFM2-8B-A1B.jinja", '<|tool_call_start|>[get_weather(days=3, city="Paris)]<|tool_call_end|>'),
    ],
)
def test_a_string_left_unclosed_ends_at_the_next_argument_or_the_calls_end(template: str, output: str) -> None:
    assert read(template, output) == {"content": "", "tool_calls": [call(city="Paris", days=3)], "ok": True}


def test_a_string_that_holds_a_separator_is_still_one_string() -> None:
    """The boundaries a string left open would end at are held back while it
    is written, then shown once the string goes on (or closes)."""
    for template, output in [
        ("google-gemma-4-31B-it.jinja", '<|tool_call>call:get_weather{city:<|"|>A,days:B, unit:C<|"|>,days:3}<tool_call|>'),
        ("LFM2-8B-A1B.jinja", "<|tool_call_start|>[get_weather(city='A, days=B', days=3)]<|tool_call_end|>"),
    ]:
        city = "A,days:B, unit:C" if "gemma" in template else "A, days=B"
        assert read(template, output) == {"content": "", "tool_calls": [call(city=city, days=3)], "ok": True}, template


# -- Kimi K3 -----------------------------------------------------------------------------------

K3 = "Kimi-K3.jinja"
K3_REPLY = "<|open|>response<|sep|>Hello<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>"


def test_kimi_k3_names_are_unescaped_as_its_template_escapes_them() -> None:
    tools = [{"type": "function", "function": {"name": "a&b", "parameters": {"type": "object", "properties": {'x"y': {"type": "string"}}}}}]
    generated = zoo_parser(K3).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    output = (
        '<|open|>tools<|sep|><|open|>call tool="a&amp;b" index="1"<|sep|><|open|>argument key="x&quot;y" type="string"<|sep|>'
        "v &amp; w<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>"
    )
    outcome = parsed_as_streamed(generated, output)
    # names are attributes (escaped by the template); values are written as they are
    assert [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls] == [("a&b", {'x"y': "v &amp; w"})]


@pytest.mark.parametrize(
    "output",
    [
        "<|open|>think<|sep|>Plan.<|close|>think<|sep|>" + K3_REPLY,  # the opener the prompt wrote, repeated
        "Plan.<|close|>think<|sep|>" + K3_REPLY.replace("<|close|>message", "<|close|>response<|sep|><|close|>message"),  # a closer twice
        "Plan.<|close|>think<|sep|>" + K3_REPLY + "<|end_of_msg|>",
    ],
)
def test_kimi_k3_repeated_openers_and_dangling_closers(output: str) -> None:
    assert read(K3, output) == {"content": "Hello", "reasoning_content": "Plan.", "ok": True}


@pytest.mark.parametrize(
    "template, wrap",
    [
        ("Qwen-Qwen3-0.6B.jinja", "<tool_call>\n{}\n</tool_call>"),
        ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "[TOOL_CALLS][{}]"),
    ],
)
def test_a_json_call_object_reads_with_its_members_in_any_order(template: str, wrap: str) -> None:
    """JSON read as JSON: the arguments before the name, an id or another member first or last."""
    for body in (
        '{"arguments": {"city": "Paris"}, "name": "get_weather"}',
        '{"id": "abcdefghi", "name": "get_weather", "arguments": {"city": "Paris"}}',
        '{"type": "function", "name": "get_weather", "arguments": {"city": "Paris"}, "x": [1]}',
    ):
        got = read(template, wrap.replace("{}", body))
        assert got["tool_calls"] == [call(city="Paris")] and got["ok"], (body, got)


@pytest.mark.parametrize(
    "template, output",
    [
        (
            "deepseek-ai-DeepSeek-V3.2.jinja",
            '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
            '<｜DSML｜parameter name="verbose" string="false">true</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
        ),
        (
            "Kimi-K3.jinja",
            '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>'
            '<|open|>argument key="verbose" type="boolean"<|sep|>true<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
        ),
    ],
)
def test_dsml_and_kimi_k3_keep_an_argument_the_schema_does_not_declare(template: str, output: str) -> None:
    """As the generic tagged formats do: the call is kept, the schema check
    reports the argument (they had rejected the whole call)."""
    got = read(template, reasoning_closed(template) + output)
    assert got["tool_calls"] == [{"function": {"name": "get_weather", "arguments": {"city": "Paris", "verbose": True}}}], got
    from analysis.generation.call_check import call_problems
    from analysis.messages.mapper import ToolCall
    from tests.conftest import WEATHER_TOOLS

    assert call_problems(Message(tool_calls=(ToolCall("get_weather", '{"city": "Paris", "verbose": true}'),)), WEATHER_TOOLS)


@needs_shared
def test_gigachats_end_of_sequence_is_dropped_where_the_model_files_name_it(tmp_path) -> None:
    """Issue 34's GigaChat ``</s>``: the template never writes it; the
    tokenizer's end-of-sequence token is.  Loaded with the model's
    ``tokenizer_config.json``, a trailing ``</s>`` ends the output; from the
    bare template it is text (HTML's strikethrough closes with it too)."""
    import json as _json

    source = (ZOO / "GigaChat3.1-10B-A1.8B.jinja").read_text()
    (tmp_path / "tokenizer_config.json").write_text(_json.dumps({"chat_template": source, "eos_token": "</s>", "bos_token": "<s>"}))
    request = ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}]})
    with_files = auto_parser(load_template(tmp_path)).generate(request)
    assert with_files.parse("Hello there.</s>").message.content == "Hello there."
    bare = auto_parser(load_template(ZOO / "GigaChat3.1-10B-A1.8B.jinja")).generate(request)
    assert bare.parse("It is <s>wrong</s>").message.content == "It is <s>wrong</s>"


@needs_shared
def test_a_dsml_value_that_quotes_its_own_closer_is_read_whole() -> None:
    """DeepSeek V3.2's DSML: a value holding ``</｜DSML｜parameter>`` ends at the
    closer from which the call reads on, not at the quoted one."""
    import json as _json

    tools = [{"type": "function", "function": {"name": "run", "parameters": {"type": "object", "properties": {"code": {"type": "string"}, "n": {"type": "integer"}}}}}]
    generated = auto_parser(load_template(ZOO / "deepseek-ai-DeepSeek-V3.2.jinja")).generate(
        ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": tools, "enable_thinking": False})
    )
    code = "print('</｜DSML｜parameter>')"
    output = (
        "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"run\">\n"
        f"<｜DSML｜parameter name=\"code\" string=\"true\">{code}</｜DSML｜parameter>\n"
        "<｜DSML｜parameter name=\"n\" string=\"false\">2</｜DSML｜parameter>\n"
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )
    outcome = generated.parse(output)
    assert outcome.ok and [_json.loads(c.arguments) for c in outcome.message.tool_calls] == [{"code": code, "n": 2}]
    _, streamed, _ = stream_output(generated, output, 3)
    assert streamed.message == outcome.message


@needs_shared
def test_functionarys_recipient_marker_quoted_in_prose_is_prose() -> None:
    """Functionary v3.2: text ends at the first ``>>>`` from which a recipient
    and the rest of the output read; one quoted in prose is its text."""
    import json as _json

    from tests.conftest import WEATHER_TOOLS

    generated = auto_parser(load_template(ZOO / "meetkai-functionary-medium-v3.2.jinja")).generate(
        ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": WEATHER_TOOLS})
    )
    prose = "all\nWrite `>>>` to call a tool."
    assert generated.parse(prose).ok and generated.parse(prose).message.content == "Write `>>>` to call a tool."
    both = 'all\nI will use `>>>` now.>>>get_weather\n{"city": "Paris"}'
    outcome = generated.parse(both)
    assert outcome.ok and outcome.message.content == "I will use `>>>` now."
    assert [_json.loads(c.arguments) for c in outcome.message.tool_calls] == [{"city": "Paris"}]
    _, streamed, _ = stream_output(generated, both, 2)
    assert streamed.message == outcome.message


@pytest.mark.parametrize(
    "template, output, text",
    [
        # Kimi K2: a call whose own closer is broken
        (
            "Kimi-K2-Instruct.jinja",
            '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_cacall_end|><|tool_calls_section_end|>',
            "<|tool_cacall_end|><|tool_calls_section_end|>",
        ),
        # Kimi K3: the message close broken after the tools section
        (
            K3,
            '<|close|>think<|sep|><|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>'
            "Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>mess<|close|<|end_of_msg|>",
            "<|close|>mess<|close|<|end_of_msg|>",
        ),
        # Functionary v3.2: a broken end-of-turn marker after a call
        ("meetkai-functionary-medium-v3.2.jinja", 'get_weather\n{"city": "Paris"}<|eot>>>>>>_id|>', "<|eot>>>>>>_id|>"),
    ],
)
def test_text_after_a_handlers_calls_is_content_as_in_the_generic_formats(template: str, output: str, text: str) -> None:
    """Block by block (issue 34): the call that reads is a call, and the broken
    text after it is content, whole and streamed alike (a stream showed the
    call; the whole parse used to keep the block as text)."""
    message = read(template, output)
    assert message["tool_calls"] == [call(city="Paris")] and message["content"].strip() == text


def test_a_value_quoting_its_closers_and_a_next_calls_head_is_read_whole() -> None:
    """The look-ahead after a candidate closer reads the next call whole (as it
    reads alone), not only its head: a GLM value quoting
    ``</arg_value></tool_call><tool_call>get_weather`` and then more text is
    its text, as the output has no other reading (it was read at the quote,
    and the "call" after it did not read)."""
    generated = zoo_generated("GLM-4.6.jinja")
    value = "a</arg_value>\n</tool_call>\n<tool_call>get_weather\nb"
    for size in (1, 5):
        outcome = parsed_as_streamed(generated, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>" + value + "</arg_value>\n</tool_call>", size)
        assert outcome.ok and [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls] == [("get_weather", {"city": value})]
    # two calls: the first value's end is decided by the second call, whole
    two = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lyon</arg_value>\n</tool_call>"
    outcome = parsed_as_streamed(generated, two, 3)
    assert [json.loads(c.arguments) for c in outcome.message.tool_calls] == [{"city": "Paris"}, {"city": "Lyon"}]


def test_a_dsml_value_quoting_its_closers_and_a_next_invokes_head_is_read_whole() -> None:
    """DeepSeek V3.2's DSML reads the next invoke whole too (it stopped at its
    opener): a value quoting ``</｜DSML｜parameter></｜DSML｜invoke><｜DSML｜invoke
    name="get_weather">`` and then more text is its text."""
    generated = zoo_generated("DeepSeek-V3.2.jinja")
    value = 'a</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name="get_weather">\nb'
    call = '<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">{}</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
    for size in (1, 5):
        outcome = parsed_as_streamed(generated, "</think><｜DSML｜function_calls>\n" + call.format(value) + "</｜DSML｜function_calls>", size)
        assert outcome.ok and [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls] == [("get_weather", {"city": value})]
    two = "</think><｜DSML｜function_calls>\n" + call.format("Paris") + call.format("Lyon") + "</｜DSML｜function_calls>"
    assert [json.loads(c.arguments) for c in parsed_as_streamed(generated, two, 3).message.tool_calls] == [{"city": "Paris"}, {"city": "Lyon"}]
