"""CLI formatters render parser trees and markers without interpreting markup."""

from __future__ import annotations

from rich.console import Console

from autoparser_cli.formatting import parser_tree, visible
from peg import combinators as p


def render(renderable) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_parser_tree_shows_tags_and_literals_verbatim() -> None:
    g = p.literal("[TOOL_CALLS]") + p.tag("tool-name", p.until("[ARGS]")) + p.literal("[ARGS]") + p.tag("tool-args", p.json_value())
    out = render(parser_tree(g))
    assert "Literal([TOOL_CALLS])" in out
    assert "Tag(tool-name)" in out and "Until([ARGS])" in out and "Json" in out


def test_parser_tree_shows_recursive_rule_once() -> None:
    r = p.rule("item")
    r.body = p.literal("(") + p.zero_or_more(p.Ref(r)) + p.literal(")")
    out = render(parser_tree(r))
    assert out.count("Rule(item)") == 1 and "Ref(item)" in out


def test_visible_marker() -> None:
    assert render(visible("</think>\n")).strip() == "</think>↵"
    assert render(visible("[INST]")).strip() == "[INST]"
