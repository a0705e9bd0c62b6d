"""The ``analyze`` command: a template's markers, found by differential analysis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from analysis.fixtures import default_messages
from autoparser_cli.common import console, fail, handle_errors, read_json_file, show, source_or_default, write_stdout
from autoparser_cli.inputs import warn_if_not_a_chat_template
from autoparser_cli.options import SourceArg, ThinkingOpt, ToolsOpt, VariantOpt


@handle_errors
def analyze(
    source: Path | None = SourceArg,
    as_json: bool = typer.Option(False, "--json", help="Print the analysis as JSON (nothing else on stdout)."),
    tools: Path | None = ToolsOpt,
    no_tools: bool = typer.Option(False, "--no-tools", help="Analyse for a request without tools."),
    enable_thinking: bool = ThinkingOpt,
    diffs: bool = typer.Option(False, "--diffs", help="Show every comparison's diff (where markers came from)."),
    show_parser: bool = typer.Option(False, "--parser", help="Show the generated PEG parser as a tree."),
    show_grammar: bool = typer.Option(False, "--grammar", help="Show the generated GBNF grammar."),
    show_all: bool = typer.Option(False, "--all", help="Show the parser and the grammar too."),
    variant: str | None = VariantOpt,
) -> None:
    """Find a template's reasoning, content and tool-call markers by differential analysis:
    a summary, the markers with the evidence for each, and what is generated for a
    one-message request (with --tools, or the built-in weather tool unless --no-tools);
    --parser, --grammar or --all add the PEG parser and the GBNF grammar.

    Example: autoparser analyze templates/tests/tagged_xml.jinja --diffs
    """
    import json

    from analysis.fixtures import WEATHER_TOOL
    from analysis.generation import AutoParser, cached_analysis
    from analysis.parsers import ChatRequest
    from analysis.template import FROZEN_CLOCK, ChatTemplate, load_template
    from analysis.userio import validate_tools
    from autoparser_cli.formatting import (
        analysis_summary,
        analysis_tables,
        comparison_text,
        generation_renderables,
    )

    if tools is not None and no_tools:
        raise fail("give --tools or --no-tools, not both")
    tool_list = validate_tools(read_json_file(tools, "tools"), str(tools))
    if tool_list is not None and not isinstance(tool_list, list):
        raise fail("--tools must hold a JSON list of tools")
    loaded = load_template(source_or_default(source), variant, has_tools=not no_tools)
    comparisons: list[Any] = []
    template = ChatTemplate(loaded, clock=FROZEN_CLOCK)
    if diffs:  # the comparisons are made anew to be shown
        from analysis.generation import analyze_template

        result = analyze_template(template, enable_thinking, record=comparisons)
    else:
        result = cached_analysis(template, enable_thinking)
    request = ChatRequest(
        default_messages(),
        tools=None if no_tools else (tool_list or [WEATHER_TOOL]),
        enable_thinking=enable_thinking,
    )
    parser = AutoParser(template, result)
    generated = parser.generate(request)
    warn_if_not_a_chat_template(parser)
    if as_json:
        data = result.to_json()
        data["generated"] = generated.to_json()
        write_stdout(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return
    show(analysis_summary(result, generated))
    for table in analysis_tables(result):
        show(table)
    for renderable in generation_renderables(generated, show_parser or show_all, show_grammar or show_all):
        show(renderable)
    if diffs:
        for comparison in comparisons:
            console().print(comparison_text(comparison))
