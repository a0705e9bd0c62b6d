"""Round trip on the zoo: each template's own rendering parses back (``analysis.checks.round_trip``).

A model writes what its template renders in the history, so for every zoo
template the tool-call probes (one call, two arguments, two calls), a plain
reply and a reply with reasoning must parse back to what was rendered, or be
skipped because the template does not render them.
"""

from __future__ import annotations

import collections
import functools
from pathlib import Path

import pytest

from analysis.checks.round_trip import RoundTrip, round_trips
from analysis.generation.analyzer import analyze_template
from analysis.generation.generator import AutoParser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import LoadedTemplate, load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from tests.conftest import PROJECT_TEMPLATES, ZOO, needs_shared, zoo_templates


def _parser(path: Path) -> AutoParser:
    return AutoParser(ChatTemplate(load_template(path), clock=FROZEN_CLOCK))


@functools.cache
def _results(path: Path) -> tuple[RoundTrip, ...]:
    return round_trips(_parser(path))


@pytest.mark.slow  # (zoo-wide)
@needs_shared
@pytest.mark.parametrize("path", zoo_templates(), ids=lambda p: p.name)
def test_zoo_template_reads_its_own_rendering(path: Path) -> None:
    results = _results(path)
    assert [r for r in results if r.status == "failed"] == []
    assert {r.probe for r in results} >= {"reply"}


@pytest.mark.slow  # (zoo-wide)
@needs_shared
def test_how_many_templates_each_probe_reads() -> None:
    """The figures in the README (every template has the reply probe)."""
    counts = collections.Counter((r.probe, r.status) for path in zoo_templates() for r in _results(path))
    assert counts[("one call", "ok")] >= 61 and counts[("two calls", "ok")] >= 55 and counts[("typed values", "ok")] >= 61
    assert counts[("reply", "ok")] >= 66 and counts[("reasoning", "ok")] >= 16 and counts[("text and call", "ok")] >= 45
    assert not any(status == "failed" for _, status in counts)


@needs_shared
def test_a_parser_for_another_format_fails_the_round_trip() -> None:
    """The probes catch a parser that does not read the template's format:
    GLM-4.6's renders read with the analysis of Hermes 2 Pro (JSON in <tool_call>)."""
    glm = ChatTemplate(load_template(ZOO / "GLM-4.6.jinja"), clock=FROZEN_CLOCK)
    hermes = analyze_template(ChatTemplate(load_template(ZOO / "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"), clock=FROZEN_CLOCK))
    failed = {r.probe: r.detail for r in round_trips(AutoParser(glm, hermes)) if r.status == "failed"}
    assert {"one call", "two arguments", "two calls"} <= set(failed)
    assert "<arg_key>city</arg_key>" in failed["one call"]


def test_a_template_without_tools_or_reasoning_has_only_the_reply_probe() -> None:
    template = ChatTemplate(
        LoadedTemplate("plain.jinja", "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"),
        clock=FROZEN_CLOCK,
    )
    assert [(r.probe, r.status) for r in round_trips(AutoParser(template))] == [("reply", "ok")]


def test_a_template_that_refuses_the_probe_conversation_skips_the_probes() -> None:
    """picky.jinja raises unless a system message comes first: its probes are
    skipped with the template's message, never a failure or an exception."""
    template = ChatTemplate(load_template(PROJECT_TEMPLATES / "tests" / "picky.jinja"), clock=FROZEN_CLOCK)
    results = round_trips(AutoParser(template))
    assert results and all(r.status == "skipped" for r in results)
    assert "system message" in results[0].detail


@needs_shared
def test_content_after_calls_is_read_where_the_template_writes_it() -> None:
    """llama-cpp-lfm2 writes a calling turn's text after its calls; DeepSeek R1
    distills write it as a separate turn, which is not the same thing."""
    lfm2 = _parser(ZOO / "llama-cpp-lfm2.jinja")
    r1 = _parser(ZOO / "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja")
    assert lfm2.analysis.tools.format.content_after_calls and not r1.analysis.tools.format.content_after_calls
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    g = lfm2.generate(ChatRequest.from_json({"messages": [{"role": "user", "content": "Hi"}], "tools": tools}))
    message = g.parse('<|tool_call_start|>[{"name": "f", "arguments": {}}]<|tool_call_end|>Done.').message
    assert (message.content, [c.name for c in message.tool_calls]) == ("Done.", ["f"])


@needs_shared
def test_nemotron_nano_v2_writes_its_last_reply_inside_the_block_its_prompt_opens() -> None:
    """Issue 47: Nemotron Nano v2's generation prompt opens reasoning
    (``<SPECIAL_11>Assistant\\n<think>\\n``) and its history writes a last reply
    after that opener with no closer (``<think>\\nIt is sunny…\\n<SPECIAL_12>``;
    an earlier reply has no block at all, and reasoning is never written).  The
    model's part of that render is the same text a model writes that reasons
    and ends its turn without closing the block; an unclosed block is reasoning
    (the spec's and llama.cpp's reading), so no reading recovers the reply from
    the render as written.  The round trip reads it once the model closes the
    block the prompt opened, as the probe writes it."""
    from analysis.checks.round_trip import REASONING, REPLY, USER

    parser = _parser(ZOO / "NVIDIA-Nemotron-Nano-v2.jinja")
    generated = parser.generate(ChatRequest.from_json({"messages": [USER]}))
    assert generated.generation_prompt.endswith("<SPECIAL_11>Assistant\n<think>\n")
    render = parser.template.render
    from analysis.template.rendering import RenderRequest

    last = render(RenderRequest([USER, {"role": "assistant", "content": REPLY}]))
    earlier = render(RenderRequest([USER, {"role": "assistant", "content": REPLY}, {"role": "user", "content": "And tomorrow?"}]))
    assert f"<SPECIAL_11>Assistant\n<think>\n{REPLY}\n<SPECIAL_12>" in last and "</think>" not in last
    assert f"<SPECIAL_11>Assistant\n{REPLY}\n<SPECIAL_12>" in earlier
    as_written = last[last.index(generated.generation_prompt) + len(generated.generation_prompt) :]
    thinking = f"{REASONING}\n<SPECIAL_12>\n"
    assert (generated.parse(as_written).message.reasoning_content, generated.parse(thinking).message.reasoning_content) == (REPLY, REASONING)
    reply = {r.probe: r for r in _results(ZOO / "NVIDIA-Nemotron-Nano-v2.jinja")}["reply"]
    assert reply.status == "ok" and reply.text.startswith("</think>" + REPLY)
