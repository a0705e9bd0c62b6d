"""Running the CLI in-process and checking error shape."""

from __future__ import annotations

import functools

import typer.testing
from typer.testing import CliRunner

from autoparser_cli.main import app

runner = CliRunner()

# Typer builds the click command from the app's signatures and type hints at
# each invoke (a tenth of the CLI tests' time): built once per test process.
typer.testing._get_command = functools.cache(typer.testing._get_command)  # type: ignore[attr-defined]


def run_cli(*args: str, input: str | None = None, width: int | None = None):
    """Invoke ``autoparser ARGS``; returns the click Result (stdout and stderr apart).
    ``width`` sets the terminal width Rich lays tables out for."""
    env = {"COLUMNS": str(width)} if width else None
    return runner.invoke(app, list(args), input=input, env=env)


def assert_clean_error(result, code: int = 2) -> str:
    """A bad-input run: the exit code, a one-line message, no traceback."""
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    err = result.stderr.strip()
    assert err.startswith("error:"), err
    assert "Traceback" not in result.output + result.stderr
    assert len(err.splitlines()) == 1, err
    return err
