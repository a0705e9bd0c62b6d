"""From an analysis and a request to a PEG parser over ``generation prompt + output``.

The parser is the spec's composition: a literal for the generation prompt's
boilerplate, the reasoning parser, then content and tool calls by format.
Captures (tags) name what the mapper reads:

``reasoning``, ``reasoning-block`` (with its markers), ``content``, ``tool``
(one call) holding ``tool-name``, ``tool-id``, and either ``tool-args`` (JSON
text) or ``tool-arg`` items (``tool-arg-name`` plus ``tool-arg-string`` or
``tool-arg-json``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any, Protocol

from analysis.messages import tags
from analysis.messages.pyliteral import python_value
from analysis.messages.tags import (
    REASONING_UNOPENED,
    TOOL_ARG,
    TOOL_ARG_ENCODED,
    TOOL_ARG_JSON,
    TOOL_ARG_NAME,
    TOOL_ARG_PY,
    TOOL_ARG_RAW,
    TOOL_ARG_STRING,
    TOOL_ARG_TYPED,
    TOOL_ARGS_UNREAD,
)
from analysis.parsers.request import ChatRequest, ReasoningFormat, ToolChoice
from analysis.phases.result import (
    ArgumentsAnalysis,
    CallIdPosition,
    ContentMode,
    PrefillOutcome,
    ReasoningMode,
    TemplateAnalysis,
    ToolFormat,
    ToolFormatAnalysis,
)
from analysis.probing.markers import MARKER_RE, MARKUP_CHARS, strip_ws
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser
from peg.text import WS as _WS


@dataclass(frozen=True)
class BuiltParser:
    """The parser, its pieces for the grammar, and how the generation prompt is read."""

    parser: Parser  #: over generation prompt + output
    boilerplate: str  #: the generation prompt's leading literal
    body: Parser  #: what follows the boilerplate
    tool_calls: Parser | None  #: the calls part (the lazy grammar's root)
    trigger: str  #: the marker that starts tool calls ("" when none)
    extracts_reasoning: bool
    #: the parser without the all-content fallback (to explain a broken call);
    #: ("strict" means one thing: the form the grammar takes, ``for_grammar``)
    without_fallback: Parser | None = None
    #: the same built for the grammar, where it constrains more than the parser reads
    grammar_source: BuiltParser | None = None
    #: regexes that switch the lazy grammar on from their first group (instead
    #: of the ``trigger`` word), as llama.cpp's pattern triggers
    trigger_patterns: tuple[str, ...] = ()


def marker(text: str, strict: bool = False) -> Parser:
    """A template marker with flexible whitespace on both sides:
    ``"\\n</think>\\n\\n"`` reads as space, ``</think>``, space.  ``strict`` (the
    grammar): whitespace only where the template writes some."""
    core = strip_ws(text)
    if not core:
        return p.space() if text else p.eps()
    if strict:
        return p.seq(
            *([p.space()] if text[0] in _WS else []), p.literal(core), *([p.space()] if text[-1] in _WS else [])
        )
    # models put whitespace around markers that the template writes without it
    # ("[TOOL_CALLS] name"): it is read on both sides.  (Before a string value
    # the last marker is read by _exact, which leaves the value's whitespace.)
    return p.space() + _with_attributes(core) + p.space()


#: an attribute a model adds to a tag the template closes after one of its own
#: (MiniMax's <invoke name="f" description="…">, <parameter name="x" type="string">)
_ATTRIBUTE = p.chars("[ \t]", 1, UNBOUNDED) + p.chars("[A-Za-z_][A-Za-z0-9_.:-]", 1, UNBOUNDED) + p.literal('="') + p.until('"') + p.literal('"')


def _with_attributes(core: str) -> Parser:
    """``core``; where it closes a tag after an attribute's value (``">``), any
    attributes a model adds before the ``>`` too (parsing only)."""
    if not core.startswith('">'):
        return p.literal(core)
    return p.literal('"') + p.zero_or_more(_ATTRIBUTE) + p.literal(core[1:])


def _tool_functions(tools: Sequence[Mapping[str, Any]] | None) -> list[Mapping[str, Any]]:
    out = []
    for tool in tools or ():
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            out.append(function)
    return out


def _parameters(function: Mapping[str, Any]) -> Mapping[str, Any]:
    params = function.get("parameters")
    return params if isinstance(params, Mapping) else {"type": "object"}


def _is_string_schema(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return True
    if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return True
    return any(_is_string_schema(s) for s in schema.get("anyOf", []) or schema.get("oneOf", []) or [])


def _args_schema_parser(function: Mapping[str, Any], held: Sequence[str] = ()) -> Parser:
    return p.schema(p.json_value(held), f"{function['name']}-args", _parameters(function))


def json_arguments(
    function: Mapping[str, Any],
    follows: Sequence[str] = (),
    strict: bool = False,
    closes: tuple[Parser, Sequence[str]] | None = None,
) -> Parser:
    """A call's JSON arguments.  Given ``follows`` (parsing: the texts that can
    only come after the arguments, such as ``}\n</tool_call>``), arguments that
    are not JSON (``{"days": 007}``) but are followed by one of them are kept as
    written: the call stays a call (its arguments reported by the schema
    check).  Given ``closes`` instead (a call that no marker ends: Llama 3's
    ``{"name": …}}``, then the output's end), such arguments end at the brace
    after which only its parser comes (its texts: the closing braces and an
    end-of-turn marker).  Where neither comes, the output was cut short or the
    call broke.  A stream shows arguments being written short of where such a
    reading would end them, so it never shows what the whole output reads
    otherwise."""
    if strict:  # (the grammar: JSON of the schema)
        return tags.tool_args(_args_schema_parser(function))
    follows = [f for f in follows if f]
    # an object's text, to its last brace before what follows (whitespace after it is not arguments)
    ends = ["}" + gap + f for f in follows for gap in ("", "\n", " ", "\n\n")]
    if closes is not None:
        ends += ["}" + gap + text for text in closes[1] for gap in ("", "\n", " ")]
    # an object whose closing brace is left out ends before a marker that ends the call
    markers = [f for f in follows if _markup(f) and f[0] not in "},"]
    unclosed_ends = [gap + f for f in markers for gap in ("\n", " ", "")]
    parsed = _args_schema_parser(function, ends + unclosed_ends)
    # a template that writes {{ arguments }} renders a dict in Python's spelling: {'city': 'Paris'}
    # (only that: arguments that open as JSON, {", are never reread as Python, as a stream showed them)
    python = p.peek(p.literal("{") + p.space() + p.literal("'")) + p.tag(TOOL_ARG_PY, python_value())
    options = [parsed, python]
    # (arguments that are not JSON, kept as written: TOOL_ARGS_UNREAD tells the
    # mapper that a finished parse keeps them as text, never as a call)
    if follows:
        # to the first place where the call may end: after a brace, or (left out) before a marker
        closed = p.literal("}") + followed_by(follows)
        call_end = p.choice(closed, followed_by(markers)) if markers else closed
        options.append(p.tag(TOOL_ARGS_UNREAD, p.peek(p.literal("{")) + p.until(*ends, *unclosed_ends) + call_end))
    elif closes is not None:
        piece = p.until("}") + p.literal("}")
        end = closes[0]
        options.append(p.tag(TOOL_ARGS_UNREAD, p.peek(p.literal("{")) + p.zero_or_more(piece + p.negate(end)) + piece + p.peek(end)))
    return tags.tool_args(p.choice(*options))


def boilerplate_and_reasoning_start(
    generation_prompt: str, continued_text: str, analysis: TemplateAnalysis, prefill: PrefillOutcome
) -> tuple[str, bool]:
    """The generation prompt's leading literal, and whether the reasoning start
    marker is cleared (delimiter-style reasoning).

    The literal stops before the reasoning start marker when the prompt holds
    one; an artifact start (boilerplate after it) is swallowed whole; a prompt
    that holds only the end marker (reasoning closed) is all boilerplate."""
    start, end = strip_ws(analysis.reasoning.start), strip_ws(analysis.reasoning.end)
    # a continued message's own text is output, not boilerplate
    prompt = generation_prompt[: len(generation_prompt) - len(continued_text)] if continued_text else generation_prompt
    if start and start in prompt:
        at = prompt.find(start)
        if prefill is PrefillOutcome.ARTIFACT:
            cut = at + len(start)
            while cut < len(prompt) and prompt[cut] in _WS:
                cut += 1
            return prompt[:cut], True
        return prompt[:at], False
    if end and end in prompt:
        cut = prompt.rfind(end) + len(end)
        while cut < len(prompt) and prompt[cut] in _WS:
            cut += 1
        return prompt[:cut], False
    return prompt, False


def _reasoning(
    analysis: TemplateAnalysis,
    cleared_start: bool,
    stops: tuple[str, ...] = (),
    turn_end: Sequence[str] = (),
    strict: bool = False,
    unopened: bool = False,
) -> Parser:
    """The reasoning block.  One cut off before its end marker (the output hit
    max_tokens while thinking) is reasoning too, up to the first of ``stops``
    (a tool-call marker: a call written inside an unclosed block is a call) or
    the ``turn_end`` markers that end the output.  Not ``strict`` (parsing): a
    repeated opener opens one block, an end marker written again at once is
    dropped, an end marker alone at the start closes an empty one, and, with ``unopened`` (thinking is on and the model writes the
    opener, the prompt none), text up to an end marker with no opener before
    it, and no call marker in it, is reasoning (``plan</think>answer``: an
    engine dropped the opener); it shows once the end marker comes, so a
    stream holds the text until then.  ``strict`` (the grammar): only a closed
    block."""
    r = analysis.reasoning
    start, end = strip_ws(r.start), strip_ws(r.end)
    if not end:
        return p.eps()
    body = text_until((end,), turn_end, tags.reasoning) + p.literal(end) + p.space()
    # (parsing) an end marker written again at once is dropped, not content ("</think></think>answer")
    repeated_ends = p.zero_or_more(p.literal(end) + p.space())
    open_text = text_until(stops, turn_end, tags.reasoning)
    if start and not cleared_start:
        # GLM's turn is "<|assistant|>\n<think>…": the model writes the newline first;
        # a model that repeats the opener the prompt wrote ("<think><think>") opens one block
        opener = p.space() + p.literal(start) + p.space()
        if strict:  # (the grammar: a constrained model closes its reasoning block)
            return p.optional(tags.reasoning_block(opener + body))
        opener = opener + p.zero_or_more(p.literal(start) + p.space())
        block = opener + body + repeated_ends
        unterminated = opener + open_text
        # an end marker alone at the start closes an empty block: no reasoning, and not content
        empty = p.space() + p.literal(end) + p.space() + repeated_ends
        blocks = [tags.reasoning_block(b) for b in (block, unterminated, empty)]
        if unopened:
            # (up to an end marker with no opener before it: text before a block
            # that opens mid-output is no reasoning)
            text = tags.reasoning(p.until(end, start, *stops)) + p.literal(end) + p.space() + repeated_ends
            blocks.append(p.tag(REASONING_UNOPENED, tags.reasoning_block(text)))
        return p.optional(p.choice(*blocks))
    if strict:
        return p.optional(tags.reasoning_block(body))
    return p.optional(p.choice(tags.reasoning_block(body + repeated_ends), tags.reasoning_block(open_text)))


def _content_until(
    analysis: TemplateAnalysis, trigger: str, *more: str, stops: Sequence[str] = (), then: Parser | None = None
) -> Parser:
    """Content before the tool calls (wrapped content markers are read, not kept),
    up to the trigger or any of ``more`` (or end-of-turn ``stops`` that end the
    output); given ``then`` (what must read from there: the calls and the rest
    of the output), up to the first of them from which it does."""
    c = analysis.content
    plain = text_until((trigger, *more), stops, then=then)
    if c.mode is not ContentMode.PLAIN and c.start and c.end:
        wrapped = p.literal(strip_ws(c.start)) + tags.content(p.until(strip_ws(c.end))) + p.literal(strip_ws(c.end)) + p.space()
        return p.choice(wrapped, plain)
    return plain


def turn_end_markers(analysis: TemplateAnalysis) -> tuple[str, ...]:
    """The template's end-of-turn markers that mean nothing else in its format
    (a marker the calls or reasoning also use is not dropped as a stop)."""
    used = [strip_ws(v) for v in analysis.marker_fields().values()]
    return tuple(m for m in analysis.turn_end if m and not any(m in u for u in used))


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


def _content_only(analysis: TemplateAnalysis, stops: Sequence[str] = ()) -> Parser:
    c = analysis.content
    everything = text_to_end(stops)
    if c.mode is ContentMode.PLAIN or not (c.start and c.end):
        return everything
    start, end = strip_ws(c.start), strip_ws(c.end)
    wrapped = (
        p.optional(tags.content(p.until(start)))
        + p.literal(start)
        + tags.content(p.until(end))
        + p.optional(p.literal(end))  # a reply cut off before its end marker is still the reply
        + ending(stops)
    )
    return p.choice(wrapped, everything)


def followed_by(texts: Sequence[str], space: bool = True) -> Parser:
    """A look-ahead: one of ``texts`` comes next (after whitespace, with ``space``)."""
    ahead = p.choice(*(p.literal(t) for t in dict.fromkeys(texts) if t))
    return p.peek(p.space() + ahead if space else ahead)


def call_closers(fmt: ToolFormatAnalysis) -> list[str]:
    """The markers that close a call or its section (``</tool_call>``), as written."""
    return [c for c in dict.fromkeys((strip_ws(fmt.per_call_end), strip_ws(fmt.section_end))) if c]


def stray_closers(analysis: TemplateAnalysis) -> Parser:
    """Closers a model repeats after its calls (``</tool_call></tool_call>``): dropped."""
    closers = call_closers(analysis.tools.format)
    if not closers:
        return p.eps()
    return p.zero_or_more(p.space() + p.choice(*(p.literal(c) for c in closers)))


# --- tool calls ---------------------------------------------------------------------


def _json_string_key(name: str) -> Parser:
    return p.literal('"' + name + '"') + p.space() + p.literal(":") + p.space()


#: The two spellings of a JSON call's arguments field (Llama 3 templates write
#: "parameters", its models often "arguments").
_ARGS_SPELLINGS = ("parameters", "arguments")
#: What Llama 3 models write before a call (the template writes it only for built-in tools).
_PYTHON_TAG = "<|python_tag|>"


def _json_native_call(analysis: TemplateAnalysis, function: Mapping[str, Any], strict: bool = False) -> Parser:
    fmt = analysis.tools.format
    name = _tool_name(function["name"], strict, _JSON_NAME_CHARS, _after_json_name(analysis))
    closes = None if strict else _closed_by_the_end(analysis, turn_end_markers(analysis))
    args = json_arguments(function, _after_json_arguments(analysis), strict, closes)
    if fmt.fun_name_is_key:
        return (
            p.literal("{")
            + p.space()
            + p.literal('"')
            + name
            + p.literal('"')
            + p.space()
            + p.literal(":")
            + p.space()
            + args
            + p.space()
            + p.literal("}")
        )
    members: dict[str, Parser] = {}
    nested_prefix = ""
    for field in (fmt.name_field, fmt.args_field, fmt.id_field, fmt.gen_id_field):
        if "." in field:
            nested_prefix = field.split(".", 1)[0]

    def key(f: str) -> str:
        return f.split(".", 1)[1] if nested_prefix and f.startswith(nested_prefix + ".") else f

    if fmt.name_field:
        members[fmt.name_field] = _json_string_key(key(fmt.name_field)) + p.literal('"') + name + p.literal('"')
    if fmt.args_field:
        spelled = key(fmt.args_field)
        if spelled in _ARGS_SPELLINGS and not strict:  # models write either
            members[fmt.args_field] = p.choice(*(_json_string_key(k) for k in _ARGS_SPELLINGS)) + args
        else:
            members[fmt.args_field] = _json_string_key(spelled) + args
    for id_field in (fmt.id_field, fmt.gen_id_field):
        if id_field:
            members[id_field] = _json_string_key(key(id_field)) + p.literal('"') + tags.tool_id(p.until('"')) + p.literal('"')
    order = _member_order(fmt)
    parts: list[Parser] = []
    for i, field in enumerate(order):
        member = members[field]
        sep = p.space() + p.literal(",") + p.space() if i else p.eps()
        is_id = field in (fmt.id_field, fmt.gen_id_field)
        parts.append(p.optional(sep + member) if is_id else sep + member)
    body = p.literal("{") + p.space() + p.seq(*parts) + p.space() + p.literal("}")
    if nested_prefix:
        body = p.literal("{") + p.space() + _json_string_key(nested_prefix) + body + p.space() + p.literal("}")
    elif not strict and fmt.name_field and fmt.args_field and not bare_json_call_starts(analysis):
        # (parsing) the members in another order, or with others around them
        # ({"arguments": …, "name": …}, {"id": …, "name": …}): JSON, read as JSON
        # (where calls have markers: a bare object in a reply is never a call)
        body = p.choice(body, _json_call_any_order(fmt, function, key))
    return body


def _json_call_any_order(fmt: ToolFormatAnalysis, function: Mapping[str, Any], key: Callable[[str], str]) -> Parser:
    """A JSON call object whose name and arguments come in any order, with
    other members (an id, a type) before, between or after them; the
    arguments JSON of the schema."""
    quote, sep = p.literal('"'), p.space() + p.literal(",") + p.space()
    spelled = p.literal(function["name"]) if function["name"] else p.chars(_JSON_NAME_CHARS, 1, UNBOUNDED)
    name = _json_string_key(key(fmt.name_field)) + quote + tags.tool_name(spelled + p.peek(quote)) + quote
    spellings = _ARGS_SPELLINGS if key(fmt.args_field) in _ARGS_SPELLINGS else (key(fmt.args_field),)
    args = p.choice(*(_json_string_key(k) for k in spellings)) + tags.tool_args(_args_schema_parser(function))
    ids = [f for f in (fmt.id_field, fmt.gen_id_field) if f]
    id_member = [_json_string_key(key(f)) + quote + tags.tool_id(p.until('"')) + quote for f in ids]
    # another member: any key but the name's and the arguments' (a repetition never gives one back)
    known = p.choice(*(p.literal(f'"{k}"') for k in (key(fmt.name_field), *spellings)))
    other = p.negate(known) + quote + p.chars('[^"\\\n]', 1, UNBOUNDED) + quote + p.space() + p.literal(":") + p.space() + p.json_value()
    extra = p.choice(*id_member, other)
    between = p.zero_or_more(sep + extra)
    pair = p.choice(name + between + sep + args, args + between + sep + name)
    return p.literal("{") + p.space() + p.zero_or_more(extra + sep) + pair + between + p.space() + p.literal("}")


#: what a function name in a JSON string may hold (a name outside the request's tools)
_JSON_NAME_CHARS = '[^"\\\\\n]'


def _tool_name(name: str, strict: bool, chars: str, follow: Parser) -> Parser:
    """A call's function name: ``name``, or ("") any name of ``chars`` (a tool
    not in the request: the call is kept, the schema check reports it).  When
    parsing, the name is complete (a stream shows it) once ``follow`` confirms
    it ("get_weather" is no name in "get_weather_v2")."""
    spelled = p.literal(name) if name else p.chars(chars, 1, UNBOUNDED)
    return tags.tool_name(spelled if strict else spelled + p.peek(follow))


def _after_json_name(analysis: TemplateAnalysis) -> Parser:
    """What confirms a JSON call's name (a stream shows the call from then on):
    its closing quote and the comma before the next member ({"name": "x"}
    alone is no call), or the closing brace where it is the last member.
    Where calls have no marker of their own (Llama 3), the next member's key
    too: {"name": "Bob", "age": 3} in a reply is never shown as a call."""
    fmt = analysis.tools.format
    quote = p.literal('"')
    if fmt.fun_name_is_key:
        return quote + p.space() + p.literal(":")
    order = _member_order(fmt)
    after = order[order.index(fmt.name_field) + 1 :] if fmt.name_field in order else []
    if not after:
        return quote + p.space() + p.literal("}")
    comma = quote + p.space() + p.literal(",")
    if not bare_json_call_starts(analysis):
        return comma
    keys = [after[0].split(".", 1)[-1]]
    if after[0] == fmt.args_field and keys[0] in _ARGS_SPELLINGS:
        keys = list(_ARGS_SPELLINGS)
    return comma + p.space() + p.choice(*(p.literal('"' + k + '"') for k in keys))


def _member_order(fmt: ToolFormatAnalysis) -> list[str]:
    """A JSON call's members (name, arguments, ids) in the order the template
    writes them (``parameter_order``, then the others)."""
    fields = [f for f in (fmt.name_field, fmt.args_field, fmt.id_field, fmt.gen_id_field) if f]
    return [f for f in fmt.parameter_order if f in fields] + [f for f in fields if f not in fmt.parameter_order]


#: a request's own tool, or (name "") any other
_ANY_TOOL: Mapping[str, Any] = {"name": "", "parameters": {"type": "object"}}


def _after_json_arguments(analysis: TemplateAnalysis) -> list[str]:
    """What can only follow a JSON-native call's arguments: the next member's
    key where one follows them (``, "id"``), and the call's closing braces,
    then the marker or bracket that ends the call, or an array's next call
    (none when nothing marks the end: see :func:`_closed_by_the_end`)."""
    fmt = analysis.tools.format
    order = _member_order(fmt)
    follows: list[str] = []
    if not fmt.fun_name_is_key and fmt.args_field in order and order[-1] != fmt.args_field:
        key = order[order.index(fmt.args_field) + 1].split(".", 1)[-1]
        follows += ["," + gap + '"' + key + '"' for gap in ("", " ", "\n")]
    end = _json_call_end(fmt)
    if not end:
        return follows
    # (an array's next call, as templates indent it: Command R7B writes "},\n    {")
    nexts = [end] + ([",\n{", ", {", ",{", ",\n  {", ",\n    {", ",\n\t{"] if fmt.tools_array_wrapped else [])
    return follows + [c + n for c in _closings(order) for n in nexts]


def _json_call_end(fmt: ToolFormatAnalysis) -> str:
    """The marker or bracket after a JSON-native call's closing braces ("": none)."""
    return strip_ws(fmt.per_call_end) or ("]" if fmt.tools_array_wrapped else "") or strip_ws(fmt.section_end)


def _closing_braces(order: Sequence[str]) -> int:
    """How many braces close a JSON call after its last member (a nested call object closes twice)."""
    return 2 if any("." in f for f in order) else 1


def _closings(order: Sequence[str]) -> list[str]:
    """The spellings of a JSON call's closing braces after its last member,
    with the whitespace models put after each."""
    return ["".join("}" + gap for gap in gaps) for gaps in product(("", "\n", " "), repeat=_closing_braces(order))]


def _closed_by_the_end(analysis: TemplateAnalysis, stops: Sequence[str]) -> tuple[Parser, list[str]] | None:
    """What closes a JSON-native call that ends with its arguments and that no
    marker ends (Llama 3, GigaChat 3.1): its closing braces, then the output's
    end (or, where calls have no marker at all, the ``;`` before a next call),
    as a parser and as the texts that show it (the braces and an end-of-turn
    marker); None for other formats."""
    fmt = analysis.tools.format
    order = _member_order(fmt)
    if fmt.mode is not ToolFormat.JSON_NATIVE or _json_call_end(fmt):
        return None
    if not fmt.fun_name_is_key and (not order or order[-1] != fmt.args_field):
        return None
    closing = p.seq(*(p.space() + p.literal("}") for _ in range(_closing_braces(order))))
    after = p.choice(ending(stops), p.space() + p.literal(";")) if bare_json_call_starts(analysis) else ending(stops)
    return closing + after, [c + stop for c in _closings(order) for stop in stops]


def _call_id_between(analysis: TemplateAnalysis, strict: bool) -> Parser:
    cid = analysis.tools.call_id
    return p.optional(marker(cid.prefix, strict) + tags.tool_id(p.until(strip_ws(cid.suffix) or "{")))


def _tag_call(analysis: TemplateAnalysis, function: Mapping[str, Any], strict: bool = False) -> Parser:
    tools = analysis.tools
    fmt, fn, cid = tools.format, tools.function, tools.call_id
    name = function["name"]
    parts: list[Parser] = []
    if cid.pos is CallIdPosition.PRE_FUNC_NAME and cid.suffix:
        lead = p.eps() if strip_ws(cid.prefix) in (strip_ws(fmt.per_call_start), strip_ws(fmt.section_start)) else marker(cid.prefix, strict)
        parts.append(p.optional(lead + tags.tool_id(p.until(strip_ws(cid.suffix))) + marker(cid.suffix, strict)))
    parts.append(marker(fn.name_prefix, strict) + _tool_name(name, strict, _NAME_CHARS, p.negate(p.chars(_NAME_CHARS, 1, 1))))
    if cid.pos is CallIdPosition.BETWEEN_FUNC_AND_ARGS and cid.prefix:
        parts.append(_call_id_between(analysis, strict))
    parts.append(marker(fn.name_suffix, strict))
    if fmt.mode is ToolFormat.TAG_WITH_JSON:
        # (parsing) arguments that are not JSON end at the call's closer, else
        # at the next call's opener or the end of the output
        close = strip_ws(fn.close) or strip_ws(fmt.per_call_end) or strip_ws(fmt.section_end)
        opener = strip_ws(fmt.per_call_start) or strip_ws(fn.name_prefix)
        follows = [close] if close else [opener] if _markup(opener) else []
        parts.append(json_arguments(function, follows, strict))
    else:
        parts.append(_tagged_args(analysis, function, strict))
    if cid.pos is CallIdPosition.POST_ARGS and cid.prefix:
        parts.append(p.optional(p.space() + marker(cid.prefix, strict) + tags.tool_id(p.until(strip_ws(cid.suffix) or "\n")) + marker(cid.suffix, strict)))
    function_close = marker(fn.close, strict) if fn.close else p.eps()
    call_ends = [e for e in call_closers(fmt) if _markup(e) and e != strip_ws(fn.close)]
    if fn.close and not strict and call_ends:  # (parsing) the function's close left out: the call's closer ends it
        function_close = p.choice(function_close, followed_by(call_ends, space=False))
    parts.append(p.space() + function_close)
    return p.seq(*parts)


def _exact(text: str, lenient: bool = False) -> Parser:
    """A marker before a string value: its text without the whitespace after it
    (the value keeps its own leading newline; the mapper trims one).
    ``lenient`` (parsing): with the attributes a model adds to a tag."""
    core = text.rstrip(_WS)
    lead = p.space() if core != core.lstrip(_WS) else p.eps()
    if not core.strip(_WS):
        return p.eps()
    return lead + (_with_attributes(core.lstrip(_WS)) if lenient else p.literal(core.lstrip(_WS)))


def _tagged_args(analysis: TemplateAnalysis, function: Mapping[str, Any], strict: bool = False) -> Parser:
    """Tagged arguments.  For parsing (lenient), :func:`_lenient_tagged_args`.
    For the grammar (``strict``): the schema's required arguments present, the
    others at most once (:func:`argument_set`), no unknown names unless
    ``additionalProperties`` allows them, string enums as their values, other
    values as JSON constrained by their schema."""
    if not strict:
        return _lenient_tagged_args(analysis, function)
    a = analysis.tools.arguments
    params = _parameters(function)
    properties = _properties(params)

    def argument(name: str, arg_schema: Any) -> Parser:
        head = marker(a.name_prefix, True) + p.tag(TOOL_ARG_NAME, p.literal(name) if name else p.chars(_NAME_CHARS, 1, UNBOUNDED))
        if _is_string_schema(arg_schema):
            # the value keeps its leading whitespace after the last marker before it
            # (GLM writes "</arg_key>\n<arg_value>": the newline belongs to no value)
            suffix = marker(a.name_suffix, True) if strip_ws(a.value_prefix) else _exact(a.name_suffix)
            enum = arg_schema.get("enum") if isinstance(arg_schema, Mapping) else None
            if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
                value = p.space() + p.choice(*(p.literal(v) for v in sorted(enum, key=len, reverse=True))) + p.space()
            else:
                value = p.until(strip_ws(a.value_suffix) or strip_ws(a.name_prefix))
            body = suffix + _exact(a.value_prefix) + p.tag(TOOL_ARG_STRING, value)
        else:
            json_schema = arg_schema if isinstance(arg_schema, Mapping) else {}
            json_value = p.tag(TOOL_ARG_JSON, p.schema(p.json_value(), f"{function['name']}-{name or 'extra'}", json_schema))
            body = marker(a.name_suffix, True) + marker(a.value_prefix, True) + json_value + p.space()
        return p.tag(TOOL_ARG, head + body + marker(a.value_suffix, True)) + p.space()

    names = sorted(properties, key=lambda n: -len(str(n)))  # longest first, as for function names
    required = [str(n) for n in params.get("required") or [] if n in properties]
    optional = [str(n) for n in names if str(n) not in required]
    extra = params.get("additionalProperties", False)
    extra_arg = argument("", extra if isinstance(extra, Mapping) else {}) if extra not in (False, None) else None
    return argument_set(
        [argument(n, properties[n]) for n in required],
        [argument(n, properties[n]) for n in optional],
        extra_arg,
    )


def _properties(params: Mapping[str, Any]) -> Mapping[str, Any]:
    properties = params.get("properties") or {}
    return properties if isinstance(properties, Mapping) else {}


def _is_only_string(schema: Any) -> bool:
    """Whether every value ``schema`` allows is a string (a type list or
    ``anyOf`` with another type, or ``nullable``, is not)."""
    if not isinstance(schema, Mapping) or schema.get("nullable"):
        return False
    kind = schema.get("type")
    if kind == "string" or kind == ["string"]:
        return True
    if kind is None and "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return True
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    return kind is None and isinstance(alternatives, list) and bool(alternatives) and all(_is_only_string(s) for s in alternatives)


def _markup(text: str) -> bool:
    """Whether ``text`` is markup, not a word a model may write in prose."""
    return not MARKUP_CHARS.isdisjoint(text)


#: XML's character-data section, around a tagged value that holds markup
CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"


def _lenient_tagged_args(analysis: TemplateAnalysis, function: Mapping[str, Any]) -> Parser:
    """Tagged arguments as parsing reads them: in any order, each optional,
    names not in the schema too.  A value is read by the parameter's schema
    (:func:`typed_value`): a string schema's value is the text up to its
    closer; any other is the first of JSON or a Python literal that fills the
    value up to its end, else the text as written, a string (the call is
    kept; the schema check reports it).  A value's closer may be missing: it
    ends at the next argument's opener or the call's close."""
    a = analysis.tools.arguments
    name_prefix, value_end = strip_ws(a.name_prefix), strip_ws(a.value_suffix)
    function_close = strip_ws(analysis.tools.function.close)
    if function_close == value_end:
        function_close = ""
    properties = _properties(_parameters(function))
    names = sorted((str(n) for n in properties), key=lambda n: -len(n))  # longest first
    # the next argument's opener ("<parameter=days>"), where it is markup: a value
    # whose closer was left out ends there
    openers = (
        [name_prefix + n + strip_ws(a.name_suffix) for n in names] if _markup(name_prefix) and strip_ws(a.name_suffix) else []
    )
    closer = value_end or name_prefix
    # the markers that close the call around the function (</tool_call>): where the
    # function's own close is left out too, a value ends there
    fmt = analysis.tools.format
    call_ends = [e for e in call_closers(fmt) if _markup(e) and e not in (value_end, function_close)]
    if function_close:
        # the value ends at its closer where the call goes on (another argument
        # or the call's close): "x </parameter> y" inside a value stays text
        nexts = [n for n in (name_prefix, function_close, *call_ends) if n]
        exact_ends = [closer + gap + n for n in nexts for gap in _GAPS]
        repairs = [function_close, *openers, *call_ends]
    else:
        exact_ends, repairs = [closer], [*openers, *call_ends]
    string_ends = exact_ends + repairs
    # what may follow a typed value: its closer, or (left out) what comes after one
    typed_ends = [closer, *openers, function_close, *call_ends] if value_end else [name_prefix, strip_ws(analysis.tools.function.close), *openers, *call_ends]
    value_open = p.optional(_exact(a.value_prefix, True)) if strip_ws(a.value_prefix) else _exact(a.value_prefix, True)
    # exact first: the value ends at its closer, from which the call reads on; only
    # where none does, at a repair (its closer left out: the next argument, the call's close)
    after = _after_a_value(analysis, call_ends)
    string_value = p.tag(TOOL_ARG_STRING, p.until(*exact_ends, then=after, repairs=repairs, repair_then=after))
    if name_prefix.startswith("<"):
        # XML's escape for text with markup in it: <![CDATA[a <b> & c]]> is the text inside (MiniCPM5);
        # once the opener is seen the branch cannot fail (a missing "]]>" ends at the value's end)
        cdata = p.literal(CDATA_OPEN) + p.tag(TOOL_ARG_STRING, p.until(CDATA_CLOSE, *string_ends)) + p.optional(p.literal(CDATA_CLOSE))
        string_value = p.choice(cdata, string_value)
    # the string keeps its leading whitespace after the last marker before it
    # (GLM writes "</arg_key>\n<arg_value>": the newline belongs to no value)
    # a name's closer left out ends where the value's opener follows (GLM's "<arg_key>unit\n<arg_value>")
    value_opener = strip_ws(a.value_prefix)
    name_close = _name_close(a)
    string_body = (name_close if value_opener else _exact(a.name_suffix, True)) + value_open + string_value
    typed_head = name_close + (p.optional(marker(a.value_prefix)) if value_opener else marker(a.value_prefix))
    typed_end = followed_by(typed_ends)

    # a name is complete (and shown) once what follows it confirms it: "city" is
    # not a name in "<parameter=city_name>"
    name_end = p.peek(name_close) if strip_ws(a.name_suffix) else p.eps()

    def argument(name: str, arg_schema: Any) -> Parser:
        spelled = p.literal(name) if name else p.chars(_NAME_CHARS, 1, UNBOUNDED)
        head = marker(a.name_prefix) + p.tag(TOOL_ARG_NAME, spelled + name_end)
        if _is_only_string(arg_schema):
            body = string_body
        else:
            body = p.choice(typed_head + typed_value(arg_schema, f"{function['name']}-{name or 'extra'}", typed_end), string_body)
        return p.tag(TOOL_ARG, head + body + p.optional(marker(a.value_suffix))) + p.space()

    options = [argument(n, properties[n]) for n in names]
    options.append(argument("", {}))  # a name not in the schema: kept (the schema check reports it)
    return p.zero_or_more(p.choice(*options))


def _name_close(a: ArgumentsAnalysis) -> Parser:
    """An argument name's closer; left out, where the value's opener follows
    (GLM's ``<arg_key>unit\n<arg_value>``)."""
    name_close = marker(a.name_suffix)
    value_opener = strip_ws(a.value_prefix)
    if _markup(strip_ws(a.name_suffix)) and _markup(value_opener):
        name_close = p.choice(name_close, p.space() + p.peek(p.literal(value_opener)))
    return name_close


def _after_a_value(analysis: TemplateAnalysis, call_ends: Sequence[str]) -> Parser:
    """What reads after a tagged string value, where it ends (a look-ahead: a
    closer quoted inside the value, ``print('</function>')``, is the value's
    text): its closer (or none, left out), then the next argument's name, or
    the function's close and what ends the call (its closer, the next call,
    the turn's end marker, the output's end)."""
    a, fmt = analysis.tools.arguments, analysis.tools.format
    name_close = _name_close(a) if strip_ws(a.name_suffix) else p.eps()
    next_argument = marker(a.name_prefix) + p.chars(_NAME_CHARS, 1, UNBOUNDED) + p.peek(name_close)
    opener = strip_ws(fmt.per_call_start) or strip_ws(analysis.tools.function.name_prefix)
    ends = [*call_ends, *([opener] if _markup(opener) else []), *turn_end_markers(analysis)]
    call_end = p.space() + p.choice(followed_by(ends), p.end()) if ends else p.space() + p.end()
    function_close = strip_ws(analysis.tools.function.close)
    close = p.literal(function_close) + call_end if function_close and function_close != strip_ws(a.value_suffix) else call_end
    return p.optional(marker(a.value_suffix)) + p.choice(next_argument, close, call_end)


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
    if _takes_structure(json_schema):
        readings.append(p.tag(TOOL_ARG_ENCODED, p.peek(p.literal('"')) + p.json_value() + p.space() + end))
    readings.append(p.tag(TOOL_ARG_JSON, p.schema(p.json_value(), rule, json_schema) + p.space() + end))
    readings.append(p.tag(TOOL_ARG_PY, python_value() + p.space() + end))
    if text is not None:
        readings.append(text + end)
    return p.tag(TOOL_ARG_TYPED, p.choice(*readings))


def quoted_to_next_argument(
    quote: str, boundaries: Sequence[str], end: Parser, inside: Callable[[Parser], Parser] = lambda x: x, escape: str = ""
) -> Parser:
    """A string in ``quote`` (its inside wrapped by ``inside``), followed by
    ``end``, in a format that writes values between separators (Gemma 4,
    pythonic calls); one whose closing quote is left out ends before the first
    of ``boundaries`` (the next argument's name, the call's end).  On partial
    input, a string is shown short of those boundaries until it closes."""
    closed = p.literal(quote) + inside(p.until(quote, held=boundaries, escape=escape)) + p.literal(quote) + end
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


def _takes_structure(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` allows an object or an array and no string."""
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    return bool({"object", "array"} & set(kinds)) and "string" not in kinds


#: The whitespace models put between a value's closer and the next marker.
_GAPS = ("\n", "", "\n\n")

#: How many arguments are spelled out in every order (n! alternatives); past it,
#: required arguments go in the schema's order and optional ones in any order.
_MAX_PERMUTED = 3
_NAME_CHARS = "[A-Za-z0-9_.-]"


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


def _calls(analysis: TemplateAnalysis, request: ChatRequest, strict: bool = False) -> Parser:
    """The tool-call part: calls of the request's functions, in array, per-call
    and section markers (``strict``: as the grammar constrains them)."""
    fmt = analysis.tools.format
    # (parsing) a call to a tool the request does not have is kept too
    functions = tool_functions(request) + ([] if strict else [_ANY_TOOL])
    if fmt.mode is ToolFormat.JSON_NATIVE:
        call = p.choice(*(_json_native_call(analysis, f, strict) for f in functions))
    else:
        call = p.choice(*(_tag_call(analysis, f, strict) for f in functions))
    many = request.parallel_tool_calls or not strict  # (see repeated_calls)
    if not strict and fmt.mode is ToolFormat.JSON_NATIVE and not (fmt.per_call_start or fmt.section_start):
        call = p.optional(p.literal(_PYTHON_TAG) + p.space()) + call
    if fmt.tools_array_wrapped:
        more = p.zero_or_more(p.space() + p.literal(",") + p.space() + tags.tool(call)) if many else p.eps()
        unit = p.literal("[") + p.space() + tags.tool(call) + more + p.space() + p.literal("]")
        if not strict and (fmt.per_call_start or fmt.section_start):  # (parsing) a call without its brackets
            unit = p.choice(unit, tags.tool(call) + more)
    else:
        unit = tags.tool(call)
    stops = () if strict else turn_end_markers(analysis)
    section_end = strip_ws(fmt.section_end)
    if fmt.per_call_start or fmt.per_call_end:
        # (parsing) a call's closer left out ends where the next call, the section's end or the turn's end follows
        opener = marker(fmt.per_call_start, strict)
        closer = or_left_out(strip_ws(fmt.per_call_end), (strip_ws(fmt.per_call_start), section_end, *stops), strict)
        # (parsing) the whitespace after the last call belongs to the text after it
        # ("…</tool_call> Done." keeps its space), so whitespace comes before a call
        trail = p.space() if strict else p.eps()
        if fmt.tools_array_wrapped:  # each marker pair holds an array of calls
            one = opener + unit + p.space() + closer + trail
        else:  # the call includes its markers (a streamed call is shown once they open it)
            one = tags.tool(opener + call + p.space() + closer) + trail
            if not strict and bare_call_start(analysis):  # "<function=…>" without its "<tool_call>"
                one = p.choice(one, tags.tool(call + p.space() + p.optional(closer)))
        calls = (p.one_or_more(one) if many else one) if strict else p.one_or_more(p.space() + one)
    elif not strict and bare_json_call_starts(analysis):  # Llama 3 models join calls with ";" too
        calls = p.one_or_more(unit + p.space() + p.optional(p.literal(";") + p.space()))
    else:
        calls = p.one_or_more(unit + p.space()) if many and not fmt.tools_array_wrapped else unit + p.space()
    if fmt.section_start or fmt.section_end:
        opener = marker(fmt.section_start, strict)
        pair = section_pair(analysis)
        if pair and not strict:  # (parsing) the opener's two markers may hold the turn's text
            opener = p.space() + p.literal(pair[0]) + tags.content(p.until(pair[1])) + p.literal(pair[1]) + p.space()
        close = or_left_out(section_end, (strip_ws(fmt.section_start), *stops), strict)
        calls = opener + calls + (close + p.space() if strict else p.space() + close)
        if not strict and strip_ws(fmt.section_start):  # (parsing) calls in several sections
            calls = p.one_or_more(calls)
    return calls


def or_left_out(closer: str, nexts: Sequence[str], strict: bool) -> Parser:
    """``closer``; when parsing, also nothing where one of ``nexts`` follows (a
    model left the closer out: the next call's opener or the turn's end marker
    ends what it closes)."""
    exact = p.literal(closer)
    follows = [n for n in dict.fromkeys(nexts) if n and n != closer]
    if strict or not closer or not follows:
        return exact
    return p.choice(exact, followed_by(follows))


def bare_call_start(analysis: TemplateAnalysis) -> str:
    """The function-name marker that models write without the per-call wrapper
    (Qwen3-Coder's ``<function=`` without ``<tool_call>``), or "": only a
    markup-like tagged prefix qualifies."""
    fmt, prefix = analysis.tools.format, strip_ws(analysis.tools.function.name_prefix)
    if fmt.mode is not ToolFormat.TAG_WITH_TAGGED or not fmt.per_call_start or fmt.tools_array_wrapped:
        return ""
    return prefix if prefix.startswith("<") and len(prefix) >= 3 else ""


def bare_json_call_starts(analysis: TemplateAnalysis) -> list[str]:
    """What can only start a JSON call in a format whose calls have no marker
    (Llama 3: ``{"name"``, or the ``<|python_tag|>`` its models write first);
    none for other formats."""
    fmt = analysis.tools.format
    if fmt.mode is not ToolFormat.JSON_NATIVE or fmt.per_call_start or fmt.section_start or fmt.tools_array_wrapped:
        return []
    if fmt.fun_name_is_key or not fmt.name_field or "." in fmt.name_field:
        return []
    return ['{"' + fmt.name_field + '"', _PYTHON_TAG]


def repeated_calls(one: Parser, request: ChatRequest, strict: bool = False) -> Parser:
    """Calls: when parsing, one or more (a model that writes a second call while
    ``parallel_tool_calls`` is off still wrote it: every format reads it, and
    parse's hint says so); for the grammar (``strict``), several only when the
    request allows parallel tool calls."""
    return p.one_or_more(one) if request.parallel_tool_calls or not strict else one


def trigger_marker(analysis: TemplateAnalysis) -> str:
    """The text that starts tool calls (section or first per-call marker), or ""."""
    fmt = analysis.tools.format
    pair = section_pair(analysis)
    marker = pair[0] if pair else strip_ws(fmt.section_start) or strip_ws(fmt.per_call_start)
    if not marker and fmt.mode is not ToolFormat.JSON_NATIVE:
        # no section and no per-call marker: a tag that opens with the name starts each call
        # (MiniCPM5's <function name="...">)
        name_prefix = strip_ws(analysis.tools.function.name_prefix)
        if name_prefix.startswith("<"):
            marker = name_prefix
    return marker


def section_pair(analysis: TemplateAnalysis) -> tuple[str, str] | None:
    """A section opener that is two markers with nothing between them when the
    turn has no text (Llama 4's ``<|python_start|><|python_end|>``, which holds
    the turn's text when there is some), as (first, second); else None."""
    opener = strip_ws(analysis.tools.format.section_start)
    markers = MARKER_RE.findall(opener)
    return (markers[0], markers[1]) if len(markers) == 2 and "".join(markers) == opener else None


class CallsBuilder(Protocol):
    """A dedicated handler's tool-call parser for a request, and its trigger
    marker; with ``strict``, as the grammar constrains the calls (the tool's
    schema: required arguments present, each at most once, typed values)."""

    def __call__(self, analysis: TemplateAnalysis, request: ChatRequest, strict: bool = False) -> tuple[Parser, str]: ...


def tool_functions(request: ChatRequest) -> list[Mapping[str, Any]]:
    """The request's functions, longest names first (PEG choice commits: "f"
    must not win over "f_with_opt")."""
    return sorted(_tool_functions(request.tools), key=lambda f: -len(f["name"]))


def build_parser(
    analysis: TemplateAnalysis,
    request: ChatRequest,
    generation_prompt: str,
    continued_text: str,
    prefill: PrefillOutcome,
    calls_builder: CallsBuilder | None = None,
    for_grammar: bool = False,
) -> BuiltParser:
    """Compose the parser for ``request`` (see the module docstring).  A dedicated
    handler passes ``calls_builder`` for its own tool-call syntax.  With
    ``for_grammar``, the calls follow the tools' schemas strictly and markers take
    only the template's own whitespace (the grammar is what a constrained model
    must write; the parser stays lenient)."""
    extracts = request.reasoning_format is not ReasoningFormat.NONE and analysis.reasoning.mode is not ReasoningMode.NONE
    boilerplate, cleared = boilerplate_and_reasoning_start(generation_prompt, continued_text, analysis, prefill)
    has_format = analysis.tools.format.mode is not ToolFormat.NONE or calls_builder is not None
    tools_on = request.has_tools and has_format and _tool_functions(request.tools)
    trigger_text = trigger_marker(analysis) if tools_on and calls_builder is None else ""
    # the grammar constrains what a model writes before the engine stops it: no stop markers
    stops = () if for_grammar else turn_end_markers(analysis)
    # (parsing) thinking on, where the template leaves the opening to the model
    # and the prompt neither opens nor closes the reasoning: the opener may be missing
    end_marker = strip_ws(analysis.reasoning.end)
    unopened = (
        not for_grammar
        and analysis.reasoning.mode is ReasoningMode.TAG_BASED
        and analysis.reasoning.switched
        and request.enable_thinking
        and bool(end_marker)
        and end_marker not in boilerplate
    )
    call_markers = (trigger_text,) if trigger_text else ()
    reasoning = _reasoning(analysis, cleared, call_markers, stops, for_grammar, unopened) if extracts else p.eps()
    tool_calls: Parser | None = None
    trigger = ""
    without_fallback: Parser | None = None
    if request.json_schema is not None:
        fence_open = p.optional(p.literal("```") + p.optional(p.literal("json")) + p.space())  # models often fence it
        fence_close = p.optional(p.literal("```") + p.space())
        response = tags.content(p.schema(p.json_value(), "response-format", request.json_schema))
        body = reasoning + p.space() + fence_open + response + p.space() + fence_close + ending(stops)
    elif tools_on:
        if calls_builder is not None:
            tool_calls, trigger = calls_builder(analysis, request, strict=for_grammar)
        else:
            tool_calls = _calls(analysis, request, strict=for_grammar)
            trigger = trigger_marker(analysis)
            if analysis.tools.format.content_after_calls:  # the template writes the turn's text after its calls
                tool_calls = tool_calls + p.optional(text_until((), stops))
        closers = p.eps() if for_grammar else stray_closers(analysis)
        # (parsing) where calls have no marker of their own (Llama 3's bare JSON),
        # text may come before them, up to what can only start a call
        json_starts = bare_json_call_starts(analysis) if not trigger and calls_builder is None and not for_grammar else []
        content_after = analysis.tools.format.content_after_calls and calls_builder is None  # (read in the calls above)
        # (parsing) after the calls, any end-of-turn marker ends the output, even
        # one the format also uses (GigaChat 3 begins its call turn with <|message_sep|>)
        ends = stops if for_grammar else tuple(dict.fromkeys(stops + tuple(m for m in map(strip_ws, analysis.turn_end) if m)))
        if (trigger or json_starts or calls_builder is not None) and not for_grammar and not content_after:
            # text after the calls is content
            tail = closers + p.choice(ending(ends), text_to_end(stops))
        else:
            tail = closers + ending(ends)
        if trigger:
            bare = bare_call_start(analysis) if calls_builder is None and not for_grammar else ""
            starts = (trigger, *([bare] if bare else []))
            if for_grammar:
                with_calls = _content_until(analysis, *starts, stops=stops) + tool_calls + tail
            else:
                # (parsing) the text before the calls, and between them, ends at the
                # first call marker from which the rest of the output reads (a
                # marker quoted in prose, or a call that does not read, is text)
                rest = p.rule("calls-to-end")
                between = text_until(starts, stops, then=rest) if not content_after else None
                rest.body = tool_calls + (p.zero_or_more(closers + between + tool_calls) if between is not None else p.eps()) + tail
                with_calls = _content_until(analysis, *starts, stops=stops, then=rest) + rest
        elif json_starts:
            rest = p.rule("calls-to-end", tool_calls + tail)
            with_calls = _content_until(analysis, *json_starts, stops=stops, then=rest) + rest
        else:
            with_calls = p.space() + tool_calls + tail
        if request.tool_choice is ToolChoice.REQUIRED:
            body = reasoning + with_calls
        else:
            body = reasoning + p.choice(with_calls, _content_only(analysis, stops))
            without_fallback = p.literal(boilerplate) + reasoning + with_calls
    else:
        body = reasoning + _content_only(analysis, stops)
    parser = p.literal(boilerplate) + body
    return BuiltParser(parser, boilerplate, body, tool_calls, trigger, extracts, without_fallback)
