"""Broken and cut outputs keep their text (issue 43): the content and the
reasoning are the output's own text, no word of it is lost, and a stream ends
as the whole parse (``tests.fuzzing``).

First the checks themselves, then the readings the fuzz found wrong, each on
the template it was found on, then a sample of the fuzz over every template
of both folders (the whole run: ``python -m tests.fuzzing``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from analysis.generation.generated import Generated
from analysis.messages.deviations import DeviationKind
from analysis.messages.mapper import Message, ToolCall
from tests.conftest import ROOT, SHARED, needs_shared
from tests.deviating import renders
from tests.fuzzing import PROMISES, fuzz, subject, subsequence, words_lost
from tests.reading import parsed_as_streamed

KNOWN = json.loads((ROOT / "tests" / "fuzz-known-failures.json").read_text(encoding="utf-8"))


def _generated(name: str) -> Generated:
    generated, _ = renders(SHARED / "templates" / name)
    assert generated is not None
    return generated


# -- the checks -----------------------------------------------------------------------------


def test_text_the_output_never_had_is_found() -> None:
    assert subsequence('Hi <tool_call> {"name": "g",', 'Hi\n<tool_call>\n{"name": "g", "')
    # (a cut call that comes back with a quote it never had, or its opener moved after it)
    assert not subsequence('{"name":"g",""', '<tool_calls>{"name":"g","')
    assert not subsequence('{"name": "g"}<tool_calls>', '<tool_calls>{"name": "g"}')


def test_a_lost_word_is_found_and_markup_is_not_text() -> None:
    text = 'Hi there.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    read = Message("Hi there.", tool_calls=(ToolCall("get_weather", '{"city": "Paris"}'),))
    assert words_lost(read, text, frozenset({"tool_call"})) == []
    assert words_lost(Message(content="Hi."), text, frozenset({"tool_call"})) == ["Paris", "get_weather", "there"]
    # (a key of the JSON call object is the format's, its value is not)
    assert words_lost(Message(content=""), '{"nam": "x"}', frozenset()) == ["x"]


# -- what the fuzz found ------------------------------------------------------------------


@needs_shared
def test_a_call_cut_in_its_header_comes_back_as_written() -> None:
    # (was '<tool_call>\n{"name": "get_weather", "ar "ar': the cut text twice)
    generated = _generated("ibm-granite-granite-4.1.jinja")
    for output in ('<tool_call>\n{"name": "get_weather", "ar', 'Hi <tool_call>\n{"name": "get_weather", "ar'):
        outcome = parsed_as_streamed(generated, output)
        assert outcome.message.content == output and outcome.cut_short


@needs_shared
def test_a_cut_call_keeps_the_section_opener_before_it() -> None:
    # (MiniMax's <minimax:tool_call> opener was lost: the content began at <invoke)
    output = '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name='
    outcome = parsed_as_streamed(_generated("MiniMax-M2.jinja"), "</think>\n\n" + output)
    assert outcome.message.content == output and outcome.cut_short


@needs_shared
def test_a_cut_call_after_reasoning_whose_opener_was_in_the_prompt_keeps_the_reasoning() -> None:
    # (the whole parse was all content, the stream showed the reasoning)
    output = 'Hmm\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Dal'
    outcome = parsed_as_streamed(_generated("Qwen-Qwen3-0.6B.jinja"), output)
    assert outcome.message.reasoning_content == "Hmm" and outcome.message.content == output[output.index("<tool_call>") :]
    # (a call cut in its closers, its value whole: the call, and the closer's fragment as written)
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool"
    outcome = parsed_as_streamed(_generated("Qwen3-Coder.jinja"), output)
    assert outcome.message.content == "</tool" and [c.name for c in outcome.message.tool_calls] == ["get_weather"]
    # (and a value cut before its closer: the call is text, the newline before the cut stays)
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</param"
    assert parsed_as_streamed(_generated("Qwen3-Coder.jinja"), output).message.content == output


@needs_shared
def test_a_json_call_object_inside_a_sentence_is_never_shown_as_a_call() -> None:
    # (vLLM's llama3_json test input: a stream in 1-character chunks showed the
    # object as a call once it closed, before the sentence went on)
    generated = _generated("meta-llama-Llama-3.1-8B-Instruct.jinja")
    output = 'Here is the result: {"name": "get_weather", "parameters": {"city": "Dallas"}} Would you like more?'
    for size in (1, 2, 3, 16):
        outcome = parsed_as_streamed(generated, output, size)
        assert outcome.message.content == output and not outcome.message.tool_calls
    # (glued to text and running to the output's end, it is a call, as before)
    outcome = parsed_as_streamed(generated, output[: output.index(" Would")])
    assert [c.name for c in outcome.message.tool_calls] == ["get_weather"]


@needs_shared
def test_a_reply_opener_after_other_text_is_kept_as_written() -> None:
    # (Solar's <|content|>, Cohere's <|START_RESPONSE|>: dropped from the middle of the text, while a stream kept it)
    generated = _generated("upstage-Solar-Open-100B.jinja")
    assert parsed_as_streamed(generated, "Hi <|content|>there").message.content == "Hi <|content|>there"
    assert parsed_as_streamed(generated, "<|content|>Hello<|end|>").message.content == "Hello"


@needs_shared
def test_a_call_list_whose_second_call_breaks_keeps_the_first() -> None:
    # (the whole parse was all content; a stream had shown the first call)
    generated = _generated("unsloth-Apriel-1.5.jinja")
    second = '{"name": "Note: here.\nget_time", "arguments": {"zone": "CST"}}]</tool_calls>'
    output = f'<tool_calls>[{{"name": "get_weather", "arguments": {{"city": "Dallas"}}}}, {second}'
    for size in (1, 4, 16):
        outcome = parsed_as_streamed(generated, output, size)
        assert [c.name for c in outcome.message.tool_calls] == ["get_weather"] and not outcome.ok
        assert outcome.message.content == ", " + second
    # (and where the list breaks after its last call, a stream that held the list agrees)
    generated = _generated("nvidia-Llama-3_3-Nemotron-Super-49B-v1_5.jinja")
    output = '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Dallas"}}><|eot_id|>'
    for size in (1, 8):
        outcome = parsed_as_streamed(generated, output, size)
        assert [c.name for c in outcome.message.tool_calls] == ["get_weather"] and outcome.message.content.startswith(">")


@needs_shared
def test_text_after_a_call_that_begins_like_a_stop_keeps_the_space_before_it() -> None:
    # (a stream showed 'first.<|im_eall>>': the newline lost, a '>' added)
    generated = _generated("MiMo-VL.jinja")
    output = 'Checking first.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Dallas"}}\n</tool_call><|im_eall><|im_end|>'
    for size in range(1, 15):
        assert parsed_as_streamed(generated, output, size).message.content == "Checking first.\n<|im_eall>"


@needs_shared
def test_harmony_recipients_without_the_namespace_or_unknown() -> None:
    generated = _generated("openai-gpt-oss-120b.jinja")
    body = '<|channel|>commentary json<|message|>{"city": "Dallas"}<|call|>'
    outcome = parsed_as_streamed(generated, " to=get_weather" + body)
    assert [c.name for c in outcome.message.tool_calls] == ["get_weather"]
    assert [d.kind for d in outcome.deviations] == [DeviationKind.OTHER_CALL_SYNTAX]
    # (a recipient that is neither a function nor a built-in tool: kept as written, not dropped)
    outcome = parsed_as_streamed(generated, " to=get_weathers" + body)
    assert outcome.message.content == "to=get_weathers" + body and not outcome.message.tool_calls
    # (a message to a built-in tool is the engine's to run: dropped, as before)
    assert parsed_as_streamed(generated, " to=python<|channel|>analysis<|message|>print(1)<|call|>").message.content == ""


@needs_shared
def test_llama4_text_and_calls_a_stream_never_takes_back() -> None:
    more = SHARED / "templates-more"
    # (the turn's text in <|python_start|>…<|python_end|> before a call that breaks: a
    # stream showed the text without its markers, the whole parse kept them as written)
    generated, _ = renders(more / "transformers-llama4-processor.jinja")
    assert generated is not None
    broken = '<|python_start|>Checking first.<|python_end|>{"name": "get_we\nNote.\nather", "parameters": {"city": "Dallas"}}'
    good = '<|python_start|>Checking first.<|python_end|>{"name": "get_weather", "parameters": {"city": "Dallas"}}'
    for size in (1, 14, 40):
        assert parsed_as_streamed(generated, broken + "<|eot|>", size).message.content == broken
        outcome = parsed_as_streamed(generated, good + "<|eot|>", size)
        assert outcome.message.content == "Checking first." and [c.name for c in outcome.message.tool_calls] == ["get_weather"]
    # (a Python call list after text is a call only where it runs to the output's end:
    # a stream showed it once its "]" came, then text followed)
    generated, _ = renders(more / "vllm-tool-llama4_pythonic.jinja")
    assert generated is not None
    listed = 'Checking first.[get_weather(city="Dallas")]'
    for size in (1, 5, 16):
        assert parsed_as_streamed(generated, listed + "<|e)]", size).message.content == listed + "<|e)]"
        outcome = parsed_as_streamed(generated, listed + "<|eot|>", size)
        assert outcome.message.content == "Checking first." and [c.name for c in outcome.message.tool_calls] == ["get_weather"]


@needs_shared
def test_functionary_recipients_are_whole_words_and_text_keeps_its_newline() -> None:
    generated = _generated("meetkai-functionary-medium-v3.2.jinja")
    call = '>>>get_weather\n{"city": "Dallas"}'
    # (the recipient "allall" is none of the declared ones: read as "all", the first "all" was lost)
    outcome = parsed_as_streamed(generated, "allall\nChecking first." + call + "<|eot_id|>")
    assert outcome.message.content == "allall\nChecking first." and [c.name for c in outcome.message.tool_calls] == ["get_weather"]
    # (a declared function's call that breaks is still reported, not content)
    assert not generated.parse('get_weather\n{"city": "Paris", "days": 007}<|eot_id|>').ok
    # (text after a call keeps its newline in a stream: it showed "first.Note", then took the reading back)
    output = "all\nChecking first." + call + "\nNote: here.\n<|eot_id|>"
    for size in (1, 6, 12):
        outcome = parsed_as_streamed(generated, output, size)
        assert outcome.message.content == "Checking first.\nNote: here." and [c.name for c in outcome.message.tool_calls] == ["get_weather"]


@needs_shared
def test_a_bare_json_call_list_after_text_cut_short_keeps_its_first_call() -> None:
    generated, _ = renders(SHARED / "templates-more" / "vllm-tool-xlam_llama.jinja")
    assert generated is not None
    listed = 'Note: here.\n[{"name": "get_weather", "arguments": {"city": "Dallas"}}'
    # (cut inside the second call: the whole parse was silent content, ok, while a stream showed the first call)
    for size in (1, 5, 40):
        outcome = parsed_as_streamed(generated, listed + ', {"name": "get_tim', size)
        assert [c.name for c in outcome.message.tool_calls] == ["get_weather"] and not outcome.ok
        assert [d.kind for d in outcome.deviations] == [DeviationKind.CUT_SHORT]
        # (text after the list makes it prose: a stream holds the list until the output ends)
        outcome = parsed_as_streamed(generated, listed + "]<|eo", size)
        assert outcome.message.content == listed + "]<|eo" and not outcome.message.tool_calls


@needs_shared
def test_a_call_cut_in_a_key_after_its_arguments_keeps_the_key_as_text() -> None:
    # (the call stands, its arguments whole; the cut key's text was lost)
    generated = _generated("mistralai-Mistral-Nemo-Instruct-2407.jinja")
    call = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Dallas"}'
    for size in (1, 5, 30):
        outcome = parsed_as_streamed(generated, call + ', "id": "call_00', size)
        assert [c.name for c in outcome.message.tool_calls] == ["get_weather"] and not outcome.ok
        assert outcome.message.content == ', "id": "call_00'
        assert [(d.kind, d.start) for d in outcome.deviations] == [(DeviationKind.CUT_SHORT, len(call))]
    # (cut in its closers, nothing of a key begun: no text)
    assert parsed_as_streamed(generated, call + "}").message.content == ""


@needs_shared
def test_a_call_list_broken_by_a_marker_keeps_the_calls_before_the_break() -> None:
    # (the whole parse read the first call as text and a call from the stray
    # marker on, while a stream had shown the first call)
    generated = _generated("NVIDIA-Nemotron-Nano-v2.jinja")
    rest = '<TOOLCALL>{"name": "get_time", "arguments": {"zone": "CST"}}]</TOOLCALL>'
    output = '</think>\n<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Dallas"}}, ' + rest
    for size in (1, 12, 40):
        outcome = parsed_as_streamed(generated, output, size)
        assert [c.name for c in outcome.message.tool_calls] == ["get_weather"] and not outcome.ok
        assert outcome.message.content == rest
    # (and where the output is cut after the stray marker, inside a call, as well)
    generated = _generated("mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja")
    rest = '[TOOL_CALLS] {"name": "get_time", "arguments": {'
    output = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Dallas"}, "id": "call_0000"},' + rest
    for size in (1, 4, 40):
        outcome = parsed_as_streamed(generated, output, size)
        assert [c.name for c in outcome.message.tool_calls] == ["get_weather"] and outcome.message.content == rest


@needs_shared
def test_a_harmony_call_broken_before_its_end_keeps_its_text() -> None:
    # (the call's header and arguments were lost: only the text after the break stayed)
    generated = _generated("openai-gpt-oss-120b.jinja")
    call = ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Dallas"}'
    for output in (call + "<|call|<|start|>>", call.replace("<|channel|>", "<|channel|><|channel|>") + "<|call|>"):
        for size in (1, 5, 40):
            outcome = parsed_as_streamed(generated, output, size)
            assert outcome.message.content == output.strip() and not outcome.message.tool_calls and not outcome.ok


@needs_shared
def test_a_misspelt_harmony_channel_or_content_type_is_noted() -> None:
    # (the call read, and the misspelt word was dropped with no word of it)
    generated = _generated("openai-gpt-oss-120b.jinja")
    for header, word in (("commentson json", "commentson"), ("commentary jsonon", "jsonon")):
        output = f' to=functions.get_weather<|channel|>{header}<|message|>{{"city": "Dallas"}}<|call|>'
        outcome = parsed_as_streamed(generated, output)
        assert [c.name for c in outcome.message.tool_calls] == ["get_weather"] and outcome.ok
        assert [(d.kind, output[d.start : d.end]) for d in outcome.deviations] == [(DeviationKind.UNKNOWN_HEADER_WORD, word)]
    # (a message on an unknown channel stays as written, noted the same way)
    outcome = parsed_as_streamed(generated, "<|channel|>finale<|message|>Hi<|return|>")
    assert outcome.message.content == "<|channel|>finale<|message|>Hi<|return|>"
    assert [d.kind for d in outcome.deviations] == [DeviationKind.UNKNOWN_HEADER_WORD]
    # (a recipient another one follows at once: the later one decides, the earlier one is noted)
    output = ' to=fu to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Dallas"}<|call|>'
    outcome = parsed_as_streamed(generated, output)
    assert [c.name for c in outcome.message.tool_calls] == ["get_weather"]
    assert [(d.kind, output[d.start : d.end]) for d in outcome.deviations] == [(DeviationKind.UNKNOWN_HEADER_WORD, " to=fu")]
    # (harmony's own channels and content type: no note)
    assert not parsed_as_streamed(generated, ' to=functions.get_weather<|channel|>commentary json<|message|>{}<|call|>').deviations


@needs_shared
def test_calls_whose_section_opener_is_left_out_are_never_silent_content() -> None:
    # (the calls' own markers, the section's opener left out: all content, ok, with no note)
    generated = _generated("deepseek-ai-DeepSeek-V3.1.jinja")
    output = "</think><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Dallas\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    outcome = parsed_as_streamed(generated, output)
    assert outcome.message.content.startswith("<｜tool▁call▁begin｜>get_weather")
    assert [d.kind for d in outcome.deviations] == [DeviationKind.CALL_MARKER_IN_TEXT]
    # (and a marker inside the turn's text Llama 4 wraps, a call after it)
    generated, _ = renders(SHARED / "templates-more" / "functionary-llama4.jinja")
    assert generated is not None
    output = '<|python_start|>Che<|python_start|>cking.<|python_end|>{"name": "get_weather", "parameters": {"city": "Dallas"}}<|eot|>'
    outcome = parsed_as_streamed(generated, output)
    assert [c.name for c in outcome.message.tool_calls] == ["get_weather"]
    assert [d.kind for d in outcome.deviations] == [DeviationKind.CALL_MARKER_IN_TEXT]
    # (a stray Gemma 4 thought closer is dropped, as the reference drops it: noted, so that
    # the call marker it split, joined in the content, is not silent either)
    outcome = parsed_as_streamed(_generated("gemma4.jinja"), '<|tool_<channel|>call>call:get_weather{city:<|"|>Dallas<|"|>}<tool_call|>')
    assert outcome.message.content.startswith("<|tool_call>call:get_weather")
    assert [(d.kind, d.start, d.end) for d in outcome.deviations] == [(DeviationKind.CLOSER_REPEATED, 7, 17)]
    # (and in a harmony message to an unknown recipient, kept as written)
    output = ' to=functto=functions.get_weather<|channel|>commentary json<|message|>{"city": "Dallas"}<|call|>'
    outcome = parsed_as_streamed(_generated("openai-gpt-oss-120b.jinja"), output)
    assert outcome.message.content == output.strip() and outcome.ok
    assert [(d.kind, output[d.start : d.end]) for d in outcome.deviations] == [(DeviationKind.CALL_MARKER_IN_TEXT, "to=functions.")]


# -- the fuzz, sampled ---------------------------------------------------------------------


@needs_shared
@pytest.mark.slow
@pytest.mark.parametrize("folder", ["templates", "templates-more"])
def test_broken_and_cut_outputs_keep_their_text(folder: str) -> None:
    """No content or reasoning holds text the output never had; a word lost,
    or a stream that ends otherwise than the whole parse, only where listed
    (``tests/fuzz-known-failures.json``, with the reason)."""
    outputs, counts, new = 0, Counter[str](), []
    for path in sorted((SHARED / folder).glob("*.jinja")):
        s = subject(path)
        if s is None:
            continue
        count, failures = fuzz(s, per_render=12, seed=1)
        outputs += count
        counts.update(f.promise for f in failures)
        allowed = set(KNOWN.get(s.name, {}))
        new += [f.to_json() for f in failures if f.promise == "alien" or f.promise not in allowed]
    print(f"\n{outputs} broken or cut outputs: " + ", ".join(f"{p} {counts[p]}" for p in PROMISES))
    assert outputs > 1000
    assert not new, new[:3]


def test_the_known_failures_give_reasons() -> None:
    for name, promises in KNOWN.items():
        assert Path(name).suffix == ".jinja"
        assert set(promises) <= {"dropped", "stream"} and all(len(why) > 20 for why in promises.values()), name
