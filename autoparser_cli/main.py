"""The ``autoparser`` Typer application: the app, its global options, and
its commands, one module each (``autoparser_cli/cmd_<command>.py``), in the
order ``--help`` lists them."""

from __future__ import annotations

import typer

from autoparser_cli import __version__
from autoparser_cli.cmd_analyze import analyze
from autoparser_cli.cmd_caps import caps
from autoparser_cli.cmd_check import check
from autoparser_cli.cmd_export import export
from autoparser_cli.cmd_grammar import grammar
from autoparser_cli.cmd_lint import lint
from autoparser_cli.cmd_parse import parse
from autoparser_cli.cmd_render import render
from autoparser_cli.common import write_stdout

app = typer.Typer(
    name="autoparser",
    help="Analyse LLM chat templates and parse model output into messages.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        write_stdout(f"autoparser {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Show the version and exit."
    ),
    no_cache: bool = typer.Option(
        False,
        "--no-cache",
        help="Neither read nor write the cache of compiled templates and analyses "
        "(also AUTOPARSER_NO_CACHE=1; the folder: AUTOPARSER_CACHE_DIR, default ~/.cache/autoparser).",
    ),
) -> None:
    """Analyse LLM chat templates and parse model output into messages."""
    from analysis import disk_cache

    disk_cache.set_enabled(not no_cache)


for _command in (render, caps, analyze, grammar, parse, check, lint, export):
    # (parse names a second argument itself: the template goes after --template)
    app.command(context_settings={"allow_extra_args": True} if _command is parse else None)(_command)


if __name__ == "__main__":  # pragma: no cover
    app()
