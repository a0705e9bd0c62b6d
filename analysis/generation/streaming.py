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

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from json.encoder import (
    encode_basestring as _encode_string,  # json.dumps(s, ensure_ascii=False) of a str
)

from analysis.generation.generated import Generated
from analysis.generation.results import ParseOutcome
from analysis.generation.shown_text import hold_open_reasoning, unshown_from, with_rest
from analysis.messages.deviations import DEVIATION_TAGS
from analysis.messages.hooks import DROP, OutputHooks
from analysis.messages.mapper import (
    VALUE_READINGS,
    Decoded,
    Delta,
    Message,
    NotAnExtension,
    Streamed,
    ToolCall,
    arguments_delta,
    content_delta,
    map_result,
    map_streamed,
    message_deltas,
    reasoning_delta,
)
from analysis.messages.pyliteral import decode_escapes
from analysis.messages.tags import (
    CALLS_HELD,
    CONTENT,
    REASONING,
    REASONING_BLOCK,
    REASONING_UNOPENED,
    TOOL,
    TOOL_ARG,
    TOOL_ARGS,
    TOOL_NAME,
)
from peg.combinators import Json, Rest, Until
from peg.engine import ParseResult, TagNode, parse
from peg.json_stream import IncrementalJson
from peg.partial import held_back_of
from peg.scanning import delimiter_anchors, escaped_run
from peg.status import Status
from peg.text import WS as _WS

#: the captures that are themselves a message field (the tagged string value
#: feeds the call's arguments)
#: the value captures a stream shows growing (the mapper's reading table says how)
_TRIMMED = tuple(tag for tag, reading in VALUE_READINGS.items() if reading.streamed is Streamed.TRIMMED)
_FIELDS = (CONTENT, REASONING, TOOL_ARGS, *_TRIMMED)
#: full parses may read this many characters per character of output (plus
#: :data:`_WORK_SLACK`) before a stuck stream starts to wait between them
_WORK_PER_CHAR = 32
_WORK_SLACK = 65536
#: below this many characters every chunk without a fast path gets a full parse
#: (a short stream shows, after each chunk, exactly the parse of what came)
_PATIENT_FROM = 1024
#: a fast path that carried this many characters shows the output is not degenerate
_PRODUCTIVE_RUN = 256
#: values whose only ``until`` is the inside of a string: a chunk there appends
#: its JSON escape (and so do the value captures of a format's own hooks)
_STRING_VALUES = tuple(tag for tag, reading in VALUE_READINGS.items() if reading.streamed is Streamed.ESCAPED)


#: captures that only wrap others (a deviation marks a reading, it holds no field of its own)
_WRAPPERS = frozenset({TOOL_ARG, REASONING_BLOCK, CALLS_HELD, *DEVIATION_TAGS})


def _frontier_tag(
    nodes: tuple[TagNode, ...], end: int, hooks: OutputHooks
) -> tuple[TagNode | None, TagNode | None, str]:
    """The innermost incomplete capture that ends at the frontier, its call (or
    message-shaped capture), and the message field it feeds (the mapper's
    reading: a message's body goes where the format's ``route`` says)."""
    found: TagNode | None = None
    call: TagNode | None = None
    field_name = ""
    while nodes:
        last = nodes[-1]
        if last.complete or last.end != end:
            break
        if last.name == REASONING_UNOPENED:
            return last, None, DROP  # held until its end marker comes: chunks show nothing
        if last.name in _FIELDS:
            found, field_name = last, last.name
            if last.name in (CONTENT, REASONING):
                break  # text as written (a call kept as content holds captures of its own)
        elif last.name in _STRING_VALUES or last.name in hooks.value_decoders:
            found, field_name = last, "escaped"
        elif call is not None and last.name == hooks.body_tag and call.name in hooks.message_tags:
            found, field_name = last, hooks.route(call, False).field
        elif last.name == TOOL or last.name in hooks.message_tags:
            call = last
        elif last.name not in _WRAPPERS:
            return None, None, ""  # a name or an id is being written: nothing to append to
        nodes = last.children
    return found, call, field_name


# -- fast paths ----------------------------------------------------------------------
#
# After a full parse that stopped inside a growing field, a *path* (how chunks are
# scanned: until a delimiter, to the end, through a JSON value, through a Python
# string) hands each chunk that cannot change the parse to a *sink* (the message
# field it extends, with the mapper's trimming and escaping), which returns the
# deltas.  Both are small slotted classes: this runs once per chunk.


class _TextSink:
    """Content or reasoning: trailing whitespace waits until more text follows
    (the mapper strips the message's surrounding whitespace)."""

    __slots__ = ("make", "parts", "waiting")

    def __init__(self, parts: list[str], make: Callable[[str], Delta], pending: str) -> None:
        self.parts, self.make = parts, make
        #: the held-back whitespace, in pieces (a long run costs one join, not one copy per chunk)
        self.waiting = [pending] if pending else []

    def write(self, piece: str) -> list[Delta]:
        if not self.waiting:  # (the common case: nothing waits)
            if piece[-1] in _WS:
                text = piece.rstrip(_WS)  # stops at the chunk's last non-space character
                self.waiting = [piece[len(text) :]]
                if not text:
                    return []
                piece = text
            self.parts.append(piece)
            return [self.make(piece)]
        if not piece.strip(_WS):  # whitespace only: it waits, in time proportional to the chunk
            self.waiting.append(piece)
            return []
        if self.waiting:
            self.waiting.append(piece)
            piece = "".join(self.waiting)
            self.waiting = []
        if piece[-1] in _WS:
            text = piece.rstrip(_WS)  # stops at the chunk's last non-space character
            self.waiting = [piece[len(text) :]]
            piece = text
        self.parts.append(piece)
        return [self.make(piece)]


class _ArgumentsSink:
    """A call's JSON arguments: raw JSON text as written, or the inside of a JSON
    string (escaped; a tagged value's trailing newline waits until more text follows)."""

    __slots__ = ("escape", "hold_newline", "index", "parts", "pending")

    def __init__(self, parts: list[str], index: int, escape: bool, hold_newline: bool, pending: str) -> None:
        self.parts, self.index, self.escape, self.hold_newline, self.pending = parts, index, escape, hold_newline, pending

    def write(self, piece: str) -> list[Delta]:
        if self.hold_newline and (self.pending or piece[-1] in "\r\n"):
            raw = self.pending + piece
            self.pending = "\r\n" if raw.endswith("\r\n") else raw[-1] if raw[-1] in "\r\n" else ""
            piece = raw[: len(raw) - len(self.pending)]
            if not piece:
                return []
        if self.escape:
            piece = _encode_string(piece)[1:-1]
        self.parts.append(piece)
        return [arguments_delta(self.index, piece)]


class _DropSink:
    """Text the message does not show (a harmony message to another recipient)."""

    __slots__ = ()

    def write(self, piece: str) -> list[Delta]:
        return []


_Sink = _TextSink | _ArgumentsSink | _DropSink


class _RestPath:
    """The field runs to the end of the output: every chunk extends it."""

    __slots__ = ("sink",)

    def __init__(self, sink: _Sink) -> None:
        self.sink = sink

    def extend(self, chunk: str) -> list[Delta] | None:
        return self.sink.write(chunk)


class _UntilPath:
    """The field runs until one of ``delimiters``: a chunk that completes one is
    structural; a possible delimiter start at the end is held back."""

    __slots__ = ("anchors", "delimiters", "first_chars", "hold", "sink", "tail", "window")

    def __init__(self, sink: _Sink, delimiters: tuple[str, ...], tail: str) -> None:
        self.sink, self.delimiters, self.tail = sink, delimiters, tail
        self.first_chars = frozenset(d[0] for d in delimiters)
        #: the delimiters' shared beginnings: a chunk holding none completes no delimiter
        self.anchors = delimiter_anchors(delimiters)
        #: a held-back start of a delimiter begins in the last ``window`` characters
        self.window = max(len(d) for d in delimiters) - 1 if delimiters else 0
        self.hold = held_back_of(delimiters)

    def extend(self, chunk: str) -> list[Delta] | None:
        if not self.tail and self.first_chars.isdisjoint(chunk):
            return self.sink.write(chunk)
        buf = self.tail + chunk
        for anchor in self.anchors:
            if anchor in buf:
                return None  # (perhaps a delimiter: a full parse decides)
        window = self.window
        hold = self.hold(buf) if window and not self.first_chars.isdisjoint(buf[-window:]) else 0
        self.tail = buf[len(buf) - hold :]
        return self.sink.write(buf[: len(buf) - hold]) if hold < len(buf) else []


class _JsonPath:
    """Raw JSON arguments: chunks extend them while the value stays open (short
    of the value's held texts, as an ``until`` of them: see ``peg.combinators.Json``)."""

    __slots__ = ("first_chars", "held", "sink", "tracker")

    def __init__(self, sink: _Sink, tracker: IncrementalJson, held: _UntilPath | None) -> None:
        self.sink, self.tracker, self.held = sink, tracker, held
        #: a chunk holding none of these, with nothing held back before it, is shown as it is
        #: (None: something is held back)
        self.first_chars: frozenset[str] | None = frozenset() if held is None else None if held.tail else held.first_chars

    def extend(self, chunk: str) -> list[Delta] | None:
        if self.tracker.feed(chunk) is not Status.NEED_MORE:
            return None
        first = self.first_chars
        if first is not None and first.isdisjoint(chunk):  # (the common case)
            return self.sink.write(chunk)
        held = self.held
        assert held is not None
        deltas = held.extend(chunk)
        self.first_chars = None if held.tail else held.first_chars
        return deltas


class _QuotedPath:
    """The inside of a Python-style string: only an unescaped closing quote is
    structural, and (in a call) a boundary at which an unclosed string would
    end; a possible start of one at the end waits.  Escapes are decoded as the
    mapper decodes them; one cut short at the end of a chunk waits for the next."""

    __slots__ = ("boundaries", "hold", "quotes", "run", "sink", "specials", "tail")

    def __init__(self, sink: _Sink, quotes: tuple[str, ...], boundaries: tuple[str, ...], tail: str) -> None:
        self.sink, self.quotes, self.boundaries, self.tail = sink, quotes, boundaries, tail
        self.specials = frozenset("\\").union(*quotes, *(b[0] for b in boundaries))
        self.hold = held_back_of(boundaries) if boundaries else None
        run = escaped_run(quotes, "\\")
        assert run is not None  # (the quotes are single characters)
        #: a run with no unescaped quote, as ``until`` scans one
        self.run = run

    def extend(self, chunk: str) -> list[Delta] | None:
        if not self.tail and self.specials.isdisjoint(chunk):
            return self.sink.write(chunk)
        buf = self.tail + chunk
        i, n = 0, len(buf)
        while (i := self.run.match(buf, i).end()) < n:  # type: ignore[union-attr]
            if buf[i] in self.quotes:
                return None
            i += 2  # an escape the run stops at (before a newline): what it escapes is no quote
        held = 0
        if self.hold is not None:
            if any(b in buf for b in self.boundaries):
                return None  # (perhaps where an unclosed string ends: a full parse decides)
            held = self.hold(buf)
        decoded, used = decode_escapes(buf[: n - held], final=False)
        self.tail = buf[used:]
        return self.sink.write(decoded) if decoded else []


_Path = _RestPath | _UntilPath | _JsonPath | _QuotedPath


def _held_back(path: _Path) -> int:
    """How many of the characters a fast path carried it holds back, not shown
    (the possible start of a delimiter, an escape cut short)."""
    if isinstance(path, (_UntilPath, _QuotedPath)):
        return len(path.tail)
    if isinstance(path, _JsonPath) and path.held is not None:
        return len(path.held.tail)
    return 0


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
    def of(cls, message: Message) -> _Accumulated:
        acc = cls([message.content], [message.reasoning_content or ""])
        acc.calls = [(c.name, c.id, [c.arguments]) for c in message.tool_calls]
        return acc


class StreamParser:
    """Feeds output chunks through a generated parser (see the module docstring)."""

    def __init__(self, generated: Generated, show_open_arguments: bool = False):
        """``show_open_arguments``: show a call whose arguments are read whole
        (JSON, Python, a harmony message) while they are written, as the
        reference does, instead of once they close; a stream may then show a
        call whose arguments turn out not to read (and keeps what it showed)."""
        self.generated = generated
        #: calls with arguments read whole wait until these close (see __init__)
        self.holds_open_arguments = not show_open_arguments
        self._chunks: list[str] = [generated.generation_prompt]  #: the text parsed last, then the chunks since
        self._acc = _Accumulated()
        self._path: _Path | None = None
        self._failed = False
        self._parsed_length = len(generated.generation_prompt)  #: length of the text parsed last
        self._length = self._parsed_length  #: kept up to date off the fast path only
        self._stuck = 0  #: full parses in a row whose fast path (if any) carried little text
        self._fast_run = 0  #: characters the fast path carried since the last full parse
        self._backlog = 0  #: characters fed since the last full parse, off the fast path
        self._work = 0  #: characters read by full parses so far
        #: length of the text (prompt and output) whose reading the stream shows
        self._shown_length = self._parsed_length
        self.full_parses = 0  #: how many times the whole text was parsed (for benchmarks and tests)
        #: what earlier full parses found that a longer text keeps: the delimiters
        #: their untils found, the decodings of their complete values
        self._found: dict[tuple[int, int], int] = {}
        self._decoded: Decoded = {}
        self.warning = ""

    # -- public ---------------------------------------------------------------------

    def feed(self, chunk: str) -> list[Delta]:
        """Add ``chunk`` of model output; return the deltas it produces."""
        if not chunk:
            return []
        chunks = self._chunks
        chunks.append(chunk)
        path = self._path
        if path is not None:
            deltas = path.extend(chunk)
            if deltas is not None:
                return deltas  # (what the stream shows grows with the chunks: see _shown_length)
            self._path = None  # the parse changes here: only a full parse can go on
            # the path carried every chunk since the last full parse but this one
            self._fast_run = sum(map(len, chunks)) - self._parsed_length - len(chunk)
            self._length = self._parsed_length + self._fast_run
            self._shown_length = self._length - _held_back(path)  # (what it held back was not shown)
        if self._failed:
            return []
        self._length += len(chunk)
        self._backlog += len(chunk)
        if self._backlog < self._patience():
            return []
        return self._full_parse()

    def _patience(self) -> int:
        """Characters to wait for before the next full parse.  Normally none; when
        long output keeps needing full parses (hostile or degenerate text such as
        thousands of half-written markers, where no fast path lasts), the wait
        doubles each time, so the total work stays O(n log n) and deltas arrive
        later instead.  It starts once full parses have read more than
        :data:`_WORK_PER_CHAR` characters per character of output, past
        :data:`_PATIENT_FROM` characters (short outputs and normal ones never wait)."""
        if self._stuck <= 3 or self._length < _PATIENT_FROM:
            return 0
        if self._work < _WORK_PER_CHAR * self._length + _WORK_SLACK:
            return 0
        return min(16 << (self._stuck - 3), self._length // 2)

    def finish(self) -> tuple[list[Delta], ParseOutcome]:
        """The output is complete: the last deltas and the final parse outcome.

        A stream never takes a delta back.  When the whole output reads in a way
        that does not extend what the stream showed (it breaks the format
        where a stream showed less or otherwise than what reads before the
        break; or marker text read
        one way while it was written and another once complete), the stream's
        final message keeps what it showed (grown to the whole output's reading
        as an unfinished beginning, when that extends it) and adds the rest of
        the output, as written, to the content; the outcome is then not ``ok``
        and its warning says why."""
        text = "".join(self._chunks)
        if self._path is not None:  # a fast path carried (and showed, but what it holds back) every chunk since the last full parse
            self._shown_length = len(text) - _held_back(self._path)
        output = text[len(self.generated.generation_prompt) :]
        outcome = self.generated.parse(output)
        if not outcome.ok:
            self.warning = outcome.warning
        shown = self._acc.message()
        try:  # (a block kept as text, reported, still extends what was shown)
            deltas = message_deltas(shown, outcome.message)
        except NotAnExtension as exc:
            kept = self._kept_final(output, shown)
            deltas = message_deltas(shown, kept)
            why = outcome.warning if not outcome.ok else f"the whole output reads otherwise ({exc})"
            self.warning = f"{why}; the stream keeps what it showed and ends with the rest of the output as content"
            outcome = replace(outcome, message=kept, ok=False, warning=self.warning, need_more=False)
        self._acc = _Accumulated.of(outcome.message)
        self._path = None
        return deltas, outcome

    def _kept_final(self, output: str, shown: Message) -> Message:
        """What the stream showed (grown to the whole output's reading as an
        unfinished beginning, when that extends it), plus the rest of the output
        as content (see :meth:`finish`)."""
        generated = self.generated
        prompt = len(generated.generation_prompt)
        # the whole output read as a beginning (it may extend what was shown),
        # else the reading the stream showed last (chunks a fast path carried included)
        readings = (
            generated.parse_text(output, partial=True),
            generated.parse_text(output[: self._shown_length - prompt], partial=True),
        )
        for result in readings:
            if result.status is Status.FAILURE:
                continue
            read = map_result(result, generated.keeps_reasoning_in_content, generated.hooks, final=True)
            try:
                message_deltas(shown, read)
            except NotAnExtension:
                continue
            return with_rest(read, output[unshown_from(result, generated.hooks, prompt) - prompt :])
        return with_rest(shown, output[max(self._shown_length - prompt, 0) :])

    def message(self) -> Message:
        """The message streamed so far."""
        return self._acc.message()

    # -- full parse -------------------------------------------------------------------

    def _full_parse(self) -> list[Delta]:
        text = "".join(self._chunks)
        self._chunks = [text]
        self._parsed_length = self._length = len(text)
        self._backlog = 0
        self._stuck = 0 if self._fast_run >= _PRODUCTIVE_RUN else self._stuck + 1
        self._fast_run = 0
        self.full_parses += 1
        self._work += len(text)
        result = parse(self.generated.built.parser, text, partial=True, found=self._found)
        if result.status is Status.FAILURE:
            self._failed = True  # no continuation can fit: the final parse reports it
            return []
        generated = self.generated
        if self.holds_open_arguments:
            message, holds_call = map_streamed(result, generated.keeps_reasoning_in_content, generated.hooks, self._decoded)
        else:
            message, holds_call = map_result(result, generated.keeps_reasoning_in_content, generated.hooks, decoded=self._decoded), False
        broken = False
        if result.status is Status.NEED_MORE and any(m in message.content for m in generated.call_markers):
            # a call block that broke, read as text: the calls before the break
            # are calls, as the whole output's parse reads them
            output = text[len(generated.generation_prompt) :]
            before = generated.calls_before_a_break(output, result, message)
            if before is not None:
                message, broken = before.message, True
        held = held_whole = False
        if result.status is Status.NEED_MORE and not broken:
            shown, held = hold_open_reasoning(result, message, self.generated.built.trigger)
            # a whole marker waits for the block's end; a part of one, for the next chunk
            held_whole = held and self.generated.built.trigger in (message.reasoning_content or "")
            message = shown
        try:
            deltas = message_deltas(self._acc.message(), message)
        except NotAnExtension as exc:
            # this reading takes back something shown: show nothing more until a
            # reading extends what was shown again (a client never loses a delta)
            self.warning = str(exc)
            self._path = None
            return []
        self._acc = _Accumulated.of(message)
        self._shown_length = len(text)
        if result.status is not Status.NEED_MORE or broken:
            self._path = None
        elif held:  # the shown reasoning waits
            self._path = self._plan_held(result) if held_whole else None
        else:
            self._path = self._plan(result, holds_call)
        return deltas

    def _plan_held(self, result: ParseResult) -> _Path | None:
        """While open reasoning holds a call marker: chunks show nothing until the
        reasoning's own delimiter (its end marker) comes, which needs a full parse."""
        if result.frontier is None or not isinstance(result.frontier[0], Until):
            return None
        trigger = self.generated.built.trigger
        node = result.frontier[0]
        delimiters = tuple(d for d in node.delimiters + node.stops if d != trigger)
        if not delimiters:
            return None
        return _UntilPath(_DropSink(), delimiters, result.text[result.end :])

    def _plan(self, result: ParseResult, holds_call: bool = False) -> _Path | None:
        """The fast path for the chunks after this parse, if the frontier is a
        growing field (``holds_call``: the message holds a call, and what
        follows it: the path carries the chunks and shows nothing)."""
        if self.generated.keeps_reasoning_in_content or result.frontier is None:
            return None
        node, start = result.frontier
        tag, call, field_name = _frontier_tag(result.tree, result.end, self.generated.hooks)
        if tag is None or start < tag.start or start >= len(result.text):
            # (a frontier that starts at the very end may still move: a space()
            # before it would swallow leading whitespace of the next chunk)
            return None
        sink = _DropSink() if holds_call else self._sink(tag, call, field_name, result)
        if sink is None:
            return None
        text = result.text
        if isinstance(node, Until):
            if field_name == "escaped" and (node.escape == "\\" or "\\" in node.delimiters):  # a Python string
                quotes = tuple(d for d in node.delimiters if len(d) == 1 and d != "\\")
                return _QuotedPath(sink, quotes, tuple(d for d in node.delimiters if len(d) > 1) + node.held, text[result.end :])
            # a stop completed may end the text, a held text may end it otherwise: a full parse decides
            delimiters = node.delimiters + node.stops + node.held + node.repairs
            trigger = self.generated.built.trigger
            if field_name == REASONING and trigger and trigger not in delimiters:
                delimiters = (*delimiters, trigger)  # a call marker in open reasoning needs a full parse
            return _UntilPath(sink, delimiters, text[result.end :])
        if isinstance(node, Rest):
            return _UntilPath(sink, node.stops, text[result.end :]) if node.stops else _RestPath(sink)
        if isinstance(node, Json) and field_name in (TOOL_ARGS, CONTENT):  # raw arguments, a json_schema reply
            tracker = IncrementalJson()
            if tracker.feed(text[start:]) is not Status.NEED_MORE:
                return None
            return _JsonPath(sink, tracker, _UntilPath(sink, node.held, text[result.end :]) if node.held else None)
        return None

    def _call_shown(self, call: TagNode) -> bool:
        """Whether the message shows ``call`` yet: once its name is complete."""
        hooks = self.generated.hooks
        if call.name in hooks.message_tags:
            route = hooks.route(call, False)
            return route.field == TOOL_ARGS and route.name_complete
        names = call.find(TOOL_NAME)
        return bool(names) and names[0].complete

    def _sink(self, tag: TagNode, call: TagNode | None, field_name: str, result: ParseResult) -> _Sink | None:
        """Where the growing field's text goes, or None while it is not shown yet."""
        acc = self._acc
        if field_name in (REASONING, CONTENT):
            parts = acc.reasoning if field_name == REASONING else acc.content
            if not any(parts):
                return None  # leading whitespace is still being dropped
            # what waits: the field's trailing whitespace up to where the parse
            # read, the end of an earlier piece of it included (text after a call)
            read = tag.text[: max(result.end - tag.start, 0)]
            if not read.strip():
                read = "".join(n.text for n in result.find(tag.name) if n.end <= tag.start) + read
            pending = read[len(read.rstrip(_WS)) :]
            return _TextSink(parts, reasoning_delta if field_name == REASONING else content_delta, pending)
        if field_name == DROP or (field_name == TOOL_ARGS and self.holds_open_arguments):
            return _DropSink()  # (raw arguments held: the call shows once they close, as the mapper holds it)
        if call is None or not self._call_shown(call) or not acc.calls:
            return None  # the call is not shown yet: its arguments wait for the name
        parts, index = acc.calls[-1][2], len(acc.calls) - 1
        if field_name == TOOL_ARGS:
            if not tag.text.strip():
                return None  # leading whitespace of raw arguments is still being dropped
            return _ArgumentsSink(parts, index, escape=False, hold_newline=False, pending="")
        if field_name == "escaped":
            return _ArgumentsSink(parts, index, escape=True, hold_newline=False, pending="")
        raw = tag.text  # a tagged string value
        if raw in ("", "\n", "\r", "\r\n"):
            return None  # the leading newline is not decided yet
        pending = "\r\n" if raw.endswith("\r\n") else raw[-1] if raw[-1] in "\r\n" else ""
        return _ArgumentsSink(parts, index, escape=True, hold_newline=True, pending=pending)


def stream_output(
    generated: Generated, output: str, chunk_size: int, show_open_arguments: bool = False
) -> tuple[list[Delta], ParseOutcome, StreamParser]:
    """Feed ``output`` in chunks of ``chunk_size`` characters; all deltas, the final outcome, the parser."""
    parser = StreamParser(generated, show_open_arguments)
    deltas: list[Delta] = []
    for i in range(0, len(output), max(chunk_size, 1)):
        deltas.extend(parser.feed(output[i : i + chunk_size]))
    final, outcome = parser.finish()
    deltas.extend(final)
    return deltas, outcome, parser
