"""The inferred parser as a Hugging Face ``response_template``.

transformers (``tokenizer.parse_response``), vLLM (``--tool-call-parser
response_template``) and SGLang execute the same declarative spec: a start
anchor the prompt is cut after, and flat fields (``thinking``, ``content``,
``tool_calls``) that open and close at markers.  This module writes that spec
from a template's analysis: the reasoning markers, the content wrapping or the
end-of-turn markers that close plain content, and the tool-call markers (the
generic formats here, the dedicated formats through their handler's
``response_fields``).  A format the spec cannot express raises
:class:`~analysis.errors.ExportError` naming what cannot be expressed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analysis.errors import ExportError
from analysis.parsers.handlers import handler_named
from analysis.parsers.response_spec import (
    anchor,
    generic_calls,
    marker,
    stray_markers,
    turn_ends,
)
from analysis.phases.result import (
    ContentMode,
    PrefillOutcome,
    ReasoningMode,
    TemplateAnalysis,
    ToolFormat,
)
from analysis.probing.markers import strip_ws

if TYPE_CHECKING:
    from analysis.generation.generated import Generated

#: the spec's version this module writes (transformers 5.23 reads version 1)
VERSION = 1


def response_template(generated: Generated) -> dict[str, Any]:
    """The ``response_template`` that reads ``generated``'s template's output
    as autoparser does: ``thinking``, ``content`` and ``tool_calls`` fields,
    and a start anchor that keeps what the generation prompt opens."""
    analysis = generated.analysis
    cut_after = _anchor(analysis, generated.generation_prompt[: len(generated.generation_prompt) - len(generated.prompt.continued_text)])
    fields: dict[str, Any] = {}
    reasoning = analysis.reasoning
    if reasoning.mode is not ReasoningMode.NONE and strip_ws(reasoning.end):
        fields["thinking"] = _thinking(analysis, cut_after, generated.prefill)
    own = _own_part(analysis)
    if own is None and (tools := _tool_calls(analysis)) is not None:
        fields["tool_calls"] = tools
    fields["content"] = _content(analysis, generated.generation_prompt)
    if own is not None:
        fields = {k: v for k, v in {**fields, **own.get("fields", {})}.items() if v is not None}
    content = fields["content"]
    if "tool_calls" in fields and "open" not in content and "open_pattern" not in content:
        # plain content closes at the call markers no field opens or closes at: they are left out
        stray = [m for m in stray_markers(analysis, fields["tool_calls"]) if m not in content.get("close", [])]
        if stray:
            content["close"] = content.get("close", []) + stray
    spec: dict[str, Any] = {"version": VERSION, "defaults": {"role": "assistant"}}
    opener = strip_ws(reasoning.start)
    if cut_after:
        spec["start_anchor"] = cut_after
    elif opener and strip_ws(generated.generation_prompt).startswith(opener):
        spec["start_anchor_pattern"] = f"(?={marker(opener)})"  # the prompt starts with the reasoning it opens
    else:  # the prompt ends where the user's turn does: the model's part starts at its end
        spec["start_anchor_pattern"] = r"\Z"
    if own is not None and "start_anchor" in own:
        spec.pop("start_anchor_pattern", None)
        spec["start_anchor"] = own["start_anchor"]
    spec["fields"] = fields
    return spec


def _anchor(analysis: TemplateAnalysis, generation_prompt: str) -> str:
    """The literal the prompt is cut after: the generation prompt up to the
    reasoning marker it opens (that stays, so that the reasoning is open)."""
    prompt = strip_ws(generation_prompt)
    opener = strip_ws(analysis.reasoning.start)
    return strip_ws(prompt[: prompt.index(opener)]) if opener and opener in prompt else prompt


def _thinking(analysis: TemplateAnalysis, cut_after: str, prefill: PrefillOutcome) -> dict[str, Any]:
    start, end = strip_ws(analysis.reasoning.start), strip_ws(analysis.reasoning.end)
    if not start or (cut_after and start in cut_after) or prefill is PrefillOutcome.ARTIFACT:
        # delimiter style: the turn opens in reasoning, which its end marker closes
        return {"open_pattern": "^" + (f"(?:\\s*{marker(start)})?" if start else ""), "close": end, "content": "text"}
    return {"open": start, "close": end, "content": "text"}


def _content(analysis: TemplateAnalysis, generation_prompt: str) -> dict[str, Any]:
    """Wrapped content is a field of its own; plain content (or content the
    prompt opens) is the implicit field, which the end of turn closes."""
    content = analysis.content
    start, end = strip_ws(content.start), strip_ws(content.end)
    wrapped = content.mode is not ContentMode.PLAIN and start and end
    if wrapped and content.mode is ContentMode.WRAPPED_WITH_REASONING and strip_ws(analysis.reasoning.start):
        # wrapped after reasoning, plain without: opened by its marker, or at the start unless reasoning opens there
        opens = f"{marker(start)}|^(?!\\s*{marker(analysis.reasoning.start)})"
        closes = [end, *turn_ends(analysis)]
        return {"open_pattern": opens, "close": closes, "content": "text", "repeats": True, "join": ""}
    if wrapped and start not in generation_prompt:
        return {**anchor("open", start), **anchor("close", end), "content": "text", "repeats": True, "join": ""}
    spec: dict[str, Any] = {"content": "text", "repeats": True, "join": ""}
    ends = list(dict.fromkeys(([end] if wrapped else []) + turn_ends(analysis)))
    if ends:
        spec["close"] = ends
    return spec


def _tool_calls(analysis: TemplateAnalysis) -> dict[str, Any] | None:
    if analysis.tools.format.mode is ToolFormat.NONE:
        return None
    return generic_calls(analysis)


def _own_part(analysis: TemplateAnalysis) -> dict[str, Any] | None:
    """A dedicated format's own part of the spec (None for the generic formats)."""
    if not analysis.handler:
        return None
    handler = handler_named(analysis.handler)
    if handler.response_fields is None:
        why = handler.response_unsupported or "its calls have no response_template form"
        raise ExportError(f"the {analysis.handler} format cannot be written as a response_template: {why}")
    return handler.response_fields(analysis)


__all__ = ["VERSION", "response_template"]
