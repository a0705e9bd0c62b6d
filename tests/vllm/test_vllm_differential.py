"""Differential tests against vLLM 0.33's own parsers (run by
``tests/vllm/run_vllm_tests.sh``, which installs vLLM in a virtual environment
of its own; without vLLM they skip).

For each family a zoo template covers, the outputs below are the inputs of
vLLM's own parser tests (``tests/tool_parsers/test_<family>_tool_parser.py``
and ``tests/reasoning/``, in vLLM's repository: the hermes ones verbatim, the
others in the same shapes), each with the answer a person reads in it. Both
parsers read each output the way serving drives them (``ParserManager``,
``parse`` whole and ``parse_delta`` in 1-, 4- and 16-character chunks, with
token ids and without): the plugin's answer must be the right one, whole and
streamed; vLLM's own is compared with it, and where it differs,
``VLLM_DIFFERS`` says which is right and why (an entry vLLM's parser no longer
needs fails the test: the list only shrinks)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("vllm.parser.parser_manager", reason="vLLM 0.33 is not installed (tests/vllm/run_vllm_tests.sh installs it)")

from autoparser_vllm.session import chat_request, parser_for, thinking_default
from tests.conftest import ZOO, needs_shared
from tests.vllm.harness import Answer, Tokenizer, parser_class, request, streamed, whole

pytestmark = needs_shared


def tool(name: str, **properties: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}, "required": list(properties)[:1]},
        },
    }


TOOLS = [
    tool("final_answer", trigger="boolean"),
    tool("get_current_temperature", location="string", unit="string"),
    tool("get_weather", city="string", days="integer"),
    tool("search", q="string"),
    tool("get_db_config", param="string"),
]


@dataclass(frozen=True)
class Family:
    template: str
    tool_parser: str | None
    reasoning_parser: str | None
    specials: tuple[str, ...]


FAMILIES = {
    "hermes": Family("Qwen-Qwen2.5-7B-Instruct.jinja", "hermes", None, ("<tool_call>", "</tool_call>")),
    "qwen3": Family("Qwen-Qwen3-0.6B.jinja", "hermes", "qwen3", ("<think>", "</think>", "<tool_call>", "</tool_call>")),
    "qwen3_coder": Family("Qwen3-Coder.jinja", "qwen3_coder", None, ("<tool_call>", "</tool_call>")),
    "llama3_json": Family("meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3_json", None, ("<|python_tag|>", "<|eom_id|>", "<|eot_id|>")),
    "kimi_k2": Family(
        "moonshotai-Kimi-K2-Thinking.jinja",
        "kimi_k2",
        "kimi_k2",
        ("<think>", "</think>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_end|>", "<|tool_call_argument_begin|>"),
    ),
    "glm45": Family("glm_4_5.jinja", "glm45", "glm45", ("<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")),
    "minimax_m2": Family("MiniMax-M2.jinja", "minimax_m2", "minimax_m2", ("<think>", "</think>", "<minimax:tool_call>", "</minimax:tool_call>")),
    "deepseek_v31": Family(
        "deepseek-ai-DeepSeek-V3.1.jinja",
        "deepseek_v31",
        None,
        ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"),
    ),
    "seed_oss": Family("ByteDance-Seed-OSS.jinja", "seed_oss", "seed_oss", ("<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>")),
}


def A(reasoning: str | None, content: str | None, *calls: tuple[str, Any]) -> Answer:
    return Answer(reasoning, content, tuple(calls))


#: (family, label) -> (output, the right answer)
CASES: dict[tuple[str, str], tuple[str, Answer]] = {
    # hermes: vLLM's tests/tool_parsers/test_hermes_tool_parser.py, verbatim
    ("hermes", "just text"): ("This is some prior text that has nothing to do with tool calling.", A(None, "This is some prior text that has nothing to do with tool calling.")),
    ("hermes", "bug 19056"): ('<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>', A(None, None, ("final_answer", {"trigger": True}))),
    ("hermes", "newlines in json"): (
        '<tool_call>\n{"name": "get_current_temperature",\n"arguments": {"location":\n"San Francisco, California, United States", "unit": "celsius"}}\n</tool_call>',
        A(None, None, ("get_current_temperature", {"location": "San Francisco, California, United States", "unit": "celsius"})),
    ),
    ("hermes", "content then call"): (
        'Sure, let me check the weather.<tool_call>{"name": "get_weather", "arguments": {"city": "NYC"}}</tool_call>',
        A(None, "Sure, let me check the weather.", ("get_weather", {"city": "NYC"})),
    ),
    ("hermes", "two calls"): (
        '<tool_call>{"name": "search", "arguments": {"q": "cats"}}</tool_call><tool_call>{"name": "search", "arguments": {"q": "dogs"}}</tool_call>',
        A(None, None, ("search", {"q": "cats"}), ("search", {"q": "dogs"})),
    ),
    ("hermes", "until eos"): ('<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}', A(None, None, ("final_answer", {"trigger": True}))),
    ("hermes", "invalid json"): ('<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}', A(None, None, ("final_answer", {"trigger": True}))),
    ("hermes", "serialized arguments"): (
        '<tool_call>\n{"name": "get_db_config", "arguments": "{\\"param\\": \\"max_connections\\"}"}\n</tool_call>',
        A(None, None, ("get_db_config", {"param": "max_connections"})),
    ),
    # qwen3: tests/reasoning/test_qwen3_reasoning_parser.py's shapes, with hermes calls
    ("qwen3", "reasoning then content"): ("<think>This is a reasoning section</think>This is the rest", A("This is a reasoning section", "This is the rest")),
    ("qwen3", "no reasoning"): ("This is content", A(None, "This is content")),
    ("qwen3", "reasoning, text, call"): (
        '<think>\nThe user wants the weather.\n</think>\n\nLet me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        A("The user wants the weather.", "Let me check.", ("get_weather", {"city": "Paris"})),
    ),
    # qwen3_coder: tests/tool_parsers/test_qwen3coder_tool_parser.py's shapes
    ("qwen3_coder", "one call"): (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        A(None, None, ("get_weather", {"city": "Dallas", "days": 3})),
    ),
    ("qwen3_coder", "text then two calls"): (
        "Let me check both.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nOrlando\n</parameter>\n</function>\n</tool_call>",
        A(None, "Let me check both.", ("get_weather", {"city": "Dallas"}), ("get_weather", {"city": "Orlando"})),
    ),
    ("qwen3_coder", "no call"): ("The weather is nice.", A(None, "The weather is nice.")),
    # llama3_json: tests/tool_parsers/test_llama3_json_tool_parser.py's shapes
    ("llama3_json", "one call"): ('{"name": "get_weather", "parameters": {"city": "Paris"}}', A(None, None, ("get_weather", {"city": "Paris"}))),
    ("llama3_json", "python tag"): ('<|python_tag|>{"name": "search", "parameters": {"q": "cats"}}', A(None, None, ("search", {"q": "cats"}))),
    ("llama3_json", "no call"): ("Hello! How can I help?", A(None, "Hello! How can I help?")),
    # kimi_k2: tests/tool_parsers/test_kimi_k2_tool_parser.py's shapes
    ("kimi_k2", "reasoning and a call"): (
        "<think>I need the weather.</think>Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>',
        A("I need the weather.", "Checking.", ("get_weather", {"city": "Beijing"})),
    ),
    ("kimi_k2", "two calls"): (
        '<think>Both.</think><|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{"q": "cats"}<|tool_call_end|>'
        '<|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>{"q": "dogs"}<|tool_call_end|><|tool_calls_section_end|>',
        A("Both.", None, ("search", {"q": "cats"}), ("search", {"q": "dogs"})),
    ),
    ("kimi_k2", "content only"): ("<think>Easy.</think>Hello there.", A("Easy.", "Hello there.")),
    # glm45: tests/tool_parsers/test_glm4_moe_tool_parser.py's shapes
    ("glm45", "reasoning and a call"): (
        "<think>Need weather.</think>\nLet me check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
        A("Need weather.", "Let me check.", ("get_weather", {"city": "Beijing", "days": 2})),
    ),
    ("glm45", "content only"): ("<think>Simple.</think>\nHello.", A("Simple.", "Hello.")),
    # minimax_m2: tests/tool_parsers/test_minimax_m2_tool_parser.py's shapes
    ("minimax_m2", "reasoning and a call"): (
        '<think>\nWeather.\n</think>\n\n<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Seattle</parameter>\n'
        '<parameter name="days">5</parameter>\n</invoke>\n</minimax:tool_call>',
        A("Weather.", None, ("get_weather", {"city": "Seattle", "days": 5})),
    ),
    ("minimax_m2", "content only"): ("<think>\nHi.\n</think>\n\nHello!", A("Hi.", "Hello!")),
    # deepseek_v31: tests/tool_parsers/test_deepseekv31_tool_parser.py's shapes
    ("deepseek_v31", "one call"): (
        'Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        A(None, "Sure.", ("get_weather", {"city": "Paris"})),
    ),
    ("deepseek_v31", "two calls"): (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{"q": "cats"}<｜tool▁call▁end｜>'
        '<｜tool▁call▁begin｜>search<｜tool▁sep｜>{"q": "dogs"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        A(None, None, ("search", {"q": "cats"}), ("search", {"q": "dogs"})),
    ),
    # seed_oss: tests/tool_parsers/test_seed_oss_tool_parser.py's shapes
    ("seed_oss", "reasoning and a call"): (
        "<seed:think>The user asks for weather.</seed:think>\n<seed:tool_call>\n<function=get_weather>\n<parameter=city>Barcelona</parameter>\n"
        "</function>\n</seed:tool_call>",
        A("The user asks for weather.", None, ("get_weather", {"city": "Barcelona"})),
    ),
    ("seed_oss", "content only"): ("<seed:think>Hmm.</seed:think>\nHello.", A("Hmm.", "Hello.")),
}

#: where the plugin's answer (the library's: ``autoparser parse`` reads the same) is not the right one: why
PLUGIN_WRONG: dict[tuple[str, str], str] = {}

#: where the plugin's stream, assembled, is not its whole answer (the library's StreamParser and Generated.parse disagree): why
STREAM_IS_NOT_WHOLE: dict[tuple[str, str], str] = {}

_CUT = "the arguments object is complete and only the call object's closing brace is missing at the output's end (cut off by a stop or max_tokens): the call is unambiguous; vLLM's parser returns the markup as content, which a client cannot act on"

#: where vLLM's own parser's answer is not the right one: (family, label, mode) -> why ours is right
VLLM_DIFFERS: dict[tuple[str, str, str], str] = {
    ("hermes", "invalid json", "whole"): _CUT,
    **{
        ("hermes", "serialized arguments", mode): "vLLM 0.33's hermes parser encodes the string again: the client gets arguments that decode to a string, not an object"
        for mode in ("whole", "stream-1", "stream-4", "stream-16")
    },
    **{
        ("qwen3", "no reasoning", mode): "Qwen3's generation prompt opens no reasoning block (the model writes <think> itself) and this output writes none: "
        "it is the reply; vLLM 0.33's qwen3 parser reads text with no </think> as reasoning, as for templates whose prompt opens <think>"
        for mode in ("whole", "stream-1", "stream-4", "stream-16")
    },
}

SIZES = (1, 4, 16)


def _setup(family_name: str) -> tuple[Family, Tokenizer]:
    family = FAMILIES[family_name]
    return family, Tokenizer((ZOO / family.template).read_text(), list(family.specials))


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_the_plugin_reads_vllms_inputs_right(key: tuple[str, str]) -> None:
    """Whole, and streamed in 1-, 4- and 16-character chunks (with token ids and without): the right answer."""
    family, tok = _setup(key[0])
    output, right = CASES[key]
    req = request(TOOLS)
    ours = parser_class("autoparser", "autoparser" if family.reasoning_parser else None, tok)
    answer = whole(ours, tok, req, output)
    assert answer == library_answer(family, tok, req, output)  # as good as `autoparser parse`: the library's own reading
    assert (answer == right) is (key not in PLUGIN_WRONG), answer
    for size in SIZES:
        for with_ids in (True, False):
            got = streamed(ours, tok, req, output, size, with_ids)
            assert (got.answer == answer) is (key not in STREAM_IS_NOT_WHOLE), (size, with_ids)  # streamed, assembled, equals whole
            assert got.names_first


def library_answer(family: Family, tok: Tokenizer, req: Any, output: str) -> Answer:
    """What the library reads in ``output`` for the same request (``Generated.parse``, as ``autoparser parse`` does)."""
    parser = parser_for(tok)
    generated = parser.generate(chat_request(req, reasoning=family.reasoning_parser is not None, thinking=thinking_default(parser)))
    message = generated.parse(output).message
    content = message.content
    if family.reasoning_parser is None:  # the generation prompt's reasoning echo is not the model's
        echo = generated.parse("").message.content
        content = content[len(echo) :] if content.startswith(echo) else content
    return Answer.of(message.reasoning_content, content, [(c.name, c.arguments) for c in message.tool_calls])


def vllm_answers(key: tuple[str, str]) -> dict[str, Answer]:
    family, tok = _setup(key[0])
    output, _ = CASES[key]
    req = request(TOOLS)
    theirs = parser_class(family.tool_parser, family.reasoning_parser, tok)
    answers = {"whole": whole(theirs, tok, req, output)}
    for size in SIZES:
        try:
            answers[f"stream-{size}"] = streamed(theirs, tok, req, output, size).answer
        except Exception as exc:  # noqa: BLE001  (vLLM's parser raising is a difference too)
            answers[f"stream-{size}"] = Answer(None, f"raised {exc.__class__.__name__}", ())
    return answers


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_where_vllms_parser_differs_a_reason_is_stated(key: tuple[str, str]) -> None:
    _, right = CASES[key]
    differs = {mode for mode, answer in vllm_answers(key).items() if answer != right}
    stated = {mode for (f, label, mode) in VLLM_DIFFERS if (f, label) == key}
    assert differs == stated, {mode: str(vllm_answers(key)[mode]) for mode in differs ^ stated}


def summary() -> dict[str, Any]:
    """Cases compared and agreements (for the report): ``python -m tests.vllm.test_vllm_differential``."""
    agree = differ = 0
    rows = []
    for key in sorted(CASES):
        for mode, answer in vllm_answers(key).items():
            same = answer == CASES[key][1]
            agree += same
            differ += not same
            if not same:
                rows.append([*key, mode, str(answer)])
    return {"cases": len(CASES), "comparisons": agree + differ, "agree": agree, "differ": differ, "differences": rows}


if __name__ == "__main__":
    print(json.dumps(summary(), indent=1, ensure_ascii=False))
