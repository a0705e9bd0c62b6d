"""Rules on how turns follow each other: the generation prompt is the header
history writes, ``add_generation_prompt`` is obeyed, and history grows by
appending (a prefix cache reuses it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial

from analysis.lint.conversations import (
    REPLY,
    REPLY_REASONING,
    TOOLS,
    USER_1,
    USER_2,
    Message,
    Render,
    Renderer,
    call,
    call_turn,
    tool_result,
)
from analysis.lint.findings import Evidence, Finding, Severity, common_suffix_length, diverge_at, one_line

GENERATION_PROMPT = "generation-prompt"
GENERATION_PROMPT_FLAG = "generation-prompt-flag"
HISTORY_PREFIX = "history-prefix"


def ignored_flag_tail(renderer: Renderer) -> str:
    """The generation prompt a template writes although ``add_generation_prompt``
    is false ("" when it obeys the flag): the prompt renders alike either
    way, and a finished assistant turn ends with it too."""
    asked, unasked = renderer.render([USER_1]), renderer.render([USER_1], generation_prompt=False)
    finished = renderer.render([USER_1, REPLY], generation_prompt=False)
    if not (asked.ok and finished.ok) or asked.text != unasked.text:
        return ""
    assert asked.text is not None and finished.text is not None
    if not finished.text.startswith(asked.text):  # the prompt pre-fills what history does not write
        tail = asked.text[diverge_at(asked.text, finished.text) :]
        return tail if tail.strip() and finished.text.endswith(tail) else ""
    # the prompt ends with the header history writes before the reply, and the finished turn with it again
    user_end = asked.text.rfind(str(USER_1["content"]))
    tail = asked.text[user_end + len(str(USER_1["content"])) :] if user_end >= 0 else ""
    reply_follows = finished.text[len(asked.text) :].lstrip().startswith(str(REPLY["content"]))
    return tail if tail.strip() and reply_follows and finished.text.endswith(tail) else ""


def generation_prompt_flag(renderer: Renderer) -> Iterator[Finding]:
    """``add_generation_prompt=false`` still writes the generation prompt."""
    tail = ignored_flag_tail(renderer)
    if tail:
        finished = renderer.render([USER_1, REPLY], generation_prompt=False).text or ""
        yield Finding(
            GENERATION_PROMPT_FLAG,
            Severity.WARNING,
            f"add_generation_prompt=false still writes the generation prompt ({_show(tail)}): a finished "
            "conversation (training data, continue_final_message) ends with an open assistant turn",
            (Evidence("the conversation, add_generation_prompt=false", finished, len(finished) - len(tail),
                      renderer.render([USER_1, REPLY], generation_prompt=False).line_at(len(finished) - len(tail))),),
        )


def _last_turn(renderer: Renderer, reply: Message, tools: Sequence[Message] | None = None) -> str | None:
    """The conversation ending with ``reply`` as the template writes it (the
    generation prompt it writes regardless taken off), None when it raises or
    writes no last assistant turn."""
    finished = renderer.render([USER_1, reply], generation_prompt=False, tools=tools)
    if not finished.ok or _NEEDLE not in (finished.text or ""):
        return None
    text = finished.text or ""
    tail = ignored_flag_tail(renderer)
    if tail:
        asked = renderer.render([USER_1]).text or ""
        text = text[: len(text) - common_suffix_length(text, asked)]
    return text


#: what every reply lint renders holds (its content, or its call's argument)
_NEEDLE = "Paris"
#: a tool-call turn, as the model writes it and as history keeps it (followed by its result)
_CALL_TURN = call_turn([call("Zq81Lint0", {"city": "Paris"})])


def _only_reasoning(span: str, markers: Sequence[str]) -> bool:
    """``span`` holds the reasoning text, or only reasoning markers and whitespace."""
    if REPLY_REASONING["reasoning_content"] in span:
        return True
    if not any(marker in span for marker in markers):
        return False
    for marker in markers:
        span = span.replace(marker, "")
    return not span.strip()


def _dropped_spans(written: str, later: str) -> list[str]:
    """What ``later`` may leave out of ``written``: the spans whose removal
    makes ``written`` a prefix of ``later`` (starting where the two differ, or
    a little before, as a marker may begin with the same characters)."""
    at = diverge_at(written, later)
    spans = []
    for start in range(at, max(0, at - _MARKER_OVERLAP) - 1, -1):
        rest = later[start:]
        for end in range(at + 1, min(len(written), start + _LONGEST_DROP) + 1):
            if rest.startswith(written[end:]):
                spans.append(written[start:end])
                break
    return spans


#: the longest span :func:`_dropped_spans` looks for (a reasoning block of the probes)
_LONGEST_DROP = 400
#: how far before the difference a dropped span may start
_MARKER_OVERLAP = 16


def generation_prompt(renderer: Renderer, reasoning_markers: Sequence[str] = ()) -> Iterator[Finding]:
    """The prompt that asks for a reply must be how history writes the start
    of that reply: the reply, rendered as the last turn, starts with the
    prompt (with or without reasoning).  A prompt that pre-fills a reasoning
    block history does not write is info; any other difference is an error."""
    prompt = renderer.render([USER_1])
    if not prompt.ok:
        return
    assert prompt.text is not None
    best: tuple[int, str, Message] | None = None
    for reply in (REPLY_REASONING, REPLY):
        written = _last_turn(renderer, reply)
        if written is None:
            continue
        if written.startswith(prompt.text):
            return
        at = _token_start(prompt.text, diverge_at(prompt.text, written))
        if best is None or at > best[0]:
            best = (at, written, reply)
    if best is None:
        return
    at, written, reply = best
    for marker in reasoning_markers:  # (a marker the two share the start of is the difference)
        start = prompt.text.rfind(marker, 0, at + len(marker))
        if start >= 0 and start + len(marker) > at:
            at = start
    in_history = renderer.render([USER_1, reply], generation_prompt=False)
    evidence = (
        Evidence("generation prompt", prompt.text, at, prompt.line_at(at)),
        Evidence("the reply in history", written, at, in_history.line_at(at)),
    )
    if _only_reasoning(prompt.text[at:], reasoning_markers):
        yield Finding(
            GENERATION_PROMPT,
            Severity.INFO,
            f"the generation prompt pre-fills a reasoning block ({_show(prompt.text[at:])}) that history does "
            "not write for the reply",
            evidence,
        )
        return
    yield Finding(
        GENERATION_PROMPT,
        Severity.ERROR,
        f"the generation prompt is not how history writes the reply's start: they differ at character {at} "
        f"({_show(prompt.text[at:at + 24])} in the prompt, {_show(written[at:at + 24])} in history): the model "
        "is prompted one way and was trained another",
        evidence,
    )


def history_prefix(renderer: Renderer, reasoning_markers: Sequence[str] = (), with_calls: bool = False) -> Iterator[Finding]:
    """The next turn's prompt starts with this turn's prompt and reply as the
    template wrote them: a reply (with and without reasoning) and, with
    ``with_calls``, a tool-call turn (its markers as history writes them).  A
    template that drops earlier reasoning breaks that on purpose (info, with
    the cost); anything else is an error."""
    broken: list[tuple[str, str, int, str, str, Callable[[int], int | None], Render]] = []  # (written, later, where, kind, what, lines)
    cases: list[tuple[str, Message, list[Message], Sequence[Message] | None]] = [
        ("reply", REPLY_REASONING, [USER_2], None),
        ("reply", REPLY, [USER_2], None),
    ]
    if with_calls:  # (a call turn, followed by its result: the markers history writes for it)
        cases.append(("tool-call turn", _CALL_TURN, [tool_result("Zq81Lint0")], TOOLS))
    for what, reply, after, tools in cases:
        finished = renderer.render([USER_1, reply], generation_prompt=False, tools=tools)
        written = _last_turn(renderer, reply, tools)
        later = renderer.render([USER_1, reply, *after], tools=tools)
        if written is None or not later.ok:
            continue
        assert later.text is not None
        written, line_of = _served(renderer.render([USER_1], tools=tools), finished, written)
        if later.text.startswith(written):
            continue
        at = _token_start(written, diverge_at(written, later.text))
        harmony = _harmony_stored(written)
        if harmony is not None and later.text.startswith(harmony):
            kind = _HARMONY
        elif any(_only_reasoning(span, reasoning_markers) for span in _dropped_spans(harmony or written, later.text)):
            kind = _REASONING if harmony is None else _HARMONY
        else:
            kind = _REWRITE
        broken.append((written, later.text, at, kind, what, line_of, later))
    if not broken:
        return
    written, later_text, at, kind, what, line_of, later = next((b for b in broken if b[3] == _REWRITE), broken[0])
    evidence = (
        Evidence(f"the {what} as the last turn", written, at, line_of(at)),
        Evidence(f"the same {what} in the next prompt", later_text, at, later.line_at(at)),
    )
    if any(b[3] == _HARMONY for b in broken) and all(b[3] != _REWRITE for b in broken):
        yield Finding(
            HISTORY_PREFIX,
            Severity.INFO,
            "harmony: the last reply ends with <|return|>, which history writes as <|end|> (and earlier analysis "
            f"channels are dropped), by the format's design: a prefix cache recomputes from character {at} "
            f"(of {len(later_text)}) every turn",
            evidence,
        )
        return
    if all(b[3] == _REASONING for b in broken):
        yield Finding(
            HISTORY_PREFIX,
            Severity.INFO,
            "earlier turns lose their reasoning: the next prompt is not this prompt plus the reply, so a prefix "
            f"cache recomputes from character {at} (of {len(later_text)}) every turn",
            evidence,
        )
        return
    yield Finding(
        HISTORY_PREFIX,
        Severity.ERROR,
        f"history is not a prefix: the next prompt rewrites the {what} as written at character "
        f"{at} ({_show(written[at:at + 24])} becomes {_show(later_text[at:at + 24])}), so a prefix cache "
        "recomputes from there and the model sees its own reply changed",
        evidence,
    )


_REASONING, _HARMONY, _REWRITE = "reasoning", "harmony", "rewrite"

#: the shortest end of the generation prompt taken to be the reply's header
_HEADER_MIN = 4


def _served(prompt: Render, finished: Render, written: str) -> tuple[str, Callable[[int], int | None]]:
    """What a server holds after the reply: the generation prompt and what
    the model wrote after it.  That is the reply as the last turn when it
    starts with the prompt; when it does not (a prompt that writes more than
    history, such as a system block written only with the generation prompt:
    the generation-prompt rule's finding), the prompt followed by what the
    last turn writes after the longest end of the prompt it holds.  With the
    line of each character of it."""
    text = prompt.text
    if text is None or written.startswith(text) or diverge_at(text, written) >= text.find(str(USER_1["content"])):
        return written, finished.line_at  # (a prompt that parts from history after the conversation: its pre-fill or header)
    for start in range(len(text) - _HEADER_MIN + 1):
        at = written.rfind(text[start:])
        if at >= 0:
            cut = at + len(text) - start
            return text + written[cut:], partial(_line_in_served, prompt, finished, len(text), cut)
    return written, finished.line_at


def _line_in_served(prompt: Render, finished: Render, prompt_length: int, cut: int, offset: int) -> int | None:
    """The line of a character of :func:`_served`'s text: the prompt's, then the last turn's after ``cut``."""
    return prompt.line_at(offset) if offset < prompt_length else finished.line_at(offset - prompt_length + cut)


def _harmony_stored(written: str) -> str | None:
    """How the harmony format stores a reply that ends the sampling: a final
    message written last ends with ``<|return|>``, and history keeps it with
    ``<|end|>`` (by the format's design); None when ``written`` is not a
    harmony render (``<|start|>…<|message|>`` turns) ending with ``<|return|>``."""
    body = written.rstrip()
    if "<|start|>" not in written or "<|message|>" not in written or not body.endswith("<|return|>"):
        return None
    return body[: -len("<|return|>")] + "<|end|>"


def _token_start(text: str, at: int) -> int:
    """``at`` moved back to the start of the marker it falls in (``<|im_end|>``
    and ``<|endoftext|>`` part after ``<|``): back over a marker's opening
    punctuation."""
    while at > 0 and text[at - 1] in _MARKER_OPENERS:
        at -= 1
    return at


#: the characters markers open with (``<|``, ``[``, ``<｜``)
_MARKER_OPENERS = "<|[{｜"


def _show(text: str) -> str:
    """A short piece of a render, quoted with its whitespace visible."""
    return f'"{one_line(text)}"' if text else "the end"
