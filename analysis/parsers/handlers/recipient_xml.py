"""Recipient messages with XML calls (vLLM's Muse Glimmer template): a turn is
messages ``<|start|>assistant to=R<|message|>BODY`` ended by ``<|eom|>`` (one
more follows) or ``<|eot|>``.  The recipient ``user`` is the reply, ``self``
the reasoning, a function's name a call, whose body is an XML block in a
namespace of the template's own (``atem``)::

    <atem:function_calls>
    <atem:invoke name="get_weather">
    <atem:parameter name="city">Paris</atem:parameter>
    </atem:invoke>
    </atem:function_calls>

A string parameter is its text as written; the others are JSON (objects,
arrays, ``true``, ``null``), read by the tool's schema.  The generation
prompt ends at ``<|start|>assistant``: the model writes the first recipient.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from analysis.messages import tags
from analysis.messages.tags import REASONING, TOOL_ARG, TOOL_ARG_NAME, TOOL_ARG_RAW
from analysis.parsers.builder import BuiltParser
from analysis.parsers.handlers.base import Handler, probe_call_render, with_tool_markers
from analysis.parsers.pieces import argument_set, ending, repeated_calls, turn_end_markers, typed_value, whole_reading_first
from analysis.parsers.reasoning import boilerplate_and_reasoning_start
from analysis.parsers.request import ChatRequest, ReasoningFormat
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import PrefillOutcome, ReasoningAnalysis, ReasoningMode, TemplateAnalysis, ToolFormat
from analysis.probing.probes import FUN_A, Prober
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser

MESSAGE = "<|message|>"
SEPARATOR = "<|start|>assistant"
#: what ends a message: another follows (``<|eom|>``), or the turn ends
ENDS = ("<|eom|>", "<|eot|>")
REPLY, THOUGHT = "user", "self"
_INVOKE = re.compile(r"<([A-Za-z_][\w.-]*):invoke name=\"")


def _namespace(rendered: str) -> str | None:
    """The XML namespace of a call rendered in a recipient message (``atem``), or None."""
    at = rendered.find(f" to={FUN_A}{MESSAGE}")
    found = _INVOKE.search(rendered, at) if at >= 0 else None
    return found[1] if found is not None and rendered.startswith(f'{FUN_A}">', found.end()) else None


def detect(source: str, prober: Prober) -> str | None:
    """A probe call renders as `` to=NAME<|message|>`` then ``<NS:invoke name="NAME">``."""
    namespace = _namespace(probe_call_render(prober))
    if namespace is None:
        return None
    return f'a probe call renders as to={FUN_A}{MESSAGE} then <{namespace}:invoke name="{FUN_A}"> (recipient messages with XML calls)'


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    namespace = _namespace_of(source)
    return with_tool_markers(
        analysis,
        ToolFormat.TAG_WITH_TAGGED,
        format={"section_start": f"<{namespace}:function_calls>", "section_end": f"</{namespace}:function_calls>"},
        function={"name_prefix": f'<{namespace}:invoke name="', "name_suffix": '">', "close": f"</{namespace}:invoke>"},
        arguments={
            "name_prefix": f'<{namespace}:parameter name="',
            "name_suffix": '">',
            "value_prefix": "",
            "value_suffix": f"</{namespace}:parameter>",
            "separator": "",
        },
        reasoning=ReasoningAnalysis(ReasoningMode.TAG_BASED, f"to={THOUGHT}{MESSAGE}", ENDS[0]),
    )


def _namespace_of(source: str) -> str:
    """The namespace the template's source writes its invoke blocks in."""
    found = _INVOKE.search(source)
    return found[1] if found is not None else "atem"


def build(
    analysis: TemplateAnalysis, request: ChatRequest, generation_prompt: str, continued_text: str, prefill: PrefillOutcome, for_grammar: bool = False
) -> BuiltParser:
    """Messages, each a recipient and a body, until the end of the output."""
    boilerplate, _ = boilerplate_and_reasoning_start(generation_prompt, continued_text, analysis, prefill)
    stops = () if for_grammar else turn_end_markers(analysis)
    end_marker = p.choice(*(p.literal(e) for e in ENDS))
    # (parsing) a text ends at the first end marker from which the rest of the
    # output reads as the format's messages: one quoted in it is text; a value
    # ends at the first closer after which its block closes and the message
    # ends (bounded: the next message's separator, or the output's end)
    ends = p.zero_or_more(p.space() + end_marker) + p.space()
    after_message = None if for_grammar else p.rule("after-a-message", ends + p.choice(p.peek(p.literal(SEPARATOR)), p.end()))

    def header(recipient: Parser) -> Parser:
        return p.space() + p.literal("to=") + recipient + p.literal(MESSAGE)

    namespace = analysis.tools.format.section_start[1:].partition(":")[0] or "atem"
    functions = tool_functions(request) if request.has_tools else []
    calls = [_call(f, namespace, header, after_message, for_grammar) for f in functions]
    texts = (REPLY, THOUGHT)
    # the rest of the output reads from an end marker where the call messages
    # after it read and the output then ends, or a text message begins (its
    # text always reads, to the output's end if need be): the look-ahead never
    # nests one per message, as it would by asking the same of each text
    call_messages = p.zero_or_more(ends + p.literal(SEPARATOR) + p.choice(*calls)) if calls else p.eps()
    text_begins = p.literal(SEPARATOR) + header(p.choice(*map(p.literal, texts)))
    rest = p.rule("rest-of-the-turn", call_messages + ends + p.choice(text_begins, ending(stops)))

    def text() -> Parser:
        return p.until(*ENDS, SEPARATOR) if for_grammar else p.until(*ENDS, SEPARATOR, then=rest)

    reply = header(p.literal(REPLY)) + tags.content(text())
    if request.reasoning_format is ReasoningFormat.NONE:  # (reasoning stays in content, header and all)
        thought = tags.content(header(p.literal(THOUGHT)) + text())
    else:
        thought = tags.reasoning_block(header(p.literal(THOUGHT)) + p.tag(REASONING, text()))
    message = p.choice(*calls, reply, thought)
    body = message + p.zero_or_more(ends + p.literal(SEPARATOR) + message) + ends + ending(stops)
    one_call = repeated_calls(p.choice(*calls) + p.optional(end_marker) + p.space(), request, for_grammar) if calls else None
    # no trigger (the prompt ends where the model names the recipient): the grammar covers the whole turn
    return BuiltParser(p.literal(boilerplate) + body, boilerplate, body, one_call, "", request.reasoning_format is not ReasoningFormat.NONE)


def _call(function: Mapping[str, Any], namespace: str, header: Callable[[Parser], Parser], after_message: Parser | None, for_grammar: bool) -> Parser:
    """One call message: the recipient, then its XML block."""
    calls, calls_end = f"<{namespace}:function_calls>", f"</{namespace}:function_calls>"
    invoke, invoke_end = f'<{namespace}:invoke name="', f"</{namespace}:invoke>"
    param, param_end = f'<{namespace}:parameter name="', f"</{namespace}:parameter>"
    name = str(function["name"])
    params = function.get("parameters") or {}
    properties = params.get("properties") or {}
    head = header(tags.tool_name(p.literal(name))) + p.space() + p.literal(calls) + p.space() + p.literal(invoke + name + '">') + p.space()
    tail = p.literal(invoke_end) + p.space() + p.literal(calls_end)

    def is_text(schema: Any) -> bool:
        return isinstance(schema, Mapping) and (schema.get("type") == "string" or (not schema.get("type") and "enum" not in schema))

    if for_grammar:

        def argument(arg: str) -> Parser:
            schema = properties[arg] if isinstance(properties[arg], Mapping) else {}
            value = p.until(param_end) if is_text(schema) else p.schema(p.json_value(), f"{name}-{arg}", schema)
            return p.literal(f'{param}{arg}">') + value + p.literal(param_end) + p.space()

        required = [str(n) for n in params.get("required") or [] if n in properties]
        args = argument_set([argument(n) for n in required], [argument(str(n)) for n in properties if str(n) not in required], None)
        return tags.tool(head + args + tail)
    # exact reading: a value ends at the first closer from which the call reads on
    # (the next parameter, or the block's end and what follows the message)
    after = p.literal(param_end) + p.space() + p.choice(p.literal(param), p.literal(invoke_end), p.end())
    assert after_message is not None
    whole = p.literal(param_end) + p.space() + p.choice(p.peek(p.literal(param)), tail + after_message)
    local = p.tag(TOOL_ARG_RAW, p.until(param_end, then=after))
    text = whole_reading_first((param_end,), whole, local, lambda until: p.tag(TOOL_ARG_RAW, until))
    end = p.peek(p.space() + p.literal(param_end))

    def value(schema: Any, rule: str) -> Parser:
        # a typed value that reads as no type is kept as written (the schema check reports it)
        return text if is_text(schema) else typed_value(schema, rule, end, p.tag(TOOL_ARG_RAW, p.until(param_end, then=after)))

    def named(spelled: Parser, reading: Parser) -> Parser:  # (a name is complete, and shown, once its closing quote confirms it)
        return p.tag(TOOL_ARG_NAME, spelled + p.peek(p.literal('">'))) + p.literal('">') + reading

    names = sorted(properties, key=lambda n: -len(str(n))) if isinstance(properties, Mapping) else []
    # a declared name (whole), else any: an argument the schema does not declare is kept (the schema check reports it)
    declared = [named(p.literal(str(n)), value(properties[n] if isinstance(properties[n], Mapping) else {}, f"{name}-{n}-value")) for n in names]
    other = named(p.chars('[^"]', 1, UNBOUNDED), value({"type": "object"}, f"{name}-value"))
    arg = p.tag(TOOL_ARG, p.literal(param) + p.choice(*declared, other) + p.literal(param_end))
    return tags.tool(head + p.zero_or_more(arg + p.space()) + tail)


#: the format's special tokens
TOKENS = ("<|start|>", MESSAGE, *ENDS)

HANDLER = Handler(
    "recipient-xml",
    detect,
    refine,
    build=build,
    tokens=TOKENS,
    response_unsupported="a call's function is named in its message's header and again in its XML block, which no response_template field ties together",
)
