"""The pieces every format's parser is built from: markers with their
whitespace, text runs up to a delimiter, the output's ending, values read by
type, and argument sets as a grammar can say them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from analysis.messages import tags
from analysis.messages.pyliteral import python_value
from analysis.messages.tags import (
    TOOL_ARG_ENCODED,
    TOOL_ARG_JSON,
    TOOL_ARG_PY,
    TOOL_ARG_RAW,
    TOOL_ARG_TYPED,
)
from analysis.parsers.request import ChatRequest
from analysis.parsers.schemas import takes_structure
from analysis.phases.result import (
    TemplateAnalysis,
    ToolFormatAnalysis,
)
from analysis.probing.markers import MARKUP_CHARS, strip_ws
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser
from peg.text import WS as _WS


def marker(text: str, for_grammar: bool = False) -> Parser:
    """A template marker with flexible whitespace on both sides:
    ``"\\n</think>\\n\\n"`` reads as space, ``</think>``, space.  ``for_grammar`` (the
    grammar): whitespace only where the template writes some."""
    core = strip_ws(text)
    if not core:
        return p.space() if text else p.eps()
    if for_grammar:
        return p.seq(
            *([p.space()] if text[0] in _WS else []), p.literal(core), *([p.space()] if text[-1] in _WS else [])
        )
    # models put whitespace around markers that the template writes without it
    # ("[TOOL_CALLS] name"): it is read on both sides.  (Before a string value
    # the last marker is read by exact_marker, which leaves the value's whitespace.)
    return p.space() + with_attributes(core) + p.space()


#: an attribute a model adds to a tag the template closes after one of its own
#: (MiniMax's <invoke name="f" description="…">, <parameter name="x" type="string">)
_ATTRIBUTE = p.chars("[ \t]", 1, UNBOUNDED) + p.chars("[A-Za-z_][A-Za-z0-9_.:-]", 1, UNBOUNDED) + p.literal('="') + p.until('"') + p.literal('"')


def with_attributes(core: str) -> Parser:
    """``core``; where it closes a tag after an attribute's value (``">``), any
    attributes a model adds before the ``>`` too (parsing only)."""
    if not core.startswith('">'):
        return p.literal(core)
    return p.literal('"') + p.zero_or_more(_ATTRIBUTE) + p.literal(core[1:])


def turn_end_markers(analysis: TemplateAnalysis) -> tuple[str, ...]:
    """The template's end-of-turn markers that mean nothing else in its format
    (a marker the calls or reasoning also use is not dropped as a stop)."""
    used = [strip_ws(v) for v in analysis.marker_fields().values()]
    # (an end marker that goes on after it, HyperCLOVA X's reasoning end "<|im_end|>\n<|im_start|>assistant"
    # before the reply's own header or its section end "<|im_end|><|stop|>", does not end the output
    # with it alone: there the marker is the turn's end)
    fmt = analysis.tools.format
    ends = {strip_ws(e) for e in (analysis.reasoning.end, fmt.section_end, fmt.per_call_end)} - {""}
    return tuple(m for m in analysis.turn_end if m and not any(m in u and not (u in ends and u.startswith(m) and u != m) for u in used))


def ending(stops: Sequence[str]) -> Parser:
    """The end of the output: whitespace and any of the turn's end markers
    (``<|im_end|>``: engines that keep special tokens pass them through)."""
    if not stops:
        return p.space() + p.end()
    return p.zero_or_more(p.space() + p.choice(*(p.literal(s) for s in stops))) + p.space() + p.end()


def text_until(
    delimiters: Sequence[str], stops: Sequence[str], tag: Callable[[Parser], Parser] = tags.content, then: Parser | None = None
) -> Parser:
    """Content (or what ``tag`` captures) up to one of ``delimiters``; where none
    follows, up to the end-of-turn ``stops`` that end the output (one followed by
    more text stays text).  Given ``then``, up to the first delimiter from which
    ``then`` reads (a marker quoted in prose is prose): on partial input, one
    from which it may still read ends the text for now (a call is shown as it
    is written)."""
    if delimiters:
        return tag(p.until(*delimiters, stops=tuple(stops), then=then, tentative=then is not None))
    return tag(p.rest(tuple(stops)))


def text_then(starts: Sequence[str], rest: Parser, stops: Sequence[str] = (), for_grammar: bool = False) -> Parser:
    """Text up to the first of ``starts`` (the markers that open calls) from
    which ``rest`` (the calls and what follows them, to the output's end)
    reads, then ``rest``: a marker quoted in prose, or a call that does not
    read, is text.  ``for_grammar``: up to the first of them (a grammar
    cannot look ahead)."""
    if for_grammar:
        return tags.content(p.until(*starts, stops=tuple(stops))) + rest
    rule = p.rule("calls-to-end", rest)
    return text_until(starts, stops, then=rule) + rule


def text_to_end(stops: Sequence[str]) -> Parser:
    """Content to the end of the output, less the end-of-turn markers it ends with."""
    return text_until((), stops) + ending(stops)


def whole_reading_first(delimiters: Sequence[str], whole: Parser, local: Parser, wrap: Callable[[Parser], Parser] = lambda x: x) -> Parser:
    """A text (captured by ``wrap``) that ends at the first of ``delimiters``
    from which ``whole`` reads (the rest of the output in the format's form, as
    far as it decides); only where none does, ``local``, as the format read it
    before: a value quoting every closer after it, ``'</parameter></invoke>'``,
    is its text where the output goes on past the quote in no other form."""
    ends = p.peek(p.choice(*(p.literal(d) for d in delimiters)))
    return p.choice(wrap(p.until(*delimiters, then=whole)) + ends, local)


def output_end_markers(analysis: TemplateAnalysis) -> tuple[str, ...]:
    """The markers that end the output after the calls: the turn's end
    markers, even one the format also uses (GigaChat 3 begins its call turn
    with ``<|message_sep|>``)."""
    return tuple(dict.fromkeys((*turn_end_markers(analysis), *(m for m in map(strip_ws, analysis.turn_end) if m))))


def output_end(analysis: TemplateAnalysis) -> Parser:
    """The end of the output after the calls, exactly: whitespace and the turn's end markers."""
    return ending(output_end_markers(analysis))


def followed_by(texts: Sequence[str], space: bool = True) -> Parser:
    """A look-ahead: one of ``texts`` comes next (after whitespace, with ``space``)."""
    ahead = p.choice(*(p.literal(t) for t in dict.fromkeys(texts) if t))
    return p.peek(p.space() + ahead if space else ahead)


def call_closers(fmt: ToolFormatAnalysis) -> list[str]:
    """The markers that close a call or its section (``</tool_call>``), as written."""
    return [c for c in dict.fromkeys((strip_ws(fmt.per_call_end), strip_ws(fmt.section_end))) if c]


def tool_name(name: str, for_grammar: bool, chars: str, follow: Parser) -> Parser:
    """A call's function name: ``name``, or ("") any name of ``chars`` (a tool
    not in the request: the call is kept, the schema check reports it).  When
    parsing, the name is complete (a stream shows it) once ``follow`` confirms
    it ("get_weather" is no name in "get_weather_v2")."""
    spelled = p.literal(name) if name else p.chars(chars, 1, UNBOUNDED)
    return tags.tool_name(spelled if for_grammar else spelled + p.peek(follow))


def exact_marker(text: str, for_grammar: bool = False) -> Parser:
    """A marker before a string value: its text without the whitespace after it
    (the value keeps its own leading newline; the mapper trims one).
    Parsing (not ``for_grammar``): with the attributes a model adds to a tag."""
    core = text.rstrip(_WS)
    lead = p.space() if core != core.lstrip(_WS) else p.eps()
    if not core.strip(_WS):
        return p.eps()
    return lead + (with_attributes(core.lstrip(_WS)) if not for_grammar else p.literal(core.lstrip(_WS)))


def markup(text: str) -> bool:
    """Whether ``text`` is markup, not a word a model may write in prose."""
    return not MARKUP_CHARS.isdisjoint(text)


def typed_value(schema: Any, rule: str, end: Parser, text: Parser | None = None, own: Sequence[Parser] = ()) -> Parser:
    """The one coercion rule for a value read by type, in every format that
    writes values between markers (generic tagged arguments, DSML/GCML, Kimi
    K3, Gemma 4): the first reading that fills the value's place up to
    ``end``: a format's ``own`` spellings (each a capture), an object or array
    escaped as a JSON string (for a schema that takes one: GLM's
    ``"{\"a\": 1}"``), JSON, a Python literal (a template that writes
    {{ value }} renders [True, None, 'a']); else ``text``, the value as written
    (a string the schema check reports), when given.  The whole is one
    TOOL_ARG_TYPED capture: a stream shows the value once it is decided."""
    json_schema = schema if isinstance(schema, Mapping) else {}
    # (each capture holds the end's lookahead: a value is complete, and shown, once it is decided)
    readings = [item + p.space() + end for item in own]
    if takes_structure(json_schema):
        readings.append(p.tag(TOOL_ARG_ENCODED, p.peek(p.literal('"')) + p.json_value() + p.space() + end))
    readings.append(p.tag(TOOL_ARG_JSON, p.schema(p.json_value(), rule, json_schema) + p.space() + end))
    readings.append(p.tag(TOOL_ARG_PY, python_value() + p.space() + end))
    if text is not None:
        readings.append(text + end)
    return p.tag(TOOL_ARG_TYPED, p.choice(*readings))


def quoted_to_next_argument(
    quote: str, boundaries: Sequence[str], end: Parser, inside: Callable[[Parser], Parser] = lambda x: x, escape: str = "", whole: Parser | None = None
) -> Parser:
    """A string in ``quote`` (its inside wrapped by ``inside``), followed by
    ``end``, in a format that writes values between separators (Gemma 4,
    pythonic calls).  It ends at the first quote followed by ``end`` (exact
    reading: a quote a template wrote inside the value unescaped, Llama 4's
    ``city="Paris "Île""``, is the value's text); one whose closing quote is
    left out ends before the first of ``boundaries`` (the next argument's
    name, the call's end).  On partial input, a string is shown short of
    those boundaries until it closes.  Given ``whole`` (what reads after the
    closing quote where the rest of the output fits the format), the first
    quote from which it reads ends the string first."""
    closing = p.literal(quote) + end
    closed = p.literal(quote) + inside(p.until(quote, held=boundaries, escape=escape, then=closing)) + closing
    if whole is not None:  # the whole output's reading first (see whole_reading_first)
        to_end = p.literal(quote) + whole
        closed = p.choice(p.literal(quote) + inside(p.until(quote, held=boundaries, escape=escape, then=to_end)) + closing, closed)
    if not boundaries:
        return closed
    unclosed = p.literal(quote) + inside(p.until(quote, *boundaries, escape=escape)) + followed_by(boundaries, space=False)
    return p.choice(closed, unclosed)


def text_to_next_argument(boundaries: Sequence[str], chars: str) -> Parser:
    """A value as written (a ``TOOL_ARG_RAW`` capture: the text a value that
    fits no reading keeps, for :func:`typed_value`), in a format that writes
    values bare between separators (Gemma 4, pythonic calls): up to the first
    of ``boundaries`` (the next argument's name, the call's end), so a broken
    ``[1,`` or ``{x}`` ends where the next argument starts; where none follows,
    a run of ``chars`` (no separator)."""
    boundaries = [b for b in boundaries if b]
    run = p.chars(chars, 1, UNBOUNDED)
    if not boundaries:
        return p.tag(TOOL_ARG_RAW, run)
    to_next = p.until(*boundaries) + followed_by(boundaries, space=False)
    return p.tag(TOOL_ARG_RAW, p.choice(to_next, run))


#: How many arguments are spelled out in every order (n! alternatives); past it,
#: required arguments go in the schema's order and optional ones in any order.
_MAX_PERMUTED = 3


NAME_CHARS = "[A-Za-z0-9_.-]"
#: a character of a word (a recipient's, a channel's)
WORD_CHARS = "[A-Za-z0-9_]"


def word_end() -> Parser:
    """Where a word ends: no word character follows (``all`` does not begin ``allall``)."""
    return p.negate(p.chars(WORD_CHARS))


def argument_set(required: list[Parser], optional: list[Parser], extra: Parser | None) -> Parser:
    """Every required argument once and each optional one at most once, as a
    grammar can say it: all orders of the required ones (up to
    :data:`_MAX_PERMUTED`, else the schema's order), then the optional ones in
    any order, each at most once (up to :data:`_MAX_PERMUTED`, else any number
    of them), then any number of ``extra`` (unknown names) when allowed."""
    from itertools import permutations

    if not required:
        head = p.eps()
    elif len(required) <= _MAX_PERMUTED:
        head = p.choice(*(p.seq(*order) for order in permutations(required)))
    else:
        head = p.seq(*required)
    if not optional:
        tail = p.eps()
    elif len(optional) <= _MAX_PERMUTED:
        # any ordered selection of the optional arguments, longest first
        selections = [order for k in range(len(optional), 0, -1) for order in permutations(optional, k)]
        tail = p.optional(p.choice(*(p.seq(*order) for order in selections)))
    else:
        tail = p.zero_or_more(p.choice(*optional))
    more = p.zero_or_more(extra) if extra is not None else p.eps()
    return head + tail + more


def repeated_calls(one: Parser, request: ChatRequest, for_grammar: bool = False) -> Parser:
    """Calls: when parsing, one or more (a model that writes a second call while
    ``parallel_tool_calls`` is off still wrote it: every format reads it, and
    parse's hint says so); for the grammar (``for_grammar``), several only when the
    request allows parallel tool calls."""
    return p.one_or_more(one) if request.parallel_tool_calls or not for_grammar else one
