"""The analysis of a template (phases and handler) and what it generates per
request: parser, grammar, triggers; parsing, streaming, hints and checks of a
parsed message.

The names below are this layer's public API; each is imported on first use
(``analysis.generation.NAME``), so importing one of its modules stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis._lazy import lazy_getattr

if TYPE_CHECKING:
    from analysis.generation.analysis_cache import cached_analysis
    from analysis.generation.analyzer import analyze_template
    from analysis.generation.call_check import CallProblem, call_problems
    from analysis.generation.generated import Generated
    from analysis.generation.generator import AutoParser, auto_parser
    from analysis.generation.grammar_check import GrammarFit, check_output
    from analysis.generation.hints import HintKind, ParseHint, parse_hints
    from analysis.generation.openai_stream import OpenAIStream
    from analysis.generation.results import ParseOutcome, Trigger, TriggerKind
    from analysis.generation.review import ParseReview, review_parse
    from analysis.generation.streaming import StreamParser, stream_output

_EXPORTS = {
    "analyze_template": "analyzer",
    "cached_analysis": "analysis_cache",
    "AutoParser": "generator",
    "auto_parser": "generator",
    "Generated": "generated",
    "ParseOutcome": "results",
    "Trigger": "results",
    "TriggerKind": "results",
    "StreamParser": "streaming",
    "OpenAIStream": "openai_stream",
    "stream_output": "streaming",
    "parse_hints": "hints",
    "ParseHint": "hints",
    "HintKind": "hints",
    "call_problems": "call_check",
    "CallProblem": "call_check",
    "ParseReview": "review",
    "review_parse": "review",
    "check_output": "grammar_check",
    "GrammarFit": "grammar_check",
}
__all__ = [
    "AutoParser",
    "CallProblem",
    "Generated",
    "GrammarFit",
    "HintKind",
    "OpenAIStream",
    "ParseHint",
    "ParseOutcome",
    "ParseReview",
    "StreamParser",
    "Trigger",
    "TriggerKind",
    "analyze_template",
    "auto_parser",
    "cached_analysis",
    "call_problems",
    "check_output",
    "parse_hints",
    "review_parse",
    "stream_output",
]
__getattr__ = lazy_getattr(__name__, _EXPORTS)
