"""GPT-OSS (harmony): a turn is a sequence of messages
``[ to=R]<|channel|>C[ to=R][ <|constrain|>T| T]<|message|>BODY<|end|>``, separated by
``<|start|>assistant``.

The ``analysis`` channel is reasoning, ``final`` and ``commentary`` are content,
a message to ``functions.NAME`` is a call whose body is its JSON arguments (to
``NAME``, a declared function, also: a deviation noted), messages to the
built-in tools (``python``, ``browser.search``, ``container.exec``) are dropped,
and a message to any other recipient is content, header and all.
A message on a channel harmony does not define is content, header and all.  The
last channel named in a header decides (``commentary to=assistant<|channel|>analysis``
is reasoning).  A truncated output such as a lone ``<|channel|>`` parses as
an incomplete header.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from analysis.messages.deviations import DeviationKind, deviation
from analysis.messages.hooks import DROP, OutputHooks, Route
from analysis.messages.tags import CONTENT, REASONING, TOOL_ARGS
from analysis.parsers.builder import BuiltParser
from analysis.parsers.handlers.base import Handler, with_tool_markers
from analysis.parsers.pieces import WORD_CHARS, word_end
from analysis.parsers.reasoning import boilerplate_and_reasoning_start
from analysis.parsers.request import ChatRequest
from analysis.parsers.response_spec import NAME, call_field
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import (
    ContentMode,
    PrefillOutcome,
    ReasoningAnalysis,
    ReasoningMode,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.probes import Prober, assistant, conversation
from peg import combinators as p
from peg.combinators import UNBOUNDED
from peg.engine import TagNode

# harmony's own captures: a message (HARMONY_MSG_RAW when reasoning stays in
# content), and its recipient, channel and body
HARMONY_MSG = "harmony-msg"
HARMONY_MSG_RAW = "harmony-msg-raw"
H_TO = "h-to"
#: a recipient that names a declared function without its ``functions.`` namespace
H_TO_BARE = "h-to-bare"
_BARE_NOTED = "deviation:" + DeviationKind.OTHER_CALL_SYNTAX.value  # (the capture around one)
_WORD_NOTED = "deviation:" + DeviationKind.UNKNOWN_HEADER_WORD.value  # (the capture around an unknown channel)
H_CHANNEL = "h-channel"
H_BODY = "h-body"
#: the captures that are a whole harmony message
HARMONY_MESSAGES = (HARMONY_MSG, HARMONY_MSG_RAW)

ENDS = ("<|end|>", "<|call|>", "<|return|>")
SEPARATOR = "<|start|>assistant"
#: what reads after a message's body: its end markers (or none), then the
#: output's end or the next message's start or header
_AFTER_BODY = (
    p.zero_or_more(p.space() + p.choice(*(p.literal(e) for e in ENDS)))
    + p.space()
    + p.choice(p.end(), *(p.peek(p.literal(m)) for m in ("<|start|>", "<|channel|>", " to=", "<|constrain|>")))
)


def detect(source: str, prober: Prober) -> str | None:
    """An assistant turn renders with ``<|channel|>final<|message|>``."""
    out = prober.render_shaped(conversation(assistant(), tools=False))
    if out is not None and "<|channel|>final<|message|>" in out:
        return "an assistant turn renders as <|start|>assistant<|channel|>final<|message|>..."
    return None


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    return with_tool_markers(
        analysis,
        ToolFormat.TAG_WITH_JSON,
        format={"per_call_start": " to=functions.", "per_call_end": "<|call|>"},
        function={"name_prefix": "functions.", "name_suffix": "<|message|>", "close": ""},
        reasoning=ReasoningAnalysis(ReasoningMode.TAG_BASED, "<|channel|>analysis<|message|>", "<|end|>"),
        content=replace(analysis.content, mode=ContentMode.ALWAYS_WRAPPED, start="<|channel|>final<|message|>", end="<|end|>"),
    )


def build(
    analysis: TemplateAnalysis, request: ChatRequest, generation_prompt: str, continued_text: str, prefill: PrefillOutcome, for_grammar: bool = False
) -> BuiltParser:
    """Messages, each a header and a body, until the end of the output."""
    boilerplate, _ = boilerplate_and_reasoning_start(generation_prompt, continued_text, analysis, prefill)
    word = p.chars("[^<> \t\n]", 1, UNBOUNDED)
    to_token = p.space() + p.literal("to=") + p.tag(H_TO, word)
    functions = tool_functions(request) if request.has_tools else []
    if functions and not for_grammar:
        # (a deviation: a declared function's name as the recipient, its functions. namespace left out)
        bare = p.choice(*(p.literal(f["name"]) for f in functions)) + p.peek(p.choice(p.chars("[<> \t\n]", 1, 1), p.end()))
        to_token = p.choice(
            p.space() + p.literal("to=") + deviation(DeviationKind.OTHER_CALL_SYNTAX, p.tag(H_TO_BARE, bare)), to_token
        )
    constrain = p.space() + p.literal("<|constrain|>") + word
    name = p.chars(WORD_CHARS, 1, UNBOUNDED)
    spaces = p.chars("[ \t]", 1, UNBOUNDED)
    if for_grammar:
        channel = p.literal("<|channel|>") + p.tag(H_CHANNEL, name)
        content_type = spaces + word  # "commentary json": the template's own spelling
    else:
        # (a deviation: a channel or content type harmony does not define, "commentson", "jsonon": read
        # as the header's word it stands for, noted; the recipient still decides where the message goes)
        # (a word the output ends in is cut, not misspelt: the cut is reported)
        known = p.tag(H_CHANNEL, p.choice(*(p.literal(c) + word_end() for c in CHANNELS), name + p.end()))
        channel = p.literal("<|channel|>") + p.choice(known, deviation(DeviationKind.UNKNOWN_HEADER_WORD, p.tag(H_CHANNEL, name)))
        json_type = p.choice(p.literal("json") + p.peek(p.choice(p.chars("[< \t\n]", 1, 1), p.end())), word + p.end())
        content_type = spaces + p.choice(json_type, deviation(DeviationKind.UNKNOWN_HEADER_WORD, word))
        constrain = p.space() + p.literal("<|constrain|>") + p.choice(json_type, deviation(DeviationKind.UNKNOWN_HEADER_WORD, word))
    # one content type at most, after the channel or recipient: other words before
    # <|message|> break the format (they are never dropped)
    recipient = to_token
    if not for_grammar:
        # (a deviation: a recipient another one follows at once, " to=fu to=functions.get_weather":
        # the later one decides, the earlier one is noted)
        recipient = p.choice(deviation(DeviationKind.UNKNOWN_HEADER_WORD, to_token) + p.peek(p.space() + p.literal("to=")), to_token)
    header = (
        p.one_or_more(p.choice(recipient, channel, constrain))
        + p.optional(content_type)
        + p.zero_or_more(p.choice(recipient, constrain))
        + p.space()
    )
    raw = request.reasoning_format.value == "none"  # reasoning stays in content, verbatim
    # (parsing) a body ends at the first end marker after which the output goes
    # on as harmony does (its end, the next message): one quoted in it is text
    body_end = None if for_grammar else _AFTER_BODY
    message = p.tag(
        HARMONY_MSG_RAW if raw else HARMONY_MSG,
        header
        + p.literal("<|message|>")
        + p.tag(H_BODY, p.until(*ENDS, "<|start|>", then=body_end))
        + p.optional(p.choice(*(p.literal(e) for e in ENDS))),
    )
    # an output cut off inside a header (a lone trailing "<|channel|>") adds nothing: a cut, reported
    cut_header = deviation(
        DeviationKind.CUT_SHORT,
        p.one_or_more(p.choice(to_token, channel, constrain, p.literal("<|channel|>"), p.literal("<|constrain|>"))),
    ) + p.space()
    # (parsing) an end marker written twice, or <|return|> after <|call|>, is dropped
    ends = p.zero_or_more(p.space() + p.choice(*(p.literal(e) for e in ENDS))) if not for_grammar else p.eps()
    body = p.zero_or_more(message + ends + p.optional(p.literal(SEPARATOR))) + p.space() + p.optional(cut_header) + p.end()
    if not for_grammar:  # (a deviation: the role header the prompt wrote, written again first)
        body = p.optional(p.space() + deviation(DeviationKind.ROLE_HEADER_REPEATED, p.literal(SEPARATOR))) + body
    if not functions:
        return BuiltParser(p.literal(boilerplate) + body, boilerplate, body, None, "", request.reasoning_format.value != "none")
    # The grammar (lazy, from a call's header; see TRIGGERS): one call to a
    # request function on the commentary or analysis channel, its arguments as
    # JSON of the function's schema, as the reference constrains it.
    channel_name = p.choice(p.literal("commentary"), p.literal("analysis"))
    constraint = p.optional(p.space() + p.optional(p.literal("<|constrain|>")) + p.chars("[A-Za-z0-9_-]", 1, UNBOUNDED))
    alternatives = []
    for f in functions:
        name = p.literal(f["name"])
        args = p.schema(p.json_value(), f"{f['name']}-args", f.get("parameters") or {"type": "object"})
        recipient = p.literal(" to=functions.") + name
        channel = p.literal("<|channel|>") + channel_name
        alternatives.append(recipient + channel + constraint + p.literal("<|message|>") + args)
        alternatives.append(channel + recipient + constraint + p.literal("<|message|>") + args)
    calls = p.choice(*alternatives) + p.optional(p.literal("<|call|>"))
    return BuiltParser(
        p.literal(boilerplate) + body,
        boilerplate,
        body,
        calls,
        TRIGGER_WORD,
        request.reasoning_format.value != "none",
        trigger_patterns=TRIGGERS,
    )


#: Where a call's header starts: at the start of the output or after
#: ``<|start|>assistant``, either `` to=functions.`` or
#: ``<|channel|>commentary to=functions.`` (the grammar applies from the group).
TRIGGERS = (
    r"(?:^|<\|start\|>assistant)( to=functions\.)",
    r"(?:^|<\|start\|>assistant)(<\|channel\|>(?:commentary|analysis) to=functions\.)",
)
#: The word that shows a call is near (what the parser's hints look for).
TRIGGER_WORD = " to=functions."


#: the channels harmony defines (a message on another is kept as written)
CHANNELS = ("analysis", "commentary", "final")
#: the recipients harmony's built-in tools take (a message to one is dropped: the engine runs it)
BUILT_IN_TOOLS = ("python", "browser", "container")

#: harmony's special tokens (the markers above combine them with channel names and text)
TOKENS = ("<|channel|>", "<|constrain|>", "<|message|>", "<|start|>", "<|end|>")

def route(message: TagNode, keep_reasoning_in_content: bool) -> Route:
    """Where one message goes: the recipient and the last channel decide."""
    recipients = [n for n in message.children if n.name == H_TO or n.name == _BARE_NOTED]
    recipients = [n.children[0] if n.name == _BARE_NOTED else n for n in recipients]
    # (in order: the last channel decides; an unknown one is inside its deviation's capture)
    channels = [c.text for n in message.children for c in ((n,) if n.name != _WORD_NOTED else n.children) if c.name == H_CHANNEL]
    bodies = [n for n in message.children if n.name == H_BODY]
    body = bodies[0] if bodies else None  # None: the header is still being written
    recipient = recipients[-1] if recipients else None
    if recipient is not None and recipient.name == H_TO_BARE:
        return Route(TOOL_ARGS, body, recipient.text, recipient.complete)
    if recipient is not None and recipient.text.startswith("functions.") and len(recipient.text) > len("functions."):
        return Route(TOOL_ARGS, body, recipient.text[len("functions.") :], recipient.complete)
    if recipient is not None and recipient.text.split(".")[0] in BUILT_IN_TOOLS:
        return Route(DROP, body)  # a message to a built-in tool (python, browser.search...)
    if recipient is not None and recipient.text != "assistant":
        return Route(CONTENT, message if body is not None else None)  # an unknown recipient: kept as written
    if channels and channels[-1] == "analysis":
        if message.name == HARMONY_MSG_RAW or keep_reasoning_in_content:
            return Route(CONTENT, message if body is not None else None)  # markup and all
        return Route(REASONING, body)
    if channels and channels[-1] not in CHANNELS:
        return Route(CONTENT, message if body is not None else None)  # an unknown channel: not structure, kept as written
    return Route(CONTENT, body)


OUTPUT = OutputHooks(message_tags=HARMONY_MESSAGES, body_tag=H_BODY, route=route)

def response_fields(analysis: TemplateAnalysis) -> dict[str, Any]:
    """Messages by channel: ``analysis`` is the reasoning, ``final`` the
    content, a recipient ``to=functions.NAME`` (before or after the channel)
    a call with JSON arguments; what is between messages is left out."""
    recipient = r"(?:<\|channel\|>commentary)?\s*to=functions\." + NAME
    header = r"[^<]*(?:<\|channel\|>[^<]*)?(?:<\|constrain\|>[^<]*)?<\|message\|>"
    text = r"<\|channel\|>(?:final|commentary)\s*<\|message\|>"
    return {
        "fields": {
            "tool_calls": call_field(recipient + header, "<|call|>", "json"),
            "content": {"open_pattern": text, "close": ["<|end|>", "<|return|>"], "content": "text", "repeats": True, "join": ""},
        }
    }


HANDLER = Handler("gpt-oss-harmony", detect, refine, build=build, tokens=TOKENS, output=OUTPUT, response_fields=response_fields)
