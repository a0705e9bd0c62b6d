"""Formatters: analysis results to Rich renderables or strings (no printing here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.tree import Tree

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
        return Text(node.dump(), style="green")
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
