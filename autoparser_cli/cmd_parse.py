"""The ``parse`` command: model output read back into a message (``--stream``: its deltas)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from autoparser_cli.common import (
    console,
    error_line,
    fail,
    handle_errors,
    note,
    source_or_default,
    write_excerpt,
    write_stdout,
)
from autoparser_cli.inputs import build_request, read_output, warn_if_not_a_chat_template
from autoparser_cli.options import (
    ParallelToolCallsOpt,
    ReasoningFormatOpt,
    RequestOpt,
    ThinkingOrRequestOpt,
    ToolsOpt,
    VariantOpt,
)

if TYPE_CHECKING:
    from analysis.messages import Delta


@handle_errors
def parse(
    ctx: typer.Context,
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
    from analysis.messages import DeviationKind
    from analysis.template import load_template
    from autoparser_cli.formatting import hint_text

    extra = list(ctx.args)  # (the command takes extra arguments to say this)
    if extra:  # (analyze's way, SOURCE first: parse reads one OUTPUT)
        first = f"--template {output} {extra[0]}" if template is None and len(extra) == 1 else "--template SOURCE OUTPUT"
        raise fail(f"parse takes one OUTPUT; the template goes after --template: autoparser parse {first}")
    chat_request = build_request(request, tools, reasoning_format, enable_thinking, parallel_tool_calls)
    text = read_output(output)
    if template is None:
        note("no --template given: parsing with the built-in demo template")
    loaded = load_template(source_or_default(template), variant, has_tools=chat_request.has_tools)
    parser = auto_parser(loaded)
    generated = parser.generate(chat_request)
    warn_if_not_a_chat_template(parser)
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
    for deviation in outcome.deviations:  # (a cut is the warning below)
        if deviation.kind is DeviationKind.CUT_SHORT:
            continue
        note(f"the output deviates from the template's form: {deviation.describe()}" if deviation.cost else deviation.describe())
    for problem in review.call_problems:
        note(str(problem), "warning")
    for unchecked in review.schema_notes:
        note(unchecked)
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
