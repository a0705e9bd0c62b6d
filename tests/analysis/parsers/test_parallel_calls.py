"""A second tool call reads the same way in every format, generic or dedicated:
it is a call whether ``parallel_tool_calls`` is on or off (the model wrote it:
nothing is lost, and the stream shows the same); with it off, the hint names
``--parallel-tool-calls`` and the grammar still allows one call."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.checks.round_trip import CALL_SETS, _rendered_calls, cut_ends, id_styles
from analysis.generation.generator import AutoParser
from analysis.generation.hints import HintKind, parse_hints
from analysis.generation.streaming import stream_output
from analysis.messages.mapper import accumulate
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
    for style in id_styles(parser):
        text = _rendered_calls(parser.template, on, TOOL, ARGUMENTS, style)
        for end in cut_ends(text or ""):  # less the end of turn the render carries
            outcome = on.parse(text[:end]) if text else None
            if outcome is not None and outcome.ok and outcome.message.tool_calls:
                if len(outcome.message.tool_calls) == 2:
                    return parser, text[:end]
                break
    return None


@pytest.mark.slow
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
        on = parser.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "hi"}], "tools": [TOOL], "parallel_tool_calls": True}))
        assert outcome.ok and outcome.message == on.parse(text).message and len(outcome.message.tool_calls) == 2, path.name
        deltas, streamed, _ = stream_output(off, text, 3)
        assert streamed.message == outcome.message and accumulate(deltas) == outcome.message, path.name
        hints = parse_hints(off, text, outcome, partial=False)
        assert [(h.kind, h.count) for h in hints] == [(HintKind.PARALLEL_CALLS_OFF, 2)], (path.name, hints)
        checked.append(path.name)
    # generic formats and the dedicated ones (DSML/GCML, Kimi K2/K3, Gemma 4, ...)
    assert len(checked) >= 50, len(checked)
    for name in ("GigaChat3.5.jinja", "Kimi-K3.jinja", "gemma4.jinja", "Qwen3-Coder.jinja"):
        assert name in checked, name
