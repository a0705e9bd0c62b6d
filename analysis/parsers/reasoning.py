"""The generation prompt's boilerplate and the reasoning block after it.
"""

from __future__ import annotations

from collections.abc import Sequence

from analysis.messages import tags
from analysis.messages.deviations import DeviationKind, deviation
from analysis.messages.tags import (
    REASONING_UNOPENED,
)
from analysis.parsers.pieces import text_until
from analysis.phases.result import (
    PrefillOutcome,
    TemplateAnalysis,
)
from analysis.probing.markers import strip_ws
from peg import combinators as p
from peg.combinators import Parser
from peg.text import WS as _WS


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


def reasoning_part(
    analysis: TemplateAnalysis,
    cleared_start: bool,
    stops: tuple[str, ...] = (),
    turn_end: Sequence[str] = (),
    for_grammar: bool = False,
    unopened: bool = False,
) -> Parser:
    """The reasoning block.  One cut off before its end marker (the output hit
    max_tokens while thinking) is reasoning too, up to the first of ``stops``
    (a tool-call marker: a call written inside an unclosed block is a call) or
    the ``turn_end`` markers that end the output.  Not ``for_grammar`` (parsing): a
    repeated opener opens one block, an end marker written again at once is
    dropped, an end marker alone at the start closes an empty one, and, with ``unopened`` (thinking is on and the model writes the
    opener, the prompt none), text up to an end marker with no opener before
    it, and no call marker in it, is reasoning (``plan</think>answer``: an
    engine dropped the opener); it shows once the end marker comes, so a
    stream holds the text until then.  ``for_grammar`` (the grammar): only a closed
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
        if for_grammar:  # (the grammar: a constrained model closes its reasoning block)
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
            blocks.append(deviation(DeviationKind.REASONING_OPENER_IN_PROMPT, p.tag(REASONING_UNOPENED, tags.reasoning_block(text))))
        return p.optional(p.choice(*blocks))
    if for_grammar:
        return p.optional(tags.reasoning_block(body))
    return p.optional(p.choice(tags.reasoning_block(body + repeated_ends), tags.reasoning_block(open_text)))
