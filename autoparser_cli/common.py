"""Shared CLI plumbing: error handling, JSON option parsing, template resolution.

Importing this module stays cheap (``--version`` and ``--help`` must answer in
well under 0.1 s): Rich and the analysis are imported where they are used.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from autoparser_cli.textsafe import one_line_safe, terminal_safe

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


def console() -> Console:
    """A console for stdout.  Made at each use (cheap), as Rich fixes a console's
    width when it is made with ``COLUMNS`` set, and one process may run many
    commands (tests do).  A closed pipe (``| head``) raises BrokenPipeError,
    which :func:`handle_errors` ends quietly with 0 (Rich's own way exits 1)."""
    return _console_class()(highlight=False)


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return PipeConsole


def _closed_pipe() -> typer.Exit:
    """stdout's reader is gone (``| head``): nothing more is written (not at
    exit either: stdout goes to /dev/null), and the command ends with 0, as
    other Unix tools do."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # (no file descriptor: a test's captured stdout)
        pass
    return typer.Exit(0)


def show(renderable: Any) -> None:
    """Print a renderable to stdout; a table's title goes first on a line of
    its own, never wrapped or cut (in a CI log, 80 columns wide, a title laid
    out within its table broke mid-word).  Piped (not a terminal), no line
    ends in spaces."""
    from rich.table import Table

    out = console()
    if isinstance(renderable, Table) and renderable.title is not None:
        title, renderable.title = renderable.title, None
        out.print(title, soft_wrap=True)
    if out.is_terminal:
        out.print(renderable)
        return
    with out.capture() as captured:  # piped: a table pads its lines to its width; those spaces go
        out.print(renderable)
    write_stdout("".join(line.rstrip(" ") + "\n" for line in captured.get().splitlines()))


def err_console() -> Console:
    """A console for stderr: errors, notes, hints, progress (made at each use)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def error_line(message: str) -> None:
    """Print a one-line ``error:`` to stderr (the message made safe for a terminal)."""
    err_console().print(f"[bold red]error:[/] {escape_text(one_line_safe(message))}", soft_wrap=True)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line error to stderr and return the Exit to raise."""
    error_line(message)
    return typer.Exit(code)


def write_excerpt(excerpt: str) -> None:
    """Print a caret excerpt (a line, then a caret under a place in it) to
    stderr under an error line, indented; control characters are shown as
    escapes and the caret moves with them, and it is placed by display width
    (a CJK character or an emoji takes two columns)."""
    from rich.cells import cell_len
    from rich.text import Text

    line, _, caret = excerpt.partition("\n")
    at = max(len(caret) - 1, 0)  # (the library's caret counts characters; a terminal shows cells)
    shown = "  " + terminal_safe(line) + "\n  " + " " * cell_len(terminal_safe(line[:at])) + "^"
    err_console().print(Text(shown), soft_wrap=True)


def excerpt_at(text: str, position: int, width: int = 60) -> str:
    """The line of ``text`` around ``position`` (at most ``width`` characters)
    and a caret line under ``position``: a caret excerpt for :func:`write_excerpt`."""
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    end = len(text) if end < 0 else end
    lo = max(start, position - width // 2)
    return text[lo : min(end, lo + width)] + "\n" + " " * (position - lo) + "^"


def note(message: str, label: str = "note") -> None:
    """Print a one-line ``note:`` or ``hint:`` to stderr."""
    err_console().print(f"[bold yellow]{label}:[/] {escape_text(one_line_safe(message))}", soft_wrap=True)


def escape_text(text: str) -> str:
    """Escape Rich markup in template or model text (``[INST]`` must print as is)."""
    from rich.markup import escape

    return escape(text)


def exit_code(exc: Exception) -> int:
    """The exit code a project error ends the command with: 2, as every family
    is bad input (a template that cannot be loaded, compiled or rendered, or
    hit a limit; unusable requests, tools, files or limit settings; a grammar
    or schema that cannot be converted).  The errors carry no code: a family
    that should end otherwise is told apart here: a format ``export`` cannot
    express is a verdict on the template (1).  A model output that does
    not fit its format is not an error: ``parse`` prints the message and
    exits 1 itself."""
    from analysis.errors import ExportError

    return 1 if isinstance(exc, ExportError) else 2


#: the library's settings, as this CLI's options spell them (for the
#: messages of :class:`~analysis.errors.InputError`)
OPTION_NAMES = {
    "tools": "--tools",
    "update_lock": "--update-lock",
    "lock": "--lock FILE",
    "shard": "--shard",
    "paths": "PATHS",
    "cases": "--cases",
    "templates": "--templates DIR",
}


def handle_errors(func: F) -> F:
    """Turn project errors into a one-line message and a non-zero exit code;
    refuse, before the command runs, an option given without the one it acts
    beside (:mod:`autoparser_cli.requires`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from analysis.errors import InputError, one_line
        from peg import AutoparserError

        try:
            from autoparser_cli.requires import unmet_requirement

            unmet = unmet_requirement(func, kwargs)
            if unmet is not None:
                raise fail(unmet)
            return func(*args, **kwargs)
        except InputError as exc:  # (its settings, as this CLI's options)
            raise fail(exc.phrased(OPTION_NAMES), exit_code(exc)) from None
        except AutoparserError as exc:
            raise fail(str(exc) + _in_json_file(exc, kwargs), exit_code(exc)) from None
        except KeyboardInterrupt:
            raise fail("interrupted", 130) from None
        except BrokenPipeError:
            raise _closed_pipe() from None
        except RecursionError:
            raise fail("input nests too deeply to process") from None
        except MemoryError:
            raise fail("out of memory") from None
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except Exception as exc:  # noqa: BLE001 - a bug: still one line (the traceback on request)
            import os

            if os.environ.get("AUTOPARSER_TRACEBACK") == "1":
                import traceback

                traceback.print_exc(file=sys.stderr)
            raise fail(
                f"internal error ({type(exc).__name__}: {one_line(exc)}); please report it "
                "(AUTOPARSER_TRACEBACK=1 shows where)"
            ) from None

    return wrapper  # type: ignore[return-value]


def _in_json_file(exc: Exception, arguments: dict[str, Any]) -> str:
    """For an error at a template line where the template is a string in a
    JSON file (tokenizer_config.json): the line of the file that string is on
    (the error's line counts the template's own lines); else ""."""
    line = getattr(exc, "line", None)
    if not line:
        return ""
    from analysis.template.loading import json_template_lines

    candidates = [arguments.get(name) for name in ("source", "template", "write")] + list(arguments.get("sources") or [])
    for candidate in candidates:
        if isinstance(candidate, Path) and candidate.exists():  # (a Hub id is not fetched again)
            for name, (file, file_line) in json_template_lines(candidate).items():
                if str(exc).startswith(f"{name}:{line}"):
                    return f" (the template is the JSON string on line {file_line} of {file})"
    return ""


def read_json_file(path: Path | None, what: str) -> Any:
    """Read a JSON file given on the command line, or None."""
    from analysis.template import read_json

    return None if path is None else read_json(path, what)


def parse_kwargs(pairs: list[str] | None) -> dict[str, Any]:
    """``--kwarg key=json`` pairs into a dict (a value that is not JSON is a string)."""
    from analysis.errors import InputError
    from analysis.userio import checked, loads

    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--kwarg {pair!r}: expected key=json")
        try:
            out[key] = loads(value, f"--kwarg {key}")
        except InputError:
            if value.lstrip()[:1] in ("[", "{"):
                raise  # meant as JSON, but broken or too deep
            out[key] = checked(value, f"--kwarg {key}")  # not JSON: a string
    return out


def source_or_default(source: Path | None) -> Path:
    """The SOURCE argument, or the built-in demo template."""
    from analysis.template import demo_template_path

    return source if source is not None else demo_template_path()


def write_stdout(text: str) -> None:
    """Write text exactly as is (no Rich markup processing)."""
    sys.stdout.write(text)
    sys.stdout.flush()
