"""Differential tests against vLLM 0.33's own parsers (run by
``tests/vllm/run_vllm_tests.sh``, which installs vLLM in a virtual environment
of its own; without vLLM they skip).

For each family a zoo template covers, the outputs below are the inputs of
vLLM's own parser tests (``tests/tool_parsers/test_<family>_tool_parser.py``,
``tests/reasoning/`` and ``tests/parser/engine/``, in vLLM's repository: the
hermes ones and those below the "verbatim" comment are vLLM v0.33.0's own, as
written, the others in the same shapes), each with the answer a person reads
in it given the tools declared (``TOOLS``, or the case's own in
``CASE_TOOLS``), which is not always what vLLM's test asserts. Both
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


def tool(name: str, /, **properties: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}, "required": list(properties)[:1]},
        },
    }


#: the tools every case's request declares (the tools the cases call, as vLLM's tests declare them, where they declare them)
TOOLS = [
    tool("final_answer", trigger="boolean"),
    tool("get_current_temperature", location="string", unit="string"),
    tool("get_weather", city="string", days="integer"),
    tool("search", q="string"),
    tool("get_db_config", param="string"),
    tool("get_current_weather", city="string", state="string", unit="string"),
    tool("calculate_area", shape="string", dimensions="object", precision="integer"),
    tool("calculate", operation="string", a="number", b="number", enabled="boolean"),
    tool("get_time"),
    tool("get_news", topic="string"),
    tool("send_email", to="string", subject="string"),
    tool("process_data", name="string", value="integer"),
    tool("forecast", days="integer", include_hourly="boolean"),
    tool("searchTool", query="string", limit="integer"),
    tool("getOpenIncidentsTool"),
    tool("foo", x="integer", y="array"),
    tool("bar", y="integer"),
    tool("read", path="string"),
    tool("bash", command="string"),
]

#: a case whose test declares a tool TOOLS declares otherwise: its own tools (the request's, instead of TOOLS)
CASE_TOOLS: dict[tuple[str, str], list[dict[str, Any]]] = {
    # qwen3coder's test_extract_tool_calls_type_conversion declares "float", which is no JSON Schema type, as written
    ("qwen3_coder", "type_conversion"): [
        tool("test_types", int_param="integer", float_param="float", bool_param="boolean", str_param="string", obj_param="object")
    ],
    # test_minimax_m2.py's test_mixed_tool_names_only_return_valid declares search alone, with no properties
    ("minimax_m2", "mixed_tool_names_only_return_valid"): [tool("search")],
}


def tools_of(key: tuple[str, str]) -> list[dict[str, Any]]:
    """The tools the case's request declares."""
    return CASE_TOOLS.get(key, TOOLS)


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
    # qwen3: tests/reasoning/test_qwen3_reasoning_parser.py's shapes, with hermes calls ("reasoning then content" is its
    # test_reasoning[with_think], verbatim)
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
    # ---- verbatim from vLLM v0.33.0's own tests (the outputs as written there; the answers a person reads, which VLLM_DIFFERS
    # compares with what those tests assert); the source of each block is named above it
    # qwen3_coder: tests/tool_parsers/test_qwen3coder_tool_parser.py
    # test_extract_tool_calls_no_tools
    ("qwen3_coder", "no_tools"): ("This is a test response without any tool calls", A(None, "This is a test response without any tool calls")),
    # test_extract_tool_calls[single_tool_with_content], [single_tool_multiline_param], [parallel_tools], [tool_with_typed_params]
    ("qwen3_coder", "single_tool_with_content"): (
        "Sure! Let me check the weather for you.<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n"
        "<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
        A(None, "Sure! Let me check the weather for you.", ("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})),
    ),
    ("qwen3_coder", "single_tool_multiline_param"): (
        "<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n"
        '{"width": 10, \n "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>',
        A(None, None, ("calculate_area", {"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2})),
    ),
    ("qwen3_coder", "parallel_tools"): (
        "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n"
        "<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_current_weather>\n"
        "<parameter=city>\nOrlando\n</parameter>\n<parameter=state>\nFL\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n"
        "</function>\n</tool_call>",
        A(
            None,
            None,
            ("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}),
            ("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
        ),
    ),
    ("qwen3_coder", "tool_with_typed_params"): (
        "Let me calculate that area for you.<tool_call>\n<function=calculate_area>\n<parameter=shape>\ncircle\n</parameter>\n"
        '<parameter=dimensions>\n{"radius": 15.5}\n</parameter>\n<parameter=precision>\n3\n</parameter>\n</function>\n</tool_call>',
        A(None, "Let me calculate that area for you.", ("calculate_area", {"shape": "circle", "dimensions": {"radius": 15.5}, "precision": 3})),
    ),
    # test_extract_tool_calls_type_conversion (its tools: CASE_TOOLS)
    ("qwen3_coder", "type_conversion"): (
        "<tool_call>\n<function=test_types>\n<parameter=int_param>\n42\n</parameter>\n<parameter=float_param>\n3.14\n</parameter>\n"
        "<parameter=bool_param>\ntrue\n</parameter>\n<parameter=str_param>\nhello world\n</parameter>\n<parameter=obj_param>\n"
        '{"key": "value"}\n</parameter>\n</function>\n</tool_call>',
        A(None, None, ("test_types", {"int_param": 42, "float_param": 3.14, "bool_param": True, "str_param": "hello world", "obj_param": {"key": "value"}})),
    ),
    # glm45: tests/tool_parsers/test_glm4_moe_tool_parser.py (vLLM 0.33's glm45 is its glm47 parser)
    # test_extract_tool_calls_with_glm45_newline_format
    ("glm45", "content_plus_call"): (
        "I'll check it. <tool_call>get_current_weather\n<arg_key>city</arg_key>\n<arg_value>Dallas</arg_value>\n<arg_key>state</arg_key>\n"
        "<arg_value>TX</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>fahrenheit</arg_value>\n</tool_call>",
        A(None, "I'll check it.", ("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})),
    ),
    # test_extract_multiple_tool_calls_with_glm45_newline_format
    ("glm45", "multiple_calls"): (
        "<tool_call>get_current_weather\n<arg_key>city</arg_key><arg_value>Dallas</arg_value>\n</tool_call>\n"
        "<tool_call>get_current_weather\n<arg_key>city</arg_key><arg_value>Orlando</arg_value>\n</tool_call>",
        A(None, None, ("get_current_weather", {"city": "Dallas"}), ("get_current_weather", {"city": "Orlando"})),
    ),
    # test_extract_tool_calls_coerces_schema_types
    ("glm45", "schema_type_coercion"): (
        "<tool_call>calculate\n<arg_key>operation</arg_key><arg_value>add</arg_value>\n<arg_key>a</arg_key><arg_value>42</arg_value>\n"
        "<arg_key>b</arg_key><arg_value>3.14</arg_value>\n<arg_key>enabled</arg_key><arg_value>true</arg_value>\n</tool_call>",
        A(None, None, ("calculate", {"operation": "add", "a": 42, "b": 3.14, "enabled": True})),
    ),
    # test_extract_zero_argument_tool_call_with_glm45_newline_format
    ("glm45", "zero_argument_call"): ("<tool_call>get_time\n</tool_call>", A(None, None, ("get_time", {}))),
    # glm45: tests/reasoning/test_glm4_moe_reasoning_parser.py, test_reasoning[with_think], [without_think], [without_open_think],
    # [complete_reasoning], [multiline_reasoning] (GLM-4.5's generation prompt opens no reasoning block)
    ("glm45", "with_think"): ("<think>This is a reasoning section</think>This is the rest", A("This is a reasoning section", "This is the rest")),
    ("glm45", "without_think"): ("This is the rest", A(None, "This is the rest")),
    ("glm45", "without_open_think"): ("This is a reasoning section</think>This is the rest", A("This is a reasoning section", "This is the rest")),
    ("glm45", "complete_reasoning"): ("<think>This is a reasoning section</think>", A("This is a reasoning section", None)),
    ("glm45", "multiline_reasoning"): ("<think>This is a reasoning\nsection</think>This is the rest\nThat", A("This is a reasoning\nsection", "This is the rest\nThat")),
    # kimi_k2: tests/tool_parsers/test_kimi_k2_tool_parser.py, TestExtractToolCalls.test_no_tools
    ("kimi_k2", "no_tools"): ("This is a test", A(None, "This is a test")),
    # TestExtractToolCalls.test_extract_tool_calls[single_tool_call], [parallel_tool_calls], [three_tool_calls], [multiline_json],
    # [no_functions_prefix]
    ("kimi_k2", "single_tool_call"): (
        "I'll check. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>"
        '{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>',
        A(None, "I'll check.", ("get_weather", {"city": "Beijing"})),
    ),
    ("kimi_k2", "parallel_tool_calls"): (
        "Compare weather. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>"
        '{"city": "Beijing"}<|tool_call_end|><|tool_call_begin|>functions.get_weather:1 <|tool_call_argument_begin|>{"city": "Shanghai"}'
        "<|tool_call_end|><|tool_calls_section_end|>",
        A(None, "Compare weather.", ("get_weather", {"city": "Beijing"}), ("get_weather", {"city": "Shanghai"})),
    ),
    ("kimi_k2", "three_tool_calls"): (
        "Multiple tasks. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>"
        '{"city": "New York"}<|tool_call_end|><|tool_call_begin|>functions.get_news:1 <|tool_call_argument_begin|>{"topic": "technology"}'
        "<|tool_call_end|><|tool_call_begin|>functions.send_email:2 <|tool_call_argument_begin|>"
        '{"to": "user@example.com", "subject": "Daily Update"}<|tool_call_end|><|tool_calls_section_end|>',
        A(
            None,
            "Multiple tasks.",
            ("get_weather", {"city": "New York"}),
            ("get_news", {"topic": "technology"}),
            ("send_email", {"to": "user@example.com", "subject": "Daily Update"}),
        ),
    ),
    ("kimi_k2", "multiline_json"): (
        "Formatted. <|tool_calls_section_begin|><|tool_call_begin|>functions.process_data:0 <|tool_call_argument_begin|>"
        '{\n  "name": "test",\n  "value": 123\n}<|tool_call_end|><|tool_calls_section_end|>',
        A(None, "Formatted.", ("process_data", {"name": "test", "value": 123})),
    ),
    ("kimi_k2", "no_functions_prefix"): (
        "No prefix. <|tool_calls_section_begin|><|tool_call_begin|>get_weather:0 <|tool_call_argument_begin|>"
        '{"city": "Tokyo"}<|tool_call_end|><|tool_calls_section_end|>',
        A(None, "No prefix.", ("get_weather", {"city": "Tokyo"})),
    ),
    # kimi_k2: tests/reasoning/test_kimi_k2_reasoning_parser.py, test_extract_reasoning_with_think_tags, _empty_thinking,
    # _implicit_start, _tool_section_ends_reasoning (Kimi-K2-Thinking's generation prompt opens no reasoning block)
    ("kimi_k2", "with_think_tags"): ("<think>step by step reasoning</think>final answer", A("step by step reasoning", "final answer")),
    ("kimi_k2", "empty_thinking"): ("<think></think>final answer", A(None, "final answer")),
    ("kimi_k2", "implicit_start"): ("implicit reasoning with no tags", A(None, "implicit reasoning with no tags")),
    ("kimi_k2", "tool_section_ends_reasoning"): (
        "some reasoning<|tool_calls_section_begin|>tool call data",
        A(None, "some reasoning<|tool_calls_section_begin|>tool call data"),
    ),
    # minimax_m2: tests/parser/engine/test_minimax_m2.py, TestNonStreaming.test_no_tool_calls, test_single_tool_call,
    # test_multiple_invokes, test_schema_type_coercion, test_mixed_tool_names_only_return_valid (its tools: CASE_TOOLS)
    # (MiniMax-M2's generation prompt opens <think>)
    ("minimax_m2", "no_tool_calls_after_think_end"): (
        "</think>This is a regular response without tool calls.",
        A(None, "This is a regular response without tool calls."),
    ),
    ("minimax_m2", "single_tool_call"): (
        '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Seattle</parameter></invoke></minimax:tool_call>',
        A(None, None, ("get_weather", {"city": "Seattle"})),
    ),
    ("minimax_m2", "multiple_invokes"): (
        '<minimax:tool_call><invoke name="search"><parameter name="q">OpenAI</parameter></invoke><invoke name="search">'
        '<parameter name="q">vLLM</parameter></invoke></minimax:tool_call>',
        A(None, None, ("search", {"q": "OpenAI"}), ("search", {"q": "vLLM"})),
    ),
    ("minimax_m2", "schema_type_coercion"): (
        '<minimax:tool_call><invoke name="forecast"><parameter name="days">5</parameter><parameter name="include_hourly">true</parameter>'
        "</invoke></minimax:tool_call>",
        A(None, None, ("forecast", {"days": 5, "include_hourly": True})),
    ),
    ("minimax_m2", "mixed_tool_names_only_return_valid"): (
        '<minimax:tool_call><invoke name="img_gen"><parameter name="prompt">cat</parameter></invoke><invoke name="search">'
        '<parameter name="query">news</parameter></invoke></minimax:tool_call>',
        A(None, None, ("img_gen", {"prompt": "cat"}), ("search", {"query": "news"})),
    ),
    # tests/tool_parsers/test_minimax_m2_tool_parser.py, TestContentStreaming.test_content_before_tool_call (its two chunks, whole)
    ("minimax_m2", "content_before_tool_call"): (
        'Let me check. <minimax:tool_call><invoke name="get_weather"><parameter name="city">Seattle</parameter></invoke></minimax:tool_call>',
        A("Let me check.", None, ("get_weather", {"city": "Seattle"})),
    ),
    # minimax_m2: tests/reasoning/test_minimax_m2_reasoning_parser.py, test_reasoning[simple_reasoning], [complete_reasoning],
    # [no_end_token], [multiple_lines], [code_in_reasoning]; tests/parser/engine/test_minimax_m2.py,
    # TestReasoning.test_extract_reasoning_without_start_token
    ("minimax_m2", "simple_reasoning"): ("This is a reasoning section</think>This is the rest", A("This is a reasoning section", "This is the rest")),
    ("minimax_m2", "complete_reasoning"): ("This is a reasoning section</think>", A("This is a reasoning section", None)),
    ("minimax_m2", "no_end_token"): ("This is reasoning in progress", A("This is reasoning in progress", None)),
    ("minimax_m2", "multiple_lines"): (
        "First line\nSecond line</think>Response first line\nResponse second",
        A("First line\nSecond line", "Response first line\nResponse second"),
    ),
    ("minimax_m2", "code_in_reasoning"): ("```python\nprint('hello')\n```</think>Here is the code.", A("```python\nprint('hello')\n```", "Here is the code.")),
    ("minimax_m2", "engine_without_start_token"): ("This is reasoning</think>This is content", A("This is reasoning", "This is content")),
    # deepseek_v31: tests/tool_parsers/test_deepseekv31_tool_parser.py, test_extract_tool_calls_with_tool,
    # test_extract_tool_calls_with_multiple_tools, test_extract_tool_calls_with_multiline_arguments[False]
    ("deepseek_v31", "single_tool_with_content"): (
        'normal text<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        A(None, "normal text", ("foo", {"x": 1})),
    ),
    ("deepseek_v31", "multiple_tools_prefix_suffix"): (
        'some prefix text<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜><｜tool▁call▁begin｜>bar<｜tool▁sep｜>'
        '{"y":2}<｜tool▁call▁end｜><｜tool▁calls▁end｜> some suffix text',
        A(None, "some prefix text some suffix text", ("foo", {"x": 1}), ("bar", {"y": 2})),
    ),
    ("deepseek_v31", "multiline_arguments"): (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{\n  "x": 1,\n  "y": [\n    1,\n    2\n  ]\n}<｜tool▁call▁end｜>'
        '<｜tool▁call▁begin｜>bar<｜tool▁sep｜>{"y":2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        A(None, None, ("foo", {"x": 1, "y": [1, 2]}), ("bar", {"y": 2})),
    ),
    # seed_oss: tests/parser/engine/test_seed_oss.py (v0.33.0 has no tests/tool_parsers/test_seed_oss_tool_parser.py),
    # test_single_tool_call, test_malformed_function_end_does_not_drop_siblings, test_reasoning_then_tool_call,
    # test_end_to_end_through_registered_adapters, test_budget_reflect_tags_do_not_break_adapter_pipeline
    ("seed_oss", "single_tool_call"): (
        "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Tokyo</parameter>\n</function>\n</seed:tool_call>",
        A(None, None, ("get_weather", {"city": "Tokyo"})),
    ),
    ("seed_oss", "malformed_sibling_kept"): (
        "<seed:tool_call>\n<function=broken</function>\n</seed:tool_call><seed:tool_call>\n<function=get_weather>\n"
        "<parameter=city>Tokyo</parameter>\n</function>\n</seed:tool_call>",
        A(None, "<seed:tool_call>\n<function=broken</function>\n</seed:tool_call>", ("get_weather", {"city": "Tokyo"})),
    ),
    ("seed_oss", "reasoning_then_tool_call"): (
        "<seed:think>I need to read the file.</seed:think><seed:tool_call>\n<function=read>\n<parameter=path>/tmp/x</parameter>\n"
        "</function>\n</seed:tool_call>",
        A("I need to read the file.", None, ("read", {"path": "/tmp/x"})),
    ),
    ("seed_oss", "end_to_end_reasoning_plus_call"): (
        "<seed:think>Plan the call.</seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=city>Tokyo</parameter>\n"
        "</function>\n</seed:tool_call>",
        A("Plan the call.", None, ("get_weather", {"city": "Tokyo"})),
    ),
    ("seed_oss", "budget_reflect_in_reasoning"): (
        "<seed:think>The user's current thinking budget is 512.</seed:cot_budget_reflect>\nI need the weather.\n"
        "<seed:cot_budget_reflect>I have used 131 tokens.</seed:cot_budget_reflect>\n</seed:think><seed:tool_call>\n"
        "<function=get_weather>\n<parameter=city>Barcelona</parameter>\n</function>\n</seed:tool_call>",
        A(
            "The user's current thinking budget is 512.</seed:cot_budget_reflect>\nI need the weather.\n"
            "<seed:cot_budget_reflect>I have used 131 tokens.</seed:cot_budget_reflect>",
            None,
            ("get_weather", {"city": "Barcelona"}),
        ),
    ),
    # llama3_json: tests/tool_parsers/test_llama3_json_tool_parser.py, test_extract_tool_calls_simple, _with_arguments, _no_json,
    # _invalid_json, _with_arguments_key, _multiple_json
    ("llama3_json", "simple_with_surrounding_text"): (
        'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?',
        # a reply to the user that shows a call object (Llama 3's call is the whole reply: a call's result comes after it)
        A(None, 'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?'),
    ),
    ("llama3_json", "with_arguments"): (
        '{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}',
        A(None, None, ("searchTool", {"query": "test query", "limit": 10})),
    ),
    ("llama3_json", "no_json"): ("This is just some text without any tool calls", A(None, "This is just some text without any tool calls")),
    ("llama3_json", "invalid_json"): ('{"name": "invalidTool", "parameters": {invalid json}', A(None, '{"name": "invalidTool", "parameters": {invalid json}')),
    ("llama3_json", "arguments_key"): ('{"name": "searchTool", "arguments": {"query": "test"}}', A(None, None, ("searchTool", {"query": "test"}))),
    ("llama3_json", "multiple_json_semicolon"): (
        '{"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}}; '
        '{"name": "searchTool", "parameters": {"query": "test2"}}',
        A(None, None, ("searchTool", {"query": "test1"}), ("getOpenIncidentsTool", {}), ("searchTool", {"query": "test2"})),
    ),
    # qwen3: tests/reasoning/test_qwen3_reasoning_parser.py, test_reasoning[without_start_token],
    # [without_start_token_complete_reasoning], [without_think], [multiline_reasoning], [tool_call_no_think_end] ([with_think]
    # is "reasoning then content" above) (Qwen3's generation prompt opens no reasoning block)
    ("qwen3", "without_start_token"): ("This is a reasoning section</think>This is the rest", A("This is a reasoning section", "This is the rest")),
    ("qwen3", "without_start_token_complete_reasoning"): ("This is a reasoning section</think>", A("This is a reasoning section", None)),
    ("qwen3", "without_think"): ("This is the rest", A(None, "This is the rest")),
    ("qwen3", "multiline_reasoning"): ("<think>This is a reasoning\nsection</think>This is the rest\nThat", A("This is a reasoning\nsection", "This is the rest\nThat")),
    ("qwen3", "tool_call_no_think_end"): (
        "I need to read the file.\n\n<tool_call>\n<function=bash>\n<parameter=command>\ncat /etc/hosts\n</parameter>\n</function>\n</tool_call>",
        A(None, "I need to read the file.", ("bash", {"command": "cat /etc/hosts"})),
    ),
}

#: where the plugin's answer (the library's: ``autoparser parse`` reads the same) is not the right one: why
PLUGIN_WRONG: dict[tuple[str, str], str] = {
    ("qwen3", "tool_call_no_think_end"): "the call inside <tool_call> is written in Qwen3-Coder's XML (<function=bash><parameter=command>), "
    "not the JSON Qwen3's template writes there: the plugin reads only the template's format and keeps the call block as content",
}

#: where the plugin's stream, assembled, is not its whole answer (the library's StreamParser and Generated.parse disagree): why
STREAM_IS_NOT_WHOLE: dict[tuple[str, str], str] = {}

_CUT = "the arguments object is complete and only the call object's closing brace is missing at the output's end (cut off by a stop or max_tokens): the call is unambiguous; vLLM's parser returns the markup as content, which a client cannot act on"

_MODES = ("whole", "stream-1", "stream-4", "stream-16")

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
    # the verbatim cases of vLLM v0.33.0's own tests
    **{
        ("qwen3", "without_think", mode): "Qwen3's generation prompt opens no reasoning block and this output writes no <think>: it is the reply; "
        "vLLM 0.33's qwen3 parser reads text with no <think> as reasoning (its test asserts reasoning, for templates whose prompt opens <think>)"
        for mode in _MODES
    },
    **{
        ("glm45", label, mode): "GLM-4.5's generation prompt opens no reasoning block (<think></think> only when thinking is off) and this output "
        "writes no <think>: the text is the reply; vLLM 0.33's glm45 parser reads it as reasoning (its test's tokenizer is GLM-4.7's, "
        "whose prompt opens <think>)"
        for label in ("without_think", "content_plus_call")
        for mode in _MODES
    },
    **{
        ("kimi_k2", label, mode): "Kimi-K2-Thinking's generation prompt (<|im_assistant|>assistant<|im_middle|>) opens no reasoning block and "
        "this output writes no <think>: the text is the reply; vLLM 0.33's kimi_k2 parser reads text with no <think> as reasoning"
        for label in ("no_tools", "implicit_start", "single_tool_call", "parallel_tool_calls", "three_tool_calls", "multiline_json", "no_functions_prefix")
        for mode in _MODES
    },
    **{
        ("kimi_k2", "tool_section_ends_reasoning", mode): "no <think> was written, so the text is the reply, and the tool section holds no "
        "call, so its text stays as written; vLLM 0.33's kimi_k2 parser reads the text as reasoning and drops the section and its text"
        for mode in _MODES
    },
    ("qwen3", "tool_call_no_think_end", "whole"): "Qwen3's prompt opens no reasoning block: the text before the call is the reply; vLLM 0.33 "
    "reads it as reasoning, and its hermes parser does not read the XML call in <tool_call>, which it returns as content",
    **{
        ("qwen3", "tool_call_no_think_end", f"stream-{size}"): "Qwen3's prompt opens no reasoning block: the text before the call is the "
        "reply; vLLM 0.33 streams it as reasoning, and its hermes parser, which does not read the XML call, drops the call block: the call is lost"
        for size in (1, 4, 16)
    },
    ("deepseek_v31", "multiple_tools_prefix_suffix", "whole"): "the text after the calls block ( some suffix text) is the model's too; "
    "vLLM 0.33's deepseek_v31 parser drops it (its test asserts the prefix alone)",
    ("llama3_json", "simple_with_surrounding_text", "whole"): "a reply to the user that shows a call object between sentences (Llama 3's call "
    "is the whole reply); vLLM 0.33's llama3_json parser reads the object as a call and drops the text around it (its test asserts content None)",
    **{
        ("llama3_json", "invalid_json", f"stream-{size}"): "no call reads (the parameters are not JSON): the output is the reply; vLLM 0.33's "
        "llama3_json stream sends a call to invalidTool with arguments '' (not a JSON object), and no content"
        for size in (1, 4, 16)
    },
    **{
        ("llama3_json", "multiple_json_semicolon", f"stream-{size}"): "getOpenIncidentsTool's parameters are {}: vLLM 0.33's llama3_json "
        "stream sends no arguments for it (the client assembles '', not a JSON object); its whole parse reads {}"
        for size in (1, 4, 16)
    },
    **{
        ("minimax_m2", "mixed_tool_names_only_return_valid", mode): "the model called img_gen, which the request does not declare: it is "
        "its call still (the client answers it, e.g. with an error); vLLM 0.33's minimax_m2 parser drops it silently (its test asserts that)"
        for mode in _MODES
    },
    **{
        ("seed_oss", "malformed_sibling_kept", mode): "<function=broken</function> never closes its header: no call reads from that block, "
        "which stays as written; vLLM 0.33's seed_oss parser reads a call to broken (no such tool) with arguments {}"
        for mode in _MODES
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
    req = request(tools_of(key))
    ours = parser_class("autoparser", "autoparser" if family.reasoning_parser else None, tok)
    answer = whole(ours, tok, req, output)
    assert answer == library_answer(family, tok, req, output)  # as good as `autoparser parse`: the library's own reading
    assert (answer == right) is (key not in PLUGIN_WRONG), answer
    differs = []
    for size in SIZES:
        for with_ids in (True, False):
            got = streamed(ours, tok, req, output, size, with_ids)
            if got.answer != answer:
                differs.append((size, with_ids, str(got.answer)))
            assert got.names_first
    assert bool(differs) is (key in STREAM_IS_NOT_WHOLE), differs  # streamed, assembled, equals whole (in every chunking)


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
    req = request(tools_of(key))
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
