"""What a parse of a partial output shows, and the rest of the output after it
(shared by the whole parse of a failed output and by the stream)."""

from __future__ import annotations

from dataclasses import replace

from analysis.messages.hooks import OutputHooks
from analysis.messages.mapper import Message
from analysis.messages.tags import REASONING_UNOPENED, TOOL, TOOL_NAME
from peg.combinators import Literal, Rest, Until
from peg.engine import ParseResult, partial_end
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
