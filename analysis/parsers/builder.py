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

from collections.abc import Sequence
from dataclasses import dataclass

from analysis.messages import tags
from analysis.messages.deviations import DeviationKind, deviation
from analysis.parsers.calls import CallsBuilder, calls_part, trigger_marker
from analysis.parsers.json_calls import bare_json_call_starts
from analysis.parsers.pieces import ending, output_end_markers, text_to_end, text_until, turn_end_markers
from analysis.parsers.reasoning import boilerplate_and_reasoning_start, reasoning_part
from analysis.parsers.repair import bare_call_start, stray_closers
from analysis.parsers.request import ChatRequest, ReasoningFormat, ToolChoice
from analysis.parsers.schemas import declared_functions
from analysis.phases.result import (
    ContentMode,
    PrefillOutcome,
    ReasoningMode,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.markers import MARKUP_CHARS, strip_ws
from peg import combinators as p
from peg.combinators import Parser


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
    #: ("for_grammar" means one thing: the form the grammar takes, ``for_grammar``)
    without_fallback: Parser | None = None
    #: the same built for the grammar, where it constrains more than the parser reads
    grammar_source: BuiltParser | None = None
    #: regexes that switch the lazy grammar on from their first group (instead
    #: of the ``trigger`` word), as llama.cpp's pattern triggers
    trigger_patterns: tuple[str, ...] = ()


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


def _content_only(analysis: TemplateAnalysis, stops: Sequence[str] = ()) -> Parser:
    c = analysis.content
    everything = text_to_end(stops)
    if c.mode is ContentMode.PLAIN or not (c.start and c.end):
        return everything
    start, end = strip_ws(c.start), strip_ws(c.end)
    # (the opener first, or after a reasoning block kept in the content, is markup;
    # after other text, it is kept as written: a reply's text is verbatim)
    opened = [p.literal(start)]
    reasoning_end = strip_ws(analysis.reasoning.end)
    if reasoning_end:
        opened.append(tags.content(p.until(reasoning_end) + p.literal(reasoning_end) + p.space()) + p.literal(start))
    opened.append(tags.content(p.until(start) + p.literal(start)))
    wrapped = (
        p.choice(*opened)
        + tags.content(p.until(end))
        + p.optional(p.literal(end))  # a reply cut off before its end marker is still the reply
        + ending(stops)
    )
    return p.choice(wrapped, everything)


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
    must write; the parser reads more)."""
    extracts = request.reasoning_format is not ReasoningFormat.NONE and analysis.reasoning.mode is not ReasoningMode.NONE
    boilerplate, cleared = boilerplate_and_reasoning_start(generation_prompt, continued_text, analysis, prefill)
    has_format = analysis.tools.format.mode is not ToolFormat.NONE or calls_builder is not None
    tools_on = request.has_tools and has_format and declared_functions(request.tools)
    trigger_text = trigger_marker(analysis) if tools_on and calls_builder is None else ""
    # the grammar constrains what a model writes before the engine stops it: no stop markers
    stops = () if for_grammar else turn_end_markers(analysis)
    # (parsing) thinking on, where the template leaves the opening to the model
    # and the prompt neither opens nor closes the reasoning: the opener may be missing
    end_marker = strip_ws(analysis.reasoning.end)
    # (or, a deviation, where the template's models always open a block: its opener was in the prompt, or an engine dropped it)
    unopened = (
        not for_grammar
        and analysis.reasoning.mode is ReasoningMode.TAG_BASED
        and ((analysis.reasoning.switched and request.enable_thinking) or analysis.reasoning.always)
        and bool(end_marker)
        and end_marker not in boilerplate
    )
    call_markers = (trigger_text,) if trigger_text else ()
    reasoning = reasoning_part(analysis, cleared, call_markers, stops, for_grammar, unopened) if extracts else p.eps()
    lead = reply_lead(analysis, boilerplate, bool(request.has_tools))
    if lead:  # (what history writes after the generation prompt, before a reply: the model writes it first)
        reasoning = p.optional(p.space() + p.literal(lead)) + reasoning
    tool_calls: Parser | None = None
    after_calls: p.Rule | None = None
    trigger = ""
    without_fallback: Parser | None = None
    if request.json_schema is not None:
        fence_open = p.optional(p.literal("```") + p.optional(p.literal("json")) + p.space())  # models often fence it
        fence_close = p.optional(p.literal("```") + p.space())
        response = tags.content(p.schema(p.json_value(), "response-format", request.json_schema))
        body = reasoning + p.space() + fence_open + response + p.space() + fence_close + ending(stops)
    elif tools_on:
        if calls_builder is not None:
            tool_calls, trigger = calls_builder(analysis, request, for_grammar=for_grammar)
        else:
            # (parsing) the output's end after the calls, in the format's form: tagged
            # values read by the whole output's reading first (its body is set below)
            after_calls = None if for_grammar else p.rule("after-the-calls")
            tool_calls = calls_part(analysis, request, for_grammar=for_grammar, after_calls=after_calls)
            trigger = trigger_marker(analysis)
            calls_only = tool_calls
            if analysis.tools.format.content_after_calls:  # the template writes the turn's text after its calls
                tool_calls = tool_calls + p.optional(text_until((), stops))
        closers = p.eps() if for_grammar else stray_closers(analysis)
        # (parsing) where calls have no marker of their own (Llama 3's bare JSON),
        # text may come before them, up to what can only start a call
        json_starts = bare_json_call_starts(analysis) if not trigger and calls_builder is None and not for_grammar else []
        content_after = analysis.tools.format.content_after_calls and calls_builder is None  # (read in the calls above)
        # (parsing) after the calls, any end-of-turn marker ends the output
        ends = stops if for_grammar else output_end_markers(analysis)
        exact_tail = closers + (p.optional(text_until((), stops)) + ending(ends) if content_after else ending(ends))
        if (trigger or json_starts or calls_builder is not None) and not for_grammar and not content_after:
            # text after the calls is content
            tail = closers + p.choice(ending(ends), deviation(DeviationKind.TEXT_AFTER_CALLS, text_until((), stops)) + ending(stops))
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
                if content_after:
                    # (the text after the calls is the template's; text between two calls, a deviation)
                    block = p.rule("call-block", calls_only)
                    between = deviation(DeviationKind.TEXT_BETWEEN_CALLS, text_until(starts, stops, then=block))
                    rest.body = block + more_after_text(closers, between, block) + p.optional(text_until((), stops)) + tail
                else:
                    # (text after the calls is content, so the rest of the output reads
                    # from a marker exactly where a call block does: the text between
                    # calls looks ahead only that far, and the look-ahead never nests
                    # one per call, which ran out of stack after a few hundred calls)
                    block = p.rule("call-block", tool_calls)
                    between = deviation(DeviationKind.TEXT_BETWEEN_CALLS, text_until(starts, stops, then=block))
                    rest.body = block + more_after_text(closers, between, block) + tail
                with_calls = _content_until(analysis, *starts, stops=stops, then=rest) + rest
        elif json_starts:
            # (parsing) calls at the output's start, text after them content; after
            # text, no marker tells a call from a JSON object quoted in prose: from
            # the first call start from which the calls read to the output's end
            # (a deviation: text between calls that each begin a line)
            line_starts = [f"\n{s}" for s in json_starts]
            rest = p.rule("calls-to-end", _calls_with_text_between(tool_calls, closers, line_starts, stops) + tail)
            # (held by a stream until the output ends: text after them would make them prose)
            to_end = p.rule("glued-calls-to-end", tags.calls_held(tool_calls + closers + ending(ends)))
            # (a deviation: calls that begin a line, after text, with text after them: a
            # call object inline in a sentence, "Send {"name": …} and wait.", stays text)
            text_after = deviation(DeviationKind.TEXT_AFTER_CALLS, text_until((), stops)) + ending(stops)
            own_line = p.rule("calls-on-their-own-line", tags.content(p.literal("\n")) + p.space() + tool_calls + closers + text_after)
            after_text = p.rule("glued-or-own-line-calls", p.choice(to_end, own_line))
            with_calls = p.choice(p.space() + rest, _content_until(analysis, *line_starts, *json_starts, stops=stops, then=after_text) + after_text)
        elif _bare_json_array(analysis) and calls_builder is None and not for_grammar:
            # (parsing) a JSON call list with no marker before it: at the output's
            # start, or glued to text before it ("Let me check that.[{"name": …}]"):
            # from the first "[" from which the calls read to the output's end
            rest = p.rule("calls-to-end", _calls_with_text_between(tool_calls, closers, ["\n["], stops) + tail)
            # (after text, held by a stream until the output ends: text after the list makes it prose)
            with_calls = p.choice(p.space() + rest, text_until(("[",), stops, then=rest) + tags.calls_held(rest))
        else:
            # (a dedicated format whose calls have no marker, a pythonic list: more lists
            # after text, where each begins a line, are calls: a deviation)
            more = calls_builder is not None and not for_grammar
            with_calls = p.space() + (_calls_with_text_between(tool_calls, closers, ["\n["], stops) if more else tool_calls) + tail
        if after_calls is not None:  # (the calls end the output: no text after them, nor between)
            after_calls.body = exact_tail
        if request.tool_choice is ToolChoice.REQUIRED:
            body = reasoning + with_calls
        else:
            body = reasoning + p.choice(with_calls, _content_only(analysis, stops))
            without_fallback = p.literal(boilerplate) + reasoning + with_calls
    else:
        body = reasoning + _content_only(analysis, stops)
    parser = p.literal(boilerplate) + body
    return BuiltParser(parser, boilerplate, body, tool_calls, trigger, extracts, without_fallback)


def _calls_with_text_between(calls: Parser, closers: Parser, line_starts: Sequence[str], stops: Sequence[str]) -> Parser:
    """Calls with no marker of their own (bare JSON), and more of them after
    text, where they begin a line (a deviation: text between calls)."""
    block = p.rule("call-block-on-its-line", p.space() + calls)
    between = deviation(DeviationKind.TEXT_BETWEEN_CALLS, text_until(line_starts, stops, then=block))
    return calls + more_after_text(closers, between, block)


def more_after_text(closers: Parser, between: Parser, block: Parser) -> Parser:
    """More call blocks, each after text (``between``, a deviation), once the
    calls before them are read (``closers``: the repeated closers between).
    Output that ends after the calls, the common case, tries no text between:
    one cheap check (text between is a look-ahead that reads the next block)."""
    return p.zero_or_more(p.negate(p.space() + p.end()) + closers + between + block)


def reply_lead(analysis: TemplateAnalysis, boilerplate: str, tools: bool = False) -> str:
    """What a template's history writes between the end of the generation
    prompt and a reply's text, which a model therefore writes first
    (Functionary v2's prompt ends at ``<|recipient|>``, its replies at
    ``<|recipient|>all\n<|content|>``), or "".  Only markup counts (a word
    such as ``all`` may begin a reply), and nothing the reasoning or the calls
    read (a history that writes an empty ``<think></think>``).  With ``tools``
    given, what the history writes before a reply only then
    (``tools_reply_lead``: Hunyuan's ``助手：``) comes first: text the tools
    add is the template's, never the reply's, markup or not."""
    used = [m for m in map(strip_ws, analysis.marker_fields().values()) if m]
    if tools and analysis.tools_reply_lead and not any(m in analysis.tools_reply_lead for m in used):
        return analysis.tools_reply_lead
    prompt, start = strip_ws(boilerplate), strip_ws(analysis.assistant_start)
    if not prompt or not start:
        return ""
    overlap = next((k for k in range(min(len(prompt), len(start)), 0, -1) if start.startswith(prompt[-k:])), 0)
    lead = strip_ws(start[overlap:]) if overlap else ""
    if not lead or MARKUP_CHARS.isdisjoint(lead) or any(m in lead for m in used):
        return ""
    return lead


def _bare_json_array(analysis: TemplateAnalysis) -> bool:
    """Whether calls are a JSON list with no marker before it (``[{"name": …}]``)."""
    fmt = analysis.tools.format
    return fmt.mode is ToolFormat.JSON_NATIVE and fmt.tools_array_wrapped and not (strip_ws(fmt.section_start) or strip_ws(fmt.per_call_start))
