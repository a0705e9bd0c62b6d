"""Which part of an output a generated grammar constrains.

A non-lazy grammar is applied from the start of the model's turn, after the
generation prompt was fed to it as prefill: it must accept ``generation prompt
+ output``.  A lazy grammar switches on at the first trigger the model writes
after any reasoning block (a trigger inside reasoning does not count) and must
accept the output from there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analysis.generation.generated import Generated
from analysis.generation.results import TriggerKind
from analysis.messages.tags import REASONING_BLOCK
from analysis.probing.markers import strip_ws
from peg.gbnf_reader import read_gbnf
from peg.status import Status
from peg.text import line_column


def constrained_text(generated: Generated, output: str) -> str | None:
    """The text the grammar must accept, or None when it never switches on."""
    if not generated.grammar:
        return None
    if not generated.grammar_lazy:
        return generated.generation_prompt + output
    start = _after_reasoning(generated, output)
    found: list[int] = []
    for trigger in generated.triggers:
        if trigger.type is TriggerKind.WORD:
            at = output.find(trigger.value, start)
        else:  # a pattern: the grammar applies from its first group (or the match)
            match = re.compile(trigger.value).search(output, start)
            if match is not None and trigger.type is TriggerKind.FULL_PATTERN and match.end() != len(output):
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
    blocks = result.find(REASONING_BLOCK)
    if blocks and blocks[0].complete:
        return max(blocks[0].end - offset, 0)
    end = strip_ws(generated.analysis.reasoning.end)
    return 0 if not end or end not in output else output.find(end) + len(end)


@dataclass(frozen=True)
class GrammarFit:
    """Whether an output fits the grammar generated for its request."""

    #: True when the grammar accepts the part it constrains (or never switches on).
    fits: bool
    #: Offset in the output where the grammar starts to apply (None: it never does).
    start: int | None
    status: Status | None = None
    #: Offset in the output where it stopped fitting.
    position: int | None = None
    line: int | None = None
    column: int | None = None
    expected: tuple[str, ...] = ()

    def message(self) -> str:
        """One line: fits, or where and what the grammar expected."""
        if self.start is None:
            return "fits: the lazy grammar never switches on (no trigger after the reasoning)"
        if self.fits:
            return f"fits: the grammar accepts the output from offset {self.start}"
        if self.status is Status.NEED_MORE:
            return f"does not fit: the output ends before the grammar is complete (from offset {self.start}, line {self.line}, column {self.column})"
        expected = ", ".join(self.expected) or "end of output"
        return f"does not fit at line {self.line}, column {self.column} (offset {self.position}): expected {expected}"


def check_output(generated: Generated, output: str, partial: bool = False) -> GrammarFit:
    """Run the grammar's matcher over the part of ``output`` it constrains (for a
    lazy grammar, from the first trigger after the reasoning; otherwise the whole
    turn, after the generation prompt as prefill).  A ``partial`` output fits
    when it is a valid prefix."""
    text = constrained_text(generated, output)
    if text is None:
        return GrammarFit(True, None)
    offset = len(output) - len(text)  # negative: the generation prompt is prefill
    result = read_gbnf(generated.grammar).match(text)
    fits = result.status is Status.SUCCESS or (partial and result.status is Status.NEED_MORE)
    at = max(result.position + offset, 0) if result.status is Status.FAILURE else len(output)
    line, column = line_column(output, at)
    return GrammarFit(fits, max(offset, 0), result.status, at, line, column, result.expected)
