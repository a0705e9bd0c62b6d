"""The project's one error hierarchy.

Every error autoparser raises on bad input derives from :class:`AutoparserError`.
Its ``str()`` is a single line saying what went wrong, where, and what was
expected; the CLI prints it and exits non-zero.  The base lives in ``peg`` (the
lowest layer) so that ``analysis`` can derive from it without ``peg`` knowing
anything about templates.
"""

from __future__ import annotations


class AutoparserError(Exception):
    """Base of all errors autoparser reports to a user."""

    exit_code: int = 2


class GrammarError(AutoparserError):
    """A GBNF grammar or a JSON schema could not be read or converted."""


class ParseError(AutoparserError):
    """Input did not match a parser (raised only where the caller asks for it)."""

    exit_code = 1
