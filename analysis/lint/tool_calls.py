"""Rules on how a template writes tool calls and their results in history:
nothing a client sent is lost or re-encoded, and each call is written alike."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace

from analysis.lint import engines
from analysis.lint.conversations import TOOLS, USER_1, Render, Renderer, call, call_turn, tool_result
from analysis.lint.findings import Evidence, Finding, Severity, common_suffix_length, diverge_at
from analysis.probing.caps import Capabilities

CALL_IDS = "call-ids"
ARGUMENTS_PYTHON = "arguments-python"
ARGUMENTS_DOUBLE_ENCODED = "arguments-double-encoded"
CALL_WHITESPACE = "call-whitespace"

#: (nine letters and digits: Mistral's templates demand such ids)
_IDS = ("Zq81Lint0", "Xk42Lint1")
_RESULT = "Sunny, 24 C"
_NESTED = {"unit": "celsius", "exact": True, "days": None}


def call_ids(renderer: Renderer, caps: Capabilities) -> Iterator[Finding]:
    """The call ids and the tool messages' ``tool_call_id`` reach the prompt,
    so that results (parallel ones above all) can be matched to their calls."""
    count = 2 if caps.supports_parallel_tool_calls else 1
    ids = _IDS[:count]
    turn = call_turn([call(call_id, {"city": city}) for call_id, city in zip(ids, ("Paris", "Rome")[:count], strict=True)])
    rendered = renderer.render([USER_1, turn, *(tool_result(i, _RESULT) for i in ids)], tools=TOOLS)
    if not rendered.ok:
        return
    text = rendered.text or ""
    written = text.count(ids[0])
    if written >= 2:
        return
    severity = Severity.WARNING if caps.supports_parallel_tool_calls else Severity.INFO
    if written == 0:
        what = "neither the call ids nor the tool messages' tool_call_id are written"
    else:
        what = "a call id is written once: the call's or the tool message's is dropped"
    matched = "results can only be matched to parallel calls by their order" if count == 2 else "results are matched to calls by order only"
    at = text.find(ids[0]) if written else text.rfind(_RESULT)
    yield Finding(
        CALL_IDS,
        severity,
        f"{what}: {matched}",
        (Evidence("render (the tool result)", text, at, rendered.line_at(at)),),
    )


def arguments_python(renderer: Renderer, caps: Capabilities) -> Iterator[Finding]:
    """Arguments given as an object render as JSON, never as Python's repr."""
    if not caps.supports_tool_calls:
        return
    arguments = {"city": "Paris", "options": _NESTED}
    rendered = renderer.render([USER_1, call_turn([call(_IDS[0], arguments)]), tool_result(_IDS[0])], tools=TOOLS)
    text = rendered.text or ""
    for python in (repr(arguments), repr(_NESTED), "'unit': 'celsius'", "'exact': True"):
        at = text.find(python)
        if at >= 0:
            yield Finding(
                ARGUMENTS_PYTHON,
                Severity.ERROR,
                f"arguments given as an object render as Python, not JSON ({python}): the model sees "
                "single quotes and True/None in history and writes them back",
                (Evidence("render", text, at, rendered.line_at(at)),),
                engines=engines.with_property("arguments", engines.OBJECT),
            )
            return


def arguments_double_encoded(renderer: Renderer, caps: Capabilities) -> Iterator[Finding]:
    """Arguments given as a JSON string (as OpenAI sends them) are not encoded again."""
    if not caps.supports_tool_calls:
        return
    arguments = json.dumps({"city": "Paris"})
    rendered = renderer.render([USER_1, call_turn([call(_IDS[0], arguments)]), tool_result(_IDS[0])], tools=TOOLS)
    text = rendered.text or ""
    at = text.find('\\"city\\"')
    if at >= 0:
        yield Finding(
            ARGUMENTS_DOUBLE_ENCODED,
            Severity.ERROR,
            "arguments given as a JSON string render encoded a second time (a string of escaped JSON), "
            "not as the JSON object they hold",
            (Evidence("render", text, at, rendered.line_at(at)),),
            engines=engines.with_property("arguments", engines.STRING),
        )


def call_whitespace(renderer: Renderer, caps: Capabilities) -> Iterator[Finding]:
    """Elements written in a row are written alike: what separates the first
    call (or argument) from the second also separates the second from the third."""
    if caps.supports_parallel_tool_calls:
        cities = ("Lintopolis", "Lintville", "Lintburg")
        turn = call_turn([call(_IDS[0], {"city": c}) for c in cities])
        rendered = renderer.render([USER_1, turn, tool_result(_IDS[0])], tools=TOOLS)
        yield from _with_lines(_separators(rendered.text or "", cities, "calls", "call"), rendered)
    # three arguments of one call (keys alike but for a digit, which the comparison ignores)
    values = ("Lintvalone", "Lintvaltwo", "Lintvalthree")
    turn = call_turn([call(_IDS[0], {f"lintkey{i}": v for i, v in enumerate(values, 1)})])
    rendered = renderer.render([USER_1, turn, tool_result(_IDS[0])], tools=TOOLS)
    yield from _with_lines(_separators(rendered.text or "", values, "arguments", "argument"), rendered)


def _with_lines(findings: Iterator[Finding], rendered: Render) -> Iterator[Finding]:
    """``findings`` on ``rendered``'s text, each evidence given the line that wrote it."""
    for finding in findings:
        evidence = tuple(replace(e, line=rendered.line_at(e.at)) for e in finding.evidence)
        yield replace(finding, evidence=evidence)


def _separators(text: str, needles: tuple[str, str, str], plural: str, singular: str) -> Iterator[Finding]:
    """A finding when the text between the first two needles and between the
    last two differ by whitespace only."""
    spots = [text.find(n) for n in needles]
    if min(spots) < 0 or spots != sorted(spots):
        return
    first = text[spots[0] + len(needles[0]) : spots[1]]
    second = text[spots[1] + len(needles[1]) : spots[2]]
    alike, other = _DIGIT.sub("", first), _DIGIT.sub("", second)
    if alike == other or alike.split() != other.split():
        yield from _opened_differently(text, spots, plural, singular)
        return
    at = diverge_at(first, second)
    yield Finding(
        CALL_WHITESPACE,
        Severity.WARNING,
        f"{plural} are written differently by whitespace: between the first and second {singular} "
        f"{json.dumps(_around(first, at), ensure_ascii=False)}, between the second and third "
        f"{json.dumps(_around(second, at), ensure_ascii=False)}; a parser or grammar learnt from one misses the other",
        (
            Evidence(f"between {plural} 1 and 2", text, spots[0] + len(needles[0]) + at),
            Evidence(f"between {plural} 2 and 3", text, spots[1] + len(needles[1]) + at),
        ),
    )


def _opened_differently(text: str, spots: list[int], plural: str, singular: str) -> Iterator[Finding]:
    """A finding when the first element is opened with whitespace the second's
    opener lacks (or the reverse): the text before each, read back from the
    element, is alike up to a run of whitespace, and the same marker stands
    before that run in both (``<tool_call>\n{`` and ``<tool_call>{``)."""
    before_first, before_second = _DIGIT.sub("", text[: spots[0]]), _DIGIT.sub("", text[: spots[1]])
    shared = common_suffix_length(before_first, before_second)
    head_first, head_second = before_first[: len(before_first) - shared], before_second[: len(before_second) - shared]
    gap_first = head_first[len(head_first.rstrip()) :]
    gap_second = head_second[len(head_second.rstrip()) :]
    if gap_first == gap_second or common_suffix_length(head_first.rstrip(), head_second.rstrip()) < _MARKER_MIN:
        return
    at_first, at_second = spots[0] - shared - len(gap_first), spots[1] - shared - len(gap_second)
    yield Finding(
        CALL_WHITESPACE,
        Severity.WARNING,
        f"the first {singular} is opened differently from the second by whitespace "
        f"({json.dumps(gap_first, ensure_ascii=False)} against {json.dumps(gap_second, ensure_ascii=False)} "
        "after the same marker); a parser or grammar learnt from one misses the other",
        (Evidence(f"the first of the {plural}", text, at_first), Evidence(f"the second of the {plural}", text, at_second)),
    )


#: the fewest characters of a marker before a whitespace difference
_MARKER_MIN = 3

#: the digit of ``lintkeyN`` (argument names differ by it alone)
_DIGIT = re.compile(r"(?<=lintkey)\d")


def _around(text: str, at: int, reach: int = 12) -> str:
    """``text`` near ``at`` (where two separators part), with ``…`` where it is cut."""
    start, end = max(0, at - reach), min(len(text), at + reach)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
