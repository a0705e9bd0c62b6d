"""The root of the project's errors, and the PEG layer's own.

Every error autoparser reports to a user derives from :class:`AutoparserError`;
its ``str()`` is a single line saying what went wrong, where, and what was
expected.  The root lives in ``peg`` (the lowest layer) so that each layer can
derive its own family from it without ``peg`` knowing anything of the layers
above: ``peg`` has :class:`PegError`, ``analysis`` has ``AnalysisError``
(:mod:`analysis.errors`).  Which exit code an error means is the CLI's affair
(``autoparser_cli.common``).
"""

from __future__ import annotations


class AutoparserError(Exception):
    """Base of all errors autoparser reports to a user."""


class PegError(AutoparserError):
    """An error of the PEG engine layer."""


class GrammarError(PegError):
    """A GBNF grammar or a JSON schema could not be read or converted."""
