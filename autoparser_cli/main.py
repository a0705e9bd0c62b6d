"""The ``autoparser`` Typer application."""

from __future__ import annotations

import dataclasses
import enum
import functools
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from analysis.fixtures import SCENARIOS, default_messages
from autoparser_cli import __version__
from autoparser_cli.common import (
    console,
    error_line,
    fail,
    handle_errors,
    note,
    parse_kwargs,
    read_json_file,
    show,
    source_or_default,
    write_excerpt,
    write_stdout,
)
from autoparser_cli.options import (
    ParallelToolCallsOpt,
    ReasoningFormatOpt,
    RequestOpt,
    SourceArg,
    ThinkingOpt,
    ThinkingOrRequestOpt,
    ToolsOpt,
    VariantOpt,
)

if TYPE_CHECKING:
    from analysis.messages import Delta
    from analysis.parsers import ChatRequest

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


@app.command()
@handle_errors
def render(
    source: Path | None = SourceArg,
    messages: Path | None = typer.Option(None, "--messages", metavar="FILE", help="JSON file: list of messages."),
    tools: Path | None = ToolsOpt,
    add_generation_prompt: bool = typer.Option(
        True, "--add-generation-prompt/--no-add-generation-prompt", help="Append the assistant prompt."
    ),
    enable_thinking: bool | None = typer.Option(
        None, "--enable-thinking/--no-enable-thinking", help="Pass enable_thinking to the template."
    ),
    kwarg: list[str] | None = typer.Option(None, "--kwarg", metavar="KEY=JSON", help="Extra variable key=json (repeatable)."),
    scenario: str | None = typer.Option(
        None,
        "--scenario", metavar="NAME",
        help="A built-in one-exchange conversation: " + " | ".join([*SCENARIOS, "all"]) + " (instead of --messages).",
    ),
    variant: str | None = VariantOpt,
    bos_token: str | None = typer.Option(None, "--bos-token", metavar="TEXT", help="bos_token (default: the source's; a .jinja file has none)."),
    eos_token: str | None = typer.Option(None, "--eos-token", metavar="TEXT", help="eos_token (default: the source's; a .jinja file has none)."),
    adapt: bool = typer.Option(
        False, "--adapt", help="When the template rejects --messages, adapt them to its capabilities and render again."
    ),
) -> None:
    """Render a template with a conversation and print the prompt exactly.

    Without --messages or --scenario: a built-in conversation with a tool call.
    --messages render exactly as given: a template that rejects them is an
    error with the template's own message, unless --adapt is given. The
    built-in conversations (and --messages with --adapt), when the template
    rejects them, are adapted to the template's capabilities (system turn
    merged into the first user turn, ...) and rendered again; stderr says so,
    with the template's own error.

    Example: autoparser render templates/demo.jinja --scenario all
    """
    from analysis.fixtures import FULL_CONVERSATION, WEATHER_TOOL
    from analysis.probing import render_adapted, tokens_written
    from analysis.template import RENDER_ARGUMENTS, ChatTemplate, RenderRequest, load_template
    from analysis.userio import validate_tools

    if adapt and messages is None:
        raise fail("--adapt is for --messages (the built-in conversations are adapted anyway)")
    if scenario is not None and messages is not None:
        raise fail("give --messages or --scenario, not both")
    if scenario is not None and scenario != "all" and scenario not in SCENARIOS:
        raise fail(f"--scenario {scenario!r}: expected one of {', '.join([*SCENARIOS, 'all'])}")
    msgs = read_json_file(messages, "messages")
    tool_list = validate_tools(read_json_file(tools, "tools"), str(tools))
    if msgs is None and tool_list is None:
        tool_list = [WEATHER_TOOL]
    if msgs is None:
        msgs = FULL_CONVERSATION
    else:
        from analysis.userio import validate_messages

        msgs = validate_messages(msgs, str(messages))
    loaded = load_template(source_or_default(source), variant, has_tools=bool(tool_list))
    loaded = dataclasses.replace(
        loaded,
        bos_token=loaded.bos_token if bos_token is None else bos_token,
        eos_token=loaded.eos_token if eos_token is None else eos_token,
    )
    template = ChatTemplate(loaded)
    extra = parse_kwargs(kwarg)
    reserved = sorted(set(extra) & RENDER_ARGUMENTS)
    if reserved:
        raise fail(f"--kwarg {reserved[0]}: that is a render argument, given by its own option (--messages, --tools, ...)")
    exact = messages is not None and not adapt  # (the user's own conversation, as given)
    names = list(SCENARIOS) if scenario == "all" else [scenario] if scenario else [None]
    texts = []
    for name in names:
        conversation = SCENARIOS[name] if name else msgs
        label = f"scenario {name}: " if name else ""
        render_request = RenderRequest(
            messages=conversation,
            tools=tool_list,
            add_generation_prompt=add_generation_prompt,
            enable_thinking=enable_thinking,
            extra=extra,
        )
        if exact:
            text = template.render(render_request)
        else:
            text = render_adapted(template, render_request, on_adapt=functools.partial(_adapted_note, label))
        texts.append(f"── {name} ──\n{text}\n" if scenario == "all" else text)
    write_stdout("".join(texts))
    unset = [name for name in ("bos_token", "eos_token") if not getattr(loaded, name)]
    if unset:
        read = tokens_written(template, unset, RenderRequest(conversation, tool_list, add_generation_prompt, enable_thinking, extra))
        if read:
            options = ", ".join("--" + name.replace("_", "-") for name in read)
            note(f"the template writes {' and '.join(read)}, which the source does not give: rendered empty (give {options})")


def _warn_if_not_a_chat_template(parser: Any) -> None:
    """A warning on stderr where the source does not look like a chat template."""
    if parser.template_problem:
        note(parser.template_problem, "warning")


def _adapted_note(label: str, error: str) -> None:
    note(f"{label}the template rejected the conversation ({error}); rendered it adapted to the template's capabilities")


@app.command()
@handle_errors
def caps(
    source: Path | None = SourceArg,
    as_json: bool = typer.Option(False, "--json", help="Print the flags as JSON."),
    variant: str | None = VariantOpt,
) -> None:
    """Detect a template's capabilities by probe renders, and the reasoning
    switches it reads (enable_thinking, reasoning_effort…) with what each changes.

    Example: autoparser caps templates/demo.jinja --json
    """
    import json

    from analysis.lint import reasoning_switches
    from analysis.probing import chat_template_problem, detect_capabilities
    from analysis.template import ChatTemplate, load_template
    from autoparser_cli.formatting import caps_table

    loaded = load_template(source_or_default(source), variant)
    template = ChatTemplate(loaded)
    flags = detect_capabilities(template)
    switches = reasoning_switches(template)
    problem = chat_template_problem(template)
    if problem:
        note(problem, "warning")
    if as_json:
        write_stdout(json.dumps({**flags.to_dict(), "reasoning_switches": [s.to_json() for s in switches]}, indent=2) + "\n")
    else:
        show(caps_table(loaded.name, flags, switches))


@app.command()
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
    _warn_if_not_a_chat_template(parser)
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


@app.command()
@handle_errors
def grammar(
    source: Path | None = SourceArg,
    request: Path | None = RequestOpt,
    tools: Path | None = ToolsOpt,
    reasoning_format: str | None = ReasoningFormatOpt,
    enable_thinking: bool | None = ThinkingOrRequestOpt,
    parallel_tool_calls: bool | None = ParallelToolCallsOpt,
    check_output_path: str | None = typer.Option(
        None, "--check", metavar="OUTPUT", help="Model output file (or - for stdin) to test against the grammar."
    ),
    partial: bool = typer.Option(False, "--partial", help="With --check: the output is cut short (a valid prefix fits)."),
    output_only: bool = typer.Option(
        False, "--output-only", help="The grammar of the output alone (a non-lazy grammar otherwise starts with the generation prompt)."
    ),
    variant: str | None = VariantOpt,
) -> None:
    """Print the GBNF grammar generated for a request, as plain text to copy.

    The request is --request's, else one message "Hello" with --tools, else
    with the built-in weather tool; --reasoning-format, --enable-thinking and
    --parallel-tool-calls set the request's own (the same options as parse).
    The lazy flag, triggers and preserved tokens come first as GBNF comments, so
    the whole output is a grammar file. With --check, the built-in matcher runs
    over the part of the output the grammar constrains (from the first trigger
    after the reasoning when the grammar is lazy).

    Example: autoparser grammar templates/tests/tagged_xml.jinja --tools examples/tools.json --check examples/tagged_call.txt

    Exit status: 0 printed (with --check: the output fits), 1 it does not fit, 2 bad input.
    """
    from analysis.fixtures import WEATHER_TOOL
    from analysis.generation import auto_parser, check_output
    from analysis.template import load_template
    from autoparser_cli.formatting import grammar_text

    default_tools = [WEATHER_TOOL] if request is None and tools is None else None
    chat_request = _request(request, tools, reasoning_format, enable_thinking, parallel_tool_calls, default_tools)
    loaded = load_template(source_or_default(source), variant, has_tools=chat_request.has_tools)
    parser = auto_parser(loaded)
    generated = parser.generate(chat_request)
    _warn_if_not_a_chat_template(parser)
    if check_output_path is not None:
        fit = check_output(generated, _read_output(check_output_path), partial)
        if not generated.grammar:
            raise fail(f"no grammar for this request: {generated.grammar_error or 'nothing to constrain'}")
        if fit.fits:
            write_stdout(fit.message() + "\n")
            return
        error_line(fit.message())
        raise typer.Exit(1)
    text = grammar_text(generated, output_only)
    write_stdout(text)
    if output_only and "# no output-only grammar:" in text:
        raise typer.Exit(1)


def _read_output(output: str | None) -> str:
    from analysis.userio import MAX_INPUT_BYTES, decode_utf8, read_bytes, read_stream

    if output is None or output == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        if sys.stdin is not None and sys.stdin.isatty():
            note("reading the model output from the terminal: end it with Ctrl-D (or give a file)")
        if stdin is None:
            return sys.stdin.read(MAX_INPUT_BYTES)
        return decode_utf8(read_stream(stdin, "stdin"), "stdin")
    path = Path(output)
    if not path.exists() and not path.is_symlink():
        raise fail(f"{output}: no such file (give a file, or - for stdin)")
    return decode_utf8(read_bytes(path), output)


def _request(
    request: Path | None,
    tools: Path | None,
    reasoning_format: str | None,
    enable_thinking: bool | None,
    parallel_tool_calls: bool | None = None,
    default_tools: list[dict[str, Any]] | None = None,
) -> ChatRequest:
    """The request every command that builds for one reads from the same
    options: --request's, else one message "Hello" (with ``default_tools``,
    where the command has a default), then --tools, --reasoning-format,
    --enable-thinking and --parallel-tool-calls over it."""
    from analysis.parsers import ChatRequest
    from analysis.userio import validate_tools

    if request is not None and tools is not None:
        raise fail("give --request or --tools, not both")
    if request is not None:
        data = read_json_file(request, "request")
    else:
        data = {"messages": default_messages(), **({"tools": default_tools} if default_tools else {})}
    if isinstance(data, dict):
        data = dict(data)
        if tools is not None:
            data["tools"] = validate_tools(read_json_file(tools, "tools"), str(tools))
        if reasoning_format is not None:
            data["reasoning_format"] = reasoning_format
        if enable_thinking is not None:
            data["enable_thinking"] = enable_thinking
        if parallel_tool_calls is not None:
            data["parallel_tool_calls"] = parallel_tool_calls
    return ChatRequest.from_json(data)


@app.command()
@handle_errors
def parse(
    output: str | None = typer.Argument(None, metavar="OUTPUT", help="File with the model output, or - for stdin (default: stdin)."),
    template: Path | None = typer.Option(None, "--template", metavar="SOURCE", help="Template SOURCE (default: the built-in demo)."),
    request: Path | None = RequestOpt,
    tools: Path | None = ToolsOpt,
    reasoning_format: str | None = ReasoningFormatOpt,
    enable_thinking: bool | None = ThinkingOrRequestOpt,
    partial: bool = typer.Option(False, "--partial", help="The output is cut short: parse what is there."),
    parallel_tool_calls: bool | None = ParallelToolCallsOpt,
    stream: bool = typer.Option(False, "--stream", help="Feed the output in chunks and print each delta."),
    chunk: int = typer.Option(4, "--chunk", metavar="N", min=1, help="Chunk size in characters for --stream."),
    open_arguments: bool = typer.Option(
        False, "--open-arguments", help="With --stream: show a call's arguments as written (as the reference does), not once the call reads."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (a message; with --stream, one delta per line)."),
    variant: str | None = VariantOpt,
) -> None:
    """Parse raw model output into a message {content, reasoning_content, tool_calls}.

    The request is --request's, else one message "Hello" with --tools (if given).

    Example: autoparser parse --template templates/tests/tagged_xml.jinja --tools examples/tools.json examples/tagged_call.txt

    Exit status: 0 parsed; 1 parsed with a problem, named on stderr: the
    output does not fit the format (what reads before the break is kept,
    the rest is content), a call block in
    it does not read or its arguments are not a JSON object (that block is
    kept as text, the calls around it are kept), it ends inside a tool call
    (the calls before it are kept), or a call's arguments do not fit its
    tool's schema (the call is kept as written); 2 bad input.
    """
    import json

    from analysis.generation import auto_parser, review_parse
    from analysis.template import load_template
    from autoparser_cli.formatting import hint_text

    if open_arguments and not stream:
        raise fail("--open-arguments needs --stream (a whole parse shows only arguments that read)")
    chat_request = _request(request, tools, reasoning_format, enable_thinking, parallel_tool_calls)
    text = _read_output(output)
    if template is None:
        note("no --template given: parsing with the built-in demo template")
    loaded = load_template(source_or_default(template), variant, has_tools=chat_request.has_tools)
    parser = auto_parser(loaded)
    generated = parser.generate(chat_request)
    _warn_if_not_a_chat_template(parser)
    shown: _DeltaPrinter | None = None
    if stream:
        from analysis.generation import OpenAIStream

        streamer = OpenAIStream(generated, show_open_arguments=open_arguments)
        shown = _DeltaPrinter(as_json, streamer)
        for i in range(0, len(text), chunk):
            shown.add(streamer.parser.feed(text[i : i + chunk]))
        if partial:  # (cut short: the stream's own reading so far, nothing more to come)
            from analysis.generation import ParseOutcome

            outcome = ParseOutcome(streamer.parser.message(), True, need_more=True)
        else:
            final_deltas, outcome = streamer.parser.finish()
            shown.add(final_deltas)
        shown.flush()
    else:
        outcome = generated.parse(text, partial=partial)
    if as_json:
        message = streamer.message(outcome.message) if stream else outcome.message.to_openai()
        write_stdout(json.dumps(message, ensure_ascii=False) + "\n")
    else:
        from autoparser_cli.formatting import message_panels

        for panel in message_panels(outcome.message):
            console().print(panel)
    review = review_parse(generated, text, outcome, partial)
    for problem in review.call_problems:
        note(str(problem), "warning")
    if not outcome.ok:
        error_line(outcome.warning)
        if outcome.excerpt:
            write_excerpt(outcome.excerpt)
    for hint in review.hints:
        note(hint_text(hint), "hint")
    if not outcome.ok or not review.calls_valid:
        raise typer.Exit(1)


class _DeltaPrinter:
    """Prints stream deltas: each as a JSON line, as the library's
    :class:`~analysis.generation.OpenAIStream` gives them, or in Rich mode
    batched (the deltas of the last tenth of a second, adjacent ones of the
    same field joined)."""

    def __init__(self, as_json: bool, openai: Any, interval_s: float = 0.1):
        self.as_json = as_json
        self.openai = openai
        self.interval_s = interval_s
        self.pending: list[Delta] = []
        self.last = time.monotonic()

    def add(self, deltas: list[Delta] | tuple[Delta, ...]) -> None:
        if self.as_json:
            self._write(self.openai.convert(deltas))
            return
        self.pending.extend(deltas)
        if self.pending and time.monotonic() - self.last >= self.interval_s:
            self.flush()

    def _write(self, deltas: list[dict[str, Any]]) -> None:
        import json

        for delta in deltas:
            write_stdout(json.dumps({"delta": delta}, ensure_ascii=False) + "\n")

    def flush(self) -> None:
        from autoparser_cli.formatting import delta_text, merge_deltas

        if self.as_json:  # (a call's first delta the stream ended before the next one of)
            self._write(self.openai.flush())
            return
        for delta in merge_deltas(self.pending):
            console().print(delta_text(delta))
        self.pending = []
        self.last = time.monotonic()


@app.command()
@handle_errors
def check(
    paths: list[Path] | None = typer.Argument(None, metavar="PATHS", help="Template files or folders to check (at least one, unless --cases is given)."),
    lock: Path | None = typer.Option(None, "--lock", metavar="FILE", help="Lock file: fail on any change from the recorded analyses."),
    update_lock: bool = typer.Option(False, "--update-lock", help="Write or refresh the --lock file."),
    cases: Path | None = typer.Option(None, "--cases", metavar="FILE", help="JSONL file of expected-parse cases to run."),
    templates: Path | None = typer.Option(None, "--templates", metavar="DIR", help="Folder the cases' templates are in (default: the case file's)."),
    case_ids: list[str] | None = typer.Option(None, "--case", metavar="ID", help="Run only the case with this id (repeatable)."),
    pattern: str | None = typer.Option(None, "-k", metavar="PATTERN", help="Run only cases and templates whose id or name contains PATTERN."),
    known_failures: Path | None = typer.Option(
        None, "--known-failures", metavar="FILE", help="JSON object {id or template name: reason}: listed failures pass, listed passes are reported as fixed."
    ),
    jobs: int = typer.Option(0, "--jobs", "-j", metavar="N", min=0, show_default=False, help="Processes to check templates in (default: the CPU count)."),
    shard_spec: str | None = typer.Option(None, "--shard", metavar="I/N", help="I/N: check only the I-th of N shares of the templates (for a CI matrix)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary (nothing else on stdout)."),
    junit: Path | None = typer.Option(None, "--junit", metavar="FILE", help="Also write JUnit XML to this file."),
    round_trip: bool = typer.Option(
        True, "--round-trip/--no-round-trip", help="Check that each template's own renderings (tool calls, a reply, reasoning) parse back."
    ),
    lint: bool = typer.Option(False, "--lint", help="Lint each template too (as `autoparser lint`): an error finding fails its TEMPLATE:RULE test."),
    ignore: list[str] | None = typer.Option(None, "--ignore", metavar="RULE", help="With --lint: do not run this rule (repeatable)."),
) -> None:
    """Check template collections and expected-parse case files (for CI).

    Example: autoparser check templates/ --jobs 2 --junit check.xml

    Exit status: 0 everything passed, 1 a failure, 2 bad input.
    """
    import json

    from rich.text import Text

    from analysis.checks import CheckOptions, run_check
    from analysis.userio import ensure_writable, write_atomic
    from autoparser_cli.formatting import check_details, check_table, progress_bar

    if junit is not None:
        ensure_writable(junit, "JUnit report")
    options = CheckOptions(
        tuple(paths or ()), lock, update_lock, cases, templates, tuple(case_ids or ()), pattern, known_failures, jobs, shard_spec, round_trip,
        lint, tuple(ignore or ()),
    )
    run = run_check(options, lambda total, label: progress_bar(total, label, enabled=not as_json))
    report, checks, drifted, known = run.report, list(run.checks), run.drifted, run.known
    if junit is not None:
        write_atomic(junit, report.to_junit(), "JUnit report")
    if as_json:
        write_stdout(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        if checks:
            show(check_table(checks, set(drifted), console().width))
        for text in check_details(checks, drifted, known):
            console().print(text, soft_wrap=True)  # in full, never cut
        for failure in run.case_failures:
            known_note = f" (known: {known[failure.case_id]})" if failure.case_id in known else ""
            console().print(Text(f"{failure.case_id} — {failure.check}{known_note}", style="yellow" if known_note else "bold red"), soft_wrap=True)
            console().print(Text(failure.reason), soft_wrap=True)
        for name in report.fixed:
            console().print(Text(f"{name}: listed in --known-failures but passes now (fixed? remove it from the list)", style="green"))
        if drifted and not update_lock:
            note("--update-lock takes the new readings into the lock file", "hint")
        written = f"; lock file {lock} written" if run.lock_written else f"; lock file {lock} left as it was (the run failed)" if update_lock else ""
        console().print(Text(report.summary_line() + written), soft_wrap=True)  # (one line in a CI log)
    if report.failed:
        raise typer.Exit(1)


@app.command()
@handle_errors
def lint(
    sources: list[Path] | None = typer.Argument(None, metavar="SOURCE...", help="Templates to lint (default: the built-in demo template)."),
    ignore: list[str] | None = typer.Option(None, "--ignore", metavar="RULE", help="Do not run this rule (repeatable); docs/lint.md lists them."),
    as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON (nothing else on stdout)."),
    variant: str | None = VariantOpt,
) -> None:
    """Find template defects by rendering conversations: history that is not a
    prefix, a generation prompt history does not write, common conversations
    that raise, tool calls that lose their ids or arguments, a double BOS,
    thinking switches, training masks.

    Example: autoparser lint templates/demo.jinja --ignore generation-block

    Exit status: 0 no errors (warnings and info allowed), 1 an error finding, 2 bad input.
    """
    import json

    from analysis.lint import lint_template
    from analysis.template import FROZEN_CLOCK, ChatTemplate, load_template
    from autoparser_cli.formatting import lint_evidence, lint_table

    reports = []  # (an unknown --ignore rule is bad input, raised by the first lint_template)
    for source in sources or [source_or_default(None)]:
        loaded = load_template(source, variant)
        reports.append(lint_template(ChatTemplate(loaded, clock=FROZEN_CLOCK), ignore or ()))
    if as_json:
        write_stdout(json.dumps([r.to_json() for r in reports], indent=2, ensure_ascii=False) + "\n")
    else:
        for report in reports:
            show(lint_table(report))
            for text in lint_evidence(report, console().width):
                console().print(text, soft_wrap=True)
    if any(r.errors for r in reports):
        raise typer.Exit(1)


class ExportFormat(str, enum.Enum):
    """What ``export`` writes."""

    RESPONSE_TEMPLATE = "response-template"


@app.command()
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
    _warn_if_not_a_chat_template(parser)
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


if __name__ == "__main__":  # pragma: no cover
    app()
