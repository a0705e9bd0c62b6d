"""Python-literal values (as pythonic tool calls write them) translated to JSON text.

``py_to_json("{'a': True, 'b': [1, None]}", complete=True)`` is
``'{"a": true, "b": [1, null]}'``.  Strings in either quote style become JSON
strings of their raw content (escapes are kept as written, as the reference
does); ``True``/``False``/``None`` become ``true``/``false``/``null``; other
characters pass through.  The translation of a prefix is a prefix of the
translation of the whole: with ``complete=False`` an open string has no
closing quote and a word that may still grow into a literal is held back.
"""

from __future__ import annotations

import json

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
        out.append(c)
        i += 1
    return "".join(out).strip() if complete else "".join(out).lstrip()
