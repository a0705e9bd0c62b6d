"""Shapes of templates not in the zoo (issue 21), each with a small template
written for the purpose in templates/tests/: the template's own rendering
reads back, through the generic mechanism."""

from __future__ import annotations

import json

import pytest

from analysis.checks.checking import CheckStatus, check_template
from analysis.checks.round_trip import ProbeStatus
from analysis.generation.generator import auto_parser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from tests.cli_helpers import run_cli
from tests.conftest import MORE_KNOWN_FAILURES, PROJECT_TEMPLATES, SHARED, ZOO, needs_shared

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
    assert parser.analysis.handler == "deepseek-v3.2-dsml"
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
    assert parser.analysis.handler == "pythonic-list"
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


def test_the_text_a_section_opener_holds_may_quote_the_opener() -> None:
    """Issue 34, Llama 4: the turn's text inside <|python_start|>…<|python_end|>
    ends at the first <|python_end|> after which a call starts; one quoted in
    the text is text.  A stream shows that text once it is decided, so prose
    that quotes the pair, with no call, is shown as the whole parse reads it;
    a call cut off after it is still reported as cut."""
    from tests.conftest import WEATHER_TOOLS
    from tests.reading import parsed_as_streamed

    generated = auto_parser(load_template(SMALL / "python_tags.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": WEATHER_TOOLS}))
    text = "I will use `<|python_start|><|python_end|>` now."
    call = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    for size in (1, 4):
        outcome = parsed_as_streamed(generated, f"<|python_start|>{text}<|python_end|>{call}<|eot|>", size)
        assert outcome.ok and outcome.message.content == text and json.loads(outcome.message.tool_calls[0].arguments) == {"city": "Paris"}
        prose = "Write `<|python_start|><|python_end|>` to call a tool."
        outcome = parsed_as_streamed(generated, prose + "<|eot|>", size)
        assert outcome.ok and outcome.message.content == prose and not outcome.message.tool_calls
    cut = generated.parse('<|python_start|>Let me check.<|python_end|>{"name": "get_weather", "parameters": {"city": "Par')
    assert not cut.ok and cut.need_more and "cut off" in cut.warning


# --- the templates-more collection: what passes, and why the rest cannot ------------------------

MORE = ZOO.parent / "templates-more"
KNOWN_MORE = MORE_KNOWN_FAILURES
#: per listed template, what its check's failure shows (the cause its reason names)
MORE_CAUSES: dict[str, str] = {}


@pytest.mark.slow
@needs_shared
def test_templates_more_pass_but_the_listed_failures() -> None:
    """Issues 21, 33 and 34: all 71 (Hy3, Llama 4 pythonic, Functionary v2, HyperCLOVA X and Muse Glimmer read since); a failure would be listed with its reason, and no listed one passes."""
    result = run_cli("check", str(MORE), "--known-failures", str(KNOWN_MORE), "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0, report["failures"]
    assert report["templates"] == 71 and report["passed"] == 71
    assert report["fixed"] == []
    assert set(json.loads(KNOWN_MORE.read_text())) == set(MORE_CAUSES)


@pytest.mark.slow
@needs_shared
@pytest.mark.parametrize("name", sorted(MORE_CAUSES))
def test_each_listed_templates_more_failure_shows_its_cause(name: str) -> None:
    result = run_cli("check", str(MORE / name), "--json")
    reason = json.loads(result.stdout)["results"][0]["reason"]
    assert MORE_CAUSES[name] in reason, reason


def test_a_closing_tag_before_the_calls_is_not_their_section() -> None:
    """A turn of calls that begins with </think> (a vLLM DeepSeek V3.1 copy, with no
    reasoning of its own): the section is <|calls_begin|>, each call <|call_begin|>;
    two calls read back (they failed: </think> was taken for the section's opener)."""
    fmt = auto_parser(load_template(SMALL / "closing_tag_calls.jinja")).analysis.tools.format
    assert (fmt.section_start, fmt.per_call_start, fmt.per_call_end, fmt.section_end) == (
        "<|calls_begin|>", "<|call_begin|>", "<|call_end|>", "<|calls_end|>"
    )
    result = check_template(SMALL / "closing_tag_calls.jinja", "closing_tag_calls.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert "two calls" in {t.probe for t in result.round_trips if t.status is ProbeStatus.OK}


def test_calls_opened_by_their_name_tag_follow_text_and_read_cdata() -> None:
    """MiniCPM5's shape: no section or per-call marker, so the name's tag
    (<function name=") starts the calls, after text too; a string written as
    <![CDATA[...]]> is the text inside, streamed as such."""
    from analysis.generation.streaming import stream_output
    from analysis.messages.mapper import accumulate

    result = check_template(SMALL / "function_tags.jinja", "function_tags.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert {"text and call", "typed values"} <= {t.probe for t in result.round_trips if t.status is ProbeStatus.OK}
    tools = [{"type": "function", "function": {"name": "note", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}]
    generated = auto_parser(load_template(SMALL / "function_tags.jinja")).generate(
        ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools})
    )
    assert generated.built.trigger == '<function name="'
    output = 'Sure.<function name="note"><param name="text"><![CDATA[a </param> & <b>]]></param></function>'
    outcome = generated.parse(output)
    assert outcome.ok and outcome.message.content == "Sure."
    assert json.loads(outcome.message.tool_calls[0].arguments) == {"text": "a </param> & <b>"}
    for size in (1, 3, 7):  # the deltas never show the CDATA markers, and add up to the whole parse
        deltas, streamed, _ = stream_output(generated, output, size)
        assert streamed.message == outcome.message and accumulate(deltas) == outcome.message, size
    # a CDATA section left unclosed ends with the value, as written inside it
    unclosed = generated.parse('<function name="note"><param name="text"><![CDATA[a & b</param></function>')
    assert json.loads(unclosed.message.tool_calls[0].arguments) == {"text": "a & b"}


def test_markers_with_a_suffix_and_a_name_separator_read_back() -> None:
    """Hy3's alphabet (issue 33): markers that carry a suffix (<tool_call:v2>),
    a separator marker after the function name, and an end-of-turn marker
    right after the calls' section: each closer is its opener's own closing
    tag, the separator ends the name, and the template's calls read back."""
    parser = auto_parser(load_template(SMALL / "suffixed_markers.jinja"))
    fmt, function = parser.analysis.tools.format, parser.analysis.tools.function
    assert (fmt.section_start.strip(), fmt.per_call_start, fmt.per_call_end, fmt.section_end) == (
        "<tool_calls:v2>",
        "<tool_call:v2>",
        "</tool_call:v2>",
        "</tool_calls:v2>",
    )
    assert function.name_suffix.strip() == "<tool_sep:v2>"
    result = check_template(SMALL / "suffixed_markers.jinja", "suffixed_markers.jinja")
    assert result.status is CheckStatus.OK, result.reason
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in ("get_weather", "get_time")]
    generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    output = (
        "Checking.<tool_calls:v2>\n<tool_call:v2>get_weather<tool_sep:v2>\n<arg_key:v2>city</arg_key:v2>\n"
        "<arg_value:v2>Paris</arg_value:v2>\n</tool_call:v2>\n<tool_call:v2>get_time<tool_sep:v2>\n"
        "<arg_key:v2>zone</arg_key:v2>\n<arg_value:v2>CET</arg_value:v2>\n</tool_call:v2>\n</tool_calls:v2><eos:v2>"
    )
    message = generated.parse(output).message
    assert message.content == "Checking."
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET"})]


@needs_shared
def test_hy3_reads_back_its_own_calls() -> None:
    """Hy3 (templates-more) was a known failure: the separator after the name
    was taken for an argument marker, and the turn's end for the section's closer."""
    source = ZOO.parent / "templates-more" / "llamacpp-tencent-Hy3.jinja"
    result = check_template(source, source.name)
    assert result.status is CheckStatus.OK, result.reason
    assert "llamacpp-tencent-Hy3.jinja" not in json.loads(MORE_KNOWN_FAILURES.read_text())


def test_text_glued_to_a_call_list_and_values_quoted_unescaped_read_back() -> None:
    """Llama 4 pythonic's shape (issue 33): the turn's text, then the call list
    glued to it; every value in double quotes, unescaped.  A string ends at the
    quote from which the call reads on; a value whose type the render loses
    (days="3" for 3) reads back as a value the template writes alike."""
    result = check_template(SMALL / "pythonic_text_first.jinja", "pythonic_text_first.jinja")
    assert result.status is CheckStatus.OK, result.reason
    typed = next(t for t in result.round_trips if t.probe == "typed values")
    assert typed.status is ProbeStatus.OK and "alike" in typed.detail
    parser = auto_parser(load_template(SMALL / "pythonic_text_first.jinja"))
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    message = generated.parse('Let me check.[get_weather(city="Paris "Île" & co")]<|eot|>').message
    assert message.content == "Let me check."
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [("get_weather", {"city": 'Paris "Île" & co'})]
    # a list quoted in prose, text after it, is text
    prose = 'Write [get_weather(city="Paris")] to call it.'
    assert generated.parse(prose).message.content == prose and not generated.parse(prose).message.tool_calls


def test_what_history_writes_before_a_reply_past_the_generation_prompt_is_read_as_its_lead() -> None:
    """Functionary v2's shape (issue 33): its prompt ends at <|recipient|>, its
    replies at <|recipient|>all\\n<|content|>: a model writes that lead first,
    and the reply is the text after it (a word alone, "all", is never a lead)."""
    result = check_template(SMALL / "reply_lead.jinja", "reply_lead.jinja")
    assert result.status is CheckStatus.OK, result.reason
    generated = auto_parser(load_template(SMALL / "reply_lead.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}]}))
    assert generated.parse("all\n<|content|>It is sunny.<|stop|>").message.content == "It is sunny."
    assert generated.parse("It is sunny.<|stop|>").message.content == "It is sunny."
    assert generated.parse("all good, all\n<|content|> stays").message.content == "all good, all\n<|content|> stays"


def test_a_reply_lead_written_only_with_tools_is_what_a_model_writes_first() -> None:
    """vLLM's Hunyuan tool template (issue 34): given tools, history writes
    "助手：" before a reply that makes no call (its system prompt asks the
    model to begin so); without tools, replies are bare.  With tools, the
    reply is the text after it, a reply quoting the call marker included;
    without tools, a reply that begins so keeps it (it is the reply's text)."""
    path = SMALL / "tools_reply_lead.jinja"
    assert check_template(path, "tools_reply_lead.jinja").status is CheckStatus.OK
    parser = auto_parser(load_template(path))
    assert parser.analysis.tools_reply_lead == "助手：" and parser.analysis.assistant_start == ""
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    with_tools = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    assert with_tools.parse("助手：Write `</tool_calls>` to call a tool.<|eos|>").message.content == "Write `</tool_calls>` to call a tool."
    assert with_tools.parse("It is sunny.<|eos|>").message.content == "It is sunny."
    call = with_tools.parse('<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls><|eos|>').message
    assert [(c.name, json.loads(c.arguments)) for c in call.tool_calls] == [("get_weather", {"city": "Paris"})]
    plain = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}]}))
    assert plain.parse("助手：It is sunny.<|eos|>").message.content == "助手：It is sunny."


def test_text_glued_to_a_json_call_list_with_no_marker_reads_back() -> None:
    """Issue 33's "text glued to a JSON call": calls written as a JSON list with
    no marker before them, right after the turn's text.  The list starts at the
    first "[" from which the calls read to the output's end; a list quoted in
    prose, with text after it, is text."""
    result = check_template(SMALL / "json_glued.jinja", "json_glued.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert next(t for t in result.round_trips if t.probe == "text and call").status is ProbeStatus.OK
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    generated = auto_parser(load_template(SMALL / "json_glued.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    message = generated.parse('Let me check [1] first.[{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1"}]<|end|>').message
    assert message.content == "Let me check [1] first."
    assert [(c.name, json.loads(c.arguments), c.id) for c in message.tool_calls] == [("get_weather", {"city": "Paris"}, "a1")]
    prose = 'Send [{"name": "get_weather", "arguments": {}}] and wait.'
    assert generated.parse(prose).message.content == prose and not generated.parse(prose).message.tool_calls


def test_a_cdata_value_holding_the_calls_closer_is_read_whole() -> None:
    """MiniCPM5's CDATA (issue 34): the section ends at a ]]> from which the
    call reads on, not at a closer quoted inside it."""
    generated = auto_parser(load_template(SMALL / "function_tags.jinja")).generate(
        ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "run", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}}]})
    )
    code = "print('</function>')"
    outcome = generated.parse(f'<function name="run"><param name="code"><![CDATA[{code}]]></param></function>')
    assert outcome.ok and [json.loads(c.arguments) for c in outcome.message.tool_calls] == [{"code": code}]
    assert outcome.message.content == ""


def test_calls_written_only_for_another_turn_shape_are_probed() -> None:
    """Issue 33's "tool probes that render no call": the template writes calls
    only for a turn whose content is null and whose arguments are a JSON
    string, and renders the probes' usual shape ("" content, object arguments)
    without them.  The probes try the shapes clients send until the call
    renders, so the tool-call format is found and its round trips run."""
    from analysis.template.rendering import ChatTemplate, RenderRequest

    template = ChatTemplate(load_template(SMALL / "null_content_calls.jinja"))
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    usual = template.render(RenderRequest([{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [call]}]))
    assert "get_weather" not in usual  # (the shape the probes tried first renders no call)
    result = check_template(SMALL / "null_content_calls.jinja", "null_content_calls.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert result.analysis is not None and result.analysis.tools.format.mode.value == "JSON_NATIVE"
    assert result.analysis.caps.supports_tool_calls
    statuses = {t.probe: t.status for t in result.round_trips}
    assert statuses["one call"] is ProbeStatus.OK and statuses["two arguments"] is ProbeStatus.OK
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    generated = auto_parser(load_template(SMALL / "null_content_calls.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    message = generated.parse('<call>{"name": "get_weather", "arguments": {"city": "Paris"}}</call><|end|>').message
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_json_arguments_in_a_code_fence_read_back_with_markers_of_the_templates_own() -> None:
    """Issue 33's "JSON code fence inside a call": a DeepSeek-R1-like layout with
    marker names no workaround knows (``function<|sep|>NAME\\n```json\\n{…}\\n```
    <|call_end|>``) is found by the diffs; a value that quotes the fence and the
    call's closer is its text, whole and streamed."""
    from tests.reading import parsed_as_streamed

    result = check_template(SMALL / "json_fence_call.jinja", "json_fence_call.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert result.analysis is not None and result.analysis.workarounds == () and not result.analysis.handler
    assert result.analysis.tools.function.name_suffix.strip() == "```json"
    assert all(t.status is ProbeStatus.OK for t in result.round_trips), result.round_trips
    tools = [{"type": "function", "function": {"name": "write", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}}]
    generated = auto_parser(load_template(SMALL / "json_fence_call.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    code = "```\nprint(1)\n```<|call_end|><|calls_end|>"
    output = "Sure.<|calls_begin|><|call_begin|>function<|sep|>write\n```json\n" + json.dumps({"code": code}) + "\n```<|call_end|><|calls_end|><|eos|>"
    for size in (1, 7):
        outcome = parsed_as_streamed(generated, output, size)
        assert outcome.ok and outcome.message.content == "Sure."
        assert [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls] == [("write", {"code": code})]


def test_reasoning_a_generation_prompt_opens_and_the_history_leaves_out_is_found() -> None:
    """Issue 33's ``<thought>``: the generation prompt always opens ``<thought>``
    and the history keeps only what follows ``</thought>``, so no probe render
    shows reasoning.  A prompt that ends by opening a tag whose closing tag the
    source writes, where no reply in the history opens it, opens reasoning."""
    from tests.reading import parsed_as_streamed

    result = check_template(SMALL / "thought_prompt.jinja", "thought_prompt.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert result.analysis is not None
    assert (result.analysis.reasoning.mode.value, result.analysis.reasoning.start, result.analysis.reasoning.end) == ("TAG_BASED", "<thought>", "</thought>")
    assert {t.probe: t.status for t in result.round_trips}["reply"] is ProbeStatus.OK
    generated = auto_parser(load_template(SMALL / "thought_prompt.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}]}))
    outcome = parsed_as_streamed(generated, "Plan it.\n</thought>\nThe answer.<|end|>", 2)
    assert (outcome.message.reasoning_content, outcome.message.content) == ("Plan it.", "The answer.")


def test_a_tag_the_prompt_opens_that_replies_open_too_is_not_reasoning(tmp_path) -> None:
    """The same prompt, where each reply in the history is ``<bot>…</bot>``: the
    tag is the reply's own wrapper, not reasoning."""
    source = (
        "{% for m in messages %}{% if m.role == 'assistant' %}<|assistant|><bot>{{ m.content }}</bot><|end|>"
        "{% else %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|><bot>{% endif %}"
    )
    (tmp_path / "bot.jinja").write_text(source)
    analysis = auto_parser(load_template(tmp_path / "bot.jinja")).analysis
    assert analysis.reasoning.mode.value == "NONE"


@pytest.mark.parametrize(
    ("name", "start", "end"),
    [("python_section.jinja", "<function_calls>\n", "</function_calls>"), ("python_fence.jinja", "<|tool_call_start|>```python\n", "```<|tool_call_end|>")],
)
def test_python_calls_in_a_section_of_the_templates_own_read_back(name: str, start: str, end: str) -> None:
    """Issue 33's "python calls inside a section or a code block": calls written
    one per line as ``get_weather(city='Paris')`` in ``<function_calls>``, or in a
    ```` ```python ```` block between LFM2's markers.  LFM2's handler takes only
    its own rendering (``<|tool_call_start|>[name(…)]``); the section's markers
    are read from the template's renders of one call and of two.  Values that
    quote the section's markers, and prose that names its opener, read exactly."""
    from tests.reading import parsed_as_streamed

    result = check_template(SMALL / name, name)
    assert result.status is CheckStatus.OK, result.reason
    assert result.analysis is not None and result.analysis.handler == "pythonic-section"
    fmt = result.analysis.tools.format
    assert (fmt.section_start, fmt.section_end, fmt.per_call_end) == (start, end, "\n")
    assert all(t.status is ProbeStatus.OK for t in result.round_trips), result.round_trips
    tool = {"type": "function", "function": {"name": "write", "parameters": {"type": "object", "properties": {"code": {"type": "string"}, "n": {"type": "integer"}}}}}
    generated = auto_parser(load_template(SMALL / name)).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": [tool]}))
    code = f'print("{end}")\n{start}'
    prose = f"I will write `{start.strip()}` then call."
    output = f"{prose}{start}write(code={code!r}, n=2)\nwrite(code='x')\n{end}<|end|>"
    for size in (1, 5):
        outcome = parsed_as_streamed(generated, output, size)
        assert outcome.ok and outcome.message.content == prose
        assert [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls] == [("write", {"code": code, "n": 2}), ("write", {"code": "x"})]
    # a value written unescaped that quotes its own end, the call's and the section's (the whole output's reading)
    quoted = f"x')\n{end}"
    outcome = parsed_as_streamed(generated, f"{start}write(code='{quoted}')\n{end}<|end|>", 3)
    assert [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls] == [("write", {"code": quoted})]


def test_markers_that_hold_the_other_brackets_read_back() -> None:
    """Issue 33's new marker alphabets: ``<]minimax[>`` is one marker (the diff no
    longer takes its ``[`` for an open ``[...]``), and a section opened by two
    markers of which a second call repeats neither (``<]minimax[>[tool_call]``)
    is one section, not a section and a per-call wrapper."""
    from tests.reading import parsed_as_streamed

    result = check_template(SMALL / "bracketed_markers.jinja", "bracketed_markers.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert result.analysis is not None
    fmt = result.analysis.tools.format
    assert (fmt.section_start.strip(), fmt.section_end, fmt.per_call_start, fmt.per_call_end) == ("<]minimax[>[tool_call]", "<]minimax[>[/tool_call]", "", "")
    assert all(t.status is ProbeStatus.OK for t in result.round_trips), result.round_trips
    tool = {"type": "function", "function": {"name": "write", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}}
    generated = auto_parser(load_template(SMALL / "bracketed_markers.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": [tool]}))
    code = "s = '</parameter></invoke><]minimax[>[/tool_call]'"
    output = f'Quoting `<]minimax[>[tool_call]` first.\n<]minimax[>[tool_call]\n<invoke name="write">\n<parameter name="code">{code}</parameter>\n</invoke>\n<]minimax[>[/tool_call]<]/ai[>'
    for size in (1, 4):
        outcome = parsed_as_streamed(generated, output, size)
        assert outcome.ok and outcome.message.content == "Quoting `<]minimax[>[tool_call]` first."
        assert [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls] == [("write", {"code": code})]


def test_recipient_messages_with_a_marker_and_separator_of_their_own_read_back() -> None:
    """Issue 33's Functionary v2: each message names its recipient after
    ``\\n<|from|>assistant\\n<|recipient|>`` and a separator (``\\n<|content|>``);
    calls render only with string arguments.  The v3.2 handler's reading,
    with the marker and the separator taken from the render of two calls;
    prose that quotes the marker is text, whole and streamed."""
    from tests.reading import parsed_as_streamed

    result = check_template(SMALL / "recipient_calls.jinja", "recipient_calls.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert result.analysis is not None and result.analysis.handler == "functionary-v2"
    assert (result.analysis.tools.format.per_call_start, result.analysis.tools.function.name_suffix) == ("<|from|>assistant\n<|recipient|>", "\n<|content|>")
    assert all(t.status is ProbeStatus.OK for t in result.round_trips), result.round_trips
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    generated = auto_parser(load_template(SMALL / "recipient_calls.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    prose = "Each message starts with `\n<|from|>assistant\n<|recipient|>` and a name."
    output = f'all\n<|content|>{prose}\n<|from|>assistant\n<|recipient|>get_weather\n<|content|>{{"city": "Paris"}}<|stop|>'
    for size in (1, 6):
        outcome = parsed_as_streamed(generated, output, size)
        assert outcome.ok and outcome.message.content.strip() == prose
        assert [(c.name, json.loads(c.arguments)) for c in outcome.message.tool_calls] == [("get_weather", {"city": "Paris"})]
    result = check_template(SHARED / "templates-more" / "functionary-v2.jinja", "functionary-v2.jinja") if SHARED.exists() else None
    if result is not None:  # the published template: its calls are probed and read back now
        assert result.status is CheckStatus.OK and {t.probe for t in result.round_trips if t.status is ProbeStatus.OK} >= {"one call", "two calls", "reply"}


def test_a_probe_the_template_raises_on_for_null_content_is_retried_with_empty_content() -> None:
    """Issue 33's "a template that raises on None content": ``message.content |
    length`` raises for null content ("object of type 'NoneType' has no
    len()").  The reasoning-scope probe (R3) sends a calling turn with null
    content; it is retried with "" and finds the reasoning written only with calls."""
    from analysis.errors import TemplateRenderError
    from analysis.generation.analyzer import analyze_template
    from analysis.probing.probes import Comparison, assistant, conversation, tool_call
    from analysis.template.rendering import ChatTemplate

    template = ChatTemplate(load_template(SMALL / "null_content_raises.jinja"))
    with pytest.raises(TemplateRenderError, match="has no len"):
        template.render(conversation(assistant(content=None, calls=[tool_call()])))
    record: list[Comparison] = []
    analysis = analyze_template(template, record=record)
    assert next(c.shape for c in record if c.name.startswith("R3")) == "content empty"
    assert (analysis.reasoning.mode.value, analysis.reasoning.start, analysis.reasoning.end) == ("TOOLS_ONLY", "<think>", "</think>")
    result = check_template(SMALL / "null_content_raises.jinja", "null_content_raises.jinja")
    assert result.status is CheckStatus.OK and {t.probe for t in result.round_trips if t.status is ProbeStatus.OK} >= {"one call", "two calls", "reply"}


def test_text_glued_to_a_bare_json_call_object_reads_back() -> None:
    """Issue 33's other glued form: one JSON object per call, no marker, right
    after the turn's text (``Let me check that.{"name": …}``).  A call object
    quoted in prose, with text after it, is text."""
    result = check_template(SMALL / "json_object_glued.jinja", "json_object_glued.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert all(t.status is ProbeStatus.OK for t in result.round_trips), result.round_trips
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    generated = auto_parser(load_template(SMALL / "json_object_glued.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    message = generated.parse('Let me check that.{"name": "get_weather", "arguments": {"city": "Paris"}}<|end|>').message
    assert message.content == "Let me check that." and [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [("get_weather", {"city": "Paris"})]
    prose = 'Send {"name": "get_weather", "arguments": {}} and wait.'
    assert generated.parse(prose).message.content == prose and not generated.parse(prose).message.tool_calls


def test_reasoning_as_a_message_whose_role_header_goes_on_reads_back() -> None:
    """Issue 33's HyperCLOVA X: the prompt ends at ``<|im_start|>assistant`` and
    the model's header goes on: ``/think\\n`` opens reasoning as a message of its
    own, ``<|im_end|>\\n<|im_start|>assistant`` closes it, ``\\n`` opens the reply.
    Where no marker opens the reasoning, what its render adds before it opens
    it, so a plain reply is a reply, not reasoning."""
    from tests.reading import parsed_as_streamed

    result = check_template(SMALL / "role_header_reasoning.jinja", "role_header_reasoning.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert result.analysis is not None
    assert (result.analysis.reasoning.start, result.analysis.reasoning.end) == ("/think\n", "<|im_end|>\n<|im_start|>assistant")
    assert {t.probe: t.status for t in result.round_trips}["reasoning"] is ProbeStatus.OK
    generated = auto_parser(load_template(SMALL / "role_header_reasoning.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}]}))
    for size in (1, 5):
        reply = parsed_as_streamed(generated, "\nIt is sunny.<|im_end|><|endofturn|>", size)
        assert (reply.message.content.strip(), reply.message.reasoning_content) == ("It is sunny.", None)
        both = parsed_as_streamed(generated, "/think\nCheck it.<|im_end|>\n<|im_start|>assistant\nIt is sunny.<|im_end|><|endofturn|>", size)
        assert (both.message.reasoning_content, both.message.content.strip()) == ("Check it.", "It is sunny.")


def test_recipient_messages_with_xml_calls_read_back() -> None:
    """Muse Glimmer's shape (issue 34): a message's recipient names what it is
    (``to=user`` the reply, ``to=self`` reasoning, ``to=NAME`` a call whose
    body is an ``atem`` XML block, string values as written, the others JSON).
    A value or a reply quoting the format's own markers reads as written,
    whole and streamed."""
    from analysis.generation.grammar_check import check_output
    from tests.reading import parsed_as_streamed

    path = SMALL / "recipient_xml.jinja"
    result = check_template(path, "recipient_xml.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert {"one call", "two calls", "typed values", "reasoning"} <= {t.probe for t in result.round_trips if t.status is ProbeStatus.OK}
    parser = auto_parser(load_template(path))
    assert parser.analysis.handler == "recipient-xml"
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "flags": {"type": "array"}}, "required": ["city"]}}}]
    generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    quoted = "print('</atem:parameter>\\n</atem:invoke>\\n</atem:function_calls><|eot|>')"
    call = (
        ' to=self<|message|>Check the weather.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>\n'
        '<atem:invoke name="get_weather">\n<atem:parameter name="city">' + quoted + '</atem:parameter>\n'
        '<atem:parameter name="days">3</atem:parameter>\n<atem:parameter name="flags">[true, null]</atem:parameter>\n'
        "</atem:invoke>\n</atem:function_calls><|eot|>"
    )
    for size in (1, 4, 9):
        message = parsed_as_streamed(generated, call, size).message
        assert message.reasoning_content == "Check the weather." and message.content == ""
        assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [("get_weather", {"city": quoted, "days": 3, "flags": [True, None]})]
        reply = " to=user<|message|>Write `<|eot|><|start|>assistant to=get_weather<|message|>` to call.<|eot|>"
        outcome = parsed_as_streamed(generated, reply, size)
        assert outcome.ok and outcome.message.content == "Write `<|eot|><|start|>assistant to=get_weather<|message|>` to call."
    assert generated.grammar and check_output(generated, call.replace(quoted, "Paris")).fits


@pytest.mark.parametrize(
    ("template", "output"),
    [
        ("lfm2_calls.jinja", "<|tool_call_start|>[get_weather(city='{}')]<|tool_call_end|>"),
        ("python_section.jinja", "<function_calls>\nget_weather(city='{}')\n</function_calls>"),
        ("pythonic_list.jinja", "[get_weather(city='{}')]"),
    ],
)
def test_a_python_string_quoting_its_close_and_a_next_calls_head_is_read_whole(template: str, output: str) -> None:
    """Issue 34: after a candidate closing quote, the look-ahead reads the next
    call whole, as it reads alone (it stopped at its name and "("): a value
    quoting ``'), get_weather(`` then text that no call reads is its text.  A
    declared argument may follow a value with no comma (Gemma 3's pythonic
    template writes none)."""
    from tests.reading import parsed_as_streamed

    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
    generated = auto_parser(load_template(SMALL / template)).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools}))
    value = "a'), get_weather(x"
    for size in (1, 4):
        outcome = parsed_as_streamed(generated, output.format(value), size)
        assert outcome.ok and [json.loads(c.arguments) for c in outcome.message.tool_calls] == [{"city": value}]
    glued = generated.parse(output.replace("city='{}'", "city='Paris'days=3")).message
    assert [json.loads(c.arguments) for c in glued.tool_calls] == [{"city": "Paris", "days": 3}]


def test_markers_in_a_bracket_alphabet_are_whole_markers() -> None:
    """Issue 47: markers of the form ``]<]name[>[`` are one marker each (not a
    ``<]name[>`` between two stray brackets, nor ``[]`` between two markers), and
    the ``[`` that ends a call's opener is no list around its JSON object."""
    from analysis.probing.markers import MARKER_RE
    from tests.reading import parsed_as_streamed

    assert MARKER_RE.findall("]<]/call[>[]<]call[>[{") == ["]<]/call[>[", "]<]call[>["]
    assert MARKER_RE.findall("<]minimax[>[tool_call]") == ["<]minimax[>", "[tool_call]"]  # (issue 33's alphabet as before)
    result = check_template(SMALL / "bracket_alphabet.jinja", "bracket_alphabet.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert result.analysis is not None
    fmt = result.analysis.tools.format
    assert (fmt.per_call_start, fmt.per_call_end, fmt.tools_array_wrapped) == ("]<]call[>[", "]<]/call[>[", False)
    assert (result.analysis.user_start, result.analysis.assistant_start) == ("]<]user[>[", "]<]ai[>[")
    assert [t.status for t in result.round_trips] == [ProbeStatus.OK] * 6, result.round_trips
    from analysis.fixtures import WEATHER_TOOL

    generated = auto_parser(load_template(SMALL / "bracket_alphabet.jinja")).generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": [WEATHER_TOOL]}))
    output = 'On it.]<]call[>[{"name": "get_weather", "arguments": {"city": "[Paris]"}}]<]/call[>[]<]call[>[{"name": "get_weather", "arguments": {"city": "Lyon"}}]<]/call[>[]<]/ai[>['
    for size in (1, 5):
        outcome = parsed_as_streamed(generated, output, size)
        assert outcome.ok and outcome.message.content == "On it."
        assert [json.loads(c.arguments) for c in outcome.message.tool_calls] == [{"city": "[Paris]"}, {"city": "Lyon"}]


def test_a_template_that_renders_nothing_without_tools_is_checked_with_them() -> None:
    """Issue 47: a template that renders no turn unless tools are given is a
    chat template (a user message shows once tools are given), and its reply
    probe renders the reply to a request with tools, which reads back."""
    from analysis.probing.caps import chat_template_problem
    from analysis.template.rendering import ChatTemplate, RenderRequest

    path = SMALL / "tools_only_render.jinja"
    template = ChatTemplate(load_template(path))
    assert template.render(RenderRequest([{"role": "user", "content": "x"}], add_generation_prompt=True)) == ""
    assert chat_template_problem(template) == ""
    result = check_template(path, "tools_only_render.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert [(t.probe, t.status) for t in result.round_trips][-1] == ("reply", ProbeStatus.OK)
    assert all(t.status is ProbeStatus.OK for t in result.round_trips), result.round_trips
    reply = next(t for t in result.round_trips if t.probe == "reply")
    assert reply.tools and reply.prompt.startswith("<|tools|>get_weather") and reply.text.startswith("It is sunny in Paris today.")


@needs_shared
@pytest.mark.parametrize("name", ["GigaChat3-10B-A1.8B.jinja", "GigaChat3.1-10B-A1.8B.jinja"])
def test_gigachat3_parallel_calls_are_unreadable_because_the_template_writes_only_the_first(name: str) -> None:
    """Issue 47: GigaChat3 and 3.1 render ``message.tool_calls[0]`` alone: a
    turn of two calls is written exactly as a turn of its first call, so no
    reading of the render can recover the second (the two-calls probe is
    skipped, never failed); every other probe reads back."""
    from analysis.checks.round_trip import CALL_SETS, _turn
    from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate

    template = ChatTemplate(load_template(ZOO / name), clock=FROZEN_CLOCK)
    tool, arguments = CALL_SETS["two calls"]

    def turn(args: list[dict]) -> str:
        calls = [{"id": f"call_{i}", "type": "function", "function": {"name": "get_weather", "arguments": a}} for i, a in enumerate(args)]
        found = _turn(template, {"role": "assistant", "content": "", "tool_calls": calls}, [tool])
        assert found is not None
        return found[0]

    two, first = turn(arguments), turn(arguments[:1])
    assert two == first and "Paris" in two and "Lyon" not in two
    trips = {t.probe: t for t in check_template(ZOO / name, name).round_trips}
    assert trips["two calls"].status is ProbeStatus.SKIPPED and trips["two calls"].detail == "the template does not render these calls"
    assert all(t.status is ProbeStatus.OK for p, t in trips.items() if p != "two calls"), trips


def test_a_template_whose_reasoning_turn_renders_no_call_is_read() -> None:
    """Issue 47: a history that writes a turn's reasoning or its calls, never
    both (a turn with ``reasoning_content`` leaves its calls out): the
    reasoning and the calls are each found from the renders that show them,
    and every probe reads back."""
    from analysis.template.rendering import ChatTemplate, RenderRequest

    path = SMALL / "reasoning_drops_calls.jinja"
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    turn = {"role": "assistant", "content": "", "reasoning_content": "Plan.", "tool_calls": [call]}
    rendered = ChatTemplate(load_template(path)).render(RenderRequest([{"role": "user", "content": "x"}, turn]))
    assert "<think>" in rendered and "get_weather" not in rendered  # (the kind: the reasoning variant renders no call)
    result = check_template(path, "reasoning_drops_calls.jinja")
    assert result.status is CheckStatus.OK, result.reason
    assert all(t.status is ProbeStatus.OK for t in result.round_trips), result.round_trips
    analysis = auto_parser(load_template(path)).analysis
    assert analysis.reasoning.start.strip() == "<think>" and analysis.tools.format.per_call_start.strip() == "<tool_call>"
