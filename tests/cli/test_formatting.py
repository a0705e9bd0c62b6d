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
    assert render(visible("</think>\n")).strip() == '"</think>↵"'
    assert render(visible("[INST]")).strip() == '"[INST]"'
    assert render(visible(" to=functions.")).strip() == '" to=functions."'  # leading space shows


def test_control_characters_never_reach_the_terminal() -> None:
    from analysis.messages.mapper import Delta, Message, ToolCall
    from autoparser_cli.formatting import delta_text, message_panels
    from autoparser_cli.textsafe import terminal_safe

    hostile = "a\x1b[31mred\x1b]0;title\x07b\rc\x9bd\tkeep\nline"
    assert terminal_safe(hostile) == "a\\x1b[31mred\\x1b]0;title\\x07b\\x0dc\\x9bd\tkeep\nline"
    message = Message(content=hostile, reasoning_content=hostile, tool_calls=[ToolCall(name="f\x1b", arguments='{"x": "\\u001b"}')])
    outputs = [render(panel) for panel in message_panels(message)]
    outputs.append(render(delta_text(Delta(content=hostile))))
    outputs.append(render(visible(hostile)))
    for out in outputs:
        assert not any(ch in out for ch in "\x1b\x07\r\x9b"), repr(out)


def test_merge_deltas_joins_runs_of_one_field_only() -> None:
    from analysis.messages.mapper import Delta
    from autoparser_cli.formatting import merge_deltas

    deltas = [
        Delta(reasoning_content="a"), Delta(reasoning_content="b"),
        Delta(content="c"), Delta(content="d"),
        Delta(tool_index=0, tool_name="f"), Delta(tool_index=0, arguments="{"), Delta(tool_index=0, arguments="}"),
        Delta(tool_index=1, tool_name="g"), Delta(tool_index=1, arguments="{}"),
        Delta(content="e"),
    ]
    assert merge_deltas(deltas) == [
        Delta(reasoning_content="ab"), Delta(content="cd"),
        Delta(tool_index=0, tool_name="f"), Delta(tool_index=0, arguments="{}"),
        Delta(tool_index=1, tool_name="g"), Delta(tool_index=1, arguments="{}"),
        Delta(content="e"),
    ]


def test_rich_stream_prints_batched_deltas_that_add_up(tmp_path) -> None:
    from tests.cli_helpers import run_cli
    from tests.conftest import PROJECT_TEMPLATES

    body = "word " * 2000
    out = tmp_path / "o.txt"
    out.write_text(body)
    result = run_cli("parse", "--template", str(PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"), "--stream", "--chunk", "1", str(out), width=100000)
    assert result.exit_code == 0
    lines = [line for line in result.stdout.splitlines() if line.startswith("  content ")]
    assert "".join(line[len("  content "):] for line in lines).rstrip() == body.rstrip()
    assert len(lines) < 100  # batched: far fewer lines than the 10,000 deltas
