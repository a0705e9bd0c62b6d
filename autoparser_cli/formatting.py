"""Formatters: analysis results to Rich renderables or strings (no printing here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.panel import Panel
    from rich.tree import Tree

    from analysis.checking import TemplateCheck
    from analysis.round_trip import RoundTrip
    from analysis.generation import Generated
    from analysis.mapper import Delta, Message
    from analysis.probes import Comparison
    from analysis.result import TemplateAnalysis
    from peg.combinators import Parser

from analysis.caps import Capabilities


def visible(marker: str) -> Text:
    """A marker shown with its whitespace visible, never as Rich markup."""
    if marker == "":
        return Text("—", style="dim")
    shown = marker.replace("\n", "↵").replace("\t", "⇥")
    return Text(shown, style="cyan")


def caps_table(name: str, caps: Capabilities) -> Table:
    """The capability flags as a two-column table."""
    table = Table(title=Text(f"Capabilities of {name}"), show_header=True)
    table.add_column("capability")
    table.add_column("supported")
    for key, value in caps.to_dict().items():
        table.add_row(key, Text("yes", style="green") if value else Text("no", style="red"))
    return table


def _node_label(node: "Parser") -> Text:
    from peg.combinators import Repetition, Rule, Schema, Tag

    if not node.children():
        return Text(node.dump().replace("\n", "↵"), style="green")
    if isinstance(node, Tag):
        return Text(f"Tag({node.name})", style="bold magenta")
    if isinstance(node, Rule):
        return Text(f"Rule({node.name})", style="bold blue")
    if isinstance(node, Repetition):
        return Text(node.dump().split("(", 1)[0] + f" {{{node.min},{'∞' if node.max < 0 else node.max}}}")
    if isinstance(node, Schema):
        return Text(f"Schema({node.name})", style="yellow")
    return Text(type(node).__name__)


def parser_tree(parser: "Parser", label: str = "parser") -> "Tree":
    """A PEG parser as a Rich tree (each rule body shown once)."""
    from rich.tree import Tree

    root = Tree(Text(label, style="bold"))
    shown: set[int] = set()

    def add(branch: Tree, node: "Parser") -> None:
        child = branch.add(_node_label(node))
        if id(node) in shown:
            return
        shown.add(id(node))
        for sub in node.children():
            add(child, sub)

    add(root, parser)
    return root


def _marker_table(title: str, rows: list[tuple[str, object]]) -> Table:
    table = Table(title=Text(title), show_header=False, title_justify="left")
    table.add_column("field", style="bold")
    table.add_column("value")
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
        table.add_row(name, shown)
    return table


def analysis_tables(analysis: "TemplateAnalysis") -> list[Table]:
    """An analysis as Rich tables: capabilities, reasoning, content, tool format,
    function / argument / call-id markers, generation prompt, tokens, degradations."""
    a = analysis
    fmt, fn, args, cid = a.tools.format, a.tools.function, a.tools.arguments, a.tools.call_id
    tables = [
        caps_table(a.template, a.caps),
        _marker_table("Roles", [("user_start", a.user_start), ("assistant_start", a.assistant_start)]),
        _marker_table(
            "Reasoning",
            [("mode", a.reasoning.mode), ("start", a.reasoning.start), ("end", a.reasoning.end)],
        ),
        _marker_table(
            "Content",
            [
                ("mode", a.content.mode),
                ("start", a.content.start),
                ("end", a.content.end),
                ("requires_nonnull_content", a.content.requires_nonnull_content),
            ],
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
                ("specialized", a.specialized or ""),
                ("handler rule", a.specialized_rule),
            ],
        ),
    ]
    if a.degraded:
        table = Table(title=Text("Degraded phases"), title_justify="left")
        for column in ("phase", "comparison", "template said"):
            table.add_column(column)
        for d in a.degraded:
            table.add_row(d.phase, d.comparison, Text(d.reason, style="red"))
        tables.append(table)
    return tables


def _clip(text: str, keep: int, from_end: bool) -> str:
    if len(text) <= keep:
        return text
    return "…" + text[-keep:] if from_end else text[:keep] + "…"


def comparison_text(comparison: "Comparison", keep: int = 160) -> Text:
    """A comparison's diff, coloured: common prefix (dim), left only (red),
    right only (green), common suffix (dim); whitespace made visible."""

    def show(s: str) -> str:
        return s.replace("\n", "↵\n")

    d = comparison.diff
    out = Text()
    out.append(f"── {comparison.name}  (shape: {comparison.shape})\n", style="bold")
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


def message_panels(message: "Message") -> list["Panel"]:
    """A parsed message as Rich panels: reasoning, content, one per tool call
    (arguments pretty-printed when they are JSON)."""
    import json

    from rich.panel import Panel

    panels = []
    if message.reasoning_content:
        panels.append(Panel(Text(message.reasoning_content), title="reasoning", title_align="left", border_style="magenta"))
    panels.append(Panel(Text(message.content) if message.content else Text("(empty)", style="dim"), title="content", title_align="left"))
    for i, call in enumerate(message.tool_calls):
        try:
            args = json.dumps(json.loads(call.arguments), indent=2, ensure_ascii=False)
        except ValueError:
            args = call.arguments
        title = f"tool call {i}: {call.name}" + (f"  (id {call.id})" if call.id else "")
        panels.append(Panel(Text(args), title=Text(title), title_align="left", border_style="cyan"))
    return panels


def delta_text(delta: "Delta") -> Text:
    """One stream delta as a line: which field grows, and the piece (whitespace visible)."""
    shown = lambda s: s.replace("\n", "↵")  # noqa: E731
    if delta.tool_index is None:
        field = "content" if delta.content is not None else "reasoning"
        return Text.assemble((f"{field:>9} ", "bold"), (shown(delta.content or delta.reasoning_content or ""), ""))
    head = f"tool[{delta.tool_index}] "
    parts: list[tuple[str, str]] = [(head, "bold cyan")]
    if delta.tool_name is not None:
        parts.append((f"name={delta.tool_name} ", "cyan"))
    if delta.tool_id is not None:
        parts.append((f"id={delta.tool_id} ", "cyan"))
    if delta.arguments:
        parts.append((shown(delta.arguments), ""))
    return Text.assemble(*parts)


def generation_renderables(generated: "Generated") -> list[object]:
    """The generated parser (as a tree), grammar, lazy flag, triggers and tokens."""
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
            ("triggers", Text("  ".join(f"{t.type}:{t.value}" for t in g.triggers) or "—")),
            ("preserved_tokens", Text("  ".join(t.replace("\n", "↵") for t in g.preserved_tokens) or "—")),
        ],
    )
    grammar = Text(g.grammar) if g.grammar else Text(g.grammar_error or "(no grammar: nothing to constrain)", style="dim")
    return [
        table,
        parser_tree(g.built.parser, "PEG parser (over generation prompt + output)"),
        Panel(grammar, title="GBNF grammar" + (" (lazy)" if g.grammar_lazy else ""), title_align="left"),
    ]


def check_table(checks: "list[TemplateCheck]", drifted: "set[str] | frozenset[str]" = frozenset()) -> Table:
    """One row per template: reasoning, content, tool format and key markers,
    status (``drifted`` names differ from the lock file); full reasons are in
    :func:`check_details`."""
    table = Table(title=Text("Templates"), title_justify="left")
    for column in ("template", "reasoning", "content", "tools", "round trip", "status"):
        table.add_column(column, overflow="fold")
    for check in checks:
        a = check.analysis
        if a is None:
            table.add_row(Text(check.name), "", "", "", "", Text(check.summary, style="red"))
            continue
        reasoning = Text(a.reasoning.mode.value)
        if a.reasoning.mode.value != "NONE":
            reasoning.append("  ").append_text(visible(a.reasoning.start)).append(" … ").append_text(visible(a.reasoning.end))
        content = Text(a.content.mode.value)
        if a.content.start:
            content.append("  ").append_text(visible(a.content.start))
        fmt = a.tools.format
        tools = Text(fmt.mode.value)
        for marker in (fmt.section_start or fmt.per_call_start, a.tools.function.name_prefix, a.tools.arguments.name_prefix):
            if marker:
                tools.append("  ").append_text(visible(marker))
        style = {"ok": "green", "degraded": "yellow"}.get(check.status.value, "red")
        status = Text(check.status.value, style=style)
        if check.name in drifted:
            status = Text(f"{check.status.value}, drifted", style="red")
        table.add_row(Text(check.name), reasoning, content, tools, round_trip_text(check.round_trips), status)
    return table


def check_details(
    checks: "list[TemplateCheck]", drifted: "dict[str, list[str]]", known: "dict[str, str]"
) -> list[Text]:
    """Everything the table has no room for, in full: failure and degraded
    reasons, skipped probes and why, and lock-file drift."""
    out: list[Text] = []
    for check in checks:
        lines: list[tuple[str, str]] = []
        if check.status.value == "failed":
            note = f" (known failure: {known[check.name]})" if check.name in known else ""
            lines.append((f"failed{note}: {check.reason}", "yellow" if note else "red"))
        elif check.status.value == "degraded":
            lines.append((f"degraded: {check.reason}", "yellow"))
        for trip in check.round_trips:
            if trip.status == "skipped":
                lines.append((f"round trip {trip.probe} skipped: {trip.detail}", "dim"))
        for line in drifted.get(check.name, []):
            lines.append((f"drifted: {line}", "red"))
        if lines:
            out.append(Text(check.name, style="bold"))
            out.extend(Text("  " + text, style=style) for text, style in lines)
    checked = {c.name for c in checks}
    for name, drift in drifted.items():
        if name not in checked:
            out.append(Text(name, style="bold"))
            out.extend(Text(f"  drifted: {line}", style="red") for line in drift)
    return out


def round_trip_text(trips: "tuple[RoundTrip, ...]") -> Text:
    """``4/4 ok`` (and how many probes were skipped), or the probes that failed, in red."""
    if not trips:
        return Text("—")
    failed = [t.probe for t in trips if t.status == "failed"]
    if failed:
        return Text("failed: " + ", ".join(failed), style="red")
    ok = sum(t.status == "ok" for t in trips)
    skipped = len(trips) - ok
    return Text(f"{ok} ok" + (f", {skipped} skipped" if skipped else ""), style="green")


class progress_bar:
    """A transient progress bar on stderr while ``total`` items run (off when not a terminal)."""

    def __init__(self, total: int, label: str, enabled: bool = True):
        from rich.progress import Progress

        from autoparser_cli.common import err_console

        self._progress = Progress(console=err_console, transient=True, disable=not (enabled and err_console.is_terminal))
        self._total, self._label = total, label

    def __enter__(self):  # type: ignore[no-untyped-def]
        self._progress.start()
        task = self._progress.add_task(self._label, total=self._total)
        return lambda: self._progress.advance(task)

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
