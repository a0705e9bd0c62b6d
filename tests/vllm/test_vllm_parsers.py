"""The plugin inside vLLM 0.33 (skipped without vLLM: ``tests/vllm/run_vllm_tests.sh``
installs it in a virtual environment of its own): the entry point, the whole
parser serving builds, start-up failures, the split parsers beside vLLM's own,
``adjust_request``'s grammar compiled by vLLM's grammar backend, the log, and
the second route, vLLM's ``response_template`` parser over what ``autoparser
export`` writes."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("vllm.parser.parser_manager", reason="vLLM 0.33 is not installed (tests/vllm/run_vllm_tests.sh installs it)")

from vllm.parser.parser_manager import ParserManager
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager

import autoparser_vllm.vllm_parsers as plugin
from tests.conftest import ROOT, ZOO, needs_shared
from tests.vllm.harness import Answer, Tokenizer, parser_class, request, streamed, whole
from tests.vllm.test_vllm_differential import CASES, FAMILIES, PLUGIN_WRONG, STREAM_IS_NOT_WHOLE, TOOLS, tools_of

TAGGED = (ROOT / "templates" / "tests" / "tagged_xml.jinja").read_text()
OUTPUT = (ROOT / "examples" / "tagged_call.txt").read_text()
TAGGED_TOOLS = json.loads((ROOT / "examples" / "tools.json").read_text())
RIGHT = Answer("The user wants the weather.", "Let me check.", (("get_weather", {"city": "Paris"}),))
SPECIALS = ["<think>", "</think>", "<tool_call>", "</tool_call>"]


def tok(template: str = TAGGED) -> Tokenizer:
    return Tokenizer(template, SPECIALS)


def test_the_entry_point_registers_both_parsers() -> None:
    assert ToolParserManager.get_tool_parser("autoparser") is plugin.AutoparserToolParser
    assert ReasoningParserManager.get_reasoning_parser("autoparser") is plugin.AutoparserReasoningParser
    plugin.register()  # vLLM loads plugins in every process: twice is harmless
    cls = parser_class("autoparser", "autoparser", tok())
    assert issubclass(cls, plugin.AutoparserParser)
    assert cls.tool_parser_cls is plugin.AutoparserToolParser and cls.reasoning_parser_cls is plugin.AutoparserReasoningParser


def test_vllms_own_pairs_are_untouched() -> None:
    cls = parser_class("hermes", "qwen3", tok())
    assert not issubclass(cls, plugin.AutoparserParser)


def test_whole_and_streamed_through_serving_path() -> None:
    cls = parser_class("autoparser", "autoparser", tok())
    req = request(TAGGED_TOOLS)
    assert whole(cls, tok(), req, OUTPUT) == RIGHT
    for size in (1, 4, 16):
        for with_ids in (True, False):
            got = streamed(cls, tok(), req, OUTPUT, size, with_ids)
            assert got.answer == RIGHT and got.names_first
            assert all(i is not None and i.startswith("chatcmpl-tool-") for i in got.ids)  # as vLLM's own parsers make them


def test_a_template_that_cannot_be_analysed_fails_at_start_up_in_one_line() -> None:
    with pytest.raises(TypeError) as err:
        parser_class("autoparser", "autoparser", tok("{% for m in messages %}{{ m.content }"))
    message = str(err.value)
    assert "\n" not in message and "autoparser cannot analyse" in message and "--tool-call-parser autoparser" in message


def test_no_template_fails_at_start_up_naming_the_variable() -> None:
    bare = tok()
    bare.chat_template = None  # type: ignore[assignment]
    with pytest.raises(TypeError) as err:
        parser_class("autoparser", None, bare)
    assert "AUTOPARSER_CHAT_TEMPLATE" in str(err.value) and "\n" not in str(err.value)


def test_the_environment_variable_names_the_template(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "chat.jinja"
    path.write_text(TAGGED)
    monkeypatch.setenv("AUTOPARSER_CHAT_TEMPLATE", str(path))
    other = tok("{{ messages[0].content }}")  # what the tokenizer carries is not read
    assert whole(parser_class("autoparser", "autoparser", other), other, request(TAGGED_TOOLS), OUTPUT) == RIGHT


def test_without_the_reasoning_parser_reasoning_stays_content() -> None:
    cls = parser_class("autoparser", None, tok())
    got = whole(cls, tok(), request(TAGGED_TOOLS), OUTPUT)
    assert got.reasoning is None and got.content is not None and got.content.startswith("<think>")
    assert got.calls == RIGHT.calls
    assert streamed(cls, tok(), request(TAGGED_TOOLS), OUTPUT, 4).answer == got


def test_tool_choice_none_reads_no_calls() -> None:
    cls = parser_class("autoparser", "autoparser", tok())
    got = whole(cls, tok(), request(TAGGED_TOOLS, tool_choice="none"), OUTPUT)
    assert got.calls == () and got.content is not None and "<tool_call>" in got.content


def test_reasoning_left_out_when_not_asked_for() -> None:
    cls = parser_class("autoparser", "autoparser", tok())
    got = streamed(cls, tok(), request(TAGGED_TOOLS, include_reasoning=False), OUTPUT, 4)
    assert got.answer.reasoning is None and got.answer.calls == RIGHT.calls


@pytest.mark.parametrize(("tool", "reasoning"), [("autoparser", "qwen3"), ("hermes", "autoparser")])
@needs_shared
def test_the_split_parsers_beside_vllms_own(tool: str, reasoning: str) -> None:
    """Each of the plugin's parsers works behind or in front of one of vLLM's (vLLM's ``DelegatingParser``)."""
    family = FAMILIES["qwen3"]
    t = Tokenizer((ZOO / family.template).read_text(), list(family.specials))
    cls = parser_class(tool, reasoning, t)
    assert not issubclass(cls, plugin.AutoparserParser)
    output, right = CASES[("qwen3", "reasoning, text, call")]
    req = request(TOOLS)
    assert whole(cls, t, req, output) == right
    for size in (1, 4, 16):
        assert streamed(cls, t, req, output, size).answer == right


def test_the_tool_parser_alone_streams_and_flushes() -> None:
    """vLLM 0.33's ``ToolParser`` interface, called directly: the end held back comes out of ``finish_streaming``."""
    parser = plugin.AutoparserToolParser(tok(), None)
    req = request(TAGGED_TOOLS)
    text = OUTPUT.split("</think>\n\n", 1)[1]
    info = parser.extract_tool_calls(text, req)
    assert info.tools_called and info.content == "Let me check." and info.tool_calls[0].function.name == "get_weather"
    previous = ""
    deltas = []
    for ch in text:
        deltas.append(parser.extract_tool_calls_streaming(previous, previous + ch, ch, [], [], [], req))
        previous += ch
    deltas.append(parser.finish_streaming())
    names = [c.function.name for d in deltas if d for c in d.tool_calls if c.function and c.function.name]
    assert names == ["get_weather"]
    assert "".join(d.content or "" for d in deltas if d).strip() == "Let me check."


def test_reasoning_end_by_token_ids() -> None:
    t = tok()
    parser = plugin.AutoparserReasoningParser(t)
    think, end = t.vocab["<think>"], t.vocab["</think>"]
    assert parser.is_reasoning_end([1, think, 2, end, 3])
    assert not parser.is_reasoning_end([1, think, 2])
    assert not parser.is_reasoning_end([end, think, 2])
    assert parser.extract_content_ids([think, 2, end, 3, 4]) == [3, 4]


def test_adjust_request_hands_vllm_a_grammar_its_backend_compiles() -> None:
    import xgrammar as xgr
    from vllm.sampling_params import SamplingParams
    from vllm.v1.structured_output.backend_xgrammar import validate_xgrammar_grammar

    t = tok()
    cls = parser_class("autoparser", "autoparser", t)
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        req = request(TAGGED_TOOLS, tool_choice=choice)
        adjusted = cls(t, req.tools, chat_template_kwargs={}, model_config=None).adjust_request(req)
        grammar = adjusted.structured_outputs.grammar
        assert grammar and "get_weather" in grammar
        validate_xgrammar_grammar(SamplingParams(structured_outputs=adjusted.structured_outputs))
        vocab = [chr(i) for i in range(32, 127)] + ["\n", "<think>", "</think>", "<tool_call>", "</tool_call>"]
        compiled = xgr.GrammarCompiler(xgr.TokenizerInfo(vocab)).compile_grammar(grammar)
        matcher = xgr.GrammarMatcher(compiled)
        call = OUTPUT[OUTPUT.index("<tool_call>") :]
        assert all(matcher.accept_string(ch) for ch in call)  # the template's own call fits it
        assert not xgr.GrammarMatcher(compiled).accept_string("<tool_call>\n<function=get_time>")


def test_adjust_request_leaves_auto_alone() -> None:
    t = tok()
    req = request(TAGGED_TOOLS)
    adjusted = parser_class("autoparser", "autoparser", t)(t, req.tools, chat_template_kwargs={}, model_config=None).adjust_request(req)
    assert adjusted.structured_outputs is None


def test_deviations_reach_the_log_once_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    logged: list[str] = []
    monkeypatch.setattr(plugin, "_log", lambda lines: logged.append("; ".join(lines)))
    cls = parser_class("autoparser", "autoparser", tok())
    output = OUTPUT + "\nDone."
    whole(cls, tok(), request(TAGGED_TOOLS), output)
    assert len(logged) == 1 and "after the calls" in logged[0]
    streamed(cls, tok(), request(TAGGED_TOOLS), output, 1)
    assert len(logged) == 2 and logged[1] == logged[0]
    whole(cls, tok(), request(TAGGED_TOOLS), OUTPUT)
    assert len(logged) == 2  # an exact output: nothing


# the second route: `autoparser export`, then vLLM's own response_template parsers

#: the name vLLM 0.33 registers its response_template tool and reasoning parsers under
RESPONSE_TEMPLATE = "hf"


@functools.cache
def exported(template: Path) -> dict[str, Any]:
    command = Path(sys.executable).with_name("autoparser")
    out = subprocess.run([str(command), "export", str(template)], capture_output=True, text=True, check=True)
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def for_vllm(template: dict[str, Any]) -> dict[str, Any]:
    """The exported template as vLLM 0.33's serving adapter takes it: without
    ``join`` on ``content`` (it refuses a text field that joins its pieces;
    transformers joins them, and reads the same either way when a reply's text
    is one piece)."""
    data = json.loads(json.dumps(template))
    data["fields"].get("content", {}).pop("join", None)
    return data


#: where vLLM's response_template parser, over the exported template, does not give the right answer: why
_ALL = ("whole", "stream-1", "stream-4", "stream-16")
RESPONSE_TEMPLATE_DIFFERS: dict[tuple[str, str, str], str] = {
    **{
        ("hermes", "invalid json", mode): "the call's closing brace is missing at the output's end: vLLM's response_template parser returns nothing at all "
        "(no call, no content), the output is lost; the plugin reads the call, whose arguments are whole"
        for mode in _ALL
    },
    **{
        ("llama3_json", "one call", mode): "a stream of Llama 3's bare JSON call: vLLM's response_template adapter streams it as content "
        "(its whole parse reads the call); the plugin holds the JSON until it closes and shows the call"
        for mode in _ALL[1:]
    },
    **{
        ("llama3_json", "python tag", mode): "the exported template has no <|python_tag|> (the chat template never writes it): the call after it is content "
        "there; the plugin's leniency reads the tag Llama 3 models write before a call"
        for mode in _ALL
    },
    **{
        ("seed_oss", label, "whole"): "autoparser export refuses Seed-OSS's template: its values are Python literals a response_template cannot type "
        "(one of the export's 7 probes reads otherwise), so there is no second route for this family"
        for label in (
            "content only",
            "reasoning and a call",
            "single_tool_call",
            "malformed_sibling_kept",
            "reasoning_then_tool_call",
            "end_to_end_reasoning_plus_call",
            "budget_reflect_in_reasoning",
        )
    },
    # the verbatim cases of vLLM v0.33.0's own tests
    **{
        (family, label, mode): "the output closes a reasoning block it did not open (</think> alone): the exported template's reasoning "
        "opens at <think>, so vLLM's response_template parser keeps the reasoning and the </think> as content"
        for family, label in (
            ("qwen3", "without_start_token"),
            ("qwen3", "without_start_token_complete_reasoning"),
            ("glm45", "without_open_think"),
        )
        for mode in _ALL
    },
    **{
        ("minimax_m2", label, mode): "MiniMax-M2's generation prompt opens <think>, so the output begins inside the reasoning block: "
        "vLLM's response_template parser, which sees the output alone, reads its reasoning (and a </think>) as content"
        for label in (
            "no_tool_calls_after_think_end",
            "content_before_tool_call",
            "simple_reasoning",
            "complete_reasoning",
            "no_end_token",
            "multiple_lines",
            "code_in_reasoning",
            "engine_without_start_token",
        )
        for mode in _ALL
    },
    **{
        ("kimi_k2", "tool_section_ends_reasoning", mode): "a tool section that holds no call: vLLM's response_template parser drops "
        "its opener <|tool_calls_section_begin|> from the content; the plugin keeps the text as written"
        for mode in _ALL
    },
    **{
        ("qwen3", "tool_call_no_think_end", mode): "the call block in Qwen3-Coder's XML, not the template's JSON: vLLM's response_template "
        "parser drops the block (no call, no text); the plugin keeps it as content (its own error, PLUGIN_WRONG, is to read no call)"
        for mode in _ALL
    },
    **{
        ("qwen3_coder", "type_conversion", mode): "the test declares float_param's type as 'float' (no JSON Schema type): vLLM's "
        "response_template parser keeps 3.14 a string; the plugin reads the number written"
        for mode in _ALL
    },
    **{
        ("llama3_json", "with_arguments", mode): "a stream of Llama 3's bare JSON call: vLLM's response_template adapter streams it as content "
        "(its whole parse reads the call); the plugin holds the JSON until it closes and shows the call"
        for mode in _ALL[1:]
    },
    ("llama3_json", "invalid_json", "whole"): "no call reads (the parameters are not JSON): vLLM's response_template parser returns "
    "nothing at all (no call, no content), the output is lost",
    **{
        ("llama3_json", label, mode): "the exported template reads one call object with its arguments under 'parameters' (this output writes "
        "'arguments', or three objects joined by '; '): vLLM's response_template parser returns nothing for it whole (the calls are lost) "
        "and streams it as content"
        for label in ("arguments_key", "multiple_json_semicolon")
        for mode in _ALL
    },
}


def route_answers(key: tuple[str, str]) -> dict[str, Answer]:
    family = FAMILIES[key[0]]
    t = Tokenizer((ZOO / family.template).read_text(), list(family.specials))
    t.response_template = for_vllm(exported(ZOO / family.template))  # type: ignore[attr-defined]
    reasoning = RESPONSE_TEMPLATE if "thinking" in t.response_template["fields"] else None  # type: ignore[attr-defined]
    cls = ParserManager.get_parser(RESPONSE_TEMPLATE, reasoning, enable_auto_tools=True, tokenizer=t)
    output, _ = CASES[key]
    req = request(tools_of(key))
    answers = {"whole": whole(cls, t, req, output)}
    for size in (1, 4, 16):
        answers[f"stream-{size}"] = streamed(cls, t, req, output, size).answer
    return answers


@needs_shared
@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_the_response_template_route_on_the_same_inputs(key: tuple[str, str]) -> None:
    _, right = CASES[key]
    try:
        answers = route_answers(key)
    except (subprocess.CalledProcessError, TypeError) as exc:  # export refuses the format, or vLLM refuses the template
        answers = {"whole": Answer(None, f"refused: {str(getattr(exc, 'stderr', '') or exc).strip()[:160]}", ())}
    differs = {mode for mode, answer in answers.items() if answer != right}
    stated = {mode for (f, label, mode) in RESPONSE_TEMPLATE_DIFFERS if (f, label) == key}
    assert differs == stated, {mode: str(answers[mode]) for mode in differs ^ stated}


def test_the_lists_name_real_cases() -> None:
    assert set(PLUGIN_WRONG) <= set(CASES) and set(STREAM_IS_NOT_WHOLE) <= set(CASES)
    assert {(f, label) for f, label, _ in RESPONSE_TEMPLATE_DIFFERS} <= set(CASES)
