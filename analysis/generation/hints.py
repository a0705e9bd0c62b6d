"""Hints for a parse that did not go as the user expected.

The parse itself is exact to the request; these look at *why* an output did not
fit and suggest the option that would have read it: the output holds several
tool calls but ``parallel_tool_calls`` is off (all are read; the grammar allows
one), the output is cut short (a
``--partial`` parse reads it), or it holds the template's tool-call marker but
the request has no tools.  Each hint is a sentence; the CLI prints them.
"""

from __future__ import annotations

from analysis.generation.generated import Generated
from analysis.generation.results import ParseOutcome
from analysis.parsers.builder import trigger_marker


def parse_hints(generated: Generated, output: str, outcome: ParseOutcome, partial: bool) -> list[str]:
    """What would have read ``output`` where ``outcome`` did not (or read no
    call where a call marker shows)."""
    request = generated.request
    hints: list[str] = []
    if len(outcome.message.tool_calls) > 1 and not request.parallel_tool_calls:
        hints.append(
            f"the model wrote {len(outcome.message.tool_calls)} tool calls but parallel_tool_calls is off: all are read; "
            "pass --parallel-tool-calls (or set it in --request), as the grammar allows one call without it"
        )
    if not outcome.ok and not partial and not hints and outcome.need_more:  # a valid beginning, cut short
        hints.append("the output ends early (cut off at max_tokens?): try --partial")
    if not request.has_tools and not outcome.message.tool_calls:
        marker = trigger_marker(generated.analysis)
        if marker and marker in output:
            hints.append(
                f"the output holds the template's tool-call marker {marker!r} but the request has no tools: "
                "give --tools (or tools in --request)"
            )
    return hints
