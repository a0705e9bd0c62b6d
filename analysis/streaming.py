"""Streaming: feed model output in chunks, get OpenAI-style deltas, in linear time.

Re-parsing the whole output on every chunk is quadratic.  Instead, after a full
(partial-mode) parse the parser's *frontier* is known: the primitive that ran
out of input (``until``/``rest`` inside content, reasoning or a string
argument; a JSON value inside raw arguments) and the message field it feeds.
While the next chunks cannot change the parse — no delimiter of that ``until``
appears, the JSON value is still open — they are appended to that field
directly, in time proportional to the chunk.  Only structural events (a marker
completes, a JSON value closes) cost a full parse, and there are few of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from analysis.generation import Generated, ParseOutcome
from analysis.mapper import Delta, Message, NotAnExtension, ToolCall, map_result, message_deltas
from peg.combinators import Json, Rest, Until
from peg.engine import ParseResult, Status, TagNode, parse
from peg.json_stream import IncrementalJson, JsonProgress

_FIELDS = ("content", "reasoning", "tool-args", "tool-arg-string")
#: below this many characters every chunk without a fast path gets a full parse
_PATIENT_FROM = 4096
#: a fast path that carried this many characters shows the output is not degenerate
_PRODUCTIVE_RUN = 256
#: values whose only ``until`` is the inside of a string: a chunk there appends its JSON escape
_STRING_VALUES = ("tool-arg-py", "tool-arg-gemma")


def _harmony_field(message: TagNode) -> str:
    """Where a harmony message's body goes (as the mapper decides)."""
    recipients = [n.text for n in message.children if n.name == "h-to"]
    channels = [n.text for n in message.children if n.name == "h-channel"]
    if recipients and recipients[-1].startswith("functions."):
        return "tool-args"
    if recipients and recipients[-1] != "assistant":
        return "drop"
    if channels and channels[-1] == "analysis" and message.name == "harmony-msg":
        return "reasoning"
    return "content"


def _frontier_tag(nodes: tuple[TagNode, ...], end: int) -> tuple[TagNode | None, TagNode | None, str]:
    """The innermost incomplete capture that ends at the frontier, its call (or
    harmony message), and the message field it feeds."""
    found: TagNode | None = None
    call: TagNode | None = None
    field_name = ""
    while nodes:
        last = nodes[-1]
        if last.complete or last.end != end:
            break
        if last.name in _FIELDS:
            found, field_name = last, last.name
        elif last.name in _STRING_VALUES:
            found, field_name = last, "escaped"
        elif last.name == "h-body" and call is not None:
            found, field_name = last, _harmony_field(call)
        elif last.name in ("tool", "harmony-msg", "harmony-msg-raw"):
            call = last
        elif last.name not in ("tool-arg", "reasoning-block"):
            return None, None, ""  # a name or an id is being written: nothing to append to
        nodes = last.children
    return found, call, field_name


@dataclass
class _Fast:
    """How the chunks that follow a full parse extend the message, until a structural event."""

    kind: str  #: "until", "rest" or "json"
    field: str  #: the tag whose text grows
    delimiters: tuple[str, ...] = ()
    first_chars: frozenset[str] = frozenset()
    tail: str = ""  #: text held back (a possible delimiter start)
    json: IncrementalJson | None = None
    pending: str = ""  #: a string argument's trailing newline, held until more text follows
    escaped: bool = False  #: inside a Python string, the last character was an unpaired backslash


@dataclass
class _Accumulated:
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[tuple[str, str | None, list[str]]] = field(default_factory=list)

    def message(self) -> Message:
        return Message(
            "".join(self.content),
            "".join(self.reasoning) or None,
            tuple(ToolCall(name, "".join(args), call_id) for name, call_id, args in self.calls),
        )

    @classmethod
    def of(cls, message: Message) -> "_Accumulated":
        acc = cls([message.content], [message.reasoning_content or ""])
        acc.calls = [(c.name, c.id, [c.arguments]) for c in message.tool_calls]
        return acc


class StreamParser:
    """Feeds output chunks through a generated parser (see the module docstring)."""

    def __init__(self, generated: Generated):
        self.generated = generated
        self._chunks: list[str] = [generated.generation_prompt]
        self._acc = _Accumulated()
        self._fast: _Fast | None = None
        self._failed = False
        self._length = len(generated.generation_prompt)
        self._stuck = 0  #: full parses in a row whose fast path (if any) carried little text
        self._fast_run = 0  #: characters the fast path has taken since the last full parse
        self._backlog = 0  #: characters fed since the last full parse
        self.full_parses = 0  #: how many times the whole text was parsed (for benchmarks and tests)
        self.warning = ""

    # -- public ---------------------------------------------------------------------

    def feed(self, chunk: str) -> list[Delta]:
        """Add ``chunk`` of model output; return the deltas it produces."""
        if not chunk:
            return []
        self._chunks.append(chunk)
        self._length += len(chunk)
        if self._failed:
            return []
        fast = self._fast
        if fast is not None:
            deltas = self._extend(fast, chunk)
            if deltas is not None:
                self._fast_run += len(chunk)
                return deltas
            self._fast = None  # the parse changes here: only a full parse can go on
        self._backlog += len(chunk)
        if self._backlog < self._patience():
            return []
        return self._full_parse()

    def _patience(self) -> int:
        """Characters to wait for before the next full parse.  Normally none; when
        long output keeps needing full parses (hostile or degenerate text such as
        thousands of half-written markers, where no fast path lasts), the wait
        doubles each time, so the total work stays O(n log n) and deltas arrive
        later instead."""
        if self._stuck <= 3 or self._length < _PATIENT_FROM:
            return 0
        return min(16 << (self._stuck - 3), self._length // 2)

    def finish(self) -> tuple[list[Delta], ParseOutcome]:
        """The output is complete: the last deltas and the final parse outcome."""
        output = "".join(self._chunks)[len(self.generated.generation_prompt) :]
        outcome = self.generated.parse(output)
        if not outcome.ok:
            self.warning = outcome.warning
            return [], outcome
        try:
            deltas = message_deltas(self._acc.message(), outcome.message)
        except NotAnExtension as exc:
            self.warning = f"the final message does not extend the streamed one: {exc}"
            deltas = []
        self._acc = _Accumulated.of(outcome.message)
        return deltas, outcome

    def message(self) -> Message:
        """The message streamed so far."""
        return self._acc.message()

    # -- full parse -------------------------------------------------------------------

    def _full_parse(self) -> list[Delta]:
        text = "".join(self._chunks)
        self._chunks = [text]
        self._backlog = 0
        self._stuck = 0 if self._fast_run >= _PRODUCTIVE_RUN else self._stuck + 1
        self._fast_run = 0
        self.full_parses += 1
        result = parse(self.generated.built.parser, text, partial=True)
        if result.status is Status.FAILURE:
            self._failed = True  # no continuation can fit: the final parse reports it
            self._fast = None
            return []
        message = map_result(result, self.generated.keeps_reasoning_in_content)
        try:
            deltas = message_deltas(self._acc.message(), message)
        except NotAnExtension as exc:
            self.warning = str(exc)
            deltas = []
        self._acc = _Accumulated.of(message)
        self._fast = self._plan(result) if result.status is Status.NEED_MORE else None
        return deltas

    def _plan(self, result: ParseResult) -> _Fast | None:
        if self.generated.keeps_reasoning_in_content or result.frontier is None:
            return None
        node, start = result.frontier
        tag, call, field_name = _frontier_tag(result.tree, result.end)
        if tag is None or start < tag.start or start >= len(result.text):
            # (a frontier that starts at the very end may still move: a space()
            # before it would swallow leading whitespace of the next chunk)
            return None
        if field_name in ("tool-args", "tool-arg-string", "escaped"):
            names = call.find("tool-name") if call is not None and call.name == "tool" else []
            harmony_call = call is not None and call.name != "tool" and any(n.name == "h-to" and n.complete for n in call.children)
            if not (names and names[0].complete or harmony_call) or not self._acc.calls:
                return None  # the call is not shown yet: its arguments wait for the name
            if field_name == "tool-args" and not tag.text.strip():
                return None  # leading whitespace of raw arguments is still being dropped
        text = result.text
        if isinstance(node, Until):
            fast = _Fast("until", field_name, node.delimiters, frozenset(d[0] for d in node.delimiters), text[result.end :])
        elif isinstance(node, Rest):
            fast = _Fast("rest", field_name)
        elif field_name == "escaped":
            return None  # only an until (a string's inside) can be extended
        elif isinstance(node, Json) and field_name == "tool-args":
            tracker = IncrementalJson()
            if tracker.feed(text[start:]) is not JsonProgress.MORE:
                return None
            fast = _Fast("json", tag.name, json=tracker)
        else:
            return None
        if field_name == "tool-arg-string":
            raw = tag.text
            if raw in ("", "\n", "\r", "\r\n"):
                return None  # the leading newline is not decided yet
            fast.pending = "\r\n" if raw.endswith("\r\n") else raw[-1] if raw[-1] in "\r\n" else ""
        if field_name in ("reasoning", "content"):
            shown = self._acc.reasoning if field_name == "reasoning" else self._acc.content
            if not any(shown):
                return None  # leading whitespace is still being dropped
            fast.pending = tag.text[len(tag.text.rstrip(" \t\r\n")) :] if tag.text.strip() else ""
        return fast

    # -- fast path --------------------------------------------------------------------

    def _extend(self, fast: _Fast, chunk: str) -> list[Delta] | None:
        """Deltas for ``chunk`` when it cannot change the parse, else None."""
        if fast.kind == "rest":
            committed = chunk
        elif fast.kind == "json":
            assert fast.json is not None
            if fast.json.feed(chunk) is not JsonProgress.MORE:
                return None
            committed = chunk
        elif fast.field == "escaped" and "\\" in fast.delimiters:
            # a Python string's inside: only an unescaped closing quote is structural
            quotes = [d for d in fast.delimiters if d != "\\"]
            for c in chunk:
                if fast.escaped:
                    fast.escaped = False
                elif c == "\\":
                    fast.escaped = True
                elif c in quotes:
                    return None
            committed = chunk
        else:
            if not fast.tail and fast.first_chars.isdisjoint(chunk):
                committed = chunk
            else:
                buf = fast.tail + chunk
                if any(d in buf for d in fast.delimiters):
                    return None
                hold = 0
                for d in fast.delimiters:
                    for k in range(min(len(d) - 1, len(buf)), hold, -1):
                        if buf.endswith(d[:k]):
                            hold = k
                            break
                committed = buf[: len(buf) - hold]
                fast.tail = buf[len(buf) - hold :]
        return self._write(fast, committed)

    def _write(self, fast: _Fast, piece: str) -> list[Delta]:
        if not piece or fast.field == "drop":
            return []
        acc = self._acc
        if fast.field in ("content", "reasoning"):
            raw = fast.pending + piece
            visible = raw.rstrip(" \t\r\n")
            fast.pending = raw[len(visible) :]
            if not visible:
                return []
            if fast.field == "content":
                acc.content.append(visible)
                return [Delta(content=visible)]
            acc.reasoning.append(visible)
            return [Delta(reasoning_content=visible)]
        name, call_id, args = acc.calls[-1]
        if fast.field == "escaped":
            piece = json.dumps(piece, ensure_ascii=False)[1:-1]
        elif fast.field == "tool-arg-string":
            raw = fast.pending + piece
            fast.pending = "\r\n" if raw.endswith("\r\n") else raw[-1] if raw[-1] in "\r\n" else ""
            visible = raw[: len(raw) - len(fast.pending)]
            if not visible:
                return []
            piece = json.dumps(visible, ensure_ascii=False)[1:-1]
        args.append(piece)
        return [Delta(tool_index=len(acc.calls) - 1, arguments=piece)]


def stream_output(generated: Generated, output: str, chunk_size: int) -> tuple[list[Delta], ParseOutcome, StreamParser]:
    """Feed ``output`` in chunks of ``chunk_size`` characters; all deltas, the final outcome, the parser."""
    parser = StreamParser(generated)
    deltas: list[Delta] = []
    for i in range(0, len(output), max(chunk_size, 1)):
        deltas.extend(parser.feed(output[i : i + chunk_size]))
    final, outcome = parser.finish()
    deltas.extend(final)
    return deltas, outcome, parser
