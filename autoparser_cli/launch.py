"""The ``autoparser`` console script.

Two answers come before the command-line framework is imported (that import
is most of a command's start-up time):

- ``autoparser --version`` (``-V``);
- ``autoparser --help`` and ``autoparser COMMAND --help`` (or ``-h``): the
  text Typer wrote the first time, kept in the disk cache
  (:mod:`analysis.disk_cache`) under a key made of the command, the program's
  name (``autoparser`` or ``__main__.py``), this tool's version, the CLI's sources, Typer's installation, Python's version and the
  help's width, so it is the text Typer would write.

Everything else goes to the Typer application in :mod:`autoparser_cli.main`.
"""

from __future__ import annotations

import sys

from autoparser_cli import __version__

_HELP_FLAGS = ("--help", "-h")


def main() -> None:
    """Run the ``autoparser`` command with ``sys.argv``."""
    args = sys.argv[1:]
    if args in (["--version"], ["-V"]):
        sys.stdout.write(f"autoparser {__version__}\n")
        return
    if args and args[-1] in _HELP_FLAGS and (len(args) == 1 or (len(args) == 2 and not args[0].startswith("-"))):
        _help(args)
        return
    from autoparser_cli.main import app

    app()


def _help(args: list[str]) -> None:
    from analysis import disk_cache

    key, folder = _help_key(args[:-1]), disk_cache.cache_dir()
    text = disk_cache.load("help", key, folder)
    if text is not None:
        sys.stdout.write(text.decode("utf-8"))
        return
    import contextlib
    import io

    from autoparser_cli.main import app

    written = io.StringIO()
    try:
        with contextlib.redirect_stdout(written):
            code = app(args, standalone_mode=False)
    except Exception:  # noqa: BLE001 - no such command, ...: Typer says so, as always
        app(args)
        return
    sys.stdout.write(written.getvalue())
    if not code:
        disk_cache.store("help", key, written.getvalue().encode("utf-8"), folder)


def _help_key(command: list[str]) -> str:
    """What the help text of ``command`` (none: the top level) depends on (stat
    calls only: no import of Typer)."""
    import hashlib
    import importlib.util
    import os

    # (click names the program from argv[0]: "autoparser", or "python -m autoparser_cli")
    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    parts = [*command, program, __version__, sys.version, str(min(_columns(), 80))]  # click wraps help at 80 columns at most
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.find_spec("typer")
    sources = [os.path.join(here, name) for name in sorted(os.listdir(here))]
    sources.append(os.path.join(os.path.dirname(here), "analysis", "fixtures.py"))  # (render's --scenario names)
    sources.append(os.path.join(os.path.dirname(here), "analysis", "parsers", "request.py"))  # (--reasoning-format's)
    for full in [*sources, spec.origin if spec and spec.origin else "typer"]:
        path = os.path.basename(full)
        if full.endswith(".py") and os.path.isfile(full):
            stat = os.stat(full)
            parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` finds it (``COLUMNS``,
    then the terminal, then 80), without importing shutil."""
    import os

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        stream = sys.__stdout__
        try:
            columns = os.get_terminal_size(stream.fileno()).columns if stream is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80
