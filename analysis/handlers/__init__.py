"""Dedicated handlers: formats the differential analysis cannot see.

A handler is a small declared unit: a name, a detection rule (over probe
renders where possible, else over the template source), a refinement of the
analysis (its markers, for display and for the shared parser pieces), and the
parser pieces it needs — a tool-call parser (``calls``) or a whole body
(``build``) — built with the same PEG engine and read by the same mapper.
Handlers are tried in order; the first whose rule matches owns the template.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from analysis.parser_builder import BuiltParser, CallsBuilder
from analysis.probes import Prober, assistant, conversation, tool_call
from analysis.request import ChatRequest
from analysis.result import PrefillOutcome, TemplateAnalysis, ToolFormat

#: ``detect(source, prober)`` returns the rule that matched (a sentence), or None.
Detector = Callable[[str, Prober], "str | None"]
#: A whole-parser builder: (analysis, request, generation prompt, continued text, prefill).
Builder = Callable[[TemplateAnalysis, ChatRequest, str, str, PrefillOutcome], BuiltParser]


@dataclass(frozen=True)
class Handler:
    """One dedicated format."""

    name: str
    detect: Detector
    refine: Callable[[TemplateAnalysis, str], TemplateAnalysis]  #: (analysis, template source)
    calls: CallsBuilder | None = None
    build: Builder | None = None
    #: the request as the template needs it (a thinking switch of its own name)
    adapt_request: Callable[[ChatRequest], ChatRequest] | None = None
    #: the special tokens to preserve, when the markers are not themselves tokens
    tokens: tuple[str, ...] = ()


def probe_call_render(prober: Prober, arguments: dict[str, Any] | None = None) -> str:
    """The render of one probe call (``""`` when the template rejects every shape)."""
    return prober.render_shaped(conversation(assistant(content="", calls=[tool_call(arguments=arguments)]))) or ""


def with_tool_markers(
    analysis: TemplateAnalysis,
    mode: ToolFormat,
    format: dict[str, Any] | None = None,
    function: dict[str, Any] | None = None,
    arguments: dict[str, Any] | None = None,
    **changes: Any,
) -> TemplateAnalysis:
    """``analysis`` with the handler's tool markers (unnamed section/per-call markers cleared)."""
    tools = analysis.tools
    markers = {"section_start": "", "section_end": "", "per_call_start": "", "per_call_end": "", **(format or {})}
    return replace(
        analysis,
        tools=replace(
            tools,
            format=replace(tools.format, mode=mode, **markers),
            function=replace(tools.function, **(function or {})),
            arguments=replace(tools.arguments, **(arguments or {})),
        ),
        **changes,
    )


def registry() -> tuple[Handler, ...]:
    """Every handler, in the order they are tried."""
    from analysis.handlers import (
        dsml,
        functionary32,
        gemma4,
        gigachat3,
        harmony,
        kimi,
        kimi3,
        mistral3,
        pythonic,
    )

    return (
        harmony.HANDLER,
        functionary32.HANDLER,
        pythonic.HANDLER,
        gemma4.HANDLER,
        dsml.HANDLER,
        dsml.GCML_HANDLER,
        kimi.HANDLER,
        kimi3.HANDLER,
        mistral3.HANDLER,
        gigachat3.HANDLER,
    )


def find_handler(source: str, prober: Prober) -> tuple[Handler, str] | None:
    """The first handler whose rule matches, with the rule."""
    for handler in registry():
        rule = handler.detect(source, prober)
        if rule:
            return handler, rule
    return None


def handler_named(name: str) -> Handler:
    """The handler called ``name``."""
    for handler in registry():
        if handler.name == name:
            return handler
    raise KeyError(name)
