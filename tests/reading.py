"""Reading a model output with a zoo template, as the leniency and recovery
tests do: the final parse, checked against streams of the same output."""

from __future__ import annotations

import json
from functools import cache

from analysis.generation.generated import Generated
from analysis.generation.generator import AutoParser
from analysis.generation.results import ParseOutcome
from analysis.generation.streaming import stream_output
from analysis.messages.mapper import Message, accumulate
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from tests.conftest import WEATHER_TOOLS as TOOLS
from tests.conftest import ZOO


@cache
def zoo_parser(template: str) -> AutoParser:
    return AutoParser(ChatTemplate(load_template(ZOO / template), clock=FROZEN_CLOCK))


def zoo_generated(template: str, tools: bool = True, parallel: bool = False) -> Generated:
    request = {"messages": [{"role": "user", "content": "Weather?"}], "parallel_tool_calls": parallel}
    if tools:
        request["tools"] = TOOLS
    return zoo_parser(template).generate(ChatRequest.from_json(request))


def reasoning_closed(template: str) -> str:
    """What closes the reasoning block the template's generation prompt opens
    (``</think>``), for an output that starts with a reply or a call; "" when
    the prompt opens none."""
    return "</think>" if zoo_generated(template).generation_prompt.rstrip().endswith("<think>") else ""


def parsed_as_streamed(generated: Generated, output: str, size: int = 1) -> ParseOutcome:
    """The whole parse of ``output``, checked against its stream in ``size``-character chunks."""
    outcome = generated.parse(output)
    deltas, streamed, _ = stream_output(generated, output, size)
    assert streamed.message == outcome.message and accumulate(deltas) == outcome.message, size
    return outcome


def read(template: str, output: str, tools: bool = True, parallel: bool = False) -> dict:
    """The final parse, checked against streaming in 1- and 3-character chunks."""
    generated = zoo_generated(template, tools, parallel)
    outcome = generated.parse(output)
    for size in (1, 3):
        deltas, streamed, _ = stream_output(generated, output, size)
        assert streamed.message == outcome.message and accumulate(deltas) == outcome.message, size
    message = outcome.message.to_json()
    message.pop("role", None)
    message["ok"] = outcome.ok
    for call in message.get("tool_calls", []):
        try:
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        except ValueError:  # an unfinished call keeps its arguments as written
            pass
        call.pop("id", None)
        call.pop("type", None)
    return message


def call(name: str = "get_weather", **arguments: object) -> dict:
    return {"function": {"name": name, "arguments": arguments}}




def keeps_its_text(outcome: ParseOutcome, text: str) -> bool:
    """Whether a parse that reports a problem lost no text: the output as
    content, unchanged (nothing before the break read); or what read before
    the place where the format broke (reasoning, calls whose blocks are
    complete), each of it found in the output in order, then the rest of the
    output, as written, in the content; or the call block it names kept, as
    written, in the content (the calls around it read)."""
    import re

    from analysis.messages.mapper import Message

    if outcome.message == Message(content=text):
        return True
    spans = re.findall(r"(\d+)-(\d+)", re.split(r" (?:does not read|kept as text)", outcome.warning)[0])
    named = re.search(r"tool call(?: block)?s? at offset", outcome.warning)
    if named is not None and spans:
        return all(text[int(a) : int(b)].strip() in outcome.message.content for a, b in spans)
    return _read_before_the_break(outcome.message, text)


def _read_before_the_break(message: Message, text: str) -> bool:
    """Whether ``message`` is a reading of a beginning of ``text`` then the rest
    of it as content: the content ends with the output's end as written, and
    the reasoning's end and each call's name come before that, in order, not
    after it (text may come from a prompt the output continues)."""
    content, written = message.content.strip(), text.rstrip()
    same = 0
    while same < min(len(content), len(written)) and content[-1 - same] == written[-1 - same]:
        same += 1
    if content and not same:
        return False
    head = written[: len(written) - same]
    at = 0
    for piece in filter(None, [(message.reasoning_content or "").strip()[-40:], *(call.name for call in message.tool_calls)]):
        found = head.find(piece, at)
        if found < 0 and piece in written[len(head) :]:
            return False  # (read from text after the break)
        at = max(at, found)  # (not found at all: from the prompt the output continues)
    return True


def arguments_are_objects(message: Message) -> bool:
    """Whether every call of a finished parse has a JSON object as arguments
    (a finished parse never emits any other)."""
    for call in message.tool_calls:
        try:
            if not isinstance(json.loads(call.arguments), dict):
                return False
        except ValueError:
            return False
    return True


def extends_but_for_calls_kept_as_text(shown: Message, final: Message) -> bool:
    """Whether the final message of an output cut short extends what a stream
    showed (a partial parse), but for the calls it keeps as text: a call cut
    off inside a value or its header is no call, its text content; one cut in
    its closers, its values whole, is a call (the cut reported)."""
    # (the calls both hold: a call kept as text ends the final's; the final may hold
    # more, whose values a look-ahead held back while more could come, and closed)
    common = min(len(final.tool_calls), len(shown.tool_calls))
    if [c.name for c in shown.tool_calls[:common]] != [c.name for c in final.tool_calls[:common]]:
        return False
    if any(not f.arguments.startswith(s.arguments) for s, f in zip(shown.tool_calls[:common], final.tool_calls[:common], strict=True)):
        return False
    return final.content.startswith(shown.content) and (final.reasoning_content or "").startswith(shown.reasoning_content or "")
