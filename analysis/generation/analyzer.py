"""The differential analysis of one template: the phases run in order, the workarounds and the handler applied, the result.

``analyze_template(template)`` runs the capability probes, tries the dedicated
handlers (``analysis.parsers.handlers``), runs the reasoning, content and tool phases,
finds the role start markers and the generation prompt, applies the
workarounds (then a matching handler's markers) and collects the preserved
tokens.  A phase
whose comparisons the template cannot render degrades on its own (the result
says which comparison failed and the template's message); only a runaway
template (a render limit) fails the whole analysis.
"""

from __future__ import annotations

from dataclasses import replace

from analysis.parsers.handlers import find_handler
from analysis.phases.content import analyze_content
from analysis.phases.phase_log import PhaseLog
from analysis.phases.reasoning import always_opened, analyze_reasoning, prefill_outcome
from analysis.phases.result import (
    TemplateAnalysis,
)
from analysis.phases.roles import generation_prompt, role_starts, tools_reply_lead, turn_end
from analysis.phases.tools import analyze_tools
from analysis.phases.workarounds import apply_workarounds
from analysis.probing.caps import Capabilities, detect_capabilities
from analysis.probing.markers import MARKER_RE, MARKUP_CHARS, strip_ws
from analysis.probing.probes import (
    PROBE_STRINGS,
    Comparison,
    Prober,
)
from analysis.template.rendering import ChatTemplate


def analyze_template(
    template: ChatTemplate,
    enable_thinking: bool = True,
    caps: Capabilities | None = None,
    record: list[Comparison] | None = None,
) -> TemplateAnalysis:
    """Analyse ``template`` (see the module docstring).

    ``enable_thinking`` only affects the reported generation prompt; the phases
    compare both settings themselves.  When ``record`` is given, every
    comparison made is appended to it (for ``analyze --diffs``)."""
    caps = caps or detect_capabilities(template)
    prober = Prober(template, caps)
    if record is not None:
        prober.comparisons = record
    log = PhaseLog()
    found = find_handler(template.source, prober)  # dedicated handlers are tried first
    reasoning = analyze_reasoning(prober, log)
    content = analyze_content(prober, log, reasoning)
    result = TemplateAnalysis(template_name=template.name, caps=caps, reasoning=reasoning, content=content)
    if caps.supports_tool_calls:
        result = replace(result, tools=analyze_tools(prober, log, reasoning))
    user_start, assistant_start = role_starts(prober, log, reasoning, content)
    result = replace(
        result,
        user_start=user_start,
        assistant_start=assistant_start,
        tools_reply_lead=tools_reply_lead(prober, log),
        turn_end=turn_end(prober, log, user_start),
    )
    before = result.marker_fields()
    result, fired = apply_workarounds(template.source, result)
    for name in fired:
        log.cite_source(f"workaround: {name}", "a rule over the template source", "workaround", name)
    _cite_changes(log, before, result.marker_fields(), f"set by the workaround {', '.join(fired)}", "workaround", ", ".join(fired))
    if found is not None:  # the handler's markers replace what the diffs could see
        handler, rule = found
        before = result.marker_fields()
        result = replace(handler.refine(result, template.source), handler=handler.name, handler_rule=rule)
        result = replace(result, reasoning=always_opened(prober, log, result.reasoning))  # (on the handler's markers)
        if handler.measure is not None:
            result = handler.measure(result, prober)
        log.cite_source(f"handler: {handler.name}", rule, "handler", handler.name)
        _cite_changes(log, before, result.marker_fields(), f"set by the handler {handler.name}: {rule}", "handler", handler.name)
    generation = generation_prompt(prober, log, result.reasoning, enable_thinking)
    markers = result.marker_fields()
    tokens = found[0].tokens if found is not None and found[0].tokens else preserved_tokens(markers)
    return replace(
        result,
        generation_prompt=generation,
        workarounds=fired,
        preserved_tokens=tokens,
        degraded=log.degraded,
        evidence=log.evidence_for(markers) + log.source_citations(),
    )


def _cite_changes(log: PhaseLog, before: dict[str, str], after: dict[str, str], why: str, source: str, by: str) -> None:
    """Cite ``why`` for every marker field a workaround or handler changed."""
    for name, value in after.items():
        if before.get(name) != value:
            log.cite_source(name, why, source, by)


#: A preserved token is markup (:data:`MARKUP_CHARS`): `` to=functions.`` is
#: text the tokenizer splits, not a token.


def preserved_tokens(markers: dict[str, str]) -> tuple[str, ...]:
    """Every marker that is markup, whitespace-trimmed, once, in field order;
    never probe text."""
    out: list[str] = []
    for value in markers.values():
        token = strip_ws(value)
        if (
            token
            and token not in out
            and not MARKUP_CHARS.isdisjoint(token)
            and not any(probe in token for probe in PROBE_STRINGS)
        ):
            out.append(token)
    return tuple(out)


__all__ = ["MARKER_RE", "analyze_template", "prefill_outcome", "preserved_tokens"]
