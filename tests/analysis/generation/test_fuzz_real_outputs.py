"""Fuzzing the parser and the stream with the real outputs of the conformance
corpus: truncated at every position (a final, non-partial parse, as when a model
hits max_tokens), and streamed in random chunks at random truncation points,
with runs of marker fragments spliced in.

For every final parse: a broken format keeps the output unchanged (no character
lost, moved or added); an output cut short keeps what the stream showed, and
what it held back.  For
every stream, the deltas add up to its final message, broken formats included
(the stream then keeps what it showed and ends with the rest of the output as
content).  Counts are printed.
"""

from __future__ import annotations

import functools
import json
import random
from typing import Any

import pytest

from analysis.checks.conformance import CaseRunner
from analysis.generation.streaming import stream_output
from analysis.messages.mapper import Message, accumulate
from analysis.parsers.pieces import turn_end_markers
from analysis.parsers.request import ChatRequest
from tests.conftest import SHARED, ZOO, needs_shared
from tests.reading import arguments_are_objects, extends_but_for_calls_kept_as_text, keeps_its_text

#: the zoo-wide and fuzzing runs: left out of the fast loop (pytest -m 'not slow')
pytestmark = pytest.mark.slow

CASES_FILE = SHARED / "conformance" / "cases.jsonl"


def _cases() -> list[dict[str, Any]]:
    if not CASES_FILE.is_file():
        return []
    return [c for c in map(json.loads, CASES_FILE.read_text().splitlines()) if not c["partial"]]


def _markers(generated: Any) -> list[str]:
    a = generated.analysis
    found = [a.reasoning.start, a.reasoning.end, a.tools.format.per_call_start, a.tools.format.per_call_end,
             a.tools.format.section_start, a.tools.function.name_prefix, a.tools.arguments.value_suffix, *generated.preserved_tokens]
    return [m for m in found if m and m.strip()]


@needs_shared
def test_every_truncation_of_every_output_keeps_its_text() -> None:
    runner = CaseRunner(ZOO)
    finals = broken = cut = 0
    for case in _cases():
        generated = runner.parser_for(case["template"]).generate(ChatRequest.from_json(case["request"]))
        output = case["output"]
        for end in range(len(output) + 1):
            text = output[:end]
            outcome = generated.parse(text)
            finals += 1
            assert arguments_are_objects(outcome.message), (case["id"], end)
            if not outcome.ok and not outcome.need_more:
                broken += 1
                assert keeps_its_text(outcome, text), (case["id"], end)
            elif not outcome.ok:
                # cut short: what the stream showed (a partial parse), grown by
                # what it held back (reasoning after a call marker in an open
                # block), but for a call cut off inside a value: kept as text
                cut += 1
                shown = generated.parse(text, partial=True).message
                assert extends_but_for_calls_kept_as_text(shown, outcome.message), (case["id"], end, shown, outcome.message)
    print(f"\n{finals} final parses of truncated outputs: {broken} broken (kept unchanged), {cut} cut short")
    assert finals > 25_000


@needs_shared
@pytest.mark.parametrize("seed", [1, 2])
def test_streams_never_contradict_the_final_message(seed: int) -> None:
    rng = random.Random(seed)
    runner = CaseRunner(ZOO)
    streams = contradicted = broken = kept = 0
    spliced_contradicted = 0
    for case in _cases():
        generated = runner.parser_for(case["template"]).generate(ChatRequest.from_json(case["request"]))
        output = case["output"]
        variants = [("real", output), ("truncated", output[: rng.randint(0, len(output))])]
        markers = _markers(generated)
        if markers:
            at = rng.randint(0, len(output))
            run = "".join(rng.choice(markers)[: rng.randint(1, 12)] for _ in range(rng.randint(1, 6)))
            variants.append(("spliced", output[:at] + run + output[at:]))
        for kind, text in variants:
            deltas, outcome, _ = stream_output(generated, text, rng.randint(1, 7))
            streams += 1
            whole = generated.parse(text)
            if not whole.ok and not whole.need_more:  # the format broke: a whole parse gives the output unchanged
                broken += 1
                assert keeps_its_text(whole, text), case["id"]
            assert arguments_are_objects(whole.message), (case["id"], text)
            if not outcome.ok and not outcome.need_more:
                # the stream kept what it showed and ended with the rest of the output
                # (where it showed a call the whole parse keeps as text, what it showed)
                kept += 1
                as_text = "kept as text" in whole.warning
                assert as_text or _ends_with_the_outputs_end(outcome.message, text), (case["id"], text[-40:], outcome.message)
            if accumulate(deltas) != outcome.message:
                if kind == "spliced":
                    spliced_contradicted += 1
                else:
                    contradicted += 1
    print(
        f"\n{streams} streams: {broken} broken formats, {kept} kept what they showed; contradicted by the final message: "
        f"{contradicted} real or truncated, {spliced_contradicted} with marker fragments spliced in"
    )
    # No stream contradicts its final message: where the whole output reads
    # otherwise than the stream showed (it breaks the format, or spliced marker
    # text reads one way while written and another once complete), the stream
    # ends with what it showed and the rest of the output as content.
    assert contradicted == 0 and spliced_contradicted == 0


def _ends_with_the_outputs_end(message: Message, text: str) -> bool:
    """Whether the message ends with the output's last character: in its
    content, or (a value cut short, kept as written) in its last call's arguments."""
    last = text.rstrip()[-1:]
    if message.content.rstrip().endswith(last):
        return True
    return bool(message.tool_calls) and message.tool_calls[-1].arguments.rstrip().endswith(json.dumps(last)[1:-1])


# -- every zoo template with tools: its own rendering of a call ----------------------------

ARGUMENTS = {"city": "Paris", "unit": "celsius", "days": 3}


@functools.cache
def _zoo_renders() -> list[tuple[str, Any, str]]:
    """(template, generated, output) for every zoo template whose analysis finds
    tool calls: the template's own rendering of a call, cut where it parses back
    (with a line of text before it when the template renders that too)."""
    from analysis.checks.round_trip import TYPED_TOOL, USER, _rendered_calls, cut_ends
    from analysis.generation.generator import AutoParser
    from analysis.phases.result import ToolFormat
    from analysis.template.loading import load_template
    from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
    from peg.errors import AutoparserError
    from tests.conftest import zoo_templates

    out = []
    for path in zoo_templates():
        try:
            parser = AutoParser(ChatTemplate(load_template(path), clock=FROZEN_CLOCK))
        except AutoparserError:
            continue
        if parser.analysis.tools is None or parser.analysis.tools.format.mode is ToolFormat.NONE:
            continue
        generated = parser.generate(ChatRequest.from_json({"messages": [USER], "tools": [TYPED_TOOL]}))
        rendered = _rendered_calls(parser.template, generated, TYPED_TOOL, [ARGUMENTS], "call_{i:04d}")
        if not rendered:
            continue  # the template does not write this call
        text = next((rendered[:end] for end in cut_ends(rendered) if (o := generated.parse(rendered[:end])).ok and o.message.tool_calls), None)
        if text:
            out.append((path.name, generated, text))
    return out


@needs_shared
def test_every_zoo_template_with_tools_keeps_the_text_of_its_own_calls_cut_anywhere() -> None:
    renders = _zoo_renders()
    assert len(renders) >= 45, len(renders)
    finals = 0
    for name, generated, output in renders:
        for end in range(len(output) + 1):
            text = output[:end]
            outcome = generated.parse(text)
            finals += 1
            assert arguments_are_objects(outcome.message), (name, end)
            if not outcome.ok and not outcome.need_more:
                assert keeps_its_text(outcome, text), (name, end)
            elif not outcome.ok:
                shown = generated.parse(text, partial=True).message
                assert extends_but_for_calls_kept_as_text(shown, outcome.message), (name, end, shown, outcome.message)
    print(f"\n{len(renders)} zoo templates' own calls, {finals} final parses of their truncations")


@needs_shared
@pytest.mark.parametrize("seed", [1, 2])
def test_streams_of_every_zoo_templates_calls_never_contradict(seed: int) -> None:
    rng = random.Random(seed)
    streams = kept = 0
    for name, generated, output in _zoo_renders():
        markers = _markers(generated)
        for _ in range(4):
            at = rng.randint(0, len(output))
            run = "".join(rng.choice(markers)[: rng.randint(1, 12)] for _ in range(rng.randint(1, 6))) if markers else ""
            for text in (output, output[: rng.randint(0, len(output))], output[:at] + run + output[at:]):
                deltas, outcome, _ = stream_output(generated, text, rng.randint(1, 7))
                streams += 1
                kept += not outcome.ok and not outcome.need_more
                assert accumulate(deltas) == outcome.message, (name, text)
    print(f"\n{streams} streams of zoo templates' own calls: 0 contradicted ({kept} kept what they showed)")


# -- local deviations spliced into real renders (issue 20) -----------------------------------


def _deviations(generated: Any, output: str, rng: random.Random) -> list[tuple[str, str]]:
    """The deviations models write, spliced into a template's own rendering of a
    call: end-of-turn markers after it, a closer written twice, a reasoning
    opener written twice, a value that does not fit its type, a value's closer,
    the function's close or the call's (or the section's) closer left out."""
    a = generated.analysis
    out: list[tuple[str, str]] = []
    for stop in turn_end_markers(a):
        out.append(("stop", output + rng.choice(["", "\n"]) + stop + rng.choice(["", "\n"])))
        out.append(("stop in text", "Use " + stop + " here.\n" + output))
    for closer in (a.tools.format.per_call_end.strip(), a.tools.format.section_end.strip()):
        if closer and output.rstrip().endswith(closer):
            out.append(("closer twice", output + rng.choice(["", "\n"]) + closer))
    start, end = a.reasoning.start.strip(), a.reasoning.end.strip()
    if start and end:
        out.append(("opener twice", start + start + "Plan.\n" + end + "\n" + output))
        out.append(("bare closer", end + "\n" + output))
    if "3" in output:
        at = output.rfind("3")
        for broken in BROKEN_VALUES:
            out.append(("broken value", output[:at] + broken + output[at + 1 :]))
    closer = a.tools.arguments.value_suffix.strip()
    if closer and closer in output:
        at = output.find(closer)
        out.append(("closer left out", output[:at] + output[at + len(closer) :]))
    closer = a.tools.function.close.strip()
    if closer and closer in output:
        at = output.rfind(closer)
        out.append(("function's close left out", output[:at] + output[at + len(closer) :]))
    for closer in dict.fromkeys((a.tools.format.per_call_end.strip(), a.tools.format.section_end.strip())):
        if closer and closer in output:
            at = output.rfind(closer)
            out.append(("call's closer left out", output[:at] + output[at + len(closer) :]))
    return out


#: values that break their format, written where the template wrote 3: not
#: JSON, not a Python literal, a string left unclosed (in each family's quotes)
BROKEN_VALUES = ("007", "3 days", "{x", "[1,", "{x}", "tru", "1.2.3", '"unterminated', "'unterminated", '<|"|>unterminated')


@needs_shared
@pytest.mark.parametrize("seed", [1, 2])
def test_streams_of_local_deviations_end_as_the_whole_parse(seed: int) -> None:
    """Every deviation, streamed in random chunks: its deltas add up to its
    final message, and that message is the whole output's parse (nothing a
    stream shows is taken back, and nothing the whole parse reads is lost);
    a broken format keeps the output unchanged.  No finished parse emits
    arguments that are not a JSON object: a value that breaks its format keeps
    its call where the format's values are tagged (the value as written, a
    string), and keeps the call as text where its arguments are JSON (a
    stream never showed that call: a call whose arguments are read whole
    shows once they close; counted)."""
    rng = random.Random(seed)
    streams = shown_then_kept_as_text = 0
    kinds: dict[str, int] = {}
    for name, generated, output in _zoo_renders():
        for kind, text in _deviations(generated, output, rng):
            whole = generated.parse(text)
            assert arguments_are_objects(whole.message), (name, kind, text)
            as_text = "kept as text: arguments that are not a JSON object" in whole.warning
            for size in (1, rng.randint(2, 7)):
                deltas, outcome, _ = stream_output(generated, text, size)
                streams += 1
                assert accumulate(deltas) == outcome.message, (name, kind, text)
                assert outcome.message == whole.message, (name, kind, text, size, outcome.message, whole.message)
                shown_then_kept_as_text += as_text
            if not whole.ok and not whole.need_more:
                assert keeps_its_text(whole, text), (name, kind)
            if kind == "broken value":
                assert [c.name for c in whole.message.tool_calls] == ["get_weather"] or as_text, (name, text, whole.message)
            kinds[kind] = kinds.get(kind, 0) + 1
    print(f"\n{streams} streams of deviations ({kinds}): every one ends as the whole parse ({shown_then_kept_as_text} of a call kept as text, never shown)")
    assert streams > 1000
