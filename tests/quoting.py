"""Messages that quote a template's own markers, rendered through the template
and read back: the exactness probe of issue 34 (coding agents write values
and replies that quote tool-call syntax).

For each tool-call marker the analysis found (``<tool_call>``,
``</parameter>``, ``<|tool_call_begin|>``...), four messages:

* ``value``: a call whose string argument quotes it in code (``print('</function>')``);
* ``prose+call``: a reply that names it in backticks, then a call;
* ``prose``: a reply that names it in backticks, no call;
* ``reasoning``: reasoning that names it, then a reply;

and one more per template: ``closers``, a call whose string argument quotes
all the template writes after a value to the end of the calls
(``print('</arg_value>\n</tool_call>')``): only the reading of what follows
tells the value's end from the quote.

Each is rendered as the template writes an assistant turn in history, cut
where the model's part starts and where a model stops (the round-trip
probes' own cutting), parsed whole, and streamed in random chunks.  Each
such output has one reading in which all of it fits the format: the message
rendered.  Reasoning markers are left out: a reply that quotes ``</think>``
where the template leaves the opener to the model has two readings.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.checks import round_trip as rt
from analysis.fixtures import WEATHER_TOOL
from analysis.generation.analysis_cache import cached_analysis
from analysis.generation.generator import AutoParser
from analysis.generation.streaming import stream_output
from analysis.messages.mapper import Message
from analysis.parsers.request import ChatRequest
from analysis.phases.result import ReasoningMode, ToolFormat
from analysis.probing.markers import strip_ws
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from peg.errors import AutoparserError

KINDS = ("value", "prose+call", "prose", "reasoning")


@dataclass(frozen=True)
class Quoted:
    """One probe: its id (``kind:marker``), the assistant message, and the
    model output the template renders for it (None: the template does not
    render it as given, or the turn cannot be lined up)."""

    case: str
    message: dict[str, Any]
    output: str | None


def tool_markers(parser: AutoParser) -> list[str]:
    """The analysis' tool-call markers, stripped, each once (two characters or more)."""
    out: list[str] = []
    for field, value in parser.analysis.marker_fields().items():
        marker = strip_ws(value)
        if field.startswith("tools.") and len(marker) >= 2 and marker not in out:
            out.append(marker)
    return out


def _call(arguments: dict[str, Any], call_id: str = "call_0000") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": arguments}}


def messages(parser: AutoParser, closers: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """The probes' messages for ``parser``'s template, by case id (``closers``:
    what the template writes after a value to the end of the calls)."""
    calls = parser.analysis.tools.format.mode is not ToolFormat.NONE
    reasons = parser.analysis.reasoning.mode is not ReasoningMode.NONE
    # (the call id as the format writes it: Kimi K2's functions.NAME:0, where the template writes ids as given)
    call_id = rt.id_styles(parser)[-1].format(i=0)
    if calls and closers:
        yield "closers", {"role": "assistant", "content": "", "tool_calls": [_call({"city": f"print('{closers}')"}, call_id)]}
    for marker in tool_markers(parser):
        if calls:
            yield f"value:{marker}", {"role": "assistant", "content": "", "tool_calls": [_call({"city": f"print('{marker}')"}, call_id)]}
            yield f"prose+call:{marker}", {"role": "assistant", "content": f"I will use `{marker}` now.", "tool_calls": [_call({"city": "Paris"}, call_id)]}
        yield f"prose:{marker}", {"role": "assistant", "content": f"Write `{marker}` to call a tool."}
        if reasons:
            yield f"reasoning:{marker}", {"role": "assistant", "content": "Done.", "reasoning_content": f"I could write {marker} here."}


def _rendered(parser: AutoParser, message: dict[str, Any], generated: Any) -> str | None:
    """The model's output for ``message``: the template's rendering of the
    turn, lined up with the generation prompt, to where a model stops."""
    found = rt._turn(parser.template, message, [WEATHER_TOOL])
    if found is None:
        return None
    turn, clean = found
    quoted = [c["function"]["arguments"]["city"] for c in message.get("tool_calls", [])]
    quoted += [message[k] for k in ("content", "reasoning_content") if message.get(k)]
    if not all(q in turn for q in quoted):
        return None  # escaped, dropped or changed by the template: not as given
    text = rt._line_up(turn, clean, generated)
    if text is None:
        return None
    text = text[: rt._stop(text, generated)]
    # (a template that writes the text after the turn's end, or drops it: not as given)
    return text if all(q in text for q in quoted) else None


def probes(path: Path) -> tuple[AutoParser | None, list[Quoted]]:
    """The template at ``path``'s parser and its probes (none where it does not analyse)."""
    try:
        template = ChatTemplate(load_template(path), clock=FROZEN_CLOCK)
        parser = AutoParser(template, cached_analysis(template))
        generated = parser.generate(ChatRequest.from_json({"messages": [rt.USER], "tools": [WEATHER_TOOL]}))
    except AutoparserError:
        return None, []
    out = []
    for case, message in messages(parser, _closers(parser, generated)):
        try:
            output = _rendered(parser, message, generated)
        except AutoparserError:
            output = None
        out.append(Quoted(case, message, output))
    return parser, out


def _closers(parser: AutoParser, generated: Any) -> str:
    """What the template writes after a call's value ("Paris") to where a model stops, stripped."""
    call_id = rt.id_styles(parser)[-1].format(i=0)
    try:
        output = _rendered(parser, {"role": "assistant", "content": "", "tool_calls": [_call({"city": "Paris"}, call_id)]}, generated)
    except AutoparserError:
        return ""
    return strip_ws(output[output.index("Paris") + len("Paris") :]) if output and "Paris" in output else ""


def same(read: Message, message: dict[str, Any]) -> bool:
    """Whether ``read`` is the rendered ``message``: content and reasoning
    (stripped), calls by name and arguments as JSON."""
    calls = [("get_weather", c["function"]["arguments"]) for c in message.get("tool_calls", [])]
    got = []
    for call in read.tool_calls:
        try:
            got.append((call.name, json.loads(call.arguments)))
        except ValueError:
            return False
    return (
        read.content.strip() == (message.get("content") or "").strip()
        and (read.reasoning_content or "").strip() == (message.get("reasoning_content") or "").strip()
        and got == calls
    )


def misreads(parser: AutoParser, quoted: list[Quoted], seed: int = 0) -> tuple[int, list[str]]:
    """How many probes rendered, and the cases misread: parsed whole, or
    streamed in random chunks (1 to 9 characters), not to the message rendered."""
    generated = parser.generate(ChatRequest.from_json({"messages": [rt.USER], "tools": [WEATHER_TOOL]}))
    rng = random.Random(seed)
    rendered, wrong = 0, []
    for probe in quoted:
        if probe.output is None:
            continue
        rendered += 1
        whole = generated.parse(probe.output)
        _, streamed, _ = stream_output(generated, probe.output, rng.randint(1, 9))
        if not (whole.ok and same(whole.message, probe.message) and streamed.message == whole.message):
            wrong.append(probe.case)
    return rendered, wrong
