"""Expected-parse cases: load them and run the three checks.

A case (one line of a ``cases.jsonl``) names a template, a request, a model
output, whether it is cut short (``partial``) and the expected message.  The
checks:

* ``parse`` — the full parse gives the expected message (content and reasoning
  compared without surrounding whitespace, arguments as JSON, ids when expected);
* ``stream`` — every prefix parses without failing and grows the message, the
  streaming parser fed one character at a time shows the same message as a full
  parse of each prefix, and chunks of 1, 3 and 7 add up to the final message;
* ``grammar`` — the generated grammar accepts what it constrains.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from analysis.errors import InputError
from analysis.generation.generated import Generated
from analysis.generation.generator import AutoParser, auto_parser
from analysis.generation.grammar_check import check_output
from analysis.generation.streaming import StreamParser, stream_output
from analysis.messages.mapper import Delta, Message, NotAnExtension, accumulate, message_deltas
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from analysis.userio import loads, read_text
from peg.errors import AutoparserError


@dataclass(frozen=True)
class CaseFailure:
    """One failed check of one case."""

    case_id: str
    check: str
    reason: str


_CASE_FIELDS: dict[str, tuple[type, ...]] = {
    "template": (str,),
    "request": (dict,),
    "output": (str,),
    "expected": (dict,),
    "partial": (bool,),
    "id": (str, int),
}


def _case_problem(case: Any) -> str | None:
    """Why a case line is unusable, or None."""
    if not isinstance(case, dict):
        return "a case must be a JSON object"
    missing = [k for k in ("template", "request", "output", "expected") if k not in case]
    if missing:
        return f"a case needs {', '.join(missing)}"
    for key, kinds in _CASE_FIELDS.items():
        if key in case and not isinstance(case[key], kinds):
            names = " or ".join("boolean" if k is bool else "object" if k is dict else k.__name__ for k in kinds)
            return f"'{key}' must be a {names}, not {type(case[key]).__name__}"
    template = str(case["template"])
    if not _inside_folder(template):
        return f"'template' must name a file inside the templates folder, not {template[:80]!r}"
    expected = case["expected"]
    for key in ("content", "reasoning_content"):
        if expected.get(key) is not None and not isinstance(expected[key], str):
            return f"'expected.{key}' must be a string or null"
    calls = expected.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
        return "'expected.tool_calls' must be a list of objects"
    return None


def _inside_folder(name: str) -> bool:
    """Whether a case's template name stays inside the templates folder: a
    relative path without ``..`` (a case file may come from anywhere; it never
    names ``/etc/passwd`` or ``../../secret``)."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    return bool(parts) and not PurePosixPath(name).is_absolute() and not PureWindowsPath(name).is_absolute() and ".." not in parts


def load_cases(path: Path) -> list[dict[str, Any]]:
    """Read a JSONL case file; a bad line is an error naming the file and line."""
    text = read_text(path)
    cases = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        case = loads(line, f"{path}:{number}")
        problem = _case_problem(case)
        if problem:
            raise InputError(f"{path}:{number}: {problem}")
        case.setdefault("id", f"{path.name}:{number}")
        case.setdefault("partial", False)
        cases.append(case)
    return cases


def normalise(message: dict[str, Any], partial: bool, with_ids: bool) -> dict[str, Any]:
    """Content/reasoning stripped, arguments parsed as JSON (partial ones: right-trimmed text)."""
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        args = function.get("arguments", "")
        try:
            args = json.loads(args) if isinstance(args, str) and args else args
        except ValueError:
            args = args.rstrip() if partial else args
        calls.append({"name": function.get("name"), "arguments": args, **({"id": call.get("id")} if with_ids else {})})
    return {
        "content": (message.get("content") or "").strip(),
        "reasoning_content": (message.get("reasoning_content") or "").strip(),
        "tool_calls": calls,
    }


def readable_diff(expected: dict[str, Any], got: dict[str, Any]) -> str:
    """Expected vs got as a unified diff of their pretty JSON."""
    a = json.dumps(expected, indent=2, ensure_ascii=False, sort_keys=True).splitlines()
    b = json.dumps(got, indent=2, ensure_ascii=False, sort_keys=True).splitlines()
    return "\n".join(difflib.unified_diff(a, b, "expected", "got", lineterm="", n=1))


def check_parse(generated: Generated, case: dict[str, Any]) -> str:
    """"" when the full parse gives the expected message, else a readable diff."""
    outcome = generated.parse(case["output"], partial=case["partial"])
    with_ids = any("id" in c for c in case["expected"].get("tool_calls") or [])
    got = normalise(outcome.message.to_json(), case["partial"], with_ids)
    expected = normalise(case["expected"], case["partial"], with_ids)
    if got == expected:
        return ""
    note = f"\n({outcome.warning})" if outcome.warning else ""
    return readable_diff(expected, got) + note


#: outputs up to this long have every prefix parsed; past it, :data:`SAMPLED_PREFIXES`
#: evenly spaced ones more (each parse reads the whole prefix: every prefix of
#: a 6 MB output would take hours), while the stream still takes every character
EVERY_PREFIX_UP_TO = 2000
SAMPLED_PREFIXES = 200


def _checked_prefixes(length: int) -> set[int]:
    """The prefix lengths the prefix check parses (see :data:`EVERY_PREFIX_UP_TO`)."""
    if length <= EVERY_PREFIX_UP_TO:
        return set(range(1, length + 1))
    step = max(1, (length - EVERY_PREFIX_UP_TO) // SAMPLED_PREFIXES)
    return set(range(1, EVERY_PREFIX_UP_TO + 1)) | set(range(EVERY_PREFIX_UP_TO + step, length + 1, step)) | {length}


def check_prefixes(generated: Generated, output: str) -> tuple[str, StreamParser, list[Delta]]:
    """Every prefix parses (partial) without failing, grows the message, and the
    streaming parser fed one character at a time shows the same message: the
    problem ("" for none), and that stream with its deltas (to be finished).
    (Every prefix of a long output would cost time quadratic in its length:
    past :data:`EVERY_PREFIX_UP_TO` characters, sampled prefixes are parsed.)
    The stream shows open arguments as the reference does (a partial parse
    shows them); by default a stream holds such a call until they close.)"""
    stream = StreamParser(generated, show_open_arguments=True)
    deltas: list[Delta] = []
    previous = Message()
    checked = _checked_prefixes(len(output))
    for i in range(1, len(output) + 1):
        if i not in checked:
            deltas.extend(stream.feed(output[i - 1]))
            continue
        outcome = generated.parse(output[:i], partial=True)
        if not outcome.ok:
            return f"the prefix of {i} characters fails: {outcome.warning}", stream, deltas
        try:
            message_deltas(previous, outcome.message)
        except NotAnExtension as exc:
            return f"the prefix of {i} characters shrinks the message: {exc}", stream, deltas
        previous = outcome.message
        deltas.extend(stream.feed(output[i - 1]))
        if stream.message() != outcome.message:
            problem = f"the prefix of {i} characters: streamed {stream.message()} but parsed {outcome.message}"
            return problem, stream, deltas
    return "", stream, deltas


def check_stream(generated: Generated, case: dict[str, Any]) -> str:
    """"" when every prefix behaves and streams in chunks of 1, 3 and 7
    characters add up to the final message (streams that show open arguments,
    as the reference's; and, for a whole output, the default stream, which
    holds such a call until they close, too)."""
    output = case["output"]
    problem, one_by_one, deltas_of_one = check_prefixes(generated, output)
    if problem:
        return problem
    final = generated.parse(output, partial=case["partial"]).message
    for size in (1, 3, 7):
        if size == 1:  # the prefix check fed it already
            stream, deltas = one_by_one, deltas_of_one
        else:
            stream, deltas = StreamParser(generated, show_open_arguments=True), []
            for i in range(0, len(output), size):
                deltas.extend(stream.feed(output[i : i + size]))
        if not case["partial"]:
            deltas.extend(stream.finish()[0])
        if stream.warning:
            return f"chunks of {size}: {stream.warning}"
        if accumulate(deltas) != final:
            return f"chunks of {size}: the deltas add up to {accumulate(deltas)}, the final message is {final}"
        if not case["partial"]:
            held, outcome, _ = stream_output(generated, output, size)
            if accumulate(held) != final or outcome.message != final:
                return f"chunks of {size}, open arguments held: the deltas add up to {accumulate(held)}, the final message is {final}"
    return ""


def check_grammar(generated: Generated, case: dict[str, Any]) -> str:
    """"" when the grammar accepts what it constrains (or there is no grammar)."""
    if generated.grammar_error:
        return f"no grammar: {generated.grammar_error}"
    fit = check_output(generated, case["output"], case["partial"])
    if fit.fits:
        return ""
    at = fit.position or 0
    around = case["output"][max(0, at - 30) : at + 30]
    return f"the grammar: {fit.message()}: {around!r}"


CHECKS: dict[str, Callable[[Generated, dict[str, Any]], str]] = {
    "parse": check_parse,
    "stream": check_stream,
    "grammar": check_grammar,
}


class CaseRunner:
    """Runs cases, loading and analysing each template once."""

    def __init__(self, templates_dir: Path):
        self.templates_dir = templates_dir
        self._parsers: dict[str, AutoParser | AutoparserError] = {}

    def missing_templates(self, cases: list[dict[str, Any]]) -> list[str]:
        """The templates the cases name that are not in the templates folder."""
        names = sorted({str(c["template"]) for c in cases})
        return [name for name in names if not (self.templates_dir / name).exists()]

    def parser_for(self, template: str) -> AutoParser:
        """The template's parser factory (raises the load/analysis error, once per template)."""
        if template not in self._parsers:
            try:
                self._parsers[template] = auto_parser(load_template(self.templates_dir / template))
            except AutoparserError as exc:
                self._parsers[template] = exc
        found = self._parsers[template]
        if isinstance(found, AutoparserError):
            raise found
        return found

    def run(self, case: dict[str, Any]) -> list[CaseFailure]:
        """The failed checks of ``case`` (empty when it passes)."""
        case_id = str(case["id"])
        try:
            generated = self.parser_for(case["template"]).generate(ChatRequest.from_json(case["request"]))
        except AutoparserError as exc:
            return [CaseFailure(case_id, "setup", str(exc))]
        failures = []
        for name, check in CHECKS.items():
            try:
                reason = check(generated, case)
            except AutoparserError as exc:
                reason = str(exc)
            if reason:
                failures.append(CaseFailure(case_id, name, reason))
        return failures
