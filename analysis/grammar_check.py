"""Which part of an output a generated grammar constrains.

A non-lazy grammar is applied from the start of the model's turn, after the
generation prompt was fed to it as prefill: it must accept ``generation prompt
+ output``.  A lazy grammar switches on at the first trigger the model writes
after any reasoning block (a trigger inside reasoning does not count) and must
accept the output from there.
"""

from __future__ import annotations

import re

from analysis.generation import Generated
from analysis.markers import strip_ws
from peg.engine import Status


def constrained_text(generated: Generated, output: str) -> str | None:
    """The text the grammar must accept, or None when it never switches on."""
    if not generated.grammar:
        return None
    if not generated.grammar_lazy:
        return generated.generation_prompt + output
    start = _after_reasoning(generated, output)
    found: list[int] = []
    for trigger in generated.triggers:
        if trigger.type == 1:  # a word
            at = output.find(trigger.value, start)
        else:  # a pattern: the grammar applies from its first group (or the match)
            match = re.compile(trigger.value).search(output, start)
            if match is not None and trigger.type == 3 and match.end() != len(output):
                match = None
            at = -1 if match is None else (match.start(1) if match.re.groups else match.start())
        if at >= 0:
            found.append(at)
    return output[min(found):] if found else None


def _after_reasoning(generated: Generated, output: str) -> int:
    """Offset in ``output`` where the reasoning block (if any) has ended."""
    if not generated.built.extracts_reasoning:
        return 0
    result = generated.parse_text(output, partial=True)
    if result.status is Status.FAILURE:
        return 0
    offset = len(generated.generation_prompt)
    blocks = result.find("reasoning-block")
    if blocks and blocks[0].complete:
        return max(blocks[0].end - offset, 0)
    end = strip_ws(generated.analysis.reasoning.end)
    return 0 if not end or end not in output else output.find(end) + len(end)
