"""Python-literal values (as pythonic tool calls write them) translated to JSON text.

``py_to_json("{'a': True, 'b': [1, None]}", complete=True)`` is
``'{"a": true, "b": [1, null]}'``.  Strings in either quote style become JSON
strings of what they mean: Python's escapes (``\\n``, ``\\'``, ``\\u00e9``…)
are decoded, as ``ast.literal_eval`` would.  The reference keeps them as
written, so ``code="a\\nb"`` holds a backslash and an ``n`` there but a newline
here (a deliberate difference: the model means a newline).
``True``/``False``/``None`` become ``true``/``false``/``null``; tuples become
arrays; other characters pass through.  The translation of a prefix is a prefix of the
translation of the whole: with ``complete=False`` an open string has no
closing quote and a word that may still grow into a literal is held back.
"""

from __future__ import annotations

import functools
import json
import re

from peg import combinators as p
from peg.combinators import UNBOUNDED, Parser, Ref

_TUPLE_BRACKETS = {"(": "[", ")": "]"}  # a tuple is a JSON array
_WORDS = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}


_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\n": ""}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"


def decode_escapes(raw: str, final: bool) -> tuple[str, int]:
    """The inside of a Python string literal with its escapes decoded, and how
    many characters of ``raw`` that used.  Unless ``final``, an escape cut short
    at the end (``\\``, ``\\x4``, ``\\12``) is left unused for the next piece;
    unknown or malformed escapes stay as written, as Python keeps ``\\q``."""
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        j = raw.find("\\", i)
        if j < 0:
            out.append(raw[i:])
            return "".join(out), n
        out.append(raw[i:j])
        if j + 1 >= n:  # a lone backslash at the end
            if final:
                out.append("\\")
                return "".join(out), n
            return "".join(out), j
        c = raw[j + 1]
        if c in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[c])
            i = j + 2
        elif c in _HEX_ESCAPES:
            width = _HEX_ESCAPES[c]
            digits = raw[j + 2 : j + 2 + width]
            if len(digits) == width and all(d in _HEX for d in digits) and int(digits, 16) <= 0x10FFFF:
                out.append(chr(int(digits, 16)))
                i = j + 2 + width
            elif not final and len(digits) < width and all(d in _HEX for d in digits) and j + 2 + len(digits) == n:
                return "".join(out), j  # cut short: wait for the rest
            else:
                out.append(raw[j : j + 2])
                i = j + 2
        elif c in _OCTAL:
            k = j + 1
            while k < n and k < j + 4 and raw[k] in _OCTAL:
                k += 1
            if not final and k == n and k < j + 4:
                return "".join(out), j  # more octal digits may follow
            out.append(chr(int(raw[j + 1 : k], 8)))
            i = k
        else:
            out.append(raw[j : j + 2])
            i = j + 2
    return "".join(out), n


#: the inside of a string in each quote: up to the closing quote, an escaped character never one
_STRING_INSIDE = {q: re.compile(f"[^{q}\\\\]*(?:\\\\.[^{q}\\\\]*)*", re.DOTALL) for q in "\"'"}


def py_to_json(text: str, complete: bool) -> str:
    """Translate a Python literal (or a prefix of one) to JSON text."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = _STRING_INSIDE[c].match(text, i + 1).end()  # type: ignore[union-attr]  # (at the closing quote, or the end)
            if j < n and text[j] != c:  # a backslash that ends the text: still open
                j = n
            raw = text[i + 1 : min(j, n)]
            if j >= n:  # still open: no closing quote yet (an escape cut short waits), or left unclosed
                string = json.dumps(decode_escapes(raw, final=complete)[0], ensure_ascii=False)
                out.append(string if complete else string[:-1])
                return "".join(out)
            out.append(json.dumps(decode_escapes(raw, final=True)[0], ensure_ascii=False))
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


def json_number() -> Parser:
    """A number as JSON writes it (so its text passes through as JSON text):
    ``007`` or ``1e+-2`` is no number."""
    digits = p.chars("[0-9]", 1, UNBOUNDED)
    return (
        p.optional(p.literal("-"))
        + p.choice(p.literal("0"), p.chars("[1-9]", 1, 1) + p.chars("[0-9]", 0, UNBOUNDED))
        + p.optional(p.literal(".") + digits)
        + p.optional(p.chars("[eE]", 1, 1) + p.optional(p.chars("[-+]", 1, 1)) + digits)
    )


@functools.cache
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
    number = json_number()
    word = p.choice(*(p.literal(w) for w in ("True", "False", "None", "true", "false", "null")))
    items = p.optional(ref + p.zero_or_more(ws + p.literal(",") + ws + ref) + ws + p.optional(p.literal(",") + ws))
    listing = p.literal("[") + ws + items + p.literal("]")
    tupled = p.literal("(") + ws + items + p.literal(")")
    pair = ref + ws + p.literal(":") + ws + ref
    pairs = p.optional(pair + p.zero_or_more(ws + p.literal(",") + ws + pair) + ws + p.optional(p.literal(",") + ws))
    mapping = p.literal("{") + ws + pairs + p.literal("}")
    value.body = p.choice(dq, sq, mapping, listing, tupled, word, number)
    return value
