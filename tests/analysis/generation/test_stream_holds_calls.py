"""A stream shows nothing the whole parse would read otherwise: a call whose
arguments are read whole (JSON) is held, with what follows it, until they
close; then it shows in one delta.  ``show_open_arguments`` streams them as
written, as the reference does."""

from __future__ import annotations

import json

import pytest

from analysis.generation import auto_parser
from analysis.generation.generated import Generated
from analysis.generation.streaming import StreamParser, stream_output
from analysis.messages.mapper import accumulate
from analysis.parsers import ChatRequest
from analysis.template import demo_template_path, load_template

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}}]


@pytest.fixture(scope="module")
def generated() -> Generated:
    parser = auto_parser(load_template(demo_template_path()))
    return parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS}))


def _call(arguments: str) -> str:
    return '<tool_call>\n{"name": "get_weather", "arguments": ' + arguments + "}\n</tool_call>"


@pytest.mark.parametrize("size", [1, 3, 7])
def test_a_json_call_shows_in_one_delta_once_its_arguments_close(generated: Generated, size: int) -> None:
    output = "Checking." + _call('{"city": "Paris", "days": 3}')
    deltas, outcome, _ = stream_output(generated, output, size)
    calls = [d for d in deltas if d.tool_index is not None]
    assert len(calls) == 1 and calls[0].tool_name == "get_weather"
    assert json.loads(calls[0].arguments or "") == {"city": "Paris", "days": 3}
    assert accumulate(deltas) == outcome.message == generated.parse(output).message


@pytest.mark.parametrize("broken", ["007", "3 days", "tru", '"unterminated'])
@pytest.mark.parametrize("size", [1, 4])
def test_a_call_whose_arguments_break_is_never_shown(generated: Generated, broken: str, size: int) -> None:
    output = "Checking." + _call('{"city": "Paris", "days": ' + broken + "}") + "\nDone."
    whole = generated.parse(output)
    assert not whole.message.tool_calls and "kept as text" in whole.warning
    deltas, outcome, _ = stream_output(generated, output, size)
    assert not [d for d in deltas if d.tool_index is not None]
    assert outcome.message == whole.message and accumulate(deltas) == whole.message


def test_text_after_a_held_call_waits_with_it(generated: Generated) -> None:
    """Content after a call whose arguments are not decided is not shown
    before it: the call may yet be text, which comes first."""
    output = _call('{"city": "Paris", "days": 007}') + "\nDone."
    deltas, outcome, _ = stream_output(generated, output, 1)
    shown_content = [d.content for d in deltas if d.content]
    assert "".join(shown_content) == outcome.message.content
    assert outcome.message.content.startswith("<tool_call>") and outcome.message.content.endswith("Done.")


def test_a_stream_may_show_open_arguments_as_the_reference_does(generated: Generated) -> None:
    output = _call('{"city": "Paris", "days": 3}')
    deltas, outcome, _ = stream_output(generated, output, 2, show_open_arguments=True)
    pieces = [d.arguments for d in deltas if d.arguments]
    assert len(pieces) > 3  # the arguments, as written, a few characters at a time
    assert accumulate(deltas) == outcome.message == generated.parse(output).message


def test_a_call_cut_off_in_its_arguments_is_never_shown(generated: Generated) -> None:
    output = "Checking." + _call('{"city": "Paris", "days": 3}')[:-25]
    deltas, outcome, _ = stream_output(generated, output, 3)
    assert not [d for d in deltas if d.tool_index is not None] and not outcome.message.tool_calls
    assert outcome.message == generated.parse(output).message


# -- tagged calls: held until complete (a call cut inside a value is no call) ---------------

TAGGED_TEMPLATE = "tagged_xml.jinja"


@pytest.fixture(scope="module")
def tagged() -> Generated:
    from tests.conftest import PROJECT_TEMPLATES

    parser = auto_parser(load_template(PROJECT_TEMPLATES / "tests" / TAGGED_TEMPLATE))
    return parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS}))


TAGGED_CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"


@pytest.mark.parametrize("size", [1, 5])
def test_a_tagged_call_shows_once_complete_and_a_cut_one_never(tagged: Generated, size: int) -> None:
    deltas, outcome, _ = stream_output(tagged, "Checking." + TAGGED_CALL, size)
    calls = [d for d in deltas if d.tool_index is not None]
    assert calls and calls[0].tool_name == "get_weather" and accumulate(deltas) == outcome.message
    assert json.loads(outcome.message.tool_calls[0].arguments) == {"city": "Paris", "days": 3}
    cut = "Checking." + TAGGED_CALL[: TAGGED_CALL.index("Paris") + 3]  # cut inside a value
    whole = tagged.parse(cut)
    assert not whole.message.tool_calls  # (no call: its text stays content)
    deltas, outcome, _ = stream_output(tagged, cut, size)
    assert not [d for d in deltas if d.tool_index is not None]
    assert outcome.message == whole.message


def test_show_open_arguments_streams_tagged_values_as_written(tagged: Generated) -> None:
    """The opt-out: values show as they are written, as the reference streams them."""
    partial = "Checking." + TAGGED_CALL[: TAGGED_CALL.index("</parameter>")]
    deltas, _, _ = stream_output(tagged, partial, 3, show_open_arguments=True)
    assert any(d.tool_name == "get_weather" for d in deltas)
    deltas, _, _ = stream_output(tagged, partial, 3)
    assert not [d for d in deltas if d.tool_index is not None]


def test_a_section_whose_closer_breaks_keeps_the_calls_that_read() -> None:
    """Block by block: a section's calls that read are calls though its closer
    is broken (``</tool_cal`` then other text); what follows them is text,
    and a stream ends as the whole parse."""
    from tests.conftest import PROJECT_TEMPLATES

    parser = auto_parser(load_template(PROJECT_TEMPLATES / "tests" / "suffixed_markers.jinja"))
    generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": TOOLS}))
    output = (
        "<tool_calls:v2>\n<tool_call:v2>get_weather<tool_sep:v2>\n<arg_key:v2>city</arg_key:v2>\n"
        "<arg_value:v2>Paris</arg_value:v2>\n</tool_call:v2>\n</tool_cal and then some text"
    )
    whole = generated.parse(output)
    assert [json.loads(c.arguments) for c in whole.message.tool_calls] == [{"city": "Paris"}]
    assert whole.message.content == "</tool_cal and then some text"
    for size in (1, 4):
        deltas, outcome, _ = stream_output(generated, output, size)
        assert outcome.message == whole.message and accumulate(deltas) == whole.message


# -- a block of calls read as a whole (LFM2's Python call list) --------------------------


@pytest.fixture(scope="module")
def python_list() -> Generated:
    from tests.conftest import PROJECT_TEMPLATES

    parser = auto_parser(load_template(PROJECT_TEMPLATES / "tests" / "lfm2_calls.jinja"))
    assert parser.analysis.handler == "lfm2-pythonic"
    return parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS}))


LIST = "<|tool_call_start|>[get_weather(city='Paris', days=3), get_weather(city='Oslo')]<|tool_call_end|>"


@pytest.mark.parametrize("size", range(1, 8))
def test_a_python_list_broken_after_a_call_never_shows_that_call(python_list: Generated, size: int) -> None:
    """The list reads only as a whole: broken after its first call's ``)``,
    all of it is text, so a stream never shows that call (at any chunking)."""
    output = LIST.replace("days=3), ", "days=3)<thi")
    whole = python_list.parse(output)
    assert not whole.message.tool_calls and whole.message.content.startswith("<|tool_call_start|>[get_weather(")
    deltas, outcome, _ = stream_output(python_list, output, size)
    assert not [d for d in deltas if d.tool_index is not None]
    assert outcome.message == whole.message and accumulate(deltas) == whole.message


@pytest.mark.parametrize("size", [1, 4, 7])
def test_a_python_list_shows_its_calls_once_it_closes(python_list: Generated, size: int) -> None:
    deltas, outcome, _ = stream_output(python_list, "Checking." + LIST, size)
    assert [json.loads(c.arguments) for c in outcome.message.tool_calls] == [{"city": "Paris", "days": 3}, {"city": "Oslo"}]
    assert accumulate(deltas) == outcome.message == python_list.parse("Checking." + LIST).message
    prefix = "Checking." + LIST[: LIST.index("]")]  # (both calls written, the list not closed: more may come)
    stream = StreamParser(python_list)
    shown = [d for i in range(0, len(prefix), size) for d in stream.feed(prefix[i : i + size])]
    assert not [d for d in shown if d.tool_index is not None] and accumulate(shown).content == "Checking."
