"""Formatters: analysis results to Rich renderables or strings (no printing here)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

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
