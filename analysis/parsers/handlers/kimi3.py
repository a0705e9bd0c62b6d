"""Kimi K3 ("XTML"): every part of a turn is ``<|open|>TAG attrs<|sep|>…<|close|>TAG<|sep|>``.

An assistant turn is ``<|open|>think<|sep|>REASONING<|close|>think<|sep|>``,
``<|open|>response<|sep|>CONTENT<|close|>response<|sep|>`` and optionally
``<|open|>tools<|sep|>`` with calls ``<|open|>call tool="NAME" index="N"<|sep|>``
whose arguments are ``<|open|>argument key="K" type="T"<|sep|>VALUE<|close|>argument<|sep|>``
(``string`` values verbatim, other types as JSON) or one
``<|open|>json type="object"<|sep|>{…}<|close|>json<|sep|>``; the turn ends with
``<|close|>message<|sep|><|end_of_msg|>``.  The generic ``<|open|>``/``<|sep|>``/
``<|close|>`` tokens carry the part's name as text, which the differential
analysis cannot split into markers.  The template's thinking switch is the
``thinking`` variable: a request's ``enable_thinking`` is passed as ``thinking``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from analysis.messages import tags
from analysis.messages.hooks import OutputHooks
from analysis.messages.tags import (
    TOOL_ARG,
    TOOL_ARG_NAME,
    TOOL_ARG_RAW,
)
from analysis.parsers.builder import BuiltParser
from analysis.parsers.handlers.base import Handler, probe_call_render, with_tool_markers
from analysis.parsers.pieces import repeated_calls, typed_value
from analysis.parsers.reasoning import boilerplate_and_reasoning_start
from analysis.parsers.repair import or_left_out
from analysis.parsers.request import ChatRequest, ReasoningFormat, ToolChoice
from analysis.parsers.response_spec import call_field, marker
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import (
    ContentMode,
    PrefillOutcome,
    ReasoningAnalysis,
    ReasoningMode,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.markers import strip_ws
from analysis.probing.probes import FUN_A, Prober
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser

SEP = "<|sep|>"
THINK_OPEN, THINK_CLOSE = "<|open|>think" + SEP, "<|close|>think" + SEP
RESPONSE_OPEN, RESPONSE_CLOSE = "<|open|>response" + SEP, "<|close|>response" + SEP
TOOLS_OPEN, TOOLS_CLOSE = "<|open|>tools" + SEP, "<|close|>tools" + SEP
CALL_OPEN, CALL_CLOSE = '<|open|>call tool="', "<|close|>call" + SEP
ARG_OPEN, ARG_CLOSE = '<|open|>argument key="', "<|close|>argument" + SEP
JSON_OPEN, JSON_CLOSE = '<|open|>json type="object"' + SEP, "<|close|>json" + SEP
MESSAGE_CLOSE, END_OF_MESSAGE = "<|close|>message" + SEP, "<|end_of_msg|>"


def detect(source: str, prober: Prober) -> str | None:
    """A probe call renders as ``<|open|>call tool="NAME"``."""
    if f"{CALL_OPEN}{FUN_A}" in probe_call_render(prober):
        return f"a probe call renders as {CALL_OPEN}{FUN_A}\" index=\"1\"{SEP} (Kimi K3's XTML turns)"
    return None


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    """The XTML markers: think and response blocks, the tools section, tagged arguments."""
    return with_tool_markers(
        analysis,
        ToolFormat.TAG_WITH_TAGGED,
        format={"section_start": TOOLS_OPEN, "section_end": TOOLS_CLOSE, "per_call_start": CALL_OPEN, "per_call_end": CALL_CLOSE},
        function={"name_prefix": "", "name_suffix": '" index="N"' + SEP, "close": ""},
        arguments={"name_prefix": ARG_OPEN, "name_suffix": '" type="T"' + SEP, "value_prefix": "", "value_suffix": ARG_CLOSE, "separator": ""},
        reasoning=ReasoningAnalysis(ReasoningMode.TAG_BASED, THINK_OPEN, THINK_CLOSE),
        content=replace(analysis.content, mode=ContentMode.ALWAYS_WRAPPED, start=RESPONSE_OPEN, end=RESPONSE_CLOSE),
    )


def adapt_request(request: ChatRequest) -> ChatRequest:
    """``enable_thinking`` becomes the template's ``thinking`` (unless the request sets it)."""
    if request.enable_thinking is None or "thinking" in request.extra:
        return request
    return replace(request, extra={**request.extra, "thinking": request.enable_thinking})


def _attribute(value: str) -> str:
    """An attribute value as the template escapes it."""
    return value.replace("&", "&amp;").replace('"', "&quot;")


def _unescape(value: str) -> str:
    """A name as the template escaped it (an attribute value), unescaped."""
    return value.replace("&quot;", '"').replace("&amp;", "&")


def _call(function: Mapping[str, Any], for_grammar: bool = False) -> Parser:
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    names = sorted(properties, key=lambda n: -len(str(n))) if isinstance(properties, Mapping) else []
    # a declared name (longest first, whole), else (parsing) any: an argument the
    # schema does not declare is kept, as in the generic formats (the schema check reports it)
    declared = [p.literal(_attribute(str(n))) + p.peek(p.literal('"')) for n in names]
    any_key = p.chars('[^"<]', 1, UNBOUNDED) + p.peek(p.literal('"'))  # (complete, and shown, once its quote confirms it)
    key = p.choice(*declared, *([] if for_grammar and names else [any_key]))
    string_value = p.literal('string"' + SEP) + p.tag(TOOL_ARG_RAW, p.until(ARG_CLOSE))
    # a typed value that reads as no type is kept as written (the schema check reports it)
    end = p.peek(p.space() + p.literal(ARG_CLOSE))
    typed = typed_value({}, f"{function['name']}-value", end, p.tag(TOOL_ARG_RAW, p.until(ARG_CLOSE)))
    other_value = p.chars("[a-z]", 1, UNBOUNDED) + p.literal('"' + SEP) + p.space() + typed
    value = p.choice(string_value, other_value)
    argument = p.tag(TOOL_ARG, p.literal(ARG_OPEN) + p.tag(TOOL_ARG_NAME, key) + p.literal('" type="') + value + p.literal(ARG_CLOSE))
    json_args = tags.tool_args(p.schema(p.json_value(), f"{function['name']}-args", parameters or {"type": "object"}))
    json_block = p.literal(JSON_OPEN) + p.space() + json_args + p.space() + p.literal(JSON_CLOSE)
    index = p.literal('" index="') + p.chars("[0-9]", 1, UNBOUNDED) + p.literal('"' + SEP)
    head = p.literal(CALL_OPEN) + tags.tool_name(p.literal(_attribute(function["name"]))) + index
    # (parsing) a call's closer left out ends where the next call, the section's end or the turn's end follows
    close = or_left_out(CALL_CLOSE, (CALL_OPEN, TOOLS_CLOSE, MESSAGE_CLOSE, END_OF_MESSAGE), for_grammar)
    return tags.tool(head + p.choice(json_block, p.zero_or_more(argument)) + close)


def build(
    analysis: TemplateAnalysis, request: ChatRequest, generation_prompt: str, continued_text: str, prefill: PrefillOutcome, for_grammar: bool = False
) -> BuiltParser:
    """Think block, response block, tools section, end of turn."""
    extracts = request.reasoning_format is not ReasoningFormat.NONE
    boilerplate, _ = boilerplate_and_reasoning_start(generation_prompt, continued_text, analysis, prefill)
    functions = tool_functions(request) if request.has_tools else []
    turn_end = p.optional(p.literal(MESSAGE_CLOSE)) + p.optional(p.literal(END_OF_MESSAGE)) + p.space()
    if not for_grammar:  # (parsing) closers written twice, or left dangling, at the end of the turn
        dangling = p.choice(*(p.literal(c) for c in (RESPONSE_CLOSE, TOOLS_CLOSE, CALL_CLOSE, MESSAGE_CLOSE, END_OF_MESSAGE)))
        turn_end = turn_end + p.zero_or_more(dangling + p.space())
    stops = (TOOLS_OPEN, MESSAGE_CLOSE, END_OF_MESSAGE) if functions else (MESSAGE_CLOSE, END_OF_MESSAGE)
    if extracts:
        # (parsing) the model repeating the think opener the prompt wrote opens one block
        opener = p.literal(THINK_OPEN) if for_grammar else p.literal(THINK_OPEN) + p.zero_or_more(p.literal(THINK_OPEN))
        think = opener + tags.reasoning(p.until(THINK_CLOSE, RESPONSE_OPEN, *stops)) + p.optional(p.literal(THINK_CLOSE))
        response = p.optional(p.literal(RESPONSE_OPEN)) + tags.content(p.until(RESPONSE_CLOSE, *stops)) + p.optional(p.literal(RESPONSE_CLOSE))
        head = p.optional(tags.reasoning_block(think)) + response
    else:  # reasoning stays in content, verbatim (markup included)
        head = tags.content(p.until(*stops))
    if not functions:
        body = head + turn_end + p.end()
        return BuiltParser(p.literal(boilerplate) + body, boilerplate, body, None, "", extracts)
    one = p.choice(*(_call(f, for_grammar) for f in functions))
    calls = p.literal(TOOLS_OPEN) + repeated_calls(one, request, for_grammar) + p.optional(p.literal(TOOLS_CLOSE))
    tools = calls if request.tool_choice is ToolChoice.REQUIRED else p.optional(calls)
    # (parsing) text after the calls is content, as in the generic formats (a broken
    # message close after the tools section: the calls that read are calls)
    after = turn_end + p.end() if for_grammar else p.choice(turn_end + p.end(), tags.content(p.rest()))
    body = head + tools + after
    # the lazy grammar runs from the trigger to the end of the turn
    return BuiltParser(p.literal(boilerplate) + body, boilerplate, body, calls + turn_end, strip_ws(TOOLS_OPEN), extracts)


#: the markup's special tokens (the markers above are these plus plain text)
TOKENS = ("<|open|>", "<|sep|>", "<|close|>", END_OF_MESSAGE)

def response_fields(analysis: TemplateAnalysis) -> dict[str, Any]:
    """Calls and their arguments as XTML blocks (names as written: the
    spec cannot unescape the ``&amp;`` the template writes in names)."""
    opened = marker(CALL_OPEN) + r'(?P<name>[^"]+)"[^<]*' + marker(SEP)
    tag = marker(ARG_OPEN) + r'(?P<key>[^"]+)"[^<]*' + marker(SEP) + "(?P<value>.*?)" + marker(ARG_CLOSE)
    return {"fields": {"tool_calls": call_field(opened, CALL_CLOSE, "xml-inline", content_args={"tag_pattern": tag})}}


HANDLER = Handler(
    "kimi-k3-xtml",
    detect,
    refine,
    build=build,
    adapt_request=adapt_request,
    tokens=TOKENS,
    output=OutputHooks(names=_unescape),
    response_fields=response_fields,
)
