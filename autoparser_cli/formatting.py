"""Formatters: analysis results to Rich renderables or strings (no printing here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text

from autoparser_cli.textsafe import one_line_safe, terminal_safe

if TYPE_CHECKING:
    from rich.panel import Panel
    from rich.tree import Tree

    from analysis.checks import ProbeReading, RoundTrip, TemplateCheck
    from analysis.generation import Generated, ParseHint, Trigger
    from analysis.lint import LintReport, Switch
    from analysis.messages import Delta, Message
    from analysis.phases import TemplateAnalysis
    from analysis.probing import Comparison
    from peg import Parser

from analysis.probing import Capabilities


def visible(marker: str) -> Text:
    """A marker between quotes (so leading and trailing spaces show), with its
    newlines and tabs visible, never as Rich markup, never cut."""
    if marker == "":
        return Text("—", style="dim")
    shown = terminal_safe(marker).replace("\n", "↵").replace("\t", "⇥")
    return Text(f'"{shown}"', style="cyan")


def caps_table(name: str, caps: Capabilities, switches: tuple[Switch, ...] | None = None) -> Table:
    """The capability flags as a two-column table, and (when given) the
    reasoning switches the template reads."""
    table = Table(title=Text(f"Capabilities of {one_line_safe(name)}"), show_header=True)
    table.add_column("capability", overflow="fold")
    table.add_column("supported", overflow="fold")
    for key, value in caps.to_dict().items():
        table.add_row(key, Text("yes", style="green") if value else Text("no", style="red"))
    if switches is not None:
        described = ", ".join(s.describe() for s in switches) or "none read"
        table.add_row("reasoning switches", Text(terminal_safe(described)))
    return table


def _node_label(node: Parser) -> Text:
    from peg.combinators import Repetition, Rule, Schema, Tag

    if not node.children():
        return Text(terminal_safe(node.dump()).replace("\n", "↵"), style="green")
    if isinstance(node, Tag):
        return Text(f"Tag({node.name})", style="bold magenta")
    if isinstance(node, Rule):
        return Text(f"Rule({node.name})", style="bold blue")
    if isinstance(node, Repetition):
        return Text(node.dump().split("(", 1)[0] + f" {{{node.min},{'∞' if node.max < 0 else node.max}}}")
    if isinstance(node, Schema):
        return Text(f"Schema({node.name})", style="yellow")
    return Text(type(node).__name__)


def parser_tree(parser: Parser, label: str = "parser") -> Tree:
    """A PEG parser as a Rich tree (each rule body shown once)."""
    from rich.tree import Tree

    root = Tree(Text(label, style="bold"))
    shown: set[int] = set()

    def add(branch: Tree, node: Parser) -> None:
        child = branch.add(_node_label(node))
        if id(node) in shown:
            return
        shown.add(id(node))
        for sub in node.children():
            add(child, sub)

    add(root, parser)
    return root


def _marker_table(
    title: str, rows: list[tuple[str, object]], evidence: dict[str, str] | None = None, field_of: Callable[[str], str] = str
) -> Table:
    """A table of fields and values; with ``evidence`` (dotted field name ->
    where it came from), a third column says where each marker came from:
    the comparison it was read from, or the handler or workaround that set it."""
    table = Table(title=Text(title), show_header=False, title_justify="left")
    table.add_column("field", style="bold", overflow="fold")
    table.add_column("value", overflow="fold")  # never cut with an ellipsis
    sources = {name: evidence.get(field_of(name), "") for name, _ in rows} if evidence else {}
    if any(sources.values()):
        table.add_column("from", style="dim", overflow="fold")
    for name, value in rows:
        if isinstance(value, Text):
            shown = value
        elif isinstance(value, bool):
            shown = Text("yes" if value else "no")
        elif isinstance(value, (list, tuple)):
            shown = Text(", ".join(map(str, value)) or "—", style="" if value else "dim")
        elif isinstance(value, str) and name not in ("mode", "pos", "outcome"):
            shown = visible(value)
        else:
            shown = Text(str(getattr(value, "value", value)), style="bold")
        if any(sources.values()):
            table.add_row(name, shown, Text(sources[name]))
        else:
            table.add_row(name, shown)
    return table


def _tool_field(name: str) -> str:
    """A row of the tool-call table as its dotted field name."""
    return "tools." + name if "." in name else "tools.format." + name


def analysis_tables(analysis: TemplateAnalysis) -> list[Table]:
    """An analysis as Rich tables: capabilities, reasoning, content, tool format,
    function / argument / call-id markers, generation prompt, tokens, degradations."""
    a = analysis
    fmt, fn, args, cid = a.tools.format, a.tools.function, a.tools.arguments, a.tools.call_id
    cited = {e.field: f"{e.source} {e.by}" if e.source in ("handler", "workaround") else e.comparison for e in a.evidence}
    tables = [
        caps_table(a.template_name, a.caps),
        _marker_table("Roles", [("user_start", a.user_start), ("assistant_start", a.assistant_start)], cited),
        _marker_table(
            "Reasoning",
            [("mode", a.reasoning.mode), ("start", a.reasoning.start), ("end", a.reasoning.end)],
            cited,
            lambda name: "reasoning." + name,
        ),
        _marker_table(
            "Content",
            [
                ("mode", a.content.mode),
                ("start", a.content.start),
                ("end", a.content.end),
                ("requires_nonnull_content", a.content.requires_nonnull_content),
            ],
            cited,
            lambda name: "content." + name,
        ),
        _marker_table(
            "Tool calls",
            [
                ("mode", fmt.mode),
                ("section_start", fmt.section_start),
                ("section_end", fmt.section_end),
                ("per_call_start", fmt.per_call_start),
                ("per_call_end", fmt.per_call_end),
            ]
            + (
                [
                    ("fun_name_is_key", fmt.fun_name_is_key),
                    ("tools_array_wrapped", fmt.tools_array_wrapped),
                    ("name_field", fmt.name_field),
                    ("args_field", fmt.args_field),
                    ("id_field", fmt.id_field),
                    ("gen_id_field", fmt.gen_id_field),
                    ("parameter_order", fmt.parameter_order),
                ]
                if fmt.mode.value == "JSON_NATIVE"
                else [
                    ("function.name_prefix", fn.name_prefix),
                    ("function.name_suffix", fn.name_suffix),
                    ("function.close", fn.close),
                    ("arguments.start", args.start),
                    ("arguments.end", args.end),
                    ("arguments.name_prefix", args.name_prefix),
                    ("arguments.name_suffix", args.name_suffix),
                    ("arguments.value_prefix", args.value_prefix),
                    ("arguments.value_suffix", args.value_suffix),
                    ("arguments.separator", args.separator),
                    ("call_id.pos", cid.pos),
                    ("call_id.prefix", cid.prefix),
                    ("call_id.suffix", cid.suffix),
                ]
            )
            + ([("content_after_calls", fmt.content_after_calls)] if fmt.mode.value != "NONE" else []),
            cited,
            _tool_field,
        ),
        _marker_table(
            "Generation prompt",
            [
                ("text", a.generation_prompt.text),
                ("enable_thinking", a.generation_prompt.enable_thinking),
                ("outcome", a.generation_prompt.prefill),
            ],
        ),
        _marker_table(
            "Tokens and patches",
            [
                ("preserved_tokens", Text("  ".join(t.replace("\n", "↵") for t in a.preserved_tokens) or "—")),
                ("workarounds", a.workarounds),
                ("handler", a.handler or ""),
                ("handler rule", a.handler_rule),
            ],
        ),
    ]
    if a.degraded:
        table = Table(title=Text("Degraded phases"), title_justify="left")
        for column in ("phase", "comparison", "template said"):
            table.add_column(column, overflow="fold")
        for d in a.degraded:
            table.add_row(d.phase, d.comparison, Text(d.reason, style="red"))
        tables.append(table)
    return tables


def _clip(text: str, keep: int, from_end: bool) -> str:
    if len(text) <= keep:
        return text
    return "…" + text[-keep:] if from_end else text[:keep] + "…"


def comparison_text(comparison: Comparison, keep: int = 160) -> Text:
    """A comparison's diff, coloured: common prefix (dim), left only (red),
    right only (green), common suffix (dim); whitespace made visible."""

    def show(s: str) -> str:
        return terminal_safe(s).replace("\n", "↵\n")

    d = comparison.diff
    out = Text()
    out.append(f"── {comparison.name}  (shape: {comparison.shape})\n", style="bold")
    if not d.left and not d.right:
        out.append("no difference: the two renders are the same\n", style="yellow")
        return out
    out.append(show(_clip(d.prefix, keep, True)), style="dim")
    out.append("[-", style="bold red")
    out.append(show(d.left), style="red")
    out.append("-]", style="bold red")
    out.append("{+", style="bold green")
    out.append(show(d.right), style="green")
    out.append("+}", style="bold green")
    out.append(show(_clip(d.suffix, keep, False)), style="dim")
    out.append("\n")
    return out


def message_panels(message: Message) -> list[Panel]:
    """A parsed message as Rich panels: reasoning, content, one per tool call
    (arguments pretty-printed when they are JSON)."""
    import json

    from rich.panel import Panel

    panels = []
    if message.reasoning_content:
        panels.append(Panel(Text(terminal_safe(message.reasoning_content)), title="reasoning", title_align="left", border_style="magenta"))
    panels.append(Panel(Text(terminal_safe(message.content)) if message.content else Text("(empty)", style="dim"), title="content", title_align="left"))
    for i, call in enumerate(message.tool_calls):
        try:
            args = json.dumps(json.loads(call.arguments), indent=2, ensure_ascii=False)
        except ValueError:
            args = call.arguments
        title = f"tool call {i}: {call.name}" + (f"  (id {call.id})" if call.id else "")
        panels.append(Panel(Text(terminal_safe(args)), title=Text(terminal_safe(title)), title_align="left", border_style="cyan"))
    return panels


TRIGGER_LEGEND = (
    "trigger kinds: word = the grammar starts at this text; pattern = at the first match of this regex; "
    "full pattern = when the whole output matches this regex"
)


def trigger_text(triggers: tuple[Trigger, ...]) -> Text:
    """Triggers as ``kind "value"`` (the legend is :data:`TRIGGER_LEGEND`)."""
    if not triggers:
        return Text("—", style="dim")
    out = Text()
    for i, t in enumerate(triggers):
        if i:
            out.append("  ")
        out.append(f"{t.type.label} ", style="bold")
        out.append_text(visible(t.value))
    return out


def _delta_key(delta: Delta) -> tuple[object, ...]:
    """Deltas with the same key grow the same field and may be shown as one."""
    if delta.tool_index is None:
        return ("content",) if delta.content is not None else ("reasoning",)
    if delta.tool_name is not None or delta.tool_id is not None:
        return ("header", id(delta))  # a call's name or id: always its own line
    return ("arguments", delta.tool_index)


def merge_deltas(deltas: list[Delta]) -> list[Delta]:
    """Adjacent deltas that grow the same field, joined (for display: printing
    every 4-character delta as its own line is slow and hard to read)."""
    from itertools import groupby

    out = []
    for key, group in groupby(deltas, key=_delta_key):
        items = list(group)
        if len(items) == 1 or key[0] == "header":
            out.extend(items)
        elif key[0] == "content":
            out.append(items[0]._replace(content="".join(d.content or "" for d in items)))
        elif key[0] == "reasoning":
            out.append(items[0]._replace(reasoning_content="".join(d.reasoning_content or "" for d in items)))
        else:
            out.append(items[0]._replace(arguments="".join(d.arguments or "" for d in items)))
    return out


def delta_text(delta: Delta) -> Text:
    """One stream delta as a line: which field grows, and the piece (whitespace visible)."""

    def shown(s: str) -> str:
        return terminal_safe(s).replace("\n", "↵")

    if delta.tool_index is None:
        field = "content" if delta.content is not None else "reasoning"
        return Text.assemble((f"{field:>9} ", "bold"), (shown(delta.content or delta.reasoning_content or ""), ""))
    head = f"tool[{delta.tool_index}] "
    parts: list[tuple[str, str]] = [(head, "bold cyan")]
    if delta.tool_name is not None:
        parts.append((f"name={shown(delta.tool_name)} ", "cyan"))
    if delta.tool_id is not None:
        parts.append((f"id={shown(delta.tool_id)} ", "cyan"))
    if delta.arguments:
        parts.append((shown(delta.arguments), ""))
    return Text.assemble(*parts)


def _joined(markers: tuple[str, ...] | list[str]) -> Text:
    out = Text()
    for i, m in enumerate(markers):
        if i:
            out.append(" ")
        out.append_text(visible(m))
    return out if markers else Text("—", style="dim")


def _pair(start: str, end: str, gap: str = " ") -> Text:
    """``start … end`` after ``gap`` (nothing when both are empty)."""
    out = Text()
    if start or end:
        out.append(gap).append_text(visible(start)).append(" … ").append_text(visible(end))
    return out


def analysis_summary(analysis: TemplateAnalysis, generated: Generated) -> Table:
    """The analysis in a few lines that fit 80 columns: each mode with its key
    markers, and how the grammar starts.  Folds, never cuts."""
    a, fmt = analysis, analysis.tools.format
    table = Table(title=Text(f"Summary of {one_line_safe(a.template_name)}"), show_header=False, title_justify="left", box=None, padding=(0, 1))
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("found", overflow="fold")
    table.add_row("reasoning", Text(a.reasoning.mode.value).append_text(_pair(a.reasoning.start, a.reasoning.end)))
    table.add_row("content", Text(a.content.mode.value).append_text(_pair(a.content.start, a.content.end)))
    tools = Text(fmt.mode.value)
    if fmt.section_start or fmt.section_end:
        tools.append(" section").append_text(_pair(fmt.section_start, fmt.section_end))
    if fmt.per_call_start or fmt.per_call_end:
        tools.append(" call").append_text(_pair(fmt.per_call_start, fmt.per_call_end))
    fn = a.tools.function
    if fn.name_prefix or fn.name_suffix:
        tools.append(" name").append_text(_pair(fn.name_prefix, fn.name_suffix))
    args = a.tools.arguments
    if args.name_prefix or args.value_suffix:
        tools.append(" argument").append_text(_pair(args.name_prefix, args.value_suffix))
    table.add_row("tools", tools)
    if a.handler:
        table.add_row("handler", Text(a.handler))
    grammar = Text("none" if not generated.grammar else ("lazy, from " if generated.grammar_lazy else "always on"))
    if generated.grammar and generated.grammar_lazy:
        grammar.append_text(trigger_text(generated.triggers))
    table.add_row("grammar", grammar)
    if a.degraded:
        table.add_row("degraded", Text(", ".join(sorted({d.phase for d in a.degraded})), style="yellow"))
    return table


def grammar_text(generated: Generated, output_only: bool = False) -> str:
    """The grammar as a plain GBNF file: the lazy flag, triggers (kind and
    JSON-quoted value) and preserved tokens as ``#`` comments, then the rules.
    A non-lazy grammar covers generation prompt + output (the header says so);
    ``output_only``: the output's grammar alone."""
    import json

    g = generated
    lines = [f"# autoparser grammar for {one_line_safe(g.analysis.template_name)}"]
    grammar = g.grammar
    if output_only:
        grammar, why = g.output_grammar()
        if not grammar:
            lines.append(f"# no output-only grammar: {why}")
            return "\n".join(lines) + "\n"
    if not grammar:
        lines.append(f"# no grammar: {g.grammar_error or 'nothing to constrain (no tools, no json_schema)'}")
        return "\n".join(lines) + "\n"
    lines.append(f"# lazy: {'yes' if g.grammar_lazy else 'no'}")
    if not g.grammar_lazy and not output_only:
        lines.append(
            "# covers the generation prompt, then the output: llama.cpp feeds the prompt as prefill; "
            "for an engine that constrains only the output, use --output-only"
        )
    for t in g.triggers:
        lines.append(f"# trigger {t.type.label}: {json.dumps(t.value, ensure_ascii=False)}")
    if g.grammar_lazy:
        lines.append(f"# ({TRIGGER_LEGEND})")
    lines.append("# preserved tokens: " + " ".join(json.dumps(t, ensure_ascii=False) for t in g.preserved_tokens))
    return "\n".join(lines) + "\n" + grammar.rstrip("\n") + "\n"


def generation_renderables(generated: Generated, parser: bool = True, grammar: bool = True) -> list[object]:
    """What generation made for the request (the prompt, lazy flag, triggers
    and tokens), with the parser as a tree and the grammar when asked for."""
    from rich.panel import Panel

    g = generated
    table = _marker_table(
        "Generated for the request",
        [
            ("tools", ", ".join(str((t.get("function") or {}).get("name")) for t in g.request.tools or ()) or "—"),
            ("generation_prompt", g.generation_prompt),
            ("boilerplate literal", g.built.boilerplate),
            ("outcome", g.prefill),
            ("grammar_lazy", g.grammar_lazy),
            ("triggers", trigger_text(g.triggers)),
            ("preserved_tokens", _joined(g.preserved_tokens)),
        ],
    )
    out: list[object] = [table, *([Text(TRIGGER_LEGEND, style="dim")] if g.triggers else [])]
    if parser:
        out.append(parser_tree(g.built.parser, "PEG parser (over generation prompt + output)"))
    if grammar:
        text = Text(terminal_safe(g.grammar)) if g.grammar else Text(g.grammar_error or "(no grammar: nothing to constrain)", style="dim")
        out.append(Panel(text, title="GBNF grammar" + (" (lazy)" if g.grammar_lazy else ""), title_align="left"))
    if not (parser and grammar):
        out.append(Text("(--parser, --grammar or --all show the generated PEG parser and GBNF grammar)", style="dim"))
    return out


#: below this many columns, ``check`` lists templates instead of tabling them
#: (a table would fold markers mid-token)
CHECK_TABLE_MIN_WIDTH = 140


def check_table(
    checks: list[TemplateCheck], drifted: set[str] | frozenset[str] = frozenset(), width: int = 200
) -> Table | Group:
    """One row per template: reasoning, content, tool format and key markers,
    status (``drifted`` names differ from the lock file); full reasons are in
    :func:`check_details`.  Narrower than :data:`CHECK_TABLE_MIN_WIDTH` (a
    CI log's 80 columns), one block per template, folded only between markers."""
    rows = [_check_row(check, drifted) for check in checks]
    if width < CHECK_TABLE_MIN_WIDTH:
        return _check_listing(rows)
    table = Table(title=Text("Templates"), title_justify="left")
    for column in ("template", "reasoning", "content", "tools", "round trip", "status"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def _check_row(check: TemplateCheck, drifted: set[str] | frozenset[str]) -> tuple[Text, Text, Text, Text, Text, Text]:
    """A template's cells: name, reasoning, content, tools, round trip, status."""
    from analysis.checks import CheckStatus

    a = check.analysis
    name = Text(one_line_safe(check.name))
    if a is None:
        return name, Text(), Text(), Text(), Text(), Text(one_line_safe(check.summary), style="red")
    reasoning = Text(a.reasoning.mode.value).append_text(_pair(a.reasoning.start, a.reasoning.end, "  "))
    content = Text(a.content.mode.value)
    if a.content.start:
        content.append("  ").append_text(visible(a.content.start))
    fmt = a.tools.format
    tools = Text(fmt.mode.value)
    for marker in (fmt.section_start or fmt.per_call_start, a.tools.function.name_prefix, a.tools.arguments.name_prefix):
        if marker:
            tools.append("  ").append_text(visible(marker))
    style = {CheckStatus.OK: "green", CheckStatus.DEGRADED: "yellow"}.get(check.status, "red")
    status = Text(check.status.value, style=style)
    if check.name in drifted:
        status = Text(f"{check.status.value}, drifted", style="red")
    return name, reasoning, content, tools, round_trip_text(check.round_trips), status


def _check_listing(rows: list[tuple[Text, Text, Text, Text, Text, Text]]) -> Group:
    """The rows as blocks: ``name  status  (round trip)`` then one indented
    line per field (Rich wraps at the spaces between markers, never inside one)."""
    lines: list[Text] = [Text("Templates", style="bold")]
    for name, reasoning, content, tools, trips, status in rows:
        head = Text.assemble(name, "  ", status)
        if trips.plain:
            head.append("  (").append_text(trips).append(")")
        lines.append(head)
        for label, cell in (("reasoning", reasoning), ("content", content), ("tools", tools)):
            if cell.plain:
                lines.append(Text.assemble(f"  {label:<10}", cell))
    return Group(*lines)


def check_details(
    checks: list[TemplateCheck], drifted: dict[str, list[str]], known: dict[str, str]
) -> list[Text]:
    """Everything the table has no room for, in full: failure and degraded
    reasons, skipped probes and why, and lock-file drift."""
    from analysis.checks import CheckStatus, ProbeStatus

    out: list[Text] = []
    for check in checks:
        lines: list[tuple[str, str]] = []
        if check.status is CheckStatus.FAILED:
            note = f" (known failure: {known[check.name]})" if check.name in known else ""
            lines.append((f"failed{note}: {check.reason}", "yellow" if note else "red"))
        elif check.status is CheckStatus.DEGRADED:
            lines.append((f"degraded: {check.reason}", "yellow"))
        for trip in check.round_trips:
            if trip.status is ProbeStatus.SKIPPED:
                lines.append((f"round trip {trip.probe} skipped: {trip.detail}", "dim"))
        for support, why in check.not_probed.items():
            lines.append((f"not probed: {support} ({why})", "yellow"))
        for line in drifted.get(check.name, []):
            lines.append((f"drifted: {line}", "red"))
        if check.lint is not None:
            for finding in check.lint.findings:
                if finding.severity.value != "info":
                    test = f"{check.name}:{finding.rule}"
                    note = f" (known failure: {known[test]})" if test in known else ""
                    style = "yellow" if note or finding.severity.value == "warning" else "red"
                    at = "" if finding.where is None else f" (line {finding.where})"
                    lines.append((f"lint {finding.severity.value} {finding.rule}{at}{note}: {finding.message}", style))
        if lines:
            out.append(Text(terminal_safe(check.name), style="bold"))
            out.extend(Text("  " + terminal_safe(text), style=style) for text, style in lines)
    checked = {c.name for c in checks}
    for name, drift in drifted.items():
        if name not in checked:
            out.append(Text(name, style="bold"))
            out.extend(Text(f"  drifted: {terminal_safe(line)}", style="red") for line in drift)
    return out


def round_trip_text(trips: tuple[RoundTrip, ...]) -> Text:
    """``4/4 ok`` (and how many probes were skipped), or the probes that failed, in red."""
    from analysis.checks import ProbeStatus

    if not trips:
        return Text("—")
    failed = [t.probe for t in trips if t.status is ProbeStatus.FAILED]
    if failed:
        return Text("failed: " + ", ".join(failed), style="red")
    ok = sum(t.status is ProbeStatus.OK for t in trips)
    skipped = len(trips) - ok
    return Text(f"{ok} ok" + (f", {skipped} skipped" if skipped else ""), style="green")


def readings_table(readings: tuple[ProbeReading, ...]) -> Table:
    """One row per probe: whether transformers reads it as autoparser does, and how not."""
    from analysis.checks import Agreement

    table = Table(title=Text("transformers' reading of the round-trip probes"), title_justify="left")
    for column in ("probe", "transformers", "detail"):
        table.add_column(column, overflow="fold")
    styles = {Agreement.SAME: "green", Agreement.DIFFERENT: "red", Agreement.SKIPPED: "yellow"}
    for reading in readings:
        table.add_row(Text(reading.probe), Text(reading.agreement.value, style=styles[reading.agreement]), Text(terminal_safe(reading.detail)))
    return table


class progress_bar:
    """A transient progress bar on stderr while ``total`` items run (off when not a terminal)."""

    def __init__(self, total: int, label: str, enabled: bool = True):
        from rich.progress import Progress

        from autoparser_cli.common import err_console

        stderr = err_console()
        self._progress = Progress(console=stderr, transient=True, disable=not (enabled and stderr.is_terminal))
        self._total, self._label = total, label

    def __enter__(self):  # type: ignore[no-untyped-def]
        self._progress.start()
        task = self._progress.add_task(self._label, total=self._total)
        return lambda: self._progress.advance(task)

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()


_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def lint_table(report: LintReport) -> Table:
    """One row per finding: severity, rule and message (the evidence is in :func:`lint_evidence`)."""
    counts = report.counts()
    title = f"Lint of {one_line_safe(report.template_name)}: {counts['error']} errors, {counts['warning']} warnings, {counts['info']} info"
    table = Table(title=Text(title), title_justify="left")
    for column in ("severity", "rule", "line", "finding"):
        table.add_column(column, overflow="fold", justify="right" if column == "line" else "left")
    for finding in report.findings:
        severity = finding.severity.value
        line = "" if finding.where is None else str(finding.where)
        table.add_row(Text(severity, style=_SEVERITY_STYLE[severity]), Text(finding.rule), Text(line), Text(terminal_safe(finding.message)))
    return table


def lint_evidence(report: LintReport, width: int = 100) -> list[Text]:
    """Each finding's evidence: the render (or conversation) around the place
    to look, on one line, with a caret under it; then the rules that did not run."""
    out: list[Text] = []
    for finding in report.findings:
        if not finding.evidence:
            continue
        where = [] if finding.where is None else [f"line {finding.where}" + (f":{finding.column}" if finding.column else "")]
        if finding.severity.value != "info" and finding.engines:  # (the engines it breaks)
            where.append("breaks " + ", ".join(finding.engines))
        at = f" ({'; '.join(where)})" if where else ""
        out.append(Text(f"{finding.severity.value} {finding.rule}{at}: {terminal_safe(finding.message)}", style=_SEVERITY_STYLE[finding.severity.value]))
        for evidence in finding.evidence:
            label = f"  {evidence.label}: "
            line, caret = evidence.window(max(40, width - len(label)))
            out.append(Text(label, style="dim").append(terminal_safe(line)))
            if caret is not None:  # (under the character: wide ones take two columns)
                out.append(Text(" " * (len(label) + cell_len(terminal_safe(line[:caret]))) + "^", style="bold"))
    for rule, why in report.skipped.items():
        out.append(Text(f"not run: {rule}: {terminal_safe(why)}", style="dim"))
    return out


def hint_text(hint: ParseHint) -> str:
    """A parse hint as a sentence naming the option that would have read the output."""
    from analysis.generation import HintKind

    if hint.kind is HintKind.PARALLEL_CALLS_OFF:
        return (
            f"the model wrote {hint.count} tool calls but parallel_tool_calls is off: all are read; "
            "pass --parallel-tool-calls (or set it in --request), as the grammar allows one call without it"
        )
    if hint.kind is HintKind.CUT_SHORT:
        return "the output ends early (cut off at max_tokens?): try --partial"
    return (
        f"the output holds the template's tool-call marker {terminal_safe(repr(hint.marker))} but the request has no tools: "
        "give --tools (or tools in --request)"
    )
