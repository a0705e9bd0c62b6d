"""Rules on what a template reads besides the conversation: the tokenizer's
BOS token, thinking switches, the clock, and the training mask's blocks."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from analysis.lint import engines
from analysis.lint.conversations import (
    COMMON_REASONING_MARKERS,
    REPLY,
    REPLY_REASONING,
    USER_1,
    USER_2,
    Message,
    Renderer,
)
from analysis.lint.findings import Evidence, Finding, Severity, diverge_at
from analysis.template.rendering import ChatTemplate, RenderRequest

DOUBLE_BOS = "double-bos"
THINKING_SWITCHES = "thinking-switches"
GENERATION_BLOCK = "generation-block"
DATE_IN_PROMPT = "date-in-prompt"

#: the names of variables that switch reasoning on or off or set its effort
_SWITCH = re.compile(r"think|reason|effort", re.IGNORECASE)


@dataclass(frozen=True)
class Switch:
    """A reasoning switch the template reads, the values tried, and what
    setting it changes: the generation prompt, the history, both or neither."""

    name: str
    values: tuple[object, ...]
    changes_prompt: bool
    changes_history: bool

    @property
    def takes_effect(self) -> bool:
        return self.changes_prompt or self.changes_history

    def to_json(self) -> dict[str, object]:
        """``{"name", "changes_prompt", "changes_history"}``."""
        return {"name": self.name, "changes_prompt": self.changes_prompt, "changes_history": self.changes_history}

    def describe(self) -> str:
        """``enable_thinking (changes the generation prompt)``."""
        what = [w for w, on in (("the generation prompt", self.changes_prompt), ("history", self.changes_history)) if on]
        return f"{self.name} (changes {' and '.join(what) or 'nothing'})"


#: the values a switch is tried with (booleans, efforts, and the words of render options)
_VALUES: tuple[object, ...] = (False, True, "low", "high", "none", "all")


def _histories(markers: Sequence[str]) -> list[list[Message]]:
    """Conversations with a reasoning turn in history, the reasoning under each
    key clients use, and inside the content between the template's own markers."""
    reasoning = str(REPLY_REASONING["reasoning_content"])
    turns: list[Message] = [{**REPLY, key: reasoning} for key in ("reasoning_content", "reasoning", "thinking")]
    start, end = markers if len(markers) == 2 else COMMON_REASONING_MARKERS
    turns.append({**REPLY, "content": f"{start}{reasoning}{end}{REPLY['content']}"})
    # (a turn before the last assistant turn: some switches keep only those)
    return [[USER_1, turn, USER_2, REPLY, _USER_3] for turn in turns]


_USER_3: Message = {"role": "user", "content": "And in Oslo?"}


def thinking_switches(renderer: Renderer, markers: Sequence[str] = ()) -> tuple[Switch, ...]:
    """The reasoning switches the template reads while it renders a prompt or
    a conversation with reasoning in history (variables read but not set
    whose names speak of thinking, reasoning or effort), each rendered with
    several values to see what it changes."""
    histories = _histories(markers)
    read = set(renderer.render([USER_1]).notes.read_unset)
    for history in histories:
        read |= set(renderer.render(history).notes.read_unset)
    names = sorted(n for n in read if _SWITCH.search(n))
    out = []
    for name in names:
        # alone, and with the other switches all on or all off (a switch may act only beside another)
        groups = [[{**dict.fromkeys(names if others is not None else (), others), name: value} for value in _VALUES] for others in (None, True, False)]
        prompts = {renderer.render([USER_1], extra=setting).text for setting in groups[0]}
        changes_history = any(
            len({_before_last_user(renderer.render(history, extra=setting).text) for setting in group}) > 1
            for history in histories
            for group in groups
        )
        out.append(Switch(name, _VALUES, len(prompts) > 1, changes_history))
    return tuple(out)


def _before_last_user(text: str | None) -> str | None:
    """A render up to the last user turn's text (the history before it)."""
    if text is None:
        return None
    at = text.rfind(str(_USER_3["content"]))
    return text[:at] if at >= 0 else text


def reasoning_switches(template: ChatTemplate) -> tuple[Switch, ...]:
    """The reasoning switches ``template`` reads and what each changes (what ``caps`` shows)."""
    return thinking_switches(Renderer.starting(template))


def reasoning_kept(renderer: Renderer) -> bool:
    """Whether an earlier turn's reasoning (``reasoning_content``) is written in a later prompt."""
    later = renderer.render([USER_1, REPLY_REASONING, USER_2]).text or ""
    return str(REPLY_REASONING["reasoning_content"]) in later


def switches_finding(renderer: Renderer, markers: Sequence[str] = ()) -> Iterator[Finding]:
    """Info: which switches the template reads, and whether reasoning survives
    in history; a warning for a switch that changes nothing."""
    switches = thinking_switches(renderer, markers)
    if not switches:
        return
    for switch in switches:
        if not switch.takes_effect:
            yield Finding(
                THINKING_SWITCHES,
                Severity.WARNING,
                f"reads {switch.name!r}, but the prompt and history render the same whatever it is set to "
                f"({', '.join(map(repr, switch.values))}): a client that sets it changes nothing",
            )
    working = [s.describe() for s in switches if s.takes_effect]
    if working:
        kept = "kept" if reasoning_kept(renderer) else "dropped"
        yield Finding(
            THINKING_SWITCHES,
            Severity.INFO,
            f"reasoning switches: {', '.join(working)}; by default, reasoning of earlier turns is {kept} in history",
        )


def double_bos(renderer: Renderer, bos_token: str, add_bos_token: bool | None) -> Iterator[Finding]:
    """The template writes the BOS token while the tokenizer adds one too."""
    if not add_bos_token or not bos_token:
        return
    prompt = renderer.render([USER_1])
    text = prompt.text or ""
    if text.startswith(bos_token):
        yield Finding(
            DOUBLE_BOS,
            Severity.ERROR,
            f"the template writes the BOS token {bos_token!r} and the tokenizer adds one too (add_bos_token): "
            "the model sees two",
            (Evidence("generation prompt", text, 0, prompt.line_at(0)),),
            engines=engines.with_property("bos", engines.ADDS),
        )


def generation_block(renderer: Renderer) -> Iterator[Finding]:
    """Info: no ``{% generation %}`` block marks the assistant's text, so
    transformers' ``return_assistant_tokens_mask`` masks nothing."""
    rendered = renderer.render([USER_1, REPLY], generation_prompt=False)
    if rendered.ok and rendered.notes.generation_blocks == 0:
        text = rendered.text or ""
        at = text.find(str(REPLY["content"]))
        yield Finding(
            GENERATION_BLOCK,
            Severity.INFO,
            "no {% generation %} block around the assistant's text: transformers' return_assistant_tokens_mask "
            "cannot mark what the model wrote (training masks need it)",
            line=rendered.line_at(at) if at >= 0 else None,
        )


_DAYS = (datetime(2026, 1, 1, 12, 0, 0), datetime(2026, 7, 15, 23, 59, 0))


def date_in_prompt(renderer: Renderer) -> Iterator[Finding]:
    """Info: the prompt changes with the date (``strftime_now``), so a prompt
    cache keyed on it is lost when the day changes."""
    template = renderer.template
    request = RenderRequest([*renderer.base, USER_1], add_generation_prompt=True)
    saved = template.clock
    attempts = []
    try:
        for day in _DAYS:
            template.clock = lambda day=day: day
            attempts.append(template.attempt(request, trace=True))
    finally:
        template.clock = saved
    first, second = (a.text for a in attempts)
    if first is not None and second is not None and first != second:
        at = diverge_at(first, second)
        yield Finding(
            DATE_IN_PROMPT,
            Severity.INFO,
            f"the prompt writes today's date (it differs at character {at} between two days): every cached "
            "prompt is recomputed when the date changes",
            (
                Evidence("rendered on 2026-01-01", first, at, attempts[0].notes.line_at(at)),
                Evidence("rendered on 2026-07-15", second, at, attempts[1].notes.line_at(at)),
            ),
        )
