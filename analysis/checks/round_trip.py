"""Round trip: a template's own rendering of a reply parses back to that reply.

A model writes its turns the way its template renders them in the history, so
the parser generated for a template must read that rendering.  Each probe
renders a conversation ending with an assistant turn (one call, two
arguments, typed values, two calls, text and a call, a plain reply, a reply
with reasoning), cuts out what the model would have written after the
generation prompt (from the tool-call trigger for calls), tries the cuts that
drop the end of turn, and compares the parsed message with what was rendered.  A probe is skipped when the template does not
render what it asks for (no tool support, reasoning left out of the history,
a turn that cannot be lined up with the generation prompt).
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from analysis.fixtures import WEATHER_TOOL
from analysis.messages.mapper import Message
from analysis.parsers.request import ChatRequest
from analysis.phases.result import PrefillOutcome, ReasoningMode, ToolFormat
from analysis.probing.adapting import render_adapted
from analysis.probing.markers import strip_ws
from analysis.probing.probes import call_turn_shapes
from analysis.template.rendering import ChatTemplate, RenderRequest
from peg.errors import AutoparserError

if TYPE_CHECKING:
    from analysis.generation.generated import Generated
    from analysis.generation.generator import AutoParser

USER = {"role": "user", "content": "What is the weather in Paris?"}
REPLY = "It is sunny in Paris today."
REASONING = "I should check the forecast."
SAY = "Let me check that."
#: a tool whose arguments take every JSON type
TYPED_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string"},
                "days": {"type": "integer"},
                "flags": {"type": "array"},
                "options": {"type": "object"},
                "hourly": {"type": "boolean"},
            },
            "required": ["city"],
        },
    },
}
#: a string with quotes, markup, an ampersand, a newline and non-ASCII; values of every type
TYPED_VALUES = {
    "city": 'Paris "Île" <b>x</b> & co\nline 2',
    "unit": "celsius",
    "days": 3,
    "flags": [True, None, "a"],
    "options": {"a": 1, "b": [2]},
    "hourly": False,
}
#: the tool-call probes: name -> (the tool, the arguments of each call)
CALL_SETS: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    "one call": (WEATHER_TOOL, [{"city": "Paris"}]),
    "two arguments": (WEATHER_TOOL, [{"city": "Paris", "unit": "celsius"}]),
    "two calls": (WEATHER_TOOL, [{"city": "Paris"}, {"city": "Lyon", "unit": "celsius"}]),
    "typed values": (TYPED_TOOL, [TYPED_VALUES]),
}
#: call ids as most templates take them (a dedicated format adds its models' own: Handler.probe_call_id)
ID_STYLE = "call_{i:04d}"


def id_styles(parser: AutoParser) -> tuple[str, ...]:
    """The call id styles the probes render calls with: the common one, then the format's own."""
    own = parser.handler.probe_call_id if parser.handler is not None else ""
    return (ID_STYLE, own) if own else (ID_STYLE,)


class ProbeStatus(str, enum.Enum):
    """A round-trip probe's outcome."""

    OK = "ok"
    FAILED = "failed"  #: the template's own rendering does not parse back
    SKIPPED = "skipped"  #: the template does not render the probe (``detail`` says why)


@dataclass(frozen=True)
class RoundTrip:
    """One probe's outcome: ``ok``, ``failed`` (with what was rendered and parsed) or ``skipped`` (why)."""

    probe: str
    status: ProbeStatus
    detail: str = ""
    #: an ``ok`` probe's model output (the cut of the render that read back), ...
    text: str = ""
    #: ... the prompt it follows, the request's tools ...
    prompt: str = ""
    tools: tuple[dict[str, Any], ...] = ()
    #: ... and the message autoparser read from it
    message: Message | None = None


#: the support each group of probes shows: the tool-call probes, the reasoning probe
PROBED_SUPPORT: dict[str, tuple[str, ...]] = {
    "tool calls": (*CALL_SETS, "text and call"),
    "reasoning": ("reasoning",),
}
#: why a group did not run at all: the analysis found nothing to probe
_NOT_FOUND = {"tool calls": "the analysis finds no tool-call format", "reasoning": "the analysis finds no reasoning"}


def unprobed(trips: tuple[RoundTrip, ...]) -> dict[str, str]:
    """The support no probe read back ("tool calls", "reasoning"), each with
    why: the analysis found none to probe, or why the probes were skipped."""
    out: dict[str, str] = {}
    for support, names in PROBED_SUPPORT.items():
        ran = [t for t in trips if t.probe in names]
        if any(t.status is ProbeStatus.OK for t in ran):
            continue
        failed = [t for t in ran if t.status is ProbeStatus.FAILED]
        if failed:
            continue  # (a failure is the template's status, not a gap)
        out[support] = next((t.detail for t in ran if t.detail), _NOT_FOUND[support]) if ran else _NOT_FOUND[support]
    return out


def round_trips(parser: AutoParser) -> tuple[RoundTrip, ...]:
    """Every probe for ``parser``'s template: the tool-call probes (and text
    with a call) when the analysis finds tool calls, a plain reply, and a reply
    with reasoning when the analysis finds reasoning."""
    probes: list[tuple[str, Callable[[], RoundTrip]]] = []
    tools = parser.analysis.tools
    if tools is not None and tools.format.mode is not ToolFormat.NONE:
        for name, (tool, arguments) in CALL_SETS.items():
            probes.append((name, partial(_calls_probe, parser, name, tool, arguments)))
        probes.append(("text and call", partial(_reply_and_call_probe, parser, "text and call")))
    probes.append(("reply", partial(_reply_probe, parser, "reply", {"role": "assistant", "content": REPLY}, None)))
    if parser.analysis.reasoning.mode is not ReasoningMode.NONE:
        message = {"role": "assistant", "content": REPLY, "reasoning_content": REASONING}
        probes.append(("reasoning", partial(_reply_probe, parser, "reasoning", message, REASONING)))
    out = []
    for name, probe in probes:
        try:
            out.append(probe())
        except AutoparserError as exc:  # the template refuses the probe conversation itself
            out.append(RoundTrip(name, ProbeStatus.SKIPPED, f"the template refuses the probe conversation: {exc}"))
    return tuple(out)


# --- probes ---------------------------------------------------------------------------


def _calls_probe(parser: AutoParser, name: str, tool: dict[str, Any], arguments: list[dict[str, Any]]) -> RoundTrip:
    generated = parser.generate(
        ChatRequest.from_json({"messages": [USER], "tools": [tool], "parallel_tool_calls": len(arguments) > 1})
    )
    want = [("get_weather", a) for a in arguments]
    rendered: tuple[str, str] = ("", "")  # (the render being read back, its id style)

    def read_as(message: Message) -> list[tuple[str, Any]]:
        return [(c.name, loads_or_text(c.arguments)) for c in message.tool_calls]

    def renders_alike(message: Message) -> bool:
        """A template that writes values its own way (Llama 4 pythonic writes
        days="3" for 3, and every value in quotes, unescaped) reads back as
        values it writes alike: what was read, rendered again, is the text."""
        got = read_as(message)
        if [n for n, _ in got] != [n for n, _ in want] or not all(isinstance(a, dict) and isinstance(a.get("city"), str) for _, a in got):
            return False
        return _rendered_calls(parser.template, generated, tool, [a for _, a in got], rendered[1]) == rendered[0]

    def same(message: Message) -> bool:
        return read_as(message) == want or renders_alike(message)

    first: str | None = None  # the first id style's render explains a failure
    unaligned = False
    for style in id_styles(parser):  # (the second style is rendered only when the first does not read back)
        text = _rendered_calls(parser.template, generated, tool, arguments, style)
        if text is None:
            continue
        if not text:  # the calls are rendered, but not after the generation prompt nor a call marker
            unaligned = True
            continue
        rendered = (text, style)
        read = _parses_back(generated, text, same, need_calls=True)
        if read is not None:
            back = _read_back(name, generated, read, same)
            if read_as(read[1]) != want:
                detail = "read back as values the template writes alike (its render loses what told them apart)"
                back = replace(back, detail=detail)
            return back
        first = text if first is None else first
    if first is None and unaligned:
        return RoundTrip(
            name,
            ProbeStatus.SKIPPED,
            "the template writes the calls in its history, but not after its generation prompt nor after a "
            "call marker the analysis found: the model's part cannot be cut out of the render",
        )
    if first is None:
        return RoundTrip(name, ProbeStatus.SKIPPED, "the template does not render these calls")
    return RoundTrip(name, ProbeStatus.FAILED, _failure(generated, first))


def _reply_and_call_probe(parser: AutoParser, name: str) -> RoundTrip:
    """Text and a call in one turn: both read back (the text as content, or as
    reasoning where the template files a calling turn's text there, as harmony does)."""
    generated = parser.generate(ChatRequest.from_json({"messages": [USER], "tools": [WEATHER_TOOL]}))

    def same(message: Message) -> bool:
        said = message.content.strip() == SAY or (message.reasoning_content or "").strip() == SAY
        return said and [(c.name, loads_or_text(c.arguments)) for c in message.tool_calls] == [("get_weather", {"city": "Paris"})]

    outcomes: list[RoundTrip] = []  # per id style: a failure wins over a skip
    for style in id_styles(parser):
        call = {"id": style.format(i=0), "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
        found = _turn(parser.template, {"role": "assistant", "content": SAY, "tool_calls": [call]}, [WEATHER_TOOL])
        if found is None or SAY not in found[0] or "Paris" not in found[0]:
            outcome = RoundTrip(name, ProbeStatus.SKIPPED, "the template does not render the text of a calling turn")
        else:
            turn = found[0]
            start = strip_ws(parser.analysis.assistant_start)
            between = turn[min(turn.find(SAY), turn.find("get_weather")) : max(turn.find(SAY), turn.find("get_weather"))]
            text = _line_up(turn, found[1], generated)
            if start and start in between:
                outcome = RoundTrip(name, ProbeStatus.SKIPPED, "the template writes the text and the calls as separate turns")
            elif text is None:
                outcome = RoundTrip(name, ProbeStatus.SKIPPED, "the rendered turn cannot be lined up with the generation prompt")
            elif (read := _parses_back(generated, text, same, need_calls=False)) is not None:
                return _read_back(name, generated, read, same)
            else:
                outcome = RoundTrip(name, ProbeStatus.FAILED, _failure(generated, text))
        outcomes.append(outcome)
    failed = [o for o in outcomes if o.status is ProbeStatus.FAILED]
    return failed[0] if failed else outcomes[0]


def _reply_probe(parser: AutoParser, name: str, message: dict[str, Any], reasoning: str | None) -> RoundTrip:
    generated = parser.generate(ChatRequest.from_json({"messages": [USER]}))
    text = _rendered_reply(parser.template, generated, message)
    if (text is None or REPLY not in text) and parser.analysis.tools is not None and parser.analysis.tools.format.mode is not ToolFormat.NONE:
        # a template that renders no turn unless tools are given: the reply to a request with tools
        with_tools = parser.generate(ChatRequest.from_json({"messages": [USER], "tools": [WEATHER_TOOL]}))
        again = _rendered_reply(parser.template, with_tools, message, [WEATHER_TOOL])
        if again is not None and REPLY in again:
            generated, text = with_tools, again
    if text is None:
        return RoundTrip(name, ProbeStatus.SKIPPED, "the rendered turn cannot be lined up with the generation prompt")
    if REPLY not in text:  # (a multimodal template writes only content parts)
        return RoundTrip(name, ProbeStatus.SKIPPED, "the template does not render a reply given as text")
    if reasoning is not None and reasoning not in text:
        return RoundTrip(name, ProbeStatus.SKIPPED, "the history leaves the reasoning out")

    def same(parsed: Message) -> bool:
        return parsed.content.strip() == REPLY and (parsed.reasoning_content or None) == reasoning and not parsed.tool_calls

    read = _parses_back(generated, text, same, need_calls=False)
    if read is not None:
        return _read_back(name, generated, read, same)
    return RoundTrip(name, ProbeStatus.FAILED, _failure(generated, text))


# --- cutting the model's part out of a render --------------------------------------------


def _turn(template: ChatTemplate, message: dict[str, Any], tools: list[dict[str, Any]] | None) -> tuple[str, bool] | None:
    """The text the assistant turn adds after the user's, and whether it was
    appended cleanly (the render without it is a prefix); None if the template
    refuses the turn."""
    try:
        history = render_adapted(template, RenderRequest([USER, message], tools, False))
        before = render_adapted(template, RenderRequest([USER], tools, False))
    except AutoparserError:
        return None  # e.g. Llama 3.x takes one call at a time
    shared = 0
    while shared < min(len(before), len(history)) and before[shared] == history[shared]:
        shared += 1
    return history[shared:], shared == len(before)


def _rendered_calls(
    template: ChatTemplate, generated: Generated, tool: dict[str, Any], arguments: list[dict[str, Any]], id_style: str
) -> str | None:
    calls = [
        {"id": id_style.format(i=i), "type": "function", "function": {"name": "get_weather", "arguments": a}}
        for i, a in enumerate(arguments)
    ]
    cities = [a["city"].split()[0] for a in arguments]  # the first word survives any escaping

    def written(turn: str) -> bool:
        return all(c in turn for c in cities) and ("celsius" in json.dumps(arguments)) == ("celsius" in turn)

    # the first shape of the turn in which the template writes these calls (LFM2 drops them from the history)
    renders = (_turn(template, shape, [tool]) for shape in call_turn_shapes({"role": "assistant", "content": "", "tool_calls": calls}))
    turn = next((found[0] for found in renders if found is not None and written(found[0])), None)
    if turn is None:
        return None
    trigger = generated.built.trigger
    # the model closes reasoning the prompt opened (or, delimiter-style, began) before its calls
    lead = generated.analysis.reasoning.end if generated.prefill in (PrefillOutcome.OPENED, PrefillOutcome.ARTIFACT) else ""
    if trigger and trigger in turn:
        return lead + turn[turn.index(trigger) :]
    for start in (generated.generation_prompt, generated.generation_prompt.strip()):
        if start and start in turn:
            return lead + turn[turn.index(start) + len(start) :]
    return ""


def _rendered_reply(
    template: ChatTemplate, generated: Generated, message: dict[str, Any], tools: list[dict[str, Any]] | None = None
) -> str | None:
    found = _turn(template, message, tools)
    return None if found is None else _line_up(*found, generated)


def _line_up(turn: str, clean: bool, generated: Generated) -> str | None:
    """What the model writes after the generation prompt, given the rendered
    turn (None when the turn cannot be lined up with the prompt)."""
    prompt, reasoning = generated.generation_prompt, generated.analysis.reasoning
    if not prompt.strip():  # the template adds no prompt (Mistral): a turn appended whole is the model's
        return turn if clean else None
    opened = strip_ws(reasoning.start) if generated.prefill is PrefillOutcome.OPENED else ""
    end = strip_ws(reasoning.end)
    # the prompt as the turn writes it, or the prompt before the reasoning it opens
    starts = [prompt, prompt.strip()] + ([prompt[: prompt.rfind(opened)].strip()] if opened and opened in prompt else [])
    for start in starts:
        if start and start in turn:
            rest = turn[turn.index(start) + len(start) :]
            if opened and opened not in start and rest.lstrip().startswith(opened):
                return rest.lstrip()[len(opened) :]  # the prompt opened it already
            return (end if opened and end not in rest else "") + rest  # the model closes what the prompt opened
    return None


def cut_ends(text: str) -> list[int]:
    """Where the model's part of a rendered turn may end, longest first: the
    whole text, then before each ``<``, ``[`` or newline (an end-of-turn marker)."""
    return [len(text)] + [i for i in range(len(text) - 1, 0, -1) if text[i] in "<[\n"]


def _read_back(name: str, generated: Generated, read: tuple[str, Message], same: Callable[[Message], bool]) -> RoundTrip:
    """An ``ok`` probe, with what it read back and from what: the output as a
    model writes it, which stops at its end of turn (the render may go on
    with the template's next turn), where that still reads back."""
    text, message = read
    stop = _stop(text, generated)
    if stop < len(text) and (outcome := generated.parse(text[:stop])).ok and same(outcome.message):
        text, message = text[:stop], outcome.message
    tools = tuple(dict(t) for t in generated.request.tools or ())
    return RoundTrip(name, ProbeStatus.OK, text=text, prompt=generated.prompt.text, tools=tools, message=message)


def _stop(text: str, generated: Generated) -> int:
    """Where a model would have stopped in ``text``: after the first end-of-turn
    marker, or before the next turn's header (the user turn's first marker)."""
    analysis = generated.analysis
    stops = [text.find(m) + len(m) for m in map(strip_ws, analysis.turn_end) if m and m in text]
    header = re.match(r"\s*(<[^<>]+>|\[[^\[\]]+\])", analysis.user_start)
    if header and header.group(1) in text:
        stops.append(text.index(header.group(1)))
    return min(stops, default=len(text))


def _parses_back(
    generated: Generated, text: str, same: Callable[[Message], bool], need_calls: bool
) -> tuple[str, Message] | None:
    """The cut of ``text`` before its end of turn that parses to the rendered
    message, and that message (None if no cut does)."""
    for end in cut_ends(text):
        outcome = generated.parse(text[:end])
        if outcome.ok and (outcome.message.tool_calls or not need_calls):
            if same(outcome.message):
                return text[:end], outcome.message
            if need_calls:
                return None  # the first cut that reads calls decides
    return None


def _failure(generated: Generated, text: str) -> str:
    outcome = generated.parse(text)
    got = outcome.warning if not outcome.ok else json.dumps(outcome.message.to_json(), ensure_ascii=False)
    shown = text if len(text) <= 160 else text[:157] + "..."
    return f"the template writes {shown!r}; parsed: {got}"


def loads_or_text(text: str) -> Any:
    """JSON text's value, or the text itself where it is not JSON (arguments compare as JSON)."""
    try:
        return json.loads(text)
    except ValueError:
        return text
