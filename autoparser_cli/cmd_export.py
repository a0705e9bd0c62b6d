"""The ``export`` command: the parser as a Hugging Face response_template."""

from __future__ import annotations

import enum
from pathlib import Path

import typer

from analysis.fixtures import default_messages
from autoparser_cli.common import fail, handle_errors, note, read_json_file, show, source_or_default, write_stdout
from autoparser_cli.inputs import warn_if_not_a_chat_template
from autoparser_cli.options import SourceArg, ThinkingOpt, ToolsOpt, VariantOpt


class ExportFormat(str, enum.Enum):
    """What ``export`` writes."""

    RESPONSE_TEMPLATE = "response-template"


@handle_errors
def export(
    source: Path | None = SourceArg,
    export_format: ExportFormat = typer.Option(
        ExportFormat.RESPONSE_TEMPLATE, "--format", help="What to write: the Hugging Face response_template."
    ),
    tools: Path | None = ToolsOpt,
    enable_thinking: bool = ThinkingOpt,
    variant: str | None = VariantOpt,
    output: Path | None = typer.Option(None, "-o", "--output", metavar="FILE", help="Write the response_template to FILE (default: stdout)."),
    write: Path | None = typer.Option(
        None, "--write", metavar="MODEL_DIR", help="Add or replace response_template in MODEL_DIR/tokenizer_config.json (SOURCE defaults to MODEL_DIR)."
    ),
    check_only: bool = typer.Option(False, "--check", help="Read the template's round-trip probes with transformers and report each, probe by probe."),
    verify: bool = typer.Option(True, "--verify/--no-verify", help="Read the probes back with transformers before writing (when it is installed)."),
) -> None:
    """Write the inferred parser as a Hugging Face response_template, the
    output spec transformers (parse_response), vLLM and SGLang execute; it
    is read back by transformers' own parser on the template's round-trip
    probes before it is written (the hf extra: pip install '.[hf]'). Only the markers
    matter: the tools are --tools, else the built-in weather tool.

    Example: autoparser export templates/demo.jinja -o response_template.json

    Exit status: 0 written (or --check: every probe reads the same), 1 the format
    cannot be expressed or reads differently, 2 bad input.
    """
    import json

    from analysis.checks import export_checked
    from analysis.export import config_path, write_response_template
    from analysis.fixtures import WEATHER_TOOL
    from analysis.generation import AutoParser
    from analysis.parsers import ChatRequest
    from analysis.template import FROZEN_CLOCK, ChatTemplate, load_template
    from analysis.userio import ensure_writable, validate_tools, write_atomic
    from autoparser_cli.formatting import readings_table

    del export_format  # (one format so far)
    if output is not None and write is not None:
        raise fail("give -o FILE or --write MODEL_DIR, not both")
    if check_only and (output is not None or write is not None):
        raise fail("--check writes nothing: give it without -o or --write")
    if write is not None:
        config_path(write)  # a folder without a tokenizer_config.json is named before the analysis
        source = source if source is not None else write
    if output is not None:
        ensure_writable(output, "response_template")
    tool_list = validate_tools(read_json_file(tools, "tools"), str(tools))
    if tool_list is not None and not isinstance(tool_list, list):
        raise fail("--tools must hold a JSON list of tools")
    loaded = load_template(source_or_default(source), variant, has_tools=True)
    parser = AutoParser(ChatTemplate(loaded, clock=FROZEN_CLOCK))
    request = ChatRequest(default_messages(), tools=tool_list or [WEATHER_TOOL], enable_thinking=enable_thinking)
    warn_if_not_a_chat_template(parser)
    report = export_checked(parser, request, verify=verify or check_only)
    if check_only:
        if report.unverified:
            raise fail(report.unverified, 1)
        show(readings_table(report.readings))
        if report.differences:
            raise typer.Exit(1)
        return
    if report.differences:
        raise fail(report.difference_line() + "; --check shows each, --no-verify writes it anyway", 1)
    if report.unverified and verify:
        note(f"not read back by transformers: {report.unverified}")
    text = json.dumps(report.spec, indent=2, ensure_ascii=False) + "\n"
    if write is not None:
        written = write_response_template(write, report.spec)
        note(f"response_template written to {written}", "done")
    elif output is not None:
        write_atomic(output, text, "response_template")
    else:
        write_stdout(text)
