"""Python-literal values (as pythonic tool calls write them) translated to JSON text.

``py_to_json("{'a': True, 'b': [1, None]}", complete=True)`` is
``'{"a": true, "b": [1, null]}'``.  Strings in either quote style become JSON
strings of their raw content (escapes are kept as written, as the reference
does); ``True``/``False``/``None`` become ``true``/``false``/``null``; tuples
become arrays; other characters pass through.  The translation of a prefix is a prefix of the
translation of the whole: with ``complete=False`` an open string has no
closing quote and a word that may still grow into a literal is held back.
"""

from __future__ import annotations

import functools
import json

from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser, Ref

_TUPLE_BRACKETS = {"(": "[", ")": "]"}  # a tuple is a JSON array
_WORDS = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}


def py_to_json(text: str, complete: bool) -> str:
    """Translate a Python literal (or a prefix of one) to JSON text."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            raw = text[i + 1 : min(j, n)]
            if j >= n:  # still open: no closing quote yet
                out.append(json.dumps(raw, ensure_ascii=False)[:-1])
                return "".join(out)
            out.append(json.dumps(raw, ensure_ascii=False))
            i = j + 1
            continue
        if c.isalpha():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if j == n and not complete and any(w.startswith(word) and w != word for w in _WORDS):
                return "".join(out)  # may still become True/False/None
            out.append(_WORDS.get(word, word))
            i = j
            continue
        out.append(_TUPLE_BRACKETS.get(c, c))
        i += 1
    return "".join(out).strip() if complete else "".join(out).lstrip()


@functools.lru_cache(maxsize=None)
def python_value() -> Parser:
    """A Python literal: strings in either quote style, numbers, True/False/None
    (and JSON's spellings), lists, tuples and dicts, nested.  One shared rule
    (``py-value``), so a grammar holds it once."""
    value = p.rule("py-value")
    ref = Ref(value)
    ws = p.space()
    # string insides are until-scans (linear streaming); an escape is read whole
    dq = p.literal('"') + p.zero_or_more(p.choice(p.literal("\\") + p.chars("[^\\n]"), p.until('"', "\\"))) + p.literal('"')
    sq = p.literal("'") + p.zero_or_more(p.choice(p.literal("\\") + p.chars("[^\\n]"), p.until("'", "\\"))) + p.literal("'")
    number = p.chars("[-+0-9.eE]", 1, UNBOUNDED)
    word = p.choice(*(p.literal(w) for w in ("True", "False", "None", "true", "false", "null")))
    items = p.optional(ref + p.zero_or_more(ws + p.literal(",") + ws + ref) + ws + p.optional(p.literal(",") + ws))
    listing = p.literal("[") + ws + items + p.literal("]")
    tupled = p.literal("(") + ws + items + p.literal(")")
    pair = ref + ws + p.literal(":") + ws + ref
    pairs = p.optional(pair + p.zero_or_more(ws + p.literal(",") + ws + pair) + ws + p.optional(p.literal(",") + ws))
    mapping = p.literal("{") + ws + pairs + p.literal("}")
    value.body = p.choice(dq, sq, mapping, listing, tupled, word, number)
    return value
