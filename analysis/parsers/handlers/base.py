"""What a dedicated handler is (:class:`Handler`), and helpers handlers share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from analysis.messages.hooks import GENERIC, OutputHooks
from analysis.parsers.builder import BuiltParser
from analysis.parsers.calls import CallsBuilder
from analysis.parsers.request import ChatRequest
from analysis.phases.result import PrefillOutcome, TemplateAnalysis, ToolFormat
from analysis.probing.probes import Prober, assistant, conversation, tool_call

#: ``detect(source, prober)`` returns the rule that matched (a sentence), or None.
Detector = Callable[[str, Prober], "str | None"]
class Builder(Protocol):
    """A whole-parser builder: (analysis, request, generation prompt, continued
    text, prefill); ``for_grammar``: the parser the grammar is made from (no
    parsing leniency, such as dropped end-of-turn markers)."""

    def __call__(
        self,
        analysis: TemplateAnalysis,
        request: ChatRequest,
        generation_prompt: str,
        continued_text: str,
        prefill: PrefillOutcome,
        for_grammar: bool = False,
    ) -> BuiltParser: ...


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
    #: how the mapper and the stream parser read the format's own captures
    output: OutputHooks = GENERIC
    #: the format's own part of a ``response_template``: ``{"fields": {...}}``
    #: (merged over the generic fields), and a ``start_anchor`` if it needs its
    #: own; None: the spec cannot express the format (``response_unsupported`` says why)
    response_fields: Callable[[TemplateAnalysis], dict[str, Any]] | None = None
    response_unsupported: str = ""
    #: the call id its models write, a format with ``{i}`` (Kimi K2's
    #: ``functions.get_weather:{i}``): the round-trip probes render calls with it too
    probe_call_id: str = ""
    #: markers read from the template's own renders, after ``refine`` (the
    #: section around pythonic calls): (analysis, prober) -> analysis
    measure: Callable[[TemplateAnalysis, Prober], TemplateAnalysis] | None = None


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
