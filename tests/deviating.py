"""Two calls rendered through a template, then written as models deviate
from it: the plausibility probes of issue 43.

For each template with tool calls, the assistant turn with two calls
(``get_weather(city="Dallas", state="TX")`` and ``get_time(zone="CST")``) is
rendered as history writes it and cut where a model stops (the round-trip
probes' own cutting).  Each deviation then changes that output:

* ``text-between``: a sentence between the two calls (the turn of the first
  call alone, its end-of-turn markers left out, the sentence, and the turn of
  the second call alone: two sections, where the format has them);
* ``value-closer``: the closer after ``Dallas`` left out (tagged values only);
* ``end-closer``: the last call's or section's closer left out;
* ``cut``: the output cut inside the second call's value (``CS``).

Each is parsed whole and streamed; :func:`misreads` says which do not read
as a person would: both calls with their arguments and the sentence as the
content, every deviation noted (``ok``), or, cut, the first call kept and
the cut reported.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.checks import round_trip as rt
from analysis.generation.analysis_cache import cached_analysis
from analysis.generation.generated import Generated
from analysis.generation.generator import AutoParser
from analysis.generation.results import ParseOutcome
from analysis.generation.streaming import stream_output
from analysis.messages.deviations import DeviationKind
from analysis.parsers.request import ChatRequest
from analysis.phases.result import ToolFormat
from analysis.probing.markers import strip_ws
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from peg.errors import AutoparserError

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "state": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Get the time",
            "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
        },
    },
]
WEATHER = {"city": "Dallas", "state": "TX"}
TIME = {"zone": "CST"}
SENTENCE = "Also the time there."
LEAD = "Checking the weather first."
KINDS = ("text-between", "value-closer", "end-closer", "cut")


def _call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@dataclass(frozen=True)
class Deviated:
    """One probe: the deviation, and the output written so (None: the
    template does not render the two calls as given, or this deviation does
    not apply to its format)."""

    kind: str
    output: str | None


def _rendered(parser: AutoParser, generated: Generated, calls: list[dict[str, Any]], content: str = "") -> str | None:
    """The model's output for an assistant turn of ``content`` and ``calls``, as the template writes it."""
    found = rt._turn(parser.template, {"role": "assistant", "content": content, "tool_calls": calls}, TOOLS)
    if found is None:
        return None
    text = rt._line_up(*found, generated)
    if text is None:
        return None
    return text[: rt._stop(text, generated)]


@dataclass(frozen=True)
class Renders:
    """A template's renders of the probe calls, as the model writes them:
    the first call alone, both calls, and the second call alone (None where
    the template does not render it)."""

    one: str | None
    two: str | None
    second: str | None
    #: a sentence, then the first call
    with_text: str | None = None


def renders(path: Path) -> tuple[Generated | None, Renders]:
    """The template at ``path``'s generation for the two tools (None where it
    has no tool calls or cannot be read), and its renders of the calls."""
    try:
        template = ChatTemplate(load_template(path), clock=FROZEN_CLOCK)
        parser = AutoParser(template, cached_analysis(template))
        if parser.analysis.tools.format.mode is ToolFormat.NONE and parser.handler is None:
            return None, Renders(None, None, None)
        request = {"messages": [rt.USER], "tools": TOOLS, "parallel_tool_calls": True}
        generated = parser.generate(ChatRequest.from_json(request))
        # (the call id as the format writes it: Kimi K2's functions.NAME:INDEX)
        style = rt.id_styles(parser)[-1]
        call_ids = [style.format(i=0), style.replace("get_weather", "get_time").format(i=1)]
        one = _rendered(parser, generated, [_call("get_weather", WEATHER, call_ids[0])])
        two = _rendered(parser, generated, [_call("get_weather", WEATHER, call_ids[0]), _call("get_time", TIME, call_ids[1])])
        second = _rendered(parser, generated, [_call("get_time", TIME, call_ids[1])])
        with_text = _rendered(parser, generated, [_call("get_weather", WEATHER, call_ids[0])], LEAD)
    except AutoparserError:
        return None, Renders(None, None, None)
    return generated, Renders(one, two, second, with_text)


def probes(path: Path) -> tuple[Generated | None, list[Deviated]]:
    """The template at ``path``'s generation for the two tools, and its probes."""
    generated, found = renders(path)
    if generated is None:
        return None, []
    one, two, second = found.one, found.two, found.second
    if not one or not two or not all(v in two for v in ("Dallas", "TX", "CST")):
        return generated, [Deviated(kind, None) for kind in KINDS]
    return generated, [Deviated(kind, _deviate(kind, generated, one, two, second)) for kind in KINDS]


def _deviate(kind: str, generated: Generated, one: str, two: str, second: str | None) -> str | None:
    fmt, arguments = generated.analysis.tools.format, generated.analysis.tools.arguments
    if kind == "text-between":  # (the first call's turn, its end markers left out, the sentence, then the second call's)
        if second is None:
            return None
        ends = [m for m in map(strip_ws, generated.analysis.turn_end) if m]
        first = one.rstrip()
        while any(first.endswith(m) for m in ends):
            first = first[: -len(next(m for m in ends if first.endswith(m)))].rstrip()
        trigger = generated.built.trigger
        if trigger and trigger in second:  # (what the turn writes before its call: an empty reasoning block)
            second = second[second.index(trigger) :]
        opener = strip_ws(fmt.per_call_start)
        if not trigger and opener and generated.generation_prompt.rstrip().endswith(opener):
            second = opener + second  # (the prompt ends with the call's opener, Functionary's >>>: after text, the model writes it)
        return f"{first}\n{SENTENCE}\n{second}"
    if kind == "value-closer":
        closer = strip_ws(arguments.value_suffix)
        at = two.find(closer, two.index("Dallas")) if closer and fmt.mode is ToolFormat.TAG_WITH_TAGGED else -1
        return two[:at] + two[at + len(closer) :] if at >= 0 and "TX" in two[at:] else None
    if kind == "end-closer":
        for closer in (strip_ws(fmt.section_end), strip_ws(fmt.per_call_end)):
            at = two.rfind(closer) if closer else -1
            if at > two.index("CST"):
                return two[:at].rstrip()
        return None
    if kind == "cut":
        return two[: two.index("CST") + 2]
    raise ValueError(kind)


def expected(kind: str) -> str:
    """What a person reads, in words (for the failure messages)."""
    return {
        "text-between": "both calls, the sentence as content, a deviation noted",
        "value-closer": "both calls with city=Dallas, state=TX, a deviation noted",
        "end-closer": "both calls, a deviation noted",
        "cut": "the first call, the cut reported",
    }[kind]


def reads_right(kind: str, outcome: ParseOutcome) -> bool:
    """Whether ``outcome`` reads the ``kind`` probe as a person would."""
    message = outcome.message
    calls = [(c.name, json.loads(c.arguments)) for c in message.tool_calls] if _all_json(outcome) else []
    if kind == "cut":
        return not outcome.ok and outcome.cut_short and calls[:1] == [("get_weather", WEATHER)] and len(calls) == 1
    if calls != [("get_weather", WEATHER), ("get_time", TIME)] or not outcome.ok or not outcome.deviations:
        return False
    if kind == "text-between":
        return message.content == SENTENCE and any(d.kind is DeviationKind.TEXT_BETWEEN_CALLS for d in outcome.deviations)
    return not message.content


def _all_json(outcome: ParseOutcome) -> bool:
    try:
        return all(isinstance(json.loads(c.arguments), dict) for c in outcome.message.tool_calls)
    except ValueError:
        return False


def misreads(generated: Generated, deviated: list[Deviated], seed: int = 0) -> Iterator[tuple[str, str]]:
    """Each probe that does not read right, whole or streamed (in random
    chunks), with why."""
    rng = random.Random(seed)
    for probe in deviated:
        if probe.output is None:
            continue
        outcome = generated.parse(probe.output)
        if not reads_right(probe.kind, outcome):
            yield probe.kind, f"whole: {outcome.message.to_json()} ok={outcome.ok} deviations={[d.kind.value for d in outcome.deviations]}"
            continue
        size = rng.randint(1, 8)
        _, streamed, _ = stream_output(generated, probe.output, size)
        if streamed.message != outcome.message:
            yield probe.kind, f"streamed in {size}-character chunks: {streamed.message.to_json()}"
