"""A JSON value scanner that understands partial input.

``scan_json(text, pos, partial)`` returns how far a JSON value starting at ``pos``
extends.  With complete input it defers to the C decoder (fast path).  When the
input ends inside a value that could still become valid, it reports the longest
valid prefix and the characters needed to close it (``closer``), so a caller
can show a partial object or auto-close braces.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from peg.status import Status

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
_STRING_BODY = re.compile(r'(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# what can still become a number: the sign alone, or an integer part and then
# a fraction and an exponent begun (an exponent only after a digit: not "1.e")
_NUMBER_PREFIX = re.compile(r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:(?<=[0-9])[eE][+-]?[0-9]*)?)?")


@dataclass(frozen=True)
class JsonScan:
    """Where a JSON value ends, or how far it got."""

    status: Status
    end: int
    closer: str = ""  # with MORE: text that would close the value (e.g. '"}')
    expected: str = "JSON value"


class _Incomplete(Exception):
    def __init__(self, stack: list[str]):
        self.stack = stack


class _Bad(Exception):
    def __init__(self, pos: int, expected: str):
        self.pos = pos
        self.expected = expected


def scan_json(text: str, pos: int, partial: bool = False) -> JsonScan:
    """Scan one JSON value at ``pos`` (no leading whitespace skipped)."""
    if pos < len(text) and text[pos] in '{["-0123456789tfn':
        try:
            _, end = _DECODER.raw_decode(text, pos)
            # raw_decode accepts NaN/Infinity and a number cut short by the end
            # of partial input (``12`` may become ``123``): check the edges.
            if not (partial and text[pos] in "-0123456789"):
                return JsonScan(Status.SUCCESS, end)
        except json.JSONDecodeError:
            pass
    scanner = _Scanner(text)
    try:
        end = scanner.value(pos, [])
    except _Incomplete as inc:
        if partial:
            return JsonScan(Status.NEED_MORE, len(text), "".join(reversed(inc.stack)))
        return JsonScan(Status.FAILURE, len(text), expected="end of JSON value")
    except _Bad as bad:
        return JsonScan(Status.FAILURE, bad.pos, expected=bad.expected)
    if partial and end == len(text) and text[pos] in "-0123456789":
        return JsonScan(Status.NEED_MORE, end, "")
    return JsonScan(Status.SUCCESS, end)


class _Scanner:
    """Recursive scanner used when the fast path cannot decide."""

    def __init__(self, text: str):
        self.text = text
        self.n = len(text)

    def ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()  # type: ignore[union-attr]

    def value(self, pos: int, stack: list[str]) -> int:
        if pos >= self.n:
            raise _Incomplete(stack)
        c = self.text[pos]
        if c == "{":
            return self.obj(pos + 1, stack + ["}"])
        if c == "[":
            return self.arr(pos + 1, stack + ["]"])
        if c == '"':
            return self.string(pos, stack)
        if c == "-" or c.isdigit():
            m = _NUMBER.match(self.text, pos)
            pm = _NUMBER_PREFIX.match(self.text, pos)
            if pm and pm.end() == self.n and not (m and m.end() == self.n):
                raise _Incomplete(stack)  # a number cut short: "3.", "1e", "-"
            if m and m.end() < self.n:
                return m.end()
            if pm and pm.end() == self.n:
                if m and m.end() == self.n:
                    return m.end()
                raise _Incomplete(stack)
            if m:
                return m.end()
            raise _Bad(pos, "number")
        for word in ("true", "false", "null"):
            if self.text.startswith(word, pos):
                return pos + len(word)
            rest = self.text[pos:]
            if len(rest) < len(word) and word.startswith(rest):
                raise _Incomplete(stack)
        raise _Bad(pos, "JSON value")

    def string(self, pos: int, stack: list[str]) -> int:
        m = _STRING_BODY.match(self.text, pos + 1)
        end = m.end()  # type: ignore[union-attr]
        if end < self.n and self.text[end] == '"':
            return end + 1
        if end >= self.n or self._escape_prefix(end):
            raise _Incomplete(stack + ['"'])
        raise _Bad(end, "string character or '\"'")

    def _escape_prefix(self, pos: int) -> bool:
        """Input ends in the middle of an escape sequence (``\\`` or ``\\u12``)."""
        rest = self.text[pos:]
        return bool(re.fullmatch(r"\\(u[0-9a-fA-F]{0,3})?", rest))

    def obj(self, pos: int, stack: list[str]) -> int:
        pos = self.ws(pos)
        if pos >= self.n:
            raise _Incomplete(stack)
        if self.text[pos] == "}":
            return pos + 1
        while True:
            if pos >= self.n:
                raise _Incomplete(stack)
            if self.text[pos] != '"':
                raise _Bad(pos, "object key")
            pos = self.ws(self.string(pos, stack))
            if pos >= self.n:
                raise _Incomplete(stack)
            if self.text[pos] != ":":
                raise _Bad(pos, "':'")
            pos = self.ws(pos + 1)
            pos = self.ws(self.value(pos, stack))
            if pos >= self.n:
                raise _Incomplete(stack)
            if self.text[pos] == "}":
                return pos + 1
            if self.text[pos] != ",":
                raise _Bad(pos, "',' or '}'")
            pos = self.ws(pos + 1)

    def arr(self, pos: int, stack: list[str]) -> int:
        pos = self.ws(pos)
        if pos >= self.n:
            raise _Incomplete(stack)
        if self.text[pos] == "]":
            return pos + 1
        while True:
            pos = self.ws(self.value(pos, stack))
            if pos >= self.n:
                raise _Incomplete(stack)
            if self.text[pos] == "]":
                return pos + 1
            if self.text[pos] != ",":
                raise _Bad(pos, "',' or ']'")
            pos = self.ws(pos + 1)
