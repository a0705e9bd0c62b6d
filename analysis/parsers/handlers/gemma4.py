"""Gemma 4: ``<|channel>thought ... <channel|>`` reasoning and
``<|tool_call>call:name{key:<|"|>text<|"|>,n:1}<tool_call|>`` calls.

Values are strings between ``<|"|>`` quotes, numbers, ``true``/``false``/``null``,
arrays and objects with bare keys.  Empty thought blocks and stray channel
markers the model leaves around its answer are dropped from content; a literal
``<|tool_call>`` not followed by ``call:`` stays content.
"""

from __future__ import annotations

import json
from typing import Any

from analysis.messages import tags
from analysis.messages.deviations import DeviationKind, deviation
from analysis.messages.hooks import OutputHooks
from analysis.messages.pyliteral import json_number
from analysis.messages.tags import TOOL_ARG, TOOL_ARG_NAME, TOOL_ARG_RAW
from analysis.parsers.builder import BuiltParser
from analysis.parsers.handlers.base import Handler, probe_call_render, with_tool_markers
from analysis.parsers.pieces import ending, quoted_to_next_argument, repeated_calls, text_to_next_argument, turn_end_markers, typed_value
from analysis.parsers.reasoning import boilerplate_and_reasoning_start
from analysis.parsers.repair import repeated_closers
from analysis.parsers.request import ChatRequest, ReasoningFormat
from analysis.parsers.response_spec import NAME, call_field, marker, turn_ends
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import (
    PrefillOutcome,
    ReasoningAnalysis,
    ReasoningMode,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.probes import ARG_A, FUN_A, Prober
from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser, Ref

#: Gemma 4's own capture: a value (bare keys, <|"|> strings), decoded by gemma_to_json
TOOL_ARG_GEMMA = "tool-arg-gemma"
QUOTE = '<|"|>'
CALL_START = "<|tool_call>"
CALL_END = "<tool_call|>"
CHANNEL_OPEN = "<|channel>"
CHANNEL_CLOSE = "<channel|>"
#: what the model writes after its calls, where the engine stops it for the tools' results
TOOL_RESPONSE = "<|tool_response>"


def detect(source: str, prober: Prober) -> str | None:
    """A probe call renders as ``<|tool_call>call:name{arg:<|"|>...``."""
    if f"{CALL_START}call:{FUN_A}{{{ARG_A}:{QUOTE}" in probe_call_render(prober, {ARG_A: "v"}):
        return f"a probe call renders as {CALL_START}call:{FUN_A}{{{ARG_A}:{QUOTE}v{QUOTE}}}"
    return None


def refine(analysis: TemplateAnalysis, source: str) -> TemplateAnalysis:
    return with_tool_markers(
        analysis,
        ToolFormat.TAG_WITH_TAGGED,
        format={"per_call_start": CALL_START, "per_call_end": CALL_END},
        function={"name_prefix": "call:", "name_suffix": "{", "close": "}"},
        arguments={"name_prefix": "", "name_suffix": ":", "value_prefix": "", "value_suffix": "", "separator": ","},
        reasoning=ReasoningAnalysis(ReasoningMode.TAG_BASED, CHANNEL_OPEN + "thought\n", CHANNEL_CLOSE),
    )


def gemma_value() -> Parser:
    """A Gemma value: <|"|>string<|"|>, number, true/false/null (or None/True/False), [..], {key:value,..}."""
    value = p.rule("gemma-value")
    ref = Ref(value)
    string = p.literal(QUOTE) + p.until(QUOTE) + p.literal(QUOTE)
    number = json_number()
    # the template writes Python's None for a null inside a list (and True/False if ever)
    word = p.choice(*(p.literal(w) for w in ("true", "false", "null", "None", "True", "False")))
    key = p.choice(string, p.chars("[A-Za-z0-9_]", 1, UNBOUNDED))
    pair = key + p.space() + p.literal(":") + p.space() + ref
    obj = p.literal("{") + p.space() + p.optional(pair + p.zero_or_more(p.space() + p.literal(",") + p.space() + pair)) + p.space() + p.literal("}")
    arr = p.literal("[") + p.space() + p.optional(ref + p.zero_or_more(p.space() + p.literal(",") + p.space() + ref)) + p.space() + p.literal("]")
    value.body = p.choice(string, obj, arr, word, number)
    return value


_PY_WORDS = {"None": "null", "True": "true", "False": "false"}


def gemma_to_json(text: str, complete: bool) -> str:
    """Translate a Gemma value (or a prefix of one) to JSON text (prefix-stable)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith(QUOTE, i):
            j = text.find(QUOTE, i + len(QUOTE))
            if j < 0:  # a string still being written (the parser held back a cut-short closing quote), or left unclosed
                string = json.dumps(text[i + len(QUOTE) :], ensure_ascii=False)
                out.append(string if complete else string[:-1])
                return "".join(out)
            out.append(json.dumps(text[i + len(QUOTE) : j], ensure_ascii=False))
            i = j + len(QUOTE)
            continue
        if not complete and QUOTE.startswith(text[i:]):
            return "".join(out)  # an opening quote cut short
        c = text[i]
        if c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            rest = text[j:].lstrip()
            if j == n and not complete:
                return "".join(out)  # a key or a literal still being written
            out.append(json.dumps(word) if rest.startswith(":") else _PY_WORDS.get(word, word))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _value_as_written(value: Parser, names: list[str], stops: tuple[str, ...] = (), next_call: Parser | None = None) -> Parser:
    """A value as models write it: a <|"|> string (streamed as it comes), else
    the first that fills the value's place up to the next argument or the
    call's end: a Gemma value, a JSON string ("Paris"), a Python one ('Paris'),
    or text (Paris, a broken [1,), kept as written up to the next of the
    call's ``names`` or its end.  A typed value shows once decided; a string
    left unclosed ends there too (``days:<|"|>3,unit:``)."""
    end = p.peek(p.space() + p.choice(p.literal(","), p.literal("}"), p.literal(CALL_END)))
    boundaries = [f",{gap}{name}:" for name in names for gap in ("", " ")] + ["}" + CALL_END, CALL_END]
    # a string whose closing quote is missing ends where the next argument or the call's end starts
    # (the inside is the text, as written: read without a second scan for its quotes)
    # (the whole output's reading first: after the call, no text follows a marker where the model stops)
    next_name = p.choice(*(p.literal(n) for n in names)) + p.space() + p.literal(":") if names else p.chars("[A-Za-z0-9_]", 1, UNBOUNDED)
    stopped = p.space() + p.choice(*(p.literal(s) for s in stops)) + p.space() + p.chars("[^ \t\r\n]", 1, 1) if stops else None
    after_call = p.negate(stopped) if stopped is not None else p.eps()
    if stopped is not None and next_call is not None:
        # (unless a whole call of a declared function follows that text: the model
        # went on past where it stops, text between two calls, not a quoted closer)
        resumed = p.space() + p.choice(*(p.literal(s) for s in stops)) + p.until(CALL_START + "call:", then=next_call) + next_call
        after_call = p.choice(after_call, p.peek(resumed))
    whole = p.space() + p.choice(p.literal(",") + p.space() + next_name, p.literal("}") + p.space() + p.literal(CALL_END) + after_call)
    quoted = quoted_to_next_argument(QUOTE, boundaries if names else [], end, lambda until: p.tag(TOOL_ARG_RAW, until), whole=whole)
    # (bare text never starts with the quote: a <|"|> string, shown as it came, that never closes breaks the call)
    bare = p.negate(p.literal(QUOTE)) + text_to_next_argument(boundaries if names else [], "[^,}]")
    others = typed_value({}, "gemma-arg", end, bare, own=[p.tag(TOOL_ARG_GEMMA, value)])
    return p.choice(quoted, others)


def _call(
    function: dict[str, Any], value: Parser, for_grammar: bool = False, stops: tuple[str, ...] = (), next_call: Parser | None = None
) -> Parser:
    """One call; parsing (not ``for_grammar``): its closing
    ``<tool_call|>`` may be missing or broken (what follows is then text)."""
    properties = (function.get("parameters") or {}).get("properties") or {}
    names = sorted(properties, key=lambda n: -len(str(n)))
    name_choice = p.choice(*(p.literal(str(n)) for n in names)) if names else p.chars("[A-Za-z0-9_]", 1, UNBOUNDED)
    read = _value_as_written(value, [str(n) for n in names], stops, next_call) if not for_grammar else p.tag(TOOL_ARG_GEMMA, value)
    arg = p.tag(TOOL_ARG, p.tag(TOOL_ARG_NAME, name_choice) + p.space() + p.literal(":") + p.space() + read)
    args = p.optional(arg + p.zero_or_more(p.space() + p.literal(",") + p.space() + arg))
    # (parsing) the closing brace left out: the call's end marker ends it
    close = p.choice(p.literal("}"), deviation(DeviationKind.CALL_CLOSER_LEFT_OUT, p.peek(p.literal(CALL_END)))) if not for_grammar else p.literal("}")
    end = p.choice(p.literal(CALL_END), deviation(DeviationKind.CALL_CLOSER_LEFT_OUT, p.eps())) if not for_grammar else p.literal(CALL_END)
    head = p.literal(CALL_START + "call:") + tags.tool_name(p.literal(function["name"])) + p.literal("{")
    return tags.tool(head + p.space() + args + p.space() + close + end)


def build(
    analysis: TemplateAnalysis, request: ChatRequest, generation_prompt: str, continued_text: str, prefill: PrefillOutcome, for_grammar: bool = False
) -> BuiltParser:
    """Reasoning block, then content, calls and stray channel markers in any order."""
    extracts = request.reasoning_format is not ReasoningFormat.NONE
    boilerplate, _ = boilerplate_and_reasoning_start(generation_prompt, continued_text, analysis, prefill)
    channel = p.literal(CHANNEL_OPEN) + p.optional(p.literal(CHANNEL_OPEN)) + p.literal("thought")  # bounded: no rescans
    # a thought cut off before its close (max_tokens) is reasoning too
    thought = tags.reasoning_block(channel + p.space() + tags.reasoning(p.until(CHANNEL_CLOSE)) + p.optional(p.literal(CHANNEL_CLOSE)) + p.space())
    functions = tool_functions(request) if request.has_tools else []
    value = gemma_value()
    stopping = (*turn_end_markers(analysis), TOOL_RESPONSE)  # (where a model stops: no text of its follows)
    # (a whole call, which the look-ahead after a value's closer reads too, by reference)
    any_call = p.rule("gemma4-call")
    call: Parser | None = None
    if functions:
        any_call.body = p.choice(*(_call(dict(f), value, stops=stopping, next_call=p.Ref(any_call)) for f in functions))
        call = any_call
    exact_call = p.choice(*(_call(dict(f), value, for_grammar=True) for f in functions)) if functions else None  # for the grammar
    stops = ([CALL_START] if call is not None else []) + ([CHANNEL_OPEN, CHANNEL_CLOSE] if extracts else [])
    # (parsing) the end of the turn an engine passes through: <turn|>, and
    # <|tool_response>, where the model stops after its calls
    turn_end = () if for_grammar else (*turn_end_markers(analysis), *([TOOL_RESPONSE] if call is not None else []))
    end = ending(turn_end)
    plain: list[Parser] = []  # text: everything but a call marker
    if extracts:
        # a stray thought closer is dropped (as the reference does; noted, a deviation);
        # an opener that opens no thought is text as written ("Hello<|channel>world")
        stray = p.literal(CHANNEL_CLOSE) if for_grammar else deviation(DeviationKind.CLOSER_REPEATED, p.literal(CHANNEL_CLOSE))
        plain += [thought, stray, tags.content(p.literal(CHANNEL_OPEN))]
    plain.append(tags.content(p.until(*stops, stops=turn_end) if stops else p.rest(turn_end)))
    # a thought's end alone at the start closes an empty one (not text)
    reasoning = p.optional(p.choice(thought, p.space() + p.literal(CHANNEL_CLOSE) + p.space())) if extracts else p.eps()
    if call is None:
        body = reasoning + p.zero_or_more(p.choice(*plain)) + end
    else:
        prose = tags.content(p.literal(CALL_START))  # a call marker not followed by a call
        if request.parallel_tool_calls or not for_grammar:  # calls and text in any order (see repeated_calls)
            # (parsing) a call's closer written twice (<tool_call|><tool_call|>) is dropped
            stray = repeated_closers((CALL_END,)) if not for_grammar else p.eps()
            loop = p.zero_or_more(p.choice(call + stray + p.space(), prose, *plain))
            if for_grammar:
                body = reasoning + loop + end
            else:
                # (text between or after calls is read, a deviation, noted: text up to a call
                # marker, the calls with the text after each, then, for what is left, a call
                # that does not read among others, the loop as before)
                texts = p.zero_or_more(p.choice(p.negate(p.literal(CALL_START + "call:")) + prose, *plain))
                between = deviation(DeviationKind.TEXT_BETWEEN_CALLS, texts) + p.peek(p.literal(CALL_START + "call:"))
                # (where the model went on past <|tool_response>, its stop after calls: the marker is markup)
                resumed = p.optional(p.space() + p.literal(TOOL_RESPONSE) + p.peek(p.space() + p.chars("[^ \t\r\n]", 1, 1)))
                after = resumed + p.choice(between, deviation(DeviationKind.TEXT_AFTER_CALLS, texts))
                body = reasoning + texts + p.zero_or_more(call + stray + p.space() + after) + loop + end
        else:  # at most one call, with text before and after it; a second call fails
            text = p.zero_or_more(p.choice(*plain))
            after = p.rule("gemma4-after-call")
            after.body = text + p.optional(p.negate(call) + prose + p.Ref(after))
            before = p.rule("gemma4-before-call")
            before.body = text + p.optional(p.choice(call + p.space() + after, prose + p.Ref(before)))
            body = reasoning + before + end
    tool_calls = repeated_calls(exact_call + p.space(), request, for_grammar=True) if exact_call is not None else None
    return BuiltParser(p.literal(boilerplate) + body, boilerplate, body, tool_calls, CALL_START if call is not None else "", extracts)


def response_fields(analysis: TemplateAnalysis) -> dict[str, Any]:
    """Calls as ``call:NAME{...}``: JSON with bare keys and ``<|"|>`` strings;
    the content ends at the end of turn or at the tool response the model waits for."""
    arguments = {"unquoted_keys": True, "string_delims": [[QUOTE, QUOTE]]}
    calls = call_field(marker(CALL_START) + r"\s*call:" + NAME, CALL_END, "json", content_args=arguments)
    ends = list(dict.fromkeys([*turn_ends(analysis), TOOL_RESPONSE]))
    return {"fields": {"tool_calls": calls, "content": {"content": "text", "repeats": True, "join": "", "close": ends}}}


HANDLER = Handler(
    "gemma4", detect, refine, build=build, output=OutputHooks(value_decoders={TOOL_ARG_GEMMA: gemma_to_json}), response_fields=response_fields
)
