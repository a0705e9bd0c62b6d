"""Generation, parsing and streaming on the project's own small templates."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.generation.generated import Generated
from analysis.generation.generator import AutoParser
from analysis.generation.streaming import StreamParser, stream_output
from analysis.messages.mapper import Message, NotAnExtension, accumulate, message_deltas
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from tests.conftest import PROJECT_TEMPLATES, examples, needs_shared

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "set_flags",
            "parameters": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "enabled": {"type": "boolean"},
                    "count": {"type": "integer"},
                    "note": {"type": ["string", "null"]},
                },
                "required": ["name", "enabled"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set",
            "parameters": {"type": "object", "properties": {"value": {"type": "integer"}}},
        },
    },
]


def _generated(name: str, **request: object) -> Generated:
    template = ChatTemplate(load_template(PROJECT_TEMPLATES / "tests" / name), clock=FROZEN_CLOCK)
    data = {"messages": [{"role": "user", "content": "Hi"}], "tools": TOOLS, **request}
    return AutoParser(template).generate(ChatRequest.from_json(data))


def _args(message: Message, i: int = 0) -> object:
    return json.loads(message.tool_calls[i].arguments)


TAGGED = (
    "<think>\nweighing options\n</think>\n\nOn it.\n"
    "<tool_call>\n<function=set_flags>\n<parameter=enabled>\nTrue\n</parameter>\n"
    "<parameter=name>\nline one\n  indented two\n</parameter>\n</function>\n</tool_call>"
)


def test_tagged_arguments_any_order_python_literals_optional_omitted() -> None:
    """Beyond the reference: ``True`` as the template's own Jinja rendering writes
    it, arguments in any order, optional ones left out; a string value keeps its
    inner whitespace and loses only the template's newline at each end."""
    g = _generated("tagged_xml.jinja")
    outcome = g.parse(TAGGED)
    assert outcome.ok, outcome.warning
    assert outcome.message.reasoning_content == "weighing options"
    assert outcome.message.content == "On it."
    assert outcome.message.tool_calls[0].name == "set_flags"
    assert _args(outcome.message) == {"enabled": True, "name": "line one\n  indented two"}


def test_the_template_renders_python_booleans_that_the_parser_accepts() -> None:
    """The evidence for accepting ``True``: Jinja2 renders a boolean argument so."""
    template = ChatTemplate(load_template(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"), clock=FROZEN_CLOCK)
    from analysis.template.rendering import RenderRequest

    call = {"id": "c1", "type": "function", "function": {"name": "set_flags", "arguments": {"enabled": True}}}
    out = template.render(RenderRequest([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "", "tool_calls": [call]}]))
    assert "<parameter=enabled>\nTrue\n</parameter>" in out


def test_names_that_prefix_each_other() -> None:
    g = _generated("tagged_xml.jinja", parallel_tool_calls=True)
    out = (
        "<tool_call>\n<function=set>\n<parameter=value>\n3\n</parameter>\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=set_flags>\n<parameter=name>\nx\n</parameter>\n<parameter=enabled>\nfalse\n</parameter>\n</function>\n</tool_call>"
    )
    message = g.parse(out).message
    assert [c.name for c in message.tool_calls] == ["set", "set_flags"]
    assert _args(message, 0) == {"value": 3} and _args(message, 1) == {"name": "x", "enabled": False}


def test_output_that_does_not_fit_is_kept_as_content_with_a_position() -> None:
    g = _generated("tagged_xml.jinja")
    # (a tool the request lacks is kept as a call: a name that breaks the format is not)
    broken = "Calling:\n<tool_call>\n<function=set_flags!>\n</function>\n</tool_call>"
    outcome = g.parse(broken)
    assert not outcome.ok
    assert outcome.message.content == broken.strip() and not outcome.message.tool_calls
    assert "line 3, column 20" in outcome.warning and "expected '>'" in outcome.warning


def test_json_native_array_with_ids_and_partial_arguments() -> None:
    g = _generated("json_array_ids.jinja", parallel_tool_calls=True)
    out = '[TOOL_CALLS][{"name": "set", "arguments": {"value": 1}, "id": "abc123def"}, {"name": "set", "arguments": {"value": 2}, "id": "xyz"}]'
    message = g.parse(out).message
    assert [(c.name, _args(message, i), c.id) for i, c in enumerate(message.tool_calls)] == [
        ("set", {"value": 1}, "abc123def"),
        ("set", {"value": 2}, "xyz"),
    ]
    partial = g.parse(out[: out.index('1}') + 1], partial=True)
    assert partial.need_more and partial.message.tool_calls[0].arguments == '{"value": 1'


def test_reasoning_format_none_keeps_reasoning_in_content() -> None:
    g = _generated("tagged_xml.jinja", reasoning_format="none", tools=None)
    message = g.parse("<think>\nhmm\n</think>\n\nAnswer").message
    assert message.reasoning_content is None and message.content == "<think>\nhmm\n</think>\n\nAnswer"


def test_deepseek_legacy_keeps_reasoning_in_both() -> None:
    g = _generated("tagged_xml.jinja", reasoning_format="deepseek-legacy", tools=None)
    message = g.parse("<think>\nhmm\n</think>\n\nAnswer").message
    assert message.reasoning_content == "hmm"
    assert message.content.startswith("<think>") and message.content.endswith("Answer")


def test_json_schema_response_format() -> None:
    g = _generated("tagged_xml.jinja", tools=None, json_schema={"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})
    assert not g.grammar_lazy and "a" in g.grammar
    assert g.parse('{"a": 1}').message.content == '{"a": 1}'


def test_continued_content_is_part_of_the_message() -> None:
    g = _generated(
        "tagged_xml.jinja",
        tools=None,
        messages=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello, "}],
        continue_final_message="content",
    )
    assert g.generation_prompt.endswith("Hello, ")
    assert g.parse("world").message.content == "Hello, world"


def test_lazy_grammar_and_triggers() -> None:
    g = _generated("tagged_xml.jinja")
    assert g.grammar_lazy and [t.to_json() for t in g.triggers] == [{"type": 1, "value": "<tool_call>"}]
    assert "set_flags" in g.grammar
    assert _generated("tagged_xml.jinja", tool_choice="required").grammar_lazy is False
    assert _generated("tagged_xml.jinja", tool_choice="none").grammar == ""


def test_message_deltas_refuse_a_shrinking_message() -> None:
    try:
        message_deltas(Message(content="abc"), Message(content="ab"))
    except NotAnExtension:
        return
    raise AssertionError("a shrinking message must be refused")


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=80))
def test_random_chunkings_add_up_to_the_final_message(sizes: list[int]) -> None:
    g = _generated("tagged_xml.jinja")
    stream = StreamParser(g)
    deltas = []
    pos = 0
    for size in sizes:
        deltas.extend(stream.feed(TAGGED[pos : pos + size]))
        pos += size
    deltas.extend(stream.feed(TAGGED[pos:]))
    final_deltas, outcome = stream.finish()
    assert not stream.warning
    assert accumulate(deltas + final_deltas) == outcome.message == g.parse(TAGGED).message


def test_streaming_is_linear_in_full_parses() -> None:
    """A long content stream in 4-character chunks costs a handful of full parses
    (structural events), not one per chunk."""
    g = _generated("tagged_xml.jinja", tools=None)
    text = "<think>\n" + "thinking <b>hard</b> now. " * 2000 + "</think>\n\n" + "answer < text > here " * 2000
    deltas, outcome, stream = stream_output(g, text, 4)
    assert outcome.ok and accumulate(deltas) == outcome.message
    assert stream.full_parses < 20, stream.full_parses
    assert len(text) // 4 > 10_000


def test_streaming_a_json_schema_reply_is_linear_in_full_parses() -> None:
    """A json_schema reply (content that is one JSON value) streams through the
    incremental JSON checker: a long string inside it costs no full parses."""
    schema = {"type": "object", "properties": {"summary": {"type": "string"}, "n": {"type": "number"}}}
    g = _generated("tagged_xml.jinja", tools=None, json_schema=schema)
    reply = json.dumps({"summary": "words and more words, " * 1500, "n": 3}, indent=2)
    text = "<think>\nplanning\n</think>\n\n```json\n" + reply + "\n```"
    deltas, outcome, stream = stream_output(g, text, 4)
    assert outcome.ok and json.loads(outcome.message.content) == json.loads(reply)
    assert accumulate(deltas) == outcome.message
    assert stream.full_parses < 30, stream.full_parses


def test_chunked_randomly_on_every_small_template() -> None:
    rng = random.Random(7)
    g = _generated("wrapped_tools_only.jinja")
    out = '<|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[{"tool_name": "set", "parameters": {"value": 5}}]<|END_ACTION|>'
    for _ in range(20):
        stream = StreamParser(g)
        deltas, pos = [], 0
        while pos < len(out):
            size = rng.randint(1, 9)
            deltas.extend(stream.feed(out[pos : pos + size]))
            pos += size
        final, outcome = stream.finish()
        assert accumulate(deltas + final) == outcome.message
        assert outcome.message.reasoning_content == "plan" and _args(outcome.message) == {"value": 5}


def test_analysis_cache_reuses_and_is_bounded(monkeypatch) -> None:
    from analysis.generation import analysis_cache as generation
    from analysis.template.loading import LoadedTemplate

    monkeypatch.setattr(generation, "CACHE_SIZE", 2)
    monkeypatch.setattr(generation, "_CACHE", generation.OrderedDict())
    templates = [ChatTemplate(LoadedTemplate(f"t{i}.jinja", "{% for m in messages %}" + "x" * i + "{{ m.content }}{% endfor %}")) for i in range(3)]
    first = generation.cached_analysis(templates[0])
    assert generation.cached_analysis(templates[0]) is first  # a second request costs no analysis
    generation.cached_analysis(templates[1])
    generation.cached_analysis(templates[0])  # used again: now the most recent
    generation.cached_analysis(templates[2])  # evicts templates[1]
    assert len(generation._CACHE) == 2
    assert generation.cached_analysis(templates[0]) is first


def test_tagged_values_in_python_spelling_of_any_shape() -> None:
    """A template that writes {{ value }} renders lists and dicts as Python does
    (Seed-OSS): such values read as JSON."""
    tools = [{"type": "function", "function": {"name": "put", "parameters": {"type": "object", "properties": {"items": {"type": "array"}, "meta": {"type": "object"}}}}}]
    g = _generated("tagged_xml.jinja", tools=tools)
    output = (
        "<tool_call>\n<function=put>\n<parameter=items>\n[True, None, 'a', (1, 2)]\n</parameter>\n"
        "<parameter=meta>\n{'k': False}\n</parameter>\n</function>\n</tool_call>"
    )
    outcome = g.parse(output)
    assert outcome.ok and json.loads(outcome.message.tool_calls[0].arguments) == {"items": [True, None, "a", [1, 2]], "meta": {"k": False}}


def test_a_long_lived_parser_renders_a_prompt_per_request_past_one_budget(monkeypatch) -> None:
    """The template's CPU and output budgets cover one command; a server that
    generates a prompt per request with one AutoParser gets a budget per
    request (the budgets added up and ran out after a few thousand requests)."""
    from analysis.generation.generator import AutoParser
    from analysis.parsers.request import ChatRequest
    from analysis.template.loading import load_template
    from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
    from analysis.template.sandbox import RenderLimits
    from tests.conftest import PROJECT_TEMPLATES

    template = ChatTemplate(load_template(PROJECT_TEMPLATES / "demo.jinja"), clock=FROZEN_CLOCK, limits=RenderLimits(template_output_chars=20_000))
    parser = AutoParser(template)
    request = ChatRequest.from_json({"messages": [{"role": "user", "content": "x" * 2_000}]})
    for _ in range(30):  # 30 prompts of 2,000 characters and more: past one budget of 20,000
        assert parser.generate(request).generation_prompt


@needs_shared
def test_a_broken_format_keeps_what_reads_before_the_break() -> None:
    """Block by block (issue 34): where the output stops fitting the format,
    what read before it stays (the reasoning a stream showed is reasoning),
    and the rest of the output, as written, is content; a stream of it ends
    with the same message.  Where nothing reads before the break, the output
    is the content, unchanged."""
    from analysis.generation.streaming import stream_output
    from tests.reading import zoo_generated

    generated = zoo_generated("openai-gpt-oss-120b.jinja", tools=False)
    output = "<|channel|>analysis<|message|>Thinking.<|end|><|start|>assistant<|channel|>final<|message|>Hello<|start|><|mess<|\nWhat's up?"
    outcome = generated.parse(output)
    assert not outcome.ok and "does not fit the format" in outcome.warning
    assert outcome.message.reasoning_content == "Thinking."
    assert outcome.message.content == "Hello<|start|><|mess<|\nWhat's up?"
    for size in (1, 4):
        assert stream_output(generated, output, size)[1].message == outcome.message
    nothing = "<|mess<| stray"
    assert generated.parse(nothing).message.content == nothing
