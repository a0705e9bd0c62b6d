"""Dedicated handlers: formats the differential analysis cannot see.

A handler is a small declared unit: a name, a detection rule (over probe
renders where possible, else over the template source), a refinement of the
analysis (its markers, for display and for the shared parser pieces), and the
parser pieces it needs — a tool-call parser (``calls``) or a whole body
(``build``) — built with the same PEG engine and read by the same mapper.
Handlers are tried in order; the first whose rule matches owns the template.
"""

from __future__ import annotations

from analysis.parsers.handlers.base import (
    Builder,
    Detector,
    Handler,
    probe_call_render,
    with_tool_markers,
)
from analysis.probing.probes import Prober

__all__ = ["Builder", "Detector", "Handler", "find_handler", "handler_named", "probe_call_render", "registry", "with_tool_markers"]


def registry() -> tuple[Handler, ...]:
    """Every handler, in the order they are tried."""
    from analysis.parsers.handlers import (
        dsml,
        functionary32,
        gemma4,
        gigachat3,
        harmony,
        kimi,
        kimi3,
        mistral3,
        pythonic,
        recipient_xml,
    )

    return (
        harmony.HANDLER,
        functionary32.HANDLER,
        functionary32.V2_HANDLER,
        pythonic.HANDLER,
        pythonic.LIST_HANDLER,
        pythonic.SECTION_HANDLER,
        gemma4.HANDLER,
        dsml.HANDLER,
        dsml.GCML_HANDLER,
        kimi.HANDLER,
        kimi3.HANDLER,
        mistral3.HANDLER,
        gigachat3.HANDLER,
        recipient_xml.HANDLER,
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
