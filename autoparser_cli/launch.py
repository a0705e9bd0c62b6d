"""The ``autoparser`` console script.

``autoparser --version`` answers here, before the command-line framework is
imported (that import is most of a command's start-up time); everything else
goes to the Typer application in :mod:`autoparser_cli.main`.
"""

from __future__ import annotations

import sys

from autoparser_cli import __version__


def main() -> None:
    """Run the ``autoparser`` command with ``sys.argv``."""
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"autoparser {__version__}\n")
        return
    from autoparser_cli.main import app

    app()
