"""What generation produces for one request (:class:`Generated`): the prompt,
the parser and, made on first use, the grammar and its triggers; and the
policy that turns a parse into an outcome (a partial output's held-back
reasoning, an output cut short, a failure kept whole as content)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from analysis.generation.results import ParseOutcome, Trigger, TriggerKind
from analysis.generation.shown_text import hold_open_reasoning, unshown_from, with_rest
from analysis.messages.deviations import Deviation, DeviationKind, deviations_in
from analysis.messages.deviations import at as deviation_at
from analysis.messages.hooks import GENERIC, OutputHooks
from analysis.messages.mapper import Message, map_finished, map_result, map_streamed
from analysis.messages.tags import CONTENT, CONTENT_HELD, TOOL, TOOL_ARGS
from analysis.parsers.builder import BuiltParser
from analysis.parsers.json_calls import bare_json_call_starts, json_call_start
from analysis.parsers.pieces import call_closers
from analysis.parsers.prompting import Prompt
from analysis.parsers.request import ChatRequest, ReasoningFormat, ToolChoice
from analysis.parsers.schemas import tool_functions
from analysis.phases.result import PrefillOutcome, TemplateAnalysis, ToolFormat
from analysis.probing.markers import strip_ws
from peg.combinators import Until
from peg.engine import ParseResult, TagNode, parse
from peg.errors import GrammarError
from peg.gbnf_writer import to_gbnf
from peg.status import Status
from peg.text import WS, line_column


@dataclass(frozen=True)
class Generated:
    """Everything generation produces for one request."""

    analysis: TemplateAnalysis
    request: ChatRequest
    prompt: Prompt
    prefill: PrefillOutcome
    built: BuiltParser
    preserved_tokens: tuple[str, ...]
    #: how the format's own captures are read (its handler's, else the generic reading)
    hooks: OutputHooks = GENERIC
    #: builds the parser the grammar is made from (None: ``built`` is it,
    #: or names it as its ``grammar_source``); called once, when the grammar is asked for
    build_for_grammar: Callable[[], BuiltParser] | None = field(default=None, compare=False, repr=False)

    @cached_property
    def _built_for_grammar(self) -> BuiltParser:
        """The parser the grammar is made from, built once, on first use."""
        return self.built if self.build_for_grammar is None else self.build_for_grammar()

    @cached_property
    def _grammar_parts(self) -> tuple[str, bool, tuple[Trigger, ...], str]:
        """The grammar, made on first use (parsing needs none of it)."""
        built = self.built if self.build_for_grammar is None else replace(self.built, grammar_source=self._built_for_grammar)
        return _grammar(built, self.request)

    @property
    def grammar(self) -> str:
        """The GBNF grammar ("" when the request constrains nothing, or on error)."""
        return self._grammar_parts[0]

    @property
    def grammar_lazy(self) -> bool:
        """Whether the grammar applies only from a trigger on."""
        return self._grammar_parts[1]

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """What switches a lazy grammar on."""
        return self._grammar_parts[2]

    @property
    def grammar_error(self) -> str:
        """Why no grammar could be made ("" when it could)."""
        return self._grammar_parts[3]

    def output_grammar(self) -> tuple[str, str]:
        """The grammar of the model's output alone (for an engine that
        constrains only what the model writes, unlike llama.cpp, which feeds
        the generation prompt as prefill), and why there is none ("" when there
        is).  A lazy grammar already is one; a non-lazy one is the grammar less
        the generation prompt, where the prompt is all boilerplate (not where
        it opens a block the output goes on inside)."""
        if not self.grammar:
            return "", self.grammar_error or "nothing to constrain"
        if self.grammar_lazy:
            return self.grammar, ""
        built = self._built_for_grammar
        if built.boilerplate != self.generation_prompt:
            return "", "the generation prompt opens a block the output goes on inside: the grammar needs it as prefill"
        try:
            return to_gbnf(built.body), ""
        except GrammarError as exc:
            return "", str(exc)

    @property
    def generation_prompt(self) -> str:
        return self.prompt.generation_prompt

    @property
    def keeps_reasoning_in_content(self) -> bool:
        return self.request.reasoning_format is ReasoningFormat.DEEPSEEK_LEGACY

    def parse_text(self, output: str, partial: bool = False, cut: bool = False) -> ParseResult:
        """Run the parser over generation prompt + ``output`` (``cut``: partial
        input that is all there is, see :func:`peg.engine.parse`)."""
        return parse(self.built.parser, self.generation_prompt + output, partial=partial, cut=cut)

    def parse(self, output: str, partial: bool = False) -> ParseOutcome:
        """Parse a model output.  A failed final parse never loses text: what
        reads before the break stays, the rest of the output is content, and
        the warning says where and what was expected.

        How many passes: one, on every output that reads and holds no call
        marker as text (the path of well-formed output, and of any partial
        parse).  The others only explain an output that does not read as it
        stands, each at most once:

        - it fails: a partial parse of the form without its all-content
          fallback tells an output cut short from a broken one, then a
          partial parse of the parser reads what a stream showed (2 more);
          broken, a partial parse of the output up to the break reads what
          stands before it (1 more);
        - a call marker is read as text: a partial parse says whether the
          output ends inside a call (1), or, calls read, the calls from the
          marker after them are (1); else the calls from the first marker are
          parsed, and where they break after calls that read, the output up
          to the break (2); else the call block from the marker to a closer
          is parsed for its error (1); else, with no call read, the form
          without the fallback is parsed to find a cut (1, then the 2 above).

        So at most nine parses in all (the worst: a call marker in the text,
        no call read, and the output cut short), each linear in the output."""
        result = self.parse_text(output, partial)
        if result.status is Status.FAILURE:
            cut = self._cut_short(output, result, partial)
            if cut is not None:
                return cut
            return self._failed(output, result)
        if partial:
            message = map_result(result, self.keeps_reasoning_in_content, self.hooks)
            if result.status is Status.NEED_MORE:
                message = hold_open_reasoning(result, message, self.built.trigger)[0]
            return ParseOutcome(message, True, need_more=result.status is Status.NEED_MORE, deviations=self._deviations(result))
        message, unread_calls = map_finished(result, self.keeps_reasoning_in_content, self.hooks)
        # (where no call reads, one scan of the content for any call marker: the opener among them)
        holds_marker = bool(self.call_markers) and (bool(message.tool_calls) or self._find_marker(message.content, 0, len(message.content)) >= 0)
        marker_in_text = holds_marker and self._marker_in_text(result, message)
        if marker_in_text:
            # a call marker read as text: if the output ends inside a call (a
            # partial parse reads one more call), it was cut short, as the stream showed
            prefix = self.parse_text(output, partial=True, cut=True)
            if prefix.status is Status.NEED_MORE:
                shown = map_result(prefix, self.keeps_reasoning_in_content, self.hooks, final=True)
                if len(shown.tool_calls) > len(message.tool_calls) + len(unread_calls):
                    # (unless calls from an earlier marker break before it: they stand, as a stream showed them)
                    broken = self.calls_before_a_break(output, result, message, inside=True) if not message.tool_calls else None
                    if broken is not None:
                        return broken
                    return self._cut_outcome(output, prefix, "the output ends inside a tool call (cut off at max_tokens?)")
                cut_at = self._cut_inside_a_call(result) if message.tool_calls and not unread_calls else -1
                if cut_at >= 0:
                    # (a stream holds the calls before it, as the last one may yet decide
                    # where their values end: the whole parse's calls stand, its text stays)
                    noted = self._deviations(result, cut_from=cut_at)
                    return ParseOutcome(message, False, "the output ends inside a tool call (cut off at max_tokens?)", need_more=True, deviations=noted)
            # else the form without its all-content fallback breaks somewhere:
            # where calls read before the break (a call list whose second call
            # breaks), they stay, as a stream showed them, and the rest is content
            broken = self.calls_before_a_break(output, result, message)
            if broken is not None:
                return broken
            # else a quoted marker is prose; a block from one
            # to a call's closer is a call that does not read (kept as text, reported;
            # the calls around it are calls)
            unread = self._unread_block(result)
            if unread is not None:
                return ParseOutcome(message, False, unread.warning, excerpt=unread.excerpt, deviations=self._deviations(result))
            without_fallback = self.built.without_fallback
            if without_fallback is not None and not message.tool_calls:
                # no call read: the output may end inside one (cut off at max_tokens)
                failed = parse(without_fallback, self.generation_prompt + output)
                cut = self._cut_short(output, failed, partial) if failed.status is Status.FAILURE else None
                if cut is not None:
                    return cut
        if unread_calls:
            return ParseOutcome(message, False, _unread_calls_warning(unread_calls, len(self.generation_prompt)), deviations=self._deviations(result))
        noted = self._deviations(result)
        # (text that holds a call marker is never silent content: where no call reads, a
        # call's own marker with the section's opener left out is noted too, not read)
        if marker_in_text or (holds_marker and not message.tool_calls):
            noted = tuple(sorted((*noted, *self._markers_as_text(result)), key=lambda d: (d.start, d.end)))
        header_cut = next((d for d in noted if d.kind is DeviationKind.CUT_SHORT), None) if noted else None
        if header_cut is not None:  # (the form's own reading of a cut, harmony's header: its text kept, as written)
            message = with_rest(message, output[header_cut.start :])
            return ParseOutcome(message, False, "the output ends inside a message header (cut off at max_tokens?)", need_more=True, deviations=noted)
        return ParseOutcome.read(message, noted)

    def calls_before_a_break(self, output: str, result: ParseResult, message: Message, inside: bool = False) -> ParseOutcome | None:
        """Where the calls from the first call marker the content holds break
        after calls that read (a call list whose second call breaks): those
        calls, as a stream shows them, then the rest of the output as content
        (reported); None when no more calls read so than in ``message``
        (``inside``: or when they break only at the output's end, a cut)."""
        calls = self.built.tool_calls
        if calls is None:
            return None
        text = result.text
        at = min((m for node in result.find(CONTENT) if (m := self._find_marker(text, node.start, node.end)) >= 0), default=-1)
        if at < 0:
            return None
        trigger = self.built.trigger
        if trigger and not text.startswith(trigger, at):
            return None  # (a marker inside a section, its opener left out: no block of its own)
        failed = parse(calls, text, start=at)
        if failed.status is not Status.FAILURE or (inside and failed.furthest >= len(text)):
            return None
        broken = self._failed(output, failed)
        # (more calls, or calls from a marker before the first call read: a stream shows calls in order)
        first = _first_call(result.tree) if message.tool_calls else None
        before = first is not None and at < first.start and bool(broken.message.tool_calls)
        return broken if before or len(broken.message.tool_calls) > len(message.tool_calls) else None

    def _markers_as_text(self, result: ParseResult) -> tuple[Deviation, ...]:
        """The first call marker the content holds as text (quoted in prose: the exact reading, noted)."""
        text, prompt = result.text, len(self.generation_prompt)
        runs = _text_runs(result)
        for name in self.hooks.message_tags:  # (a message kept as content, harmony's to an unknown recipient)
            runs += [n for n in result.find(name) if self.hooks.route(n, False).field == CONTENT]
        for node in sorted(runs, key=lambda n: n.start):
            at = self._find_marker(text, node.start, node.end)
            if at >= 0:
                marker = next(m for m in self.call_markers if text.startswith(m, at))
                return (deviation_at(DeviationKind.CALL_MARKER_IN_TEXT, text, at, at + len(marker), prompt),)
        return ()

    def _deviations(self, result: ParseResult, cut_from: int = -1) -> tuple[Deviation, ...]:
        """The deviations ``result``'s reading used, in the output; with
        ``cut_from`` (an offset in the parsed text), the output cut short there too."""
        prompt = len(self.generation_prompt)
        found = deviations_in(result, prompt)
        if cut_from >= 0:
            # (what the reading made of the cut call's text, a closer left out before it, is the cut)
            cut_start = max(len(result.text[:cut_from].rstrip()), prompt)
            found = tuple(d for d in found if d.start + prompt < cut_start)
            found += (deviation_at(DeviationKind.CUT_SHORT, result.text, max(cut_from, prompt), len(result.text), prompt),)
        return found

    def _cut_inside_a_call(self, result: ParseResult) -> int:
        """Where (in the parsed text) the text after the last call read begins
        a call at a call marker inside which the output ends (a partial parse
        of the calls from that marker runs out of input); else -1."""
        trigger, calls, last = self.built.trigger, self.built.tool_calls, _last_call(result.tree)
        if not self.call_markers or calls is None or last is None:
            return -1
        text = result.text
        at = self._find_marker(text, last.end, len(text))
        if at < 0:
            return -1
        # (a marker inside a section, its opener left out, MiniMax's <invoke name=: read as the section holds it)
        calls_text = text if not trigger or text.startswith(trigger, at) else text[:at] + trigger + text[at:]
        return at if parse(calls, calls_text, partial=True, start=at).status is Status.NEED_MORE else -1

    def _unread_block(self, result: ParseResult) -> UnreadBlock | None:
        """The first call block in the text: a call marker in the content with a
        call's closer after it (in the same run of content), from which no call
        reads; None when every call marker in the text is prose (quoted, no block)."""
        trigger, calls = self.built.trigger, self.built.tool_calls
        closers = call_closers(self.analysis.tools.format)
        if not closers or calls is None:
            return None
        text, prompt = result.text, len(self.generation_prompt)
        for node in result.find(CONTENT):
            at = text.find(trigger, node.start, node.end)
            if at < 0:
                continue
            # (the first marker with a closer after it opens the block; where the
            # first has none, no later one does: one scan per run of text)
            ends = [e + len(c) for c in closers if (e := text.find(c, at + len(trigger), node.end)) >= 0]
            if not ends:
                continue
            close = min(ends)
            at = text.rfind(trigger, at, close - min(len(c) for c in closers))  # the marker nearest the closer
            failed = parse(calls, text, start=at)
            why = self.failure_message(failed) if failed.status is Status.FAILURE else "the output does not read on after it"
            where = f"a tool call block at offset {at - prompt}-{close - prompt} does not read (kept as text)"
            return UnreadBlock(f"{where}: {why}", failed.excerpt(origin=prompt) if failed.status is Status.FAILURE else "")
        return None

    @cached_property
    def call_markers(self) -> tuple[str, ...]:
        """The markers that start a call: the trigger, and where the format has
        them, the per-call opener and the function's tag (MiniMax's
        ``<invoke name=``, written after the calls' section opener)."""
        fmt, prefix = self.analysis.tools.format, strip_ws(self.analysis.tools.function.name_prefix)
        markers = [self.built.trigger, strip_ws(fmt.per_call_start)]
        if not self.built.trigger and self.hooks is GENERIC and self.built.tool_calls is not None:
            markers += bare_json_call_starts(self.analysis)  # (Llama 3's {"name": a call with no marker)
            if fmt.tools_array_wrapped and json_call_start(fmt):
                markers.append("[" + json_call_start(fmt))  # (a bare call list's start)
        if self.hooks is GENERIC and fmt.mode is not ToolFormat.JSON_NATIVE and prefix.startswith("<") and len(prefix) >= 3:
            markers.append(prefix)
        # (a JSON call object after the calls inside a section, Llama 4's <|python_start|>…: where a call may start)
        if self.hooks is GENERIC and self.built.trigger and not strip_ws(fmt.per_call_start):
            markers.append(json_call_start(fmt))
        # (a pythonic call list with no marker before it: "[name(" for a declared function)
        if not self.built.trigger and strip_ws(fmt.section_start) == "[" and self.built.tool_calls is not None:
            markers += [f"[{f['name']}(" for f in tool_functions(self.request)]
        return tuple(m for m in dict.fromkeys(markers) if m)

    def _find_marker(self, text: str, start: int, end: int) -> int:
        """The first call marker in ``text[start:end]`` (an offset in ``text``), or -1."""
        best = -1
        if start >= end:  # (the common case: nothing after the calls)
            return best
        for marker in self.call_markers:
            at = text.find(marker, start, end)
            if at >= 0 and (best < 0 or at < best):
                best = at
        return best

    def _marker_in_text(self, result: ParseResult, message: Message) -> bool:
        """Whether the content holds a call marker as text (before, between or
        after the calls: text runs end only at a marker a call reads from)."""
        text = result.text
        if not message.tool_calls:  # (where no call reads, a marker inside a section is prose: the trigger opens calls)
            if self.built.trigger:
                return self.built.trigger in message.content
            # (a bare call list's "[{" quoted in prose is prose: it opens a list only where the
            # output or the calls begin, or after text, where the output ends inside the list)
            content = message.content
            return any(
                (content.lstrip().startswith(m) or self._ends_inside_a_list(result.text, m)) if m.startswith("[") else m in content
                for m in self.call_markers
            )
        last = None if result.rejected else _last_call(result.tree)
        if last is not None:
            # (text between calls ends at the first marker: only the text after them can
            # hold one, or the text before them, where a block from a marker broke)
            if self._find_marker(text, last.end, len(text)) >= 0:
                return True
            first = _first_call(result.tree)
            if first is None or self._find_marker(text, len(self.generation_prompt), first.start) < 0:
                return False  # (the common case: no marker before the first call, reasoning included)
            return any(self._find_marker(text, node.start, min(node.end, first.start)) >= 0 for node in _text_runs(result) if node.start < first.start)
        return any(self._find_marker(text, node.start, node.end) >= 0 for node in _text_runs(result))

    def _ends_inside_a_list(self, text: str, start: str) -> bool:
        """Whether ``text`` ends inside a call list that opens at its last ``start``
        (a bare list after text, cut short: a partial parse of the calls runs out of input)."""
        calls, at = self.built.tool_calls, text.rfind(start)
        return calls is not None and at >= 0 and parse(calls, text, partial=True, start=at).status is Status.NEED_MORE

    def _cut_short(self, output: str, failed: ParseResult, partial: bool) -> ParseOutcome | None:
        """An output that fails only because it ends early (cut off at max_tokens):
        what it holds so far, as a partial parse reads it (the calls already
        complete are kept, an unfinished one is kept as written, never completed),
        with ``ok=False`` and a warning.  None when no continuation of the output
        could fit (it breaks the format)."""
        if partial:
            return None
        # a valid beginning of the form without its all-content fallback (calls and all)
        form = self.built.without_fallback or self.built.parser
        prefix = parse(form, self.generation_prompt + output, partial=True)
        if prefix.status is not Status.NEED_MORE or _in_text_before_calls(prefix):
            return None
        result = self.parse_text(output, partial=True, cut=True)  # what streaming showed, all there is
        if result.status is Status.FAILURE:
            return None
        warning = "the output ends before it is complete (cut off at max_tokens?): " + self.failure_message(failed)
        return self._cut_outcome(output, result, warning)

    def _cut_outcome(self, output: str, prefix: ParseResult, warning: str) -> ParseOutcome:
        """What an output cut short holds, read from its partial parse
        ``prefix``: nothing more comes, so reasoning a stream held back while
        its block was open (a call marker in it included) is reasoning now; a
        call cut off inside a value or its header is no call (its text is
        content; one cut in its closers, its values whole, is closed); the
        text of a call not shown yet stays, as written."""
        message, unread_calls = map_finished(prefix, self.keeps_reasoning_in_content, self.hooks)
        prompt = len(self.generation_prompt)
        rest_from = unshown_from(prefix, self.hooks, prompt)
        if unread_calls:
            warning += "; " + _unread_calls_warning(unread_calls, prompt)
            # (the content holds the calls' text as written, the markers before them
            # included: the rest of the output follows it)
            end = max(end for _, end in unread_calls)
            while end > rest_from and prefix.text[end - 1] in WS:  # (the message's trailing whitespace: trimmed)
                end -= 1
            rest_from = max(rest_from, end)
        key_from = _unread_key_from(prefix, message)
        rest_from = min(rest_from, key_from)
        message = with_rest(message, output[rest_from - prompt :])
        # (the cut call: the first call kept as text, from its first character, else
        # the text a stream had not shown, or the key a call kept as one was cut in)
        cut_from = min((start for start, _ in unread_calls), default=min(unshown_from(prefix, self.hooks, prompt), key_from))
        while cut_from < len(prefix.text) and prefix.text[cut_from] in WS:
            cut_from += 1
        return ParseOutcome(message, False, warning, need_more=True, deviations=self._deviations(prefix, cut_from=cut_from))

    def _failed(self, output: str, result: ParseResult) -> ParseOutcome:
        """The outcome of a failed final parse, block by block: what reads
        before the place where the output stops fitting the format, as a
        stream shows it (reasoning, text, the calls whose blocks are complete;
        a call whose block the break cuts is not one), then the rest of the
        output, as written, as content.  No text is lost; where nothing before
        the break reads, the output unchanged is the content."""
        excerpt = result.excerpt(origin=len(self.generation_prompt))
        warning = self.failure_message(result)
        prompt = len(self.generation_prompt)
        before = self.parse_text(output[: max(result.furthest - prompt, 0)], partial=True)
        if before.status is Status.NEED_MORE:
            shown, held = map_streamed(before, self.keeps_reasoning_in_content, self.hooks)
            shown = hold_open_reasoning(before, shown, self.built.trigger)[0]
            rest_from = unshown_from(before, self.hooks, prompt)
            open_calls = [n.start for n in before.find(TOOL) if not n.complete] if held else []
            # (a message-shaped call, harmony's, open at the break: the same)
            open_calls += [
                n.start for name in self.hooks.message_tags for n in before.find(name) if not n.complete and self.hooks.route(n, False).field == TOOL_ARGS
            ]
            if open_calls:  # (a call whose arguments the break cuts is no call: its text stays, markers before it too)
                rest_from = min(rest_from, _last_end_before(before.tree, min(open_calls), prompt))
            deviations = self._deviations(before)
            header_cut = next((d for d in deviations if d.kind is DeviationKind.CUT_SHORT), None) if deviations else None
            if header_cut is not None:  # (the form's own reading of a cut before the break, harmony's header: its text stays)
                rest_from = min(rest_from, header_cut.start + prompt)
            rest = output[rest_from - prompt :]
            return ParseOutcome(with_rest(shown, rest), False, warning, excerpt=excerpt, deviations=deviations)
        return ParseOutcome(Message(content=output), False, warning, excerpt=excerpt)

    def failure_message(self, result: ParseResult) -> str:
        """The parse failure, with positions in the model output (not counting the prompt)."""
        offset = len(self.generation_prompt)
        at = max(result.furthest - offset, 0)
        output = result.text[offset:]
        line, column = line_column(output, at)
        expected = ", ".join(sorted(result.expected)) or "end of input"
        found = repr(output[at : at + 20]) if at < len(output) else "end of output"
        rules = f" (in {' > '.join(result.rule_stack)})" if result.rule_stack else ""
        return (
            f"output does not fit the format at line {line}, column {column} (offset {at}): "
            f"expected {expected}, found {found}{rules}"
        )

    def to_json(self) -> dict[str, Any]:
        """What generation produced, with the reference's field names where they exist."""
        return {
            "prompt": self.prompt.text,
            "generation_prompt": self.generation_prompt,
            "reasoning_prefill": self.prefill.value,
            "boilerplate": self.built.boilerplate,
            "parser": self.built.parser.dump(),
            "grammar": self.grammar,
            "grammar_lazy": self.grammar_lazy,
            "grammar_triggers": [t.to_json() for t in self.triggers],
            "grammar_error": self.grammar_error,
            "preserved_tokens": list(self.preserved_tokens),
        }


def _text_runs(result: ParseResult) -> list[TagNode]:
    """The runs of reply text in ``result``, in order: content, and content a
    stream showed once complete (Llama 4's ``<|python_start|>…<|python_end|>``)."""
    return sorted((*result.find(CONTENT), *result.find(CONTENT_HELD)), key=lambda n: n.start)


def _first_call(nodes: tuple[TagNode, ...]) -> TagNode | None:
    """The first call capture in ``nodes`` and below, in document order."""
    for node in nodes:
        if node.name == TOOL:
            return node
        if node.children:
            inner = _first_call(node.children)
            if inner is not None:
                return inner
    return None


def _last_call(nodes: tuple[TagNode, ...]) -> TagNode | None:
    """The last call capture in ``nodes`` and below, in document order (a walk
    back from the end, which stops at the first)."""
    for node in reversed(nodes):
        if node.children:
            inner = _last_call(node.children)
            if inner is not None:
                return inner
        if node.name == TOOL:
            return node
    return None


def _unread_key_from(prefix: ParseResult, message: Message) -> int:
    """Where the text of a key a cut call object began after its values
    starts (``, "id": "call_00``: the call stands, the key's text is content),
    or the end of the text.  Only in a call ``message`` keeps as one, its
    arguments whole, cut in a key after them."""
    text = prefix.text
    calls = prefix.find(TOOL)
    last = calls[-1] if calls else None
    if last is None or last.complete or len(message.tool_calls) != len(calls) or not last.children:
        return len(text)
    if not any(c.name == TOOL_ARGS and c.complete for c in last.children):
        return len(text)
    end = max(c.end for c in last.children if c.complete)
    at = end
    while at < len(text) and (text[at] in WS or text[at] in ",}"):
        at += 1
    return end if text.startswith('"', at) else len(text)


def _last_end_before(nodes: tuple[TagNode, ...], at: int, floor: int) -> int:
    """The end of the last capture, at any depth, that ends at or before ``at`` (``floor`` if none)."""
    end = floor
    for node in nodes:
        if node.end <= at:
            end = max(end, node.end)
        elif node.start < at and node.children:
            end = max(end, _last_end_before(node.children, at, floor))
    return end


def _unread_calls_warning(spans: tuple[tuple[int, int], ...], prompt: int) -> str:
    """The warning for calls kept as text, their arguments not a JSON object."""
    where = ", ".join(f"{start - prompt}-{end - prompt}" for start, end in spans)
    return f"{'a tool call' if len(spans) == 1 else 'tool calls'} at offset {where} kept as text: arguments that are not a JSON object"


@dataclass(frozen=True)
class UnreadBlock:
    """A call block kept as text: the warning naming its span and why, and the
    output's line at the place it stopped reading, with a caret."""

    warning: str
    excerpt: str


def _in_text_before_calls(prefix: ParseResult) -> bool:
    """Whether a partial parse ran out of input in text that a call would end
    (a marker in it read as text, as no call reads from it): more output might
    bring a call, but this one did not break off inside anything."""
    frontier = prefix.frontier
    if frontier is None:
        return False
    if isinstance(frontier[0], Until):
        # (tentative text before calls, or the turn's text a section opener holds,
        # Llama 4's <|python_start|>…<|python_end|>, still open: it may be prose)
        return frontier[0].tentative or any(not n.complete for n in prefix.find(CONTENT_HELD))
    # a marker not begun at the very end, where no call is open: the output
    # ended between a reply's text and calls that never came
    begun = frontier[1] < len(prefix.text)
    return not begun and not any(not n.complete for n in prefix.find(TOOL))


def _grammar(built: BuiltParser, request: ChatRequest) -> tuple[str, bool, tuple[Trigger, ...], str]:
    lazy = built.tool_calls is not None and bool(built.trigger) and request.tool_choice is ToolChoice.AUTO
    if built.tool_calls is None and request.json_schema is None:
        if request.has_tools:  # tools were given, but the template writes no tool calls
            return "", False, (), "the template has no tool-call format (its analysis found none): the tools constrain nothing"
        return "", False, (), ""
    source = built.grammar_source or built
    try:
        grammar = to_gbnf(source.tool_calls if lazy else source.parser)  # type: ignore[arg-type]
    except GrammarError as exc:
        return "", lazy, (), str(exc)
    if not lazy:
        triggers: tuple[Trigger, ...] = ()
    elif built.trigger_patterns:
        triggers = tuple(Trigger(TriggerKind.PATTERN, pattern) for pattern in built.trigger_patterns)
    else:
        triggers = (Trigger(TriggerKind.WORD, built.trigger),)
    return grammar, lazy, triggers, ""
