"""Dedicated handlers: which templates they own, and their value translations."""

from __future__ import annotations

import functools
import json

import pytest

from analysis.generation.analyzer import analyze_template
from analysis.generation.generator import AutoParser
from analysis.messages.pyliteral import py_to_json
from analysis.parsers.handlers.gemma4 import gemma_to_json, gemma_value
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from peg.combinators import tag
from peg.engine import parse
from tests.cli_helpers import run_cli
from tests.conftest import ZOO, needs_shared, reference_analysis

ROWS = reference_analysis()


@functools.cache
def _analysis(name: str):
    return analyze_template(ChatTemplate(load_template(ZOO / name), clock=FROZEN_CLOCK))


@needs_shared
@pytest.mark.parametrize("row", ROWS, ids=[r["template"] for r in ROWS])
def test_handler_choice_matches_the_reference(row: dict) -> None:
    """A handler owns exactly the templates the reference handles specially."""
    analysis = _analysis(row["template"])
    assert bool(analysis.handler) == bool(row.get("specialized")), analysis.handler
    data = analysis.to_json()
    assert data.get("specialized", False) is bool(row.get("specialized"))  # (the reference's field, with its meaning)
    if analysis.handler:
        assert analysis.handler_rule and data["handler"] == analysis.handler


@needs_shared
def test_analyze_shows_the_handler_rule_tree_and_grammar() -> None:
    result = run_cli("analyze", str(ZOO / "google-gemma-4-31B-it.jinja"), "--all", width=200)
    assert result.exit_code == 0, result.stderr
    for text in ("gemma4", "a probe call renders as <|tool_call>call:", "PEG parser", "Tag(tool-arg-gemma)", "GBNF grammar"):
        assert text in result.stdout, text
    data = json.loads(run_cli("analyze", str(ZOO / "openai-gpt-oss-120b.jinja"), "--json").stdout)
    assert data["specialized"] is True and data["handler"] == "gpt-oss-harmony" and data["handler_rule"]


def test_python_literals_to_json() -> None:
    assert json.loads(py_to_json("{'a': True, \"b\": [1, None], 'c': (2, 3)}".replace("(2, 3)", "[2, 3]"), True)) == {"a": True, "b": [1, None], "c": [2, 3]}
    assert py_to_json("'half", False) == '"half'
    assert py_to_json("[1, Tr", False) == "[1, "  # a word that may still become True
    text = "{'k': 'v', 'n': False}"
    translations = [py_to_json(text[:i], False) for i in range(len(text) + 1)]
    for shorter, longer in zip(translations, translations[1:] + [py_to_json(text, True)], strict=True):
        assert longer.startswith(shorter), (shorter, longer)


def _gemma_prefix_json(text: str) -> str:
    """What the mapper shows for a prefix: the parsed value's text, translated."""
    result = parse(tag("tool-arg-gemma", gemma_value()), text, partial=True)
    node = result.tree[0] if result.tree else None
    return gemma_to_json(node.text, node.complete) if node is not None else ""


@pytest.mark.parametrize(
    "text, value",
    [
        ('{theme:<|"|>dark mode<|"|>,count:3,tags:[<|"|>a<|"|>],on:true}', {"theme": "dark mode", "count": 3, "tags": ["a"], "on": True}),
        ('{note:<|"|>a << b <| c \\<|"|>}', {"note": "a << b <| c \\"}),
        ('{flags:[true,None,<|"|>a<|"|>],on:False}', {"flags": [True, None, "a"], "on": False}),  # the template writes None
    ],
)
def test_gemma_values_to_json(text: str, value: object) -> None:
    assert json.loads(gemma_to_json(text, True)) == value
    translations = [_gemma_prefix_json(text[:i]) for i in range(len(text) + 1)]
    for shorter, longer in zip(translations, translations[1:] + [gemma_to_json(text, True)], strict=True):
        assert longer.startswith(shorter), (shorter, longer)


def test_gemma_partial_string_holds_back_only_a_possible_closing_quote() -> None:
    """Only the parser holds back a cut-short closing quote; the translation does
    not hold back a second time (a '<' before the held one is text)."""
    assert _gemma_prefix_json('<|"|>x <<') == '"x <'
    assert _gemma_prefix_json('<|"|>x <|') == '"x '


@needs_shared
def test_gemma_prose_tool_call_marker_stays_content() -> None:
    parser = AutoParser(ChatTemplate(load_template(ZOO / "google-gemma-4-31B-it.jinja"), clock=FROZEN_CLOCK))
    tools = [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    g = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hi"}], "tools": tools}))
    outcome = g.parse("Write <|tool_call> to call a tool.")
    assert outcome.ok and outcome.message.content == "Write <|tool_call> to call a tool." and not outcome.message.tool_calls


@needs_shared
def test_lfm2_bare_bracket_is_content_and_calls_need_the_marker() -> None:
    parser = AutoParser(ChatTemplate(load_template(ZOO / "LFM2-8B-A1B.jinja"), clock=FROZEN_CLOCK))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}}]
    g = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hi"}], "tools": tools}))
    assert g.parse("See [f(x=1)] in the docs.").message.tool_calls == ()
    message = g.parse("<|tool_call_start|>[f(x=1)]<|tool_call_end|>").message
    assert message.tool_calls[0].name == "f" and json.loads(message.tool_calls[0].arguments) == {"x": 1}


@needs_shared
def test_lfm2_string_quoting_its_own_quote_and_markers_is_read_by_the_whole_output() -> None:
    """LFM2 writes a string value unescaped (``city='print('<|tool_call_start|>[')'``):
    the value ends at the quote after which the call, the list and the section
    close and the output ends (or the next call or section starts), not at the
    first quote followed by ``)`` (issue 34)."""
    from tests.reading import parsed_as_streamed

    parser = AutoParser(ChatTemplate(load_template(ZOO / "LFM2.5-8B-A1B.jinja"), clock=FROZEN_CLOCK))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"s": {"type": "string"}}}}}]
    g = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hi"}], "tools": tools, "parallel_tool_calls": True}))
    for value in ("print('<|tool_call_start|>[')", "print(']<|tool_call_end|>')", "x')]<|tool_call_end|>"):
        for output in (f"<|tool_call_start|>[f(s='{value}')]<|tool_call_end|><|im_end|>", f"<|tool_call_start|>[f(s='{value}'), f(s='c')]<|tool_call_end|>"):
            outcome = parsed_as_streamed(g, output, 3)
            want = [{"s": value}] + ([{"s": "c"}] if "s='c'" in output else [])
            assert outcome.ok and [json.loads(c.arguments) for c in outcome.message.tool_calls] == want, (value, output)


@needs_shared
@pytest.mark.parametrize(
    "template, wrap",
    [
        ("LFM2-8B-A1B.jinja", lambda code: '<|tool_call_start|>[python(code="' + code + '")]<|tool_call_end|>'),
        ("google-gemma-4-31B-it.jinja", lambda code: '<|tool_call>call:python{code:<|"|>' + code + '<|"|>}<tool_call|>'),
        ("openai-gpt-oss-120b.jinja", lambda code: "<|channel|>analysis<|message|>" + code + "<|end|><|start|>assistant<|channel|>final<|message|>done"),
        ("Kimi-K3.jinja", lambda code: '<|close|>think<|sep|><|open|>tools<|sep|><|open|>call tool="python" index="1"<|sep|><|open|>argument key="code" type="string"<|sep|>' + code + "<|close|>argument<|sep|><|close|>call<|sep|>"),
    ],
)
def test_streaming_long_values_needs_few_full_parses(template: str, wrap) -> None:
    """Long string arguments (with escapes) and harmony bodies stream on the fast path."""
    from analysis.generation.streaming import stream_output
    from analysis.messages.mapper import accumulate

    parser = AutoParser(ChatTemplate(load_template(ZOO / template), clock=FROZEN_CLOCK))
    tools = [{"type": "function", "function": {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}}]
    g = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hi"}], "tools": tools}))
    parses = []
    for repeats in (300, 600):
        output = wrap('def f(x):\\n    return \\"x\\" < 3\\n' * repeats)
        deltas, outcome, stream = stream_output(g, output, 4)
        assert outcome.ok and accumulate(deltas) == outcome.message
        parses.append(stream.full_parses)
    # the markup around the value costs some full parses; the value's length none
    assert parses[0] < 60 and parses[1] <= parses[0] + 2, parses


@needs_shared
@pytest.mark.parametrize(
    "template, output",
    [
        ("Qwen-Qwen2.5-7B-Instruct.jinja", '<tool_call>\n{"name": "python", "arguments": ' + "[" * 5000),
        ("LFM2-8B-A1B.jinja", "<|tool_call_start|>[python(code=" + "[" * 3000),
        ("google-gemma-4-31B-it.jinja", "<|tool_call>call:python{code:" + "[" * 3000),
    ],
)
def test_deeply_nested_output_is_kept_as_content_not_a_crash(template: str, output: str) -> None:
    parser = AutoParser(ChatTemplate(load_template(ZOO / template), clock=FROZEN_CLOCK))
    tools = [{"type": "function", "function": {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "object"}}}}}]
    g = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hi"}], "tools": tools}))
    outcome = g.parse(output)
    assert not outcome.ok and outcome.message.content == output.strip()
    cut = g.parse(output, partial=True)  # cut short or not, too deep is kept as text
    assert not cut.ok and cut.message.content == output and not cut.message.tool_calls
    assert "less deeply nested input" in cut.warning


@pytest.mark.slow
@needs_shared
def test_degenerate_markers_stream_in_bounded_work() -> None:
    """Thousands of half-written call markers: full parses back off instead of one per chunk."""
    from analysis.generation.streaming import stream_output

    parser = AutoParser(ChatTemplate(load_template(ZOO / "google-gemma-4-31B-it.jinja"), clock=FROZEN_CLOCK))
    tools = [{"type": "function", "function": {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}}]
    g = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hi"}], "tools": tools}))
    output = "<|tool_call>call:" * 1500
    _deltas, outcome, stream = stream_output(g, output, 16)
    # one full parse per chunk for the first 4 KB (256 chunks), then doubling waits: 1,594 chunks in all
    assert stream.full_parses < 4096 // 16 + 40, stream.full_parses
    assert outcome.message.content.startswith("<|tool_call>call:")


K3_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": ["string", "null"]}, "days": {"type": "integer"}},
            },
        },
    }
]
K3_CALL_1 = (
    '<|open|>call tool="get_weather" index="1"<|sep|>'
    '<|open|>argument key="city" type="string"<|sep|>Paris & "Lyon"\n<|close|>argument<|sep|>'
    '<|open|>argument key="unit" type="null"<|sep|>null<|close|>argument<|sep|>'
    '<|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|><|close|>call<|sep|>'
)
K3_CALL_2 = '<|open|>call tool="get_weather" index="2"<|sep|><|open|>json type="object"<|sep|>{"city": "Lyon", "days": 2}<|close|>json<|sep|><|close|>call<|sep|>'
#: (request changes, model output, expected message): written from the template's format
K3_CASES = [
    (
        {},
        "Let me think.<|close|>think<|sep|><|open|>response<|sep|>Hello!\nHow can I help?<|close|>response<|sep|><|close|>message<|sep|>",
        {"role": "assistant", "content": "Hello!\nHow can I help?", "reasoning_content": "Let me think."},
    ),
    (
        {"tools": K3_TOOLS, "parallel_tool_calls": True},
        "Weather first.<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|>"
        + K3_CALL_1
        + K3_CALL_2
        + "<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>",
        {
            "role": "assistant",
            "content": "Checking.",
            "reasoning_content": "Weather first.",
            "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": 'Paris & "Lyon"\n', "unit": None, "days": 3})}},
                {"type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": "Lyon", "days": 2})}},
            ],
        },
    ),
    (
        {"tools": K3_TOOLS, "enable_thinking": False},
        "<|close|>response<|sep|><|open|>tools<|sep|>" + K3_CALL_2 + "<|close|>tools<|sep|>",
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": "Lyon", "days": 2})}}]},
    ),
]


@needs_shared
@pytest.mark.parametrize("changes, output, expected", K3_CASES, ids=["content", "calls", "no-thinking"])
def test_kimi_k3_parse_stream_and_grammar(changes: dict, output: str, expected: dict) -> None:
    """Kimi K3's XTML turns: the same three checks as a conformance case."""
    from analysis.checks.conformance import CHECKS

    parser = AutoParser(ChatTemplate(load_template(ZOO / "Kimi-K3.jinja"), clock=FROZEN_CLOCK))
    assert parser.analysis.handler == "kimi-k3-xtml"
    generated = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hi"}], **changes}))
    case = {"output": output, "partial": False, "expected": expected}
    assert {name: check(generated, case) for name, check in CHECKS.items()} == {"parse": "", "stream": "", "grammar": ""}


@needs_shared
def test_kimi_k3_thinking_switch_and_tokens() -> None:
    """enable_thinking reaches the template as its own ``thinking`` variable; the
    preserved tokens are the markup's special tokens, not the composite markers."""
    parser = AutoParser(ChatTemplate(load_template(ZOO / "Kimi-K3.jinja"), clock=FROZEN_CLOCK))
    request = {"messages": [{"role": "user", "content": "Hi"}]}
    thinking = parser.generate(ChatRequest.from_json(request))
    plain = parser.generate(ChatRequest.from_json({**request, "enable_thinking": False}))
    assert thinking.generation_prompt.endswith("<|open|>think<|sep|>")
    assert plain.generation_prompt.endswith("<|open|>response<|sep|>") and "thinking_effort" not in plain.prompt.text
    assert set(parser.analysis.preserved_tokens) == {"<|open|>", "<|sep|>", "<|close|>", "<|end_of_msg|>"}


@needs_shared
def test_gigachat35_gcml_calls_with_typed_parameters() -> None:
    """GigaChat 3.5 writes DeepSeek's DSML markup under its own name (GCML)."""
    parser = AutoParser(ChatTemplate(load_template(ZOO / "GigaChat3.5.jinja"), clock=FROZEN_CLOCK))
    assert parser.analysis.handler == "gigachat3.5-gcml"
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "array"}}}}}]
    g = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hi"}], "tools": tools}))
    output = (
        '<｜GCML｜tool_calls>\n<｜GCML｜invoke name="f">\n<｜GCML｜parameter name="s" string="true">a "b"</｜GCML｜parameter>\n'
        '<｜GCML｜parameter name="n" string="false">[1, null]</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>'
    )
    call = g.parse(output).message.tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("f", {"s": 'a "b"', "n": [1, None]})


@needs_shared
def test_kimi_k3_role_starts_hold_only_the_turn_openings() -> None:
    """XTML closes a turn with generic tokens ("…response<|sep|><|close|>message<|sep|><|end_of_msg|>"),
    which used to leak into the user start."""
    a = _analysis("Kimi-K3.jinja")
    assert a.user_start == '<|open|>message role="user"<|sep|>'
    assert a.assistant_start.startswith('<|open|>message role="assistant"<|sep|>')


@pytest.mark.slow
@needs_shared
def test_preserved_tokens_are_markup_only() -> None:
    """Plain words (harmony's 'functions.', ' to=functions.', Gemma's 'call:') are not tokens."""
    for path in sorted(ZOO.glob("*.jinja")):
        try:
            tokens = _analysis(path.name).preserved_tokens
        except Exception:  # noqa: BLE001 - the broken template
            continue
        for token in tokens:
            assert any(ch in token for ch in "<>[]|◁▷｜"), (path.name, token)
    assert _analysis("openai-gpt-oss-120b.jinja").preserved_tokens == ("<|channel|>", "<|constrain|>", "<|message|>", "<|start|>", "<|end|>")


def test_a_formats_own_value_capture_is_read_through_its_hooks() -> None:
    """Value decoding is a hook of the format, not knowledge of the mapper."""
    from analysis.messages.hooks import OutputHooks
    from analysis.messages.mapper import map_result
    from analysis.messages.tags import TOOL_ARG, TOOL_ARG_NAME, tool, tool_name
    from peg import combinators as p
    from peg.engine import parse

    value = p.tag("tool-arg-shout", p.until(">"))
    call = tool(p.literal("<") + tool_name(p.literal("f")) + p.literal(" ") + p.tag(TOOL_ARG, p.tag(TOOL_ARG_NAME, p.literal("x")) + p.literal("=") + value) + p.literal(">"))
    result = parse(call, "<f x=hello>")
    hooks = OutputHooks(value_decoders={"tool-arg-shout": lambda text, complete: json.dumps(text.upper())})
    assert map_result(result, hooks=hooks).tool_calls[0].arguments == '{"x": "HELLO"}'
