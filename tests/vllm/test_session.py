"""The vLLM plugin's reading, without vLLM: the template a tokenizer carries or
``AUTOPARSER_CHAT_TEMPLATE`` names, a vLLM request as a ``ChatRequest``, one
output read whole and streamed, and the notes logged once per request. Small
fake requests and tokenizers stand for vLLM's (the plugin reads them by their
attributes)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from analysis.parsers.request import ReasoningFormat, ToolChoice
from autoparser_vllm.session import (
    TEMPLATE_ENV,
    Piece,
    PluginError,
    Session,
    chat_request,
    notes,
    parser_for,
    reasoning_markers,
    single_token_ids,
    template_of,
    xgrammar_ebnf,
)
from tests.conftest import ROOT

TAGGED = ROOT / "templates" / "tests" / "tagged_xml.jinja"
TOOLS = json.loads((ROOT / "examples" / "tools.json").read_text())
OUTPUT = (ROOT / "examples" / "tagged_call.txt").read_text()


def tokenizer(template: Any = None, vocab: dict[str, int] | None = None) -> SimpleNamespace:
    return SimpleNamespace(
        chat_template=TAGGED.read_text() if template is None else template,
        bos_token="",
        eos_token="",
        get_vocab=lambda: vocab or {},
    )


def request(**fields: Any) -> SimpleNamespace:
    base: dict[str, Any] = {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS, "tool_choice": "auto"}
    base.update(fields)
    return SimpleNamespace(**base)


def ids(name: str, index: int) -> str:
    return f"id-{name}-{index}"


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TEMPLATE_ENV, raising=False)


def session(req: Any = None, log: Any = None, **kw: Any) -> Session:
    parser = parser_for(tokenizer())
    return Session(parser.generate(chat_request(req or request(), **kw)), ids, log)


def assemble(pieces: list[Piece]) -> dict[str, Any]:
    """Streamed pieces added up as an OpenAI client adds up deltas."""
    reasoning = "".join(p.reasoning for p in pieces)
    content = "".join(p.content for p in pieces)
    calls: dict[int, dict[str, str]] = {}
    for piece in pieces:
        for call in piece.calls:
            entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
            if call.id is not None:
                assert not entry["id"], "a call's id comes once, first"
                entry["id"] = call.id
            if call.name is not None:
                entry["name"] += call.name
            entry["arguments"] += call.arguments
    return {"reasoning": reasoning or None, "content": content or None, "calls": [calls[i] for i in sorted(calls)]}


# the template


def test_the_tokenizers_template_is_read() -> None:
    text, origin = template_of(tokenizer())
    assert text == TAGGED.read_text() and "tokenizer" in origin


def test_named_variants_pick_tool_use() -> None:
    assert template_of(tokenizer({"default": "A", "tool_use": "B"}))[0] == "B"
    assert template_of(tokenizer([{"name": "default", "template": "A"}]))[0] == "A"


def test_the_environment_variable_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "t.jinja"
    path.write_text("{{ messages }}")
    monkeypatch.setenv(TEMPLATE_ENV, str(path))
    assert template_of(tokenizer()) == ("{{ messages }}", str(path))


@pytest.mark.parametrize("template", [None, "", "   "])
def test_no_template_is_one_line(template: Any) -> None:
    tok = SimpleNamespace(chat_template=template)
    with pytest.raises(PluginError) as err:
        template_of(tok)
    assert "\n" not in str(err.value) and TEMPLATE_ENV in str(err.value)


def test_an_unreadable_template_file_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(TEMPLATE_ENV, str(tmp_path / "missing.jinja"))
    with pytest.raises(PluginError) as err:
        template_of(tokenizer())
    assert "\n" not in str(err.value) and "missing.jinja" in str(err.value)


def test_a_template_that_cannot_be_analysed_fails_at_once_in_one_line() -> None:
    with pytest.raises(PluginError) as err:
        parser_for(tokenizer("{% for m in messages %}{{ m.content }"))
    message = str(err.value)
    assert message.startswith("autoparser cannot analyse") and "\n" not in message


def test_the_analysis_runs_once_per_template() -> None:
    assert parser_for(tokenizer()) is parser_for(tokenizer())


def test_markers_and_their_single_token_ids() -> None:
    parser = parser_for(tokenizer())
    assert reasoning_markers(parser) == ("<think>", "</think>")
    assert single_token_ids(tokenizer(vocab={"<think>": 7, "</think>": 8}), ("<think>", "</think>")) == (7, 8)
    assert single_token_ids(tokenizer(vocab={"<think>": 7}), ("<think>", "</think>")) == (7, None)


# the request


def test_a_named_tool_choice_is_required_with_that_tool() -> None:
    other = {"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}
    req = chat_request(request(tools=[*TOOLS, other], tool_choice={"type": "function", "function": {"name": "other"}}))
    assert req.tool_choice is ToolChoice.REQUIRED
    assert [t["function"]["name"] for t in req.tools or []] == ["other"]


def test_responses_api_tools_are_read() -> None:
    flat = [{"type": "function", "name": "get_weather", "parameters": TOOLS[0]["function"]["parameters"]}]
    req = chat_request(request(tools=flat, tool_choice={"type": "function", "name": "get_weather"}))
    assert req.tool_choice is ToolChoice.REQUIRED
    assert req.tools == [{"type": "function", "function": {"name": "get_weather", "parameters": TOOLS[0]["function"]["parameters"]}}]


def test_request_options_are_carried() -> None:
    req = chat_request(
        request(messages=[{"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]}], parallel_tool_calls=False),
        {"enable_thinking": False, "custom": 1},
    )
    assert req.messages[0]["content"] == "Hi there"
    assert not req.enable_thinking and not req.parallel_tool_calls and req.extra == {"custom": 1}


def test_without_a_reasoning_parser_reasoning_stays_in_content() -> None:
    assert chat_request(request(), reasoning=False).reasoning_format is ReasoningFormat.NONE
    reply = session(reasoning=False).parse(OUTPUT)
    assert reply.reasoning is None and reply.content is not None and "<think>" in reply.content
    assert [c.name for c in reply.calls] == ["get_weather"]


def test_without_a_tool_parser_calls_stay_in_content() -> None:
    reply = session(tools=False).parse(OUTPUT)
    assert reply.calls == () and reply.content is not None and "<tool_call>" in reply.content


# whole and streamed


def test_the_whole_output() -> None:
    reply = session().parse(OUTPUT)
    assert (reply.reasoning, reply.content) == ("The user wants the weather.", "Let me check.")
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.calls] == [("id-get_weather-0", "get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("size", [1, 4, 16])
def test_streamed_assembled_equals_whole(size: int) -> None:
    whole = session().parse(OUTPUT)
    stream = session()
    pieces = [stream.feed(OUTPUT[i : i + size]) for i in range(0, len(OUTPUT), size)]
    pieces.append(stream.finish())
    got = assemble(pieces)
    assert (got["reasoning"], got["content"]) == (whole.reasoning, whole.content)
    assert got["calls"] == [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in whole.calls]
    first = next(c for p in pieces for c in p.calls)
    assert first.name == "get_weather" and first.id == "id-get_weather-0"  # the name (and id) first


def test_finish_twice_adds_nothing() -> None:
    stream = session()
    stream.feed(OUTPUT)
    stream.finish()
    assert not stream.finish()


def test_a_model_written_id_is_kept() -> None:
    tok = tokenizer((ROOT / "templates" / "tests" / "tag_json_call_id.jinja").read_text())
    generated = parser_for(tok).generate(chat_request(request()))
    output = '<｜tool▁call｜>get_weather[CALL_ID]abc123[ARGS]{"city": "Paris"}'
    reply = Session(generated, ids).parse(output)
    assert [(c.id, c.name) for c in reply.calls] == [("abc123", "get_weather")]
    stream = Session(generated, ids)
    pieces = [stream.feed(ch) for ch in output] + [stream.finish()]
    assert [c.id for p in pieces for c in p.calls if c.id] == ["abc123"]


# notes


def test_deviations_are_logged_once_per_request() -> None:
    logged: list[list[str]] = []
    output = OUTPUT + "\nDone."
    reply = session(log=logged.append).parse(output)
    assert reply.outcome.deviations and logged == [notes(reply.outcome)]
    assert any("after the calls" in line for line in logged[0])
    stream_logged: list[list[str]] = []
    stream = session(log=stream_logged.append)
    for ch in output:
        stream.feed(ch)
    stream.finish()
    stream.finish()
    assert stream_logged == logged


def test_an_exact_output_logs_nothing() -> None:
    logged: list[list[str]] = []
    session(log=logged.append).parse(OUTPUT)
    assert logged == []


def test_an_unread_block_is_logged() -> None:
    logged: list[list[str]] = []
    reply = session(log=logged.append).parse("Sure.\n<tool_call>\nnot a call\n</tool_call>")
    assert not reply.outcome.ok
    assert len(logged) == 1 and reply.outcome.warning.splitlines()[0] in logged[0]


# the grammar for vLLM


def test_empty_alternatives_are_written_for_xgrammar() -> None:
    gbnf = 'space ::= | " " | "\\n"{1,2}\nx ::= ("a|" | ) | "|"\ny ::= "a" |\n# a comment | \nz ::= [|] |'
    assert xgrammar_ebnf(gbnf) == 'space ::= "" | " " | "\\n"{1,2}\nx ::= ("a|" | "" ) | "|"\ny ::= "a" | ""\n# a comment | \nz ::= [|] | ""'


def test_a_grammar_without_empty_alternatives_is_unchanged() -> None:
    parser = parser_for(tokenizer())
    grammar, why = parser.generate(chat_request(request(tool_choice="required"))).output_grammar()
    assert grammar and not why
    converted = xgrammar_ebnf(grammar)
    assert converted != grammar and converted.replace('"" ', "").replace(' ""', "") == grammar  # only the empty alternatives change
