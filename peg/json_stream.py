"""An incremental JSON checker: feed text in pieces, learn when the value ends.

Streaming parsers use it to follow a JSON value (tool-call arguments) chunk by
chunk in time linear in the value's length, instead of rescanning the value
from its start on every chunk.
"""

from __future__ import annotations

import enum
import re

_PLAIN_STRING = re.compile(r'[^"\\]*')
_CONTROL = re.compile(r"[\x00-\x1f]")
_STRING_RUN = re.compile(r'[^"\\\x00-\x1f]*')  # string characters that need no attention
_NUMBER_CHARS = frozenset("0123456789+-.eE")
_WS = frozenset(" \t\r\n")
_LITERALS = ("true", "false", "null")


class JsonProgress(enum.Enum):
    """Where the value stands after the text fed so far."""

    MORE = "more"  #: a valid prefix; the value is not finished
    DONE = "done"  #: the value ended (``end`` is its end offset in the fed text)
    ERROR = "error"  #: the text is not a prefix of any JSON value


class IncrementalJson:
    """Follows one JSON value across :meth:`feed` calls (total work is linear)."""

    def __init__(self) -> None:
        self.stack: list[str] = []  # "{" or "["
        self.expect = "value"  # value | key | colon | comma_or_close | key_or_close | value_or_close
        self.in_string = False
        self.escape = 0  # 0: none, 1: after backslash, 2..5: \\u hex digits left + 1
        self.token = ""  # a number or literal being read
        self.consumed = 0
        self.status = JsonProgress.MORE
        self.end = -1

    def feed(self, text: str) -> JsonProgress:
        """Consume ``text`` (the next piece of the value); return the progress."""
        if self.status is not JsonProgress.MORE:
            return self.status
        if self.in_string and not self.escape and _STRING_RUN.fullmatch(text):
            self.consumed += len(text)  # the common case: more of a string's plain characters
            return self.status
        i, n = 0, len(text)
        while i < n:
            if self.in_string:
                if self.escape:
                    c = text[i]
                    if self.escape == 1:
                        if c == "u":
                            self.escape = 5
                        elif c in '"\\/bfnrt':
                            self.escape = 0
                        else:
                            return self._error()
                    else:
                        if c not in "0123456789abcdefABCDEF":
                            return self._error()
                        self.escape = 0 if self.escape == 2 else self.escape - 1
                    i += 1
                    continue
                j = _PLAIN_STRING.match(text, i).end()  # type: ignore[union-attr]
                if _CONTROL.search(text, i, j):
                    return self._error()
                i = j
                if i >= n:
                    break
                if text[i] == "\\":
                    self.escape = 1
                    i += 1
                    continue
                self.in_string = False  # closing quote
                i += 1
                self._value_done()
                if self._done():
                    self.end = self.consumed + i
                    return self.status
                continue
            c = text[i]
            if self.token:
                if (self.token[0] in "tfn" and c.isalpha()) or (self.token[0] not in "tfn" and c in _NUMBER_CHARS):
                    self.token += c
                    i += 1
                    continue
                if not self._finish_token():
                    return self._error()
                if self._done():
                    self.end = self.consumed + i
                    return self.status
                continue
            if c in _WS:
                i += 1
                continue
            if not self._structural(c):
                return self._error()
            i += 1
            if self._done():
                self.end = self.consumed + i
                return self.status
        self.consumed += n
        if self.token and self.token[0] in "tfn" and self.token not in _LITERALS and not any(lit.startswith(self.token) for lit in _LITERALS):
            return self._error()
        return self.status

    # -- internals ------------------------------------------------------------------

    def _done(self) -> bool:
        # A method, not an inline test: the status changes inside the calls
        # above it, which a type checker's narrowing cannot see.
        return self.status is JsonProgress.DONE

    def _error(self) -> JsonProgress:
        self.status = JsonProgress.ERROR
        return self.status

    def _value_done(self) -> None:
        if self.expect == "colon_after_key":  # that string was a key
            self.expect = "colon"
            return
        if not self.stack:
            self.status = JsonProgress.DONE
        else:
            self.expect = "comma_or_close"

    def _finish_token(self) -> bool:
        token, self.token = self.token, ""
        if token[0] in "tfn":
            if token not in _LITERALS:
                return False
        elif not re.fullmatch(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?", token):
            return False
        self._value_done()
        return True

    def _structural(self, c: str) -> bool:
        expect = self.expect
        if expect in ("value", "value_or_close"):
            if c == "]" and expect == "value_or_close":
                return self._close("[")
            if c == "{":
                self.stack.append("{")
                self.expect = "key_or_close"
            elif c == "[":
                self.stack.append("[")
                self.expect = "value_or_close"
            elif c == '"':
                self.in_string = True
            elif c in "-0123456789" or c in "tfn":
                self.token = c
            else:
                return False
            return True
        if expect in ("key", "key_or_close"):
            if c == "}" and expect == "key_or_close":
                return self._close("{")
            if c == '"':
                self.in_string = True
                self.expect = "colon_after_key"
                return True
            return False
        if expect == "colon":
            if c == ":":
                self.expect = "value"
                return True
            return False
        if expect == "comma_or_close":
            if c == ",":
                self.expect = "key" if self.stack[-1] == "{" else "value"
                return True
            if c in "}]":
                return self._close("{" if c == "}" else "[")
            return False
        return False

    def _close(self, opener: str) -> bool:
        if not self.stack or self.stack[-1] != opener:
            return False
        self.stack.pop()
        self._value_done()
        return True

