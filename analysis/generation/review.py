"""What a parse says beside its message, as data: the hints (a request
setting that would have read the output otherwise) and the problems of the
calls read (each way a call breaks its tool's schema).  A serving engine and
the CLI get the same: ``parse`` prints each problem as a warning and each hint
in its own words, and exits 1 when there is a problem."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.generation.call_check import CallProblem, call_problems, schema_notes
from analysis.generation.generated import Generated
from analysis.generation.hints import ParseHint, parse_hints
from analysis.generation.results import ParseOutcome


@dataclass(frozen=True)
class ParseReview:
    """The hints and call problems of one parse."""

    hints: tuple[ParseHint, ...]
    #: empty for a failed or partial parse (its calls are not final)
    call_problems: tuple[CallProblem, ...]
    #: what the call check could not check (a type JSON Schema does not know): not problems
    schema_notes: tuple[str, ...] = ()

    @property
    def calls_valid(self) -> bool:
        """Whether every call read fits its tool's schema."""
        return not self.call_problems


def review_parse(generated: Generated, output: str, outcome: ParseOutcome, partial: bool = False) -> ParseReview:
    """The hints and call problems of ``outcome``, the parse of ``output`` by
    ``generated`` (``partial``: the output was parsed as cut short)."""
    hints = parse_hints(generated, output, outcome, partial)
    checked = outcome.ok and not partial
    problems = call_problems(outcome.message, generated.request.tools) if checked else []
    notes = schema_notes(outcome.message, generated.request.tools) if checked else []
    return ParseReview(tuple(hints), tuple(problems), tuple(notes))
