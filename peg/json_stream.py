"""An incremental JSON checker: feed text in pieces, learn when the value ends.

Streaming parsers use it to follow a JSON value (tool-call arguments) chunk by
chunk in time linear in the value's length, instead of rescanning the value
from its start on every chunk.
"""

from __future__ import annotations

import re

from peg.status import Status

_PLAIN_STRING = re.compile(r'[^"\\]*')
_CONTROL = re.compile(r"[\x00-\x1f]")
_STRING_RUN = re.compile(r'[^"\\\x00-\x1f]*')  # string characters that need no attention
_WS = frozenset(" \t\r\n")
_LITERALS = ("true", "false", "null")
_LITERAL_PREFIXES = frozenset(word[:i] for word in _LITERALS for i in range(1, len(word) + 1))


def _number_step(state: str, c: str) -> str:
    """JSON's number syntax as a state machine, one character at a time; ""
    when ``c`` cannot continue a number in ``state`` (the states are named by
    what was read last: ``-``, ``0``, ``int``, ``.``, ``frac``, ``e``,
    ``esign``, ``exp``)."""
    digit = "0" <= c <= "9"
    if state == "":
        return "-" if c == "-" else "0" if c == "0" else "int" if digit else ""
    if state == "-":
        return "0" if c == "0" else "int" if digit else ""
    if state in ("0", "int", "frac"):
        if digit and state != "0":
            return state
        if c == "." and state != "frac":
            return "."
        return "e" if c in "eE" else ""
    if state == ".":
        return "frac" if digit else ""
    if state == "e":
        return "esign" if c in "+-" else "exp" if digit else ""
    return "exp" if digit else ""  # esign, exp


#: the states in which a number is complete
_NUMBER_ENDS = frozenset(("0", "int", "frac", "exp"))


class IncrementalJson:
    """Follows one JSON value across :meth:`feed` calls (total work is linear)."""

    def __init__(self) -> None:
        self.stack: list[str] = []  # "{" or "["
        self.expect = "value"  # value | key | colon | comma_or_close | key_or_close | value_or_close
        self.in_string = False
        self.escape = 0  # 0: none, 1: after backslash, 2..5: \\u hex digits left + 1
        self.literal = ""  # the part of true/false/null read so far
        self.number = ""  # the state of a number being read (see _number_step)
        self.number_whole_at = -1  # where the number being read last ended complete
        self.consumed = 0
        self.status = Status.NEED_MORE
        self.end = -1

    def feed(self, text: str) -> Status:  # noqa: C901 - the JSON scanner's hot loop, one branch per state (no calls per character)
        """Consume ``text`` (the next piece of the value); return the progress."""
        if self.status is not Status.NEED_MORE:
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
            if self.literal or self.number:
                # A character that cannot continue the token ends it when it is
                # complete (and is then read as what follows the value), else
                # it is an error: the text is judged as the whole-text scanner
                # (json_scan) judges it ("[00", "[--", "[trux" are errors at once).
                if self.literal:
                    grown = self.literal + c
                    if grown not in _LITERAL_PREFIXES:
                        return self._error()
                    self.literal = grown
                    i += 1
                    if grown not in _LITERALS:
                        continue
                    # no literal goes on another: it ends at its last letter
                else:
                    step = _number_step(self.number, c)
                    if step:
                        self.number = step
                        i += 1
                        if step in _NUMBER_ENDS:
                            self.number_whole_at = self.consumed + i
                        continue
                    if self.number not in _NUMBER_ENDS:
                        if self.stack or self.number_whole_at < 0:
                            return self._error()
                        # a value alone: it is the number up to where it was
                        # last whole ("0." then "{": the value is "0")
                        self.status = Status.SUCCESS
                        self.end = self.number_whole_at
                        return self.status
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
            if self.number in _NUMBER_ENDS:  # a number begun with a digit
                self.number_whole_at = self.consumed + i
            if self._done():
                self.end = self.consumed + i
                return self.status
        self.consumed += n
        return self.status

    # -- internals ------------------------------------------------------------------

    def _done(self) -> bool:
        # A method, not an inline test: the status changes inside the calls
        # above it, which a type checker's narrowing cannot see.
        return self.status is Status.SUCCESS

    def _error(self) -> Status:
        self.status = Status.FAILURE
        return self.status

    def _value_done(self) -> None:
        if self.expect == "colon_after_key":  # that string was a key
            self.expect = "colon"
            return
        if not self.stack:
            self.status = Status.SUCCESS
        else:
            self.expect = "comma_or_close"

    def _finish_token(self) -> bool:
        literal, number = self.literal, self.number
        self.literal = self.number = ""
        if literal not in _LITERALS and number not in _NUMBER_ENDS:
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
            elif c in "-0123456789":
                self.number = _number_step("", c)
                self.number_whole_at = -1
            elif c in "tfn":
                self.literal = c
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

