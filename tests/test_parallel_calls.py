"""A second tool call reads the same way in every format, generic or dedicated:
with ``parallel_tool_calls`` on it is a call; with it off the parse fails (the
text kept whole) and the hint names ``--parallel-tool-calls``."""

from __future__ import annotations

from pathlib import Path

from analysis.checks.round_trip import _ID_STYLES, CALL_SETS, _rendered_calls, cut_ends
from analysis.generation.generate import AutoParser
from analysis.generation.hints import parse_hints
from analysis.parsers.request import ChatRequest
from analysis.phases.result import ToolFormat
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from tests.conftest import needs_shared, zoo_templates

TOOL, ARGUMENTS = CALL_SETS["two calls"]


def _two_calls(path: Path) -> tuple[AutoParser, str] | None:
    """The template's own rendering of two calls, when it reads back as two calls."""
    try:
        parser = AutoParser(ChatTemplate(load_template(path), clock=FROZEN_CLOCK))
    except Exception:  # noqa: BLE001 - the broken or tool-less ones are not this test's business
        return None
    if parser.analysis.tools.format.mode is ToolFormat.NONE:
        return None
    on = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": [TOOL], "parallel_tool_calls": True}))
    for style in _ID_STYLES:
        text = _rendered_calls(parser.template, on, TOOL, ARGUMENTS, style)
        for end in cut_ends(text or ""):  # less the end of turn the render carries
            outcome = on.parse(text[:end]) if text else None
            if outcome is not None and outcome.ok and outcome.message.tool_calls:
                if len(outcome.message.tool_calls) == 2:
                    return parser, text[:end]
                break
    return None


@needs_shared
def test_second_call_without_parallel_tool_calls_is_the_same_everywhere() -> None:
    checked = []
    for path in zoo_templates():
        found = _two_calls(path)
        if found is None:
            continue
        parser, text = found
        off = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": [TOOL]}))
        outcome = off.parse(text)
        assert not outcome.ok and outcome.message.content == text and not outcome.message.tool_calls, path.name
        hints = parse_hints(parser, off, text, outcome, partial=False)
        assert any("--parallel-tool-calls" in h for h in hints), (path.name, hints)
        checked.append(path.name)
    # generic formats and the dedicated ones (DSML/GCML, Kimi K2/K3, Gemma 4, ...)
    assert len(checked) >= 50, len(checked)
    for name in ("GigaChat3.5.jinja", "Kimi-K3.jinja", "gemma4.jinja", "Qwen3-Coder.jinja"):
        assert name in checked, name
