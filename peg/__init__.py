"""A small PEG engine: combinators, partial-input parsing, tagged trees, GBNF.

``peg`` knows nothing of chat templates; ``analysis`` builds parsers with it.
The names below are its public API; each is imported on first use
(``peg.NAME``), so importing one module stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from peg.combinators import (
        UNBOUNDED,
        Json,
        Literal,
        Parser,
        Ref,
        Repetition,
        Rest,
        Rule,
        Schema,
        Tag,
        Until,
    )
    from peg.engine import ParseResult, TagNode, parse
    from peg.errors import AutoparserError, GrammarError, PegError
    from peg.first_chars import start_of
    from peg.gbnf_reader import read_gbnf
    from peg.gbnf_writer import schema_to_gbnf, to_gbnf
    from peg.json_stream import IncrementalJson
    from peg.partial import held_back, held_back_of, partial_end
    from peg.scanning import delimiter_anchors, escaped_run
    from peg.status import Status
    from peg.text import WS, line_column
    from peg.validate import problems

_EXPORTS = {
    "Parser": "combinators",
    "Rule": "combinators",
    "Ref": "combinators",
    "UNBOUNDED": "combinators",
    "Json": "combinators",
    "Literal": "combinators",
    "Repetition": "combinators",
    "Rest": "combinators",
    "Schema": "combinators",
    "Tag": "combinators",
    "Until": "combinators",
    "parse": "engine",
    "start_of": "first_chars",
    "partial_end": "partial",
    "held_back": "partial",
    "held_back_of": "partial",
    "delimiter_anchors": "scanning",
    "escaped_run": "scanning",
    "IncrementalJson": "json_stream",
    "ParseResult": "engine",
    "Status": "status",
    "TagNode": "engine",
    "AutoparserError": "errors",
    "GrammarError": "errors",
    "PegError": "errors",
    "read_gbnf": "gbnf_reader",
    "to_gbnf": "gbnf_writer",
    "schema_to_gbnf": "gbnf_writer",
    "WS": "text",
    "line_column": "text",
    "problems": "validate",
}
__all__ = [
    "UNBOUNDED",
    "WS",
    "AutoparserError",
    "GrammarError",
    "IncrementalJson",
    "Json",
    "Literal",
    "ParseResult",
    "Parser",
    "PegError",
    "Ref",
    "Repetition",
    "Rest",
    "Rule",
    "Schema",
    "Status",
    "Tag",
    "TagNode",
    "Until",
    "delimiter_anchors",
    "escaped_run",
    "held_back",
    "held_back_of",
    "line_column",
    "parse",
    "partial_end",
    "problems",
    "read_gbnf",
    "schema_to_gbnf",
    "start_of",
    "to_gbnf",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'peg' has no attribute {name!r}")
    return getattr(importlib.import_module(f"peg.{module}"), name)
