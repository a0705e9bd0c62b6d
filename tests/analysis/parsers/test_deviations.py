"""The most plausible reading (issue 43): where a model deviates from its
template's form, the reading with the fewest and cheapest declared deviations
wins, and every deviation it used is reported as data (kind, span, line,
column) on the parse outcome.

The first tests use the project's own template (no ../shared needed); the
issue's examples run on the zoo templates they were found on; the last test
renders two calls through every zoo and templates-more template, applies each
deviation (``tests.deviating``) and reads the result whole and streamed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from analysis.generation.generated import Generated
from analysis.generation.generator import auto_parser
from analysis.generation.results import ParseOutcome
from analysis.generation.streaming import stream_output
from analysis.messages.deviations import DeviationKind
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from tests.conftest import PROJECT_TEMPLATES, ROOT, SHARED, ZOO, needs_shared
from tests.deviating import TOOLS, misreads, probes

TAGGED = PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"
KNOWN = json.loads((ROOT / "tests" / "deviation-known-misreads.json").read_text(encoding="utf-8"))


def _generated(path: Path) -> Generated:
    request = {"messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS, "parallel_tool_calls": True}
    return auto_parser(load_template(path)).generate(ChatRequest.from_json(request))


def _read(path: Path, output: str) -> ParseOutcome:
    """The whole parse, checked against streams in 1- and 5-character chunks."""
    generated = _generated(path)
    outcome = generated.parse(output)
    for size in (1, 5):
        _, streamed, _ = stream_output(generated, output, size)
        assert streamed.message == outcome.message, size
    return outcome


def _calls(outcome: ParseOutcome) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls]


def _kinds(outcome: ParseOutcome) -> list[str]:
    return [d.kind.value for d in outcome.deviations]


def _coder_call(name: str, **arguments: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in arguments.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


WEATHER = _coder_call("get_weather", city="Dallas", state="TX")
TIME = _coder_call("get_time", zone="CST")


def test_an_exact_output_uses_no_deviation() -> None:
    outcome = _read(TAGGED, f"Let me check.\n{WEATHER}\n{TIME}")
    assert outcome.ok and outcome.deviations == ()
    assert _calls(outcome) == [("get_weather", {"city": "Dallas", "state": "TX"}), ("get_time", {"zone": "CST"})]


def test_text_between_two_calls_is_content_and_noted_with_its_place() -> None:
    """Before, the first value ran on to the last closer: one call, its city
    ``Dallas</parameter>…Also the time.…<parameter=zone>\\nCST``."""
    output = f"{WEATHER}\nAlso the time.\n{TIME}"
    outcome = _read(TAGGED, output)
    assert _calls(outcome) == [("get_weather", {"city": "Dallas", "state": "TX"}), ("get_time", {"zone": "CST"})]
    assert outcome.message.content == "Also the time." and outcome.ok
    (deviation,) = outcome.deviations
    assert deviation.kind is DeviationKind.TEXT_BETWEEN_CALLS
    assert output[deviation.start : deviation.end] == "Also the time."
    assert (deviation.line, deviation.column) == (WEATHER.count("\n") + 2, 1)
    assert deviation.to_json()["kind"] == "text-between-calls" and deviation.cost == DeviationKind.TEXT_BETWEEN_CALLS.cost


def test_a_value_that_quotes_closers_and_text_but_no_whole_call_stays_its_text() -> None:
    """The look-ahead's text between calls holds no marker of the format: a
    value quoting its closers, then prose, is its text (the exact reading)."""
    value = "print('</parameter>\\n</function>\\n</tool_call>') and more"
    output = _coder_call("get_weather", city=value) + "\n" + TIME
    outcome = _read(TAGGED, output)
    assert _calls(outcome) == [("get_weather", {"city": value}), ("get_time", {"zone": "CST"})]
    assert outcome.deviations == ()


def test_a_value_closer_left_out_before_the_next_declared_argument() -> None:
    output = "<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n</function>\n</tool_call>"
    outcome = _read(TAGGED, output)
    assert _calls(outcome) == [("get_weather", {"city": "Dallas", "state": "TX"})]
    assert _kinds(outcome) == ["value-closer-left-out"] and outcome.ok


def test_the_last_calls_closer_left_out_keeps_the_call_and_notes_it() -> None:
    output = f"{WEATHER}\n{TIME.removesuffix('</tool_call>')}"
    outcome = _read(TAGGED, output)
    assert _calls(outcome) == [("get_weather", {"city": "Dallas", "state": "TX"}), ("get_time", {"zone": "CST"})]
    assert _kinds(outcome) == ["call-closer-left-out"] and outcome.ok and outcome.message.content == ""


def test_a_closer_written_twice_is_noted() -> None:
    outcome = _read(TAGGED, f"{WEATHER}</tool_call>")
    assert _calls(outcome) == [("get_weather", {"city": "Dallas", "state": "TX"})]
    assert _kinds(outcome) == ["closer-repeated"]


def test_a_cut_inside_a_value_reports_the_cut_and_keeps_the_calls_before() -> None:
    output = f"{WEATHER}\n<tool_call>\n<function=get_time>\n<parameter=zone>\nCS"
    outcome = _generated(TAGGED).parse(output)
    assert not outcome.ok and outcome.cut_short
    assert _calls(outcome) == [("get_weather", {"city": "Dallas", "state": "TX"})]
    cut = outcome.deviations[-1]
    assert cut.kind is DeviationKind.CUT_SHORT and output[cut.start :].startswith("<tool_call>\n<function=get_time>")
    assert outcome.message.content == output[cut.start :]  # (the cut call's text, as written)


def test_docs_list_every_deviation_with_its_cost() -> None:
    docs = (ROOT / "docs" / "parsing.md").read_text(encoding="utf-8")
    for kind in DeviationKind:
        row = re.search(rf"^\| `{re.escape(kind.value)}` \| (\d+) \|", docs, re.MULTILINE)
        assert row is not None, kind.value
        assert int(row.group(1)) == kind.cost, kind.value


# -- the examples, on the templates they were found on ---------------------

GLM_CALL = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>{city}</arg_value>\n</tool_call>"


@needs_shared
def test_glm_text_between_two_calls() -> None:
    output = "Checking Beijing.\n" + GLM_CALL.format(city="Beijing") + "\nAlso Shanghai.\n" + GLM_CALL.format(city="Shanghai")
    outcome = _read(ZOO / "GLM-4.6.jinja", output)
    assert _calls(outcome) == [("get_weather", {"city": "Beijing"}), ("get_weather", {"city": "Shanghai"})]
    assert outcome.message.content == "Checking Beijing.\n\nAlso Shanghai." and _kinds(outcome) == ["text-between-calls"]


@needs_shared
@pytest.mark.parametrize(
    "template, output",
    [
        ("Qwen3.5-4B.jinja", "<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n</function>\n</tool_call>"),
        ("GLM-4.6.jinja", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Dallas\n<arg_key>state</arg_key>\n<arg_value>TX</arg_value>\n</tool_call>"),
    ],
)
def test_an_inner_closer_missing_with_a_closer_later(template: str, output: str) -> None:
    outcome = _read(ZOO / template, output)
    assert _calls(outcome) == [("get_weather", {"city": "Dallas", "state": "TX"})]
    assert _kinds(outcome) == ["value-closer-left-out"]


@needs_shared
def test_the_end_closer_missing_after_complete_calls() -> None:
    glm = GLM_CALL.format(city="Beijing") + "\n<tool_call>get_time\n<arg_key>zone</arg_key>\n<arg_value>CST</arg_value>\n"
    outcome = _read(ZOO / "GLM-4.6.jinja", glm)
    assert _calls(outcome) == [("get_weather", {"city": "Beijing"}), ("get_time", {"zone": "CST"})]
    assert outcome.ok and outcome.message.content == "" and _kinds(outcome) == ["call-closer-left-out"]
    qwen = f"</think>\n{WEATHER}\n{TIME.removesuffix('</tool_call>')}"
    outcome = _read(ZOO / "Qwen3.5-4B.jinja", qwen)
    assert len(outcome.message.tool_calls) == 2 and outcome.message.content == "" and _kinds(outcome) == ["call-closer-left-out"]


# -- every template's own two calls, deviated ----------------------------------------


@pytest.mark.slow
@needs_shared
@pytest.mark.parametrize("folder", ["templates", "templates-more"])
def test_each_deviation_of_a_templates_own_calls_reads_as_a_person_would(folder: str) -> None:
    """Listed misreads (``tests/deviation-known-misreads.json``) may only
    shrink: a new one fails, and so does a listed one that now reads."""
    new: dict[str, list[str]] = {}
    fixed: dict[str, list[str]] = {}
    applied = 0
    for path in sorted((SHARED / folder).glob("*.jinja")):
        generated, deviated = probes(path)
        if generated is None:
            continue
        applied += sum(d.output is not None for d in deviated)
        wrong = {kind for kind, _ in misreads(generated, deviated, seed=len(path.name))}
        known = set(KNOWN.get(f"{folder}/{path.name}", []))
        if wrong - known:
            new[path.name] = sorted(wrong - known)
        if known - wrong:
            fixed[path.name] = sorted(known - wrong)
    assert applied > 100
    assert not new, f"misread, not listed: {new}"
    assert not fixed, f"listed as misread, but read right now (remove them from the list): {fixed}"


# -- reasoning whose opener was in the prompt -----------------------------------------

ALWAYS = PROJECT_TEMPLATES / "tests" / "always_think.jinja"


def test_a_template_whose_history_always_writes_a_block_is_analysed_so() -> None:
    assert auto_parser(load_template(ALWAYS)).analysis.reasoning.always
    assert not auto_parser(load_template(TAGGED)).analysis.reasoning.always  # (its history writes no empty block)


def test_reasoning_closed_with_no_opener_where_the_models_always_open_one() -> None:
    """Issue 43, example 6: a newer template of the family opens ``<think>``
    in the prompt, so the model writes none; before, all of it was content,
    a raw ``</think>`` in it."""
    outcome = _read(ALWAYS, "I should answer.</think>It is sunny.")
    assert (outcome.message.reasoning_content, outcome.message.content) == ("I should answer.", "It is sunny.")
    assert _kinds(outcome) == ["reasoning-opener-in-prompt"] and outcome.ok
    plain = _read(ALWAYS, "It is sunny.")  # (no end marker: a reply, and no deviation)
    assert (plain.message.reasoning_content, plain.message.content, plain.deviations) == (None, "It is sunny.", ())


@needs_shared
@pytest.mark.parametrize("template", ["moonshotai-Kimi-K2-Thinking.jinja", "Kimi-K2-Thinking.jinja"])
def test_kimi_k2_thinking_reasoning_whose_opener_was_in_the_prompt(template: str) -> None:
    outcome = _read(ZOO / template, "I should answer.</think>It is sunny.")
    assert (outcome.message.reasoning_content, outcome.message.content) == ("I should answer.", "It is sunny.")
    assert _kinds(outcome) == ["reasoning-opener-in-prompt"]


@needs_shared
def test_kimi_k2_calls_in_two_sections_with_text_between_and_an_id_without_its_namespace() -> None:
    section = "<|tool_calls_section_begin|><|tool_call_begin|>{id}<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>"
    output = section.format(id="functions.get_weather:0", args='{"city": "Paris"}') + "\nAnd the time.\n" + section.format(id="get_time:1", args='{"zone": "CET"}')
    outcome = _read(ZOO / "moonshotai-Kimi-K2.jinja", output)
    assert _calls(outcome) == [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET"})]
    assert [c.id for c in outcome.message.tool_calls] == ["functions.get_weather:0", "get_time:1"]
    assert outcome.message.content == "And the time." and _kinds(outcome) == ["text-between-calls", "other-call-syntax"]


# -- the family's other syntax, text around bare JSON calls, cuts -----------------------


@needs_shared
@pytest.mark.parametrize(
    "output",
    [
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        '[TOOL_CALLS]{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"zone": "CET"}}]',
    ],
)
def test_mistral_calls_in_the_familys_older_json_syntax(output: str) -> None:
    outcome = _read(ZOO / "Mistral-Small-3.2-24B-Instruct-2506.jinja", output)
    assert _calls(outcome)[0] == ("get_weather", {"city": "Paris"}) and outcome.message.content == ""
    assert _kinds(outcome) == ["other-call-syntax"] and outcome.ok


@needs_shared
def test_gpt_oss_repeating_the_role_header_the_prompt_ends_with() -> None:
    output = "<|start|>assistant<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>It is sunny."
    outcome = _read(ZOO / "openai-gpt-oss-120b.jinja", output)
    assert (outcome.message.reasoning_content, outcome.message.content) == ("Think.", "It is sunny.")
    assert _kinds(outcome) == ["role-header-repeated"] and outcome.ok


@needs_shared
def test_llama_json_call_on_its_own_line_between_sentences() -> None:
    """A call object on its own line, text on both sides, is a call (before:
    no call, while text on one side gave one); one inline in a sentence stays text."""
    template = ZOO / "meta-llama-Llama-3.3-70B-Instruct.jinja"
    output = 'Sure, let me check.\n{"name": "get_weather", "parameters": {"city": "Paris"}}\nI will report back.'
    outcome = _read(template, output)
    assert _calls(outcome) == [("get_weather", {"city": "Paris"})]
    assert outcome.message.content == "Sure, let me check.\nI will report back." and _kinds(outcome) == ["text-after-calls"]
    inline = 'Send {"name": "get_weather", "parameters": {"city": "Paris"}} and wait.'
    # (whole: a stream shows the call once it closes, as at cf3e7bb, and keeps it: issue 43 lists this as left)
    assert _generated(template).parse(inline).message.content == inline


@needs_shared
def test_a_bare_json_call_cut_short_is_reported_as_cut() -> None:
    output = '{"name": "get_weather", "parameters": {"city": "Par'
    outcome = _generated(ZOO / "meta-llama-Llama-3.1-8B-Instruct.jinja").parse(output)
    assert not outcome.ok and outcome.cut_short and outcome.message.content == output
    assert (outcome.deviations[-1].start, outcome.deviations[-1].end) == (0, len(output))


def test_a_call_marker_quoted_in_prose_is_prose_and_noted() -> None:
    """Text that holds a call marker never ends as silent content: quoted in
    prose (no call reads from it) it is the exact reading, noted at cost 0."""
    output = "Use `<tool_call>` to call a tool."
    outcome = _read(TAGGED, output)
    assert outcome.ok and outcome.message.content == output and not outcome.message.tool_calls
    (note,) = outcome.deviations
    assert (note.kind, note.cost, output[note.start : note.end]) == (DeviationKind.CALL_MARKER_IN_TEXT, 0, "<tool_call>")


def test_json_arguments_written_as_a_string_holding_an_object_are_that_object() -> None:
    """vLLM's hermes input: arguments serialized twice.  The whole parse and
    every stream read the object; arguments that close as no object (a list)
    are the block's text, in the stream too (before, the stream showed a
    call the whole parse kept as text)."""
    demo = PROJECT_TEMPLATES / "demo.jinja"
    doubled = '<tool_call>\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}\n</tool_call>'
    assert _calls(_read(demo, doubled)) == [("get_weather", {"city": "Paris"})]
    listed = '<tool_call>\n{"name": "get_weather", "arguments": [1, 2]}\n</tool_call>'
    outcome = _read(demo, listed)
    assert not outcome.ok and outcome.message.content == listed and not outcome.message.tool_calls
