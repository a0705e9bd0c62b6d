"""What a message shows of a partial output: the one owner, at the message's
level, of what waits (the text level is :mod:`peg.partial`).  Where the shown
text ends, the rest of the output after it, and reasoning held back while a
call marker in an open block is undecided; shared by the whole parse of an
output cut short and by the stream."""

from __future__ import annotations

from dataclasses import replace

from analysis.messages.hooks import OutputHooks
from analysis.messages.mapper import Message
from analysis.messages.tags import REASONING, REASONING_BLOCK, REASONING_UNOPENED, TOOL, TOOL_NAME
from peg.combinators import Literal, Rest, Until
from peg.engine import ParseResult
from peg.partial import held_back, partial_end
from peg.status import Status
from peg.text import WS as _WS


def with_rest(message: Message, rest: str) -> Message:
    """``message`` with ``rest`` of the output, as written, after its content."""
    if not rest:
        return message
    return replace(message, content=message.content + rest if message.content else rest.lstrip(_WS))


def unshown_from(result: ParseResult, hooks: OutputHooks, floor: int) -> int:
    """Where the text that ``result``'s message does not show begins (not before
    ``floor``, the end of the generation prompt): a call still being named
    (shown once its name is complete) with the markers before it since the last
    capture (a section's opening), a marker cut short at the very end (or text
    held back as the possible start of one), or the whitespace the message
    trims at the end."""
    end = len(result.text)
    if result.status is Status.NEED_MORE:
        end = min(end, result.end)  # (what the parse read, as far as the frontier shows it)
    if result.frontier is not None and isinstance(result.frontier[0], Literal):
        end = min(end, result.frontier[1])
    elif result.frontier is not None and isinstance(result.frontier[0], (Until, Rest)):
        # the end of the text, held back as the possible start of a delimiter or a trailing stop
        end = min(end, partial_end(result.frontier[0], result.text, result.frontier[1]))
    unshown = [n for n in result.find(TOOL) if not n.complete and not (n.find(TOOL_NAME) and n.find(TOOL_NAME)[0].complete)]
    unshown += [n for n in result.find(REASONING_UNOPENED) if not n.complete]
    for name in hooks.message_tags:
        unshown += [n for n in result.find(name) if not n.complete and hooks.route(n, False).text is None]
    for node in unshown:
        before = [other.end for other in result.tree if other.end <= node.start]
        end = min(end, max([floor, *before]))
    while end > floor and result.text[end - 1] in _WS:
        end -= 1
    return max(end, floor)


def hold_open_reasoning(result: ParseResult, message: Message, trigger: str) -> tuple[Message, bool]:
    """On partial input, while a reasoning block is open, a tool-call marker
    (``trigger``) in it may start a call (if the block is never closed) or stay
    reasoning (if it is): the reasoning from the marker on (or from a part of
    one at its very end) waits until that is decided.  The message, and
    whether anything waits."""
    if not trigger or not message.reasoning_content:
        return message, False
    open_blocks = [b for b in result.find(REASONING_BLOCK) if not b.complete]
    nodes = open_blocks[-1].find(REASONING) if open_blocks else []
    if not nodes:
        return message, False
    raw = nodes[-1].text
    # what follows the reasoning text in the input decides: a marker part at
    # the very end of the input waits, one followed by other text does not
    written = result.text[nodes[-1].start :]
    cut = written.find(trigger)
    if cut < 0:
        cut = len(written) - held_back(written, (trigger,))
    if cut >= len(raw):
        return message, False
    shown = message.reasoning_content
    whole = raw.strip(_WS)
    if not whole or not shown.endswith(whole):
        return message, False  # not the message's last reasoning text: leave it
    kept = (shown[: len(shown) - len(whole)] + raw[:cut].strip(_WS)).rstrip(_WS)
    return replace(message, reasoning_content=kept or None), True
