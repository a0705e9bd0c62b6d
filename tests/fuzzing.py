"""A fuzz of broken and cut model outputs (issue 43): what a final parse
promises about the output's own text.

Each template's own renders of the probe calls (``tests.deviating``: one
call, two calls, a sentence then a call) are broken at random: cut anywhere,
a span deleted or written twice, one of the format's markers left out or
written where it does not belong, a sentence written anywhere; a broken output
is then cut too, one time in three.  Each is parsed whole and streamed in
random chunks, and four promises are checked:

* ``alien``: the content and the reasoning are the output's own text: their
  characters, whitespace aside, come in the output in that order (a cut call
  ``{"name":"g","`` never comes back as ``{"name":"g",""``);
* ``dropped``: no word the output has is lost: each word of the output that
  is not the format's markup (its markers' words, a JSON call object's keys)
  is, as often, in the content, the reasoning or a call (its name, id and
  arguments), or in a misspelt header word a deviation reports
  (``unknown-header-word``: harmony's ``<|channel|>commentson``);
* ``stream``: the stream's deltas add up to its final message, and that is
  the whole parse's;
* ``silent``: content that holds one of the format's call markers, written
  in the output, is never read with ``ok`` and no deviation (a cut, a break,
  an unread block, or ``call-marker-in-text``).

Run it whole with ``python -m tests.fuzzing [--per-render N] [--seed S]``;
``tests/analysis/generation/test_fuzz_broken_outputs.py`` runs a sample.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from analysis.generation.generated import Generated
from analysis.generation.streaming import stream_output
from analysis.messages.deviations import DeviationKind
from analysis.messages.mapper import Message, accumulate
from analysis.probing.markers import strip_ws
from tests.deviating import LEAD, SENTENCE, TIME, WEATHER, renders

MUTATIONS = ("cut", "delete", "repeat", "marker-dropped", "marker-inserted", "text-inserted")
PROMISES = ("alien", "dropped", "stream", "silent")
#: the sentence a ``text-inserted`` mutation writes
INSERTED = "Note: unusual words here."
_WORD = re.compile(r"\w+")
#: a key of a JSON object: the format's markup in a JSON call (its value is not)
_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')


@dataclass(frozen=True)
class Broken:
    """One fuzzed output: the mutation, and the text it wrote."""

    kind: str
    text: str


@dataclass(frozen=True)
class Failure:
    """A promise one parse broke."""

    template: str
    promise: str
    kind: str
    text: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"template": self.template, "promise": self.promise, "kind": self.kind, "text": self.text, "detail": self.detail}


@dataclass(frozen=True)
class Subject:
    """A template's generation, its renders of the probe calls, and what in
    them is the format's markup (the words no message holds)."""

    name: str
    generated: Generated
    bases: tuple[str, ...]
    markers: tuple[str, ...]
    markup: frozenset[str]
    #: how many times the format writes a call's name (Muse Glimmer: in the header and the invoke)
    names: int = 1


def subject(path: Path) -> Subject | None:
    """The fuzz subject of the template at ``path`` (None: no calls rendered)."""
    generated, found = renders(path)
    if generated is None:
        return None
    bases = tuple(b for b in (found.two, found.with_text, found.one) if b)
    if not bases:
        return None
    markers = tuple(sorted(dict.fromkeys(m for m in _markers(generated) if m), key=len, reverse=True))
    said = " ".join([LEAD, SENTENCE, "get_weather get_time", json.dumps(WEATHER), json.dumps(TIME)])
    markup = {w for b in bases for w in _WORD.findall(b)} - set(_WORD.findall(said))
    markup |= {w for m in markers for w in _WORD.findall(m)}
    names = max(1, (found.one or "").count("get_weather"))
    return Subject(f"{path.parent.name}/{path.name}", generated, bases, markers, frozenset(markup), names)


def _markers(generated: Generated) -> list[str]:
    a = generated.analysis
    fmt, fn, args = a.tools.format, a.tools.function, a.tools.arguments
    found = [a.reasoning.start, a.reasoning.end, fmt.section_start, fmt.section_end, fmt.per_call_start, fmt.per_call_end,
             fn.name_prefix, fn.name_suffix, fn.close, args.name_prefix, args.name_suffix, args.value_prefix, args.value_suffix,
             args.separator, *a.turn_end, *generated.preserved_tokens]
    return [strip_ws(m) for m in found if m and m.strip()]


def mutate(rng: random.Random, base: str, markers: tuple[str, ...]) -> Broken:
    """``base`` broken one way at random (and cut, one time in three)."""
    kind = rng.choice(MUTATIONS)
    at, size = rng.randint(0, len(base)), rng.randint(1, 12)
    if kind == "cut":
        return Broken(kind, base[: rng.randint(0, len(base))])
    if kind == "delete":
        text = base[:at] + base[at + size :]
    elif kind == "repeat":
        text = base[:at] + base[max(0, at - size) : at] + base[at:]
    elif kind == "marker-dropped":
        present = [m for m in markers if m in base]
        if not present:
            return Broken("cut", base[: rng.randint(0, len(base))])
        marker = rng.choice(present)
        starts = [m.start() for m in re.finditer(re.escape(marker), base)]
        start = rng.choice(starts)
        text = base[:start] + base[start + len(marker) :]
    elif kind == "marker-inserted":
        marker = rng.choice(markers) if markers else "<tool_call>"
        text = base[:at] + (marker if rng.random() < 0.7 else marker[: rng.randint(1, len(marker))]) + base[at:]
    else:
        text = base[:at] + rng.choice(["", "\n"]) + INSERTED + rng.choice(["", "\n"]) + base[at:]
    if rng.random() < 1 / 3:
        text = text[: rng.randint(0, len(text))]
        kind += "+cut"
    return Broken(kind, text)


def subsequence(inner: str, outer: str) -> bool:
    """Whether ``inner``'s characters, whitespace aside, come in ``outer`` in that order."""
    it = iter(c for c in outer if not c.isspace())
    return all(c in it for c in inner if not c.isspace())


def words_lost(
    message: Message, text: str, markup: frozenset[str], markers: tuple[str, ...] = (), names: int = 1, reported: tuple[str, ...] = ()
) -> list[str]:
    """The words of ``text`` (markup aside) that ``message`` holds fewer times
    than ``text`` (``names``: how many times the format writes a call's name;
    ``reported``: header words a deviation names, markup the format misspelt)."""
    held = [message.content, message.reasoning_content or "", *reported]
    for call in message.tool_calls:
        held += [call.name] * names + [call.id or "", call.arguments]
        try:
            held += _strings(json.loads(call.arguments))
        except ValueError:
            pass
    # (a word the message holds inside a longer one counts: text glued to a
    # marker left out is held glued to what followed it)
    have = "".join(held)
    keys = {w for key in _JSON_KEY.findall(text) for w in _WORD.findall(key)}
    for marker in markers:  # (a marker glued to text: its words are the marker's)
        text = text.replace(marker, "\0")
    want = Counter(w for w in _WORD.findall(text) if w not in markup and w not in keys)
    return sorted(w for w, n in want.items() if have.count(w) < n)


def _strings(value: object) -> list[str]:
    """The keys and values of a JSON value, as text."""
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (k, *_strings(v))]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v)]
    return [value if isinstance(value, str) else json.dumps(value)]


def broken_promises(s: Subject, text: str, chunk: int) -> Iterator[tuple[str, str]]:
    """Each promise the parse of ``text`` breaks, with what was read."""
    whole = s.generated.parse(text)
    message = whole.message
    for field, value in (("content", message.content), ("reasoning", message.reasoning_content or "")):
        if not subsequence(value, text):
            yield "alien", f"{field}: {value!r}"
    # (a misspelt channel or content type is header markup: reported, not lost)
    reported = tuple(text[d.start : d.end] for d in whole.deviations if d.kind is DeviationKind.UNKNOWN_HEADER_WORD)
    lost = words_lost(message, text, s.markup, s.markers, s.names, reported)
    if lost:
        yield "dropped", f"{lost}: {message.to_json()}"
    # (a marker the output holds: one that dropped markup joins in the content, "<|tool_<channel|>call>", is not written)
    if whole.ok and not whole.deviations and any(m in message.content and m in text for m in s.generated.call_markers):
        yield "silent", f"content {message.content!r} holds a call marker, ok, no note"
    deltas, streamed, _ = stream_output(s.generated, text, chunk)
    if accumulate(deltas) != streamed.message or streamed.message != message:
        yield "stream", f"in {chunk}-character chunks: {streamed.message.to_json()} against {message.to_json()}"


def fuzz(s: Subject, per_render: int, seed: int) -> tuple[int, list[Failure]]:
    """``per_render`` broken outputs of each of ``s``'s renders: how many, and the promises they broke."""
    rng = random.Random(f"{seed}:{s.name}")
    failures: list[Failure] = []
    count = 0
    for base in s.bases:
        for _ in range(per_render):
            broken = mutate(rng, base, s.markers)
            count += 1
            for promise, detail in broken_promises(s, broken.text, rng.randint(1, 16)):
                failures.append(Failure(s.name, promise, broken.kind, broken.text, detail))
    return count, failures


def main(argv: list[str] | None = None) -> int:
    from tests.conftest import SHARED

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", default=[str(SHARED / "templates")])
    parser.add_argument("--per-render", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--examples", type=Path, help="write every failure here, as JSON lines")
    options = parser.parse_args(argv)
    total, failures, templates = 0, [], 0
    for folder in options.folders:
        for path in sorted(Path(folder).glob("*.jinja")):
            s = subject(path)
            if s is None:
                continue
            templates += 1
            count, found = fuzz(s, options.per_render, options.seed)
            total += count
            failures += found
            print(f"{s.name}: {count} outputs, {len(found)} broken promises", file=sys.stderr)
    by = Counter(f.promise for f in failures)
    print(json.dumps({"templates": templates, "outputs": total, **{p: by[p] for p in PROMISES}}))
    if options.examples:
        options.examples.write_text("".join(json.dumps(f.to_json(), ensure_ascii=False) + "\n" for f in failures))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
