"""The analysis result: frozen dataclasses that serialise to the reference's JSON.

Field names and enum spellings are those of ``reference/analysis.jsonl``
(``reasoning.mode == "TAG_BASED"``, ``tools.call_id.pos == "BETWEEN_FUNC_AND_ARGS"``...).
On top of the reference fields an analysis carries the generation prompt, the
reasoning-prefill outcome, which phases degraded and why, and the evidence: for
each marker, the comparison whose diff produced it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any

from analysis.probing.caps import Capabilities


class ReasoningMode(str, enum.Enum):
    """How reasoning is written (see the spec's ``reasoning_mode``)."""

    NONE = "NONE"
    TAG_BASED = "TAG_BASED"
    TOOLS_ONLY = "TOOLS_ONLY"


class ContentMode(str, enum.Enum):
    """How assistant content is wrapped."""

    PLAIN = "PLAIN"
    ALWAYS_WRAPPED = "ALWAYS_WRAPPED"
    WRAPPED_WITH_REASONING = "WRAPPED_WITH_REASONING"


class ToolFormat(str, enum.Enum):
    """How tool calls are written."""

    NONE = "NONE"
    JSON_NATIVE = "JSON_NATIVE"
    TAG_WITH_JSON = "TAG_WITH_JSON"
    TAG_WITH_TAGGED = "TAG_WITH_TAGGED"


class CallIdPosition(str, enum.Enum):
    """Where a call id sits in a tag-based call."""

    NONE = "NONE"
    PRE_FUNC_NAME = "PRE_FUNC_NAME"
    BETWEEN_FUNC_AND_ARGS = "BETWEEN_FUNC_AND_ARGS"
    POST_ARGS = "POST_ARGS"


class PrefillOutcome(str, enum.Enum):
    """What the generation prompt does to reasoning (the spec's three outcomes, plus none)."""

    NONE = "NONE"  #: the generation prompt holds no reasoning marker
    OPENED_AND_CLOSED = "OPENED_AND_CLOSED"  #: start and end: reasoning is already over
    OPENED = "OPENED"  #: only the start: the model continues inside reasoning
    ARTIFACT = "ARTIFACT"  #: the start is template boilerplate, not at the end: delimiter-style


def _to_json(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _to_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    return value


class _Jsonable:
    def to_json(self) -> dict[str, Any]:
        """This object as JSON-ready data (enums as their names)."""
        data: dict[str, Any] = _to_json(self)
        return data


@dataclass(frozen=True)
class ReasoningAnalysis(_Jsonable):
    """Reasoning markers: ``start`` may be empty (delimiter style).
    ``switched``: ``enable_thinking`` off writes a closed block in the
    generation prompt, and on writes none (Qwen3): with thinking on, the model
    opens its block itself.  ``always``: the history writes a block, empty,
    in a reply without reasoning (Kimi K2 Thinking's ``<think></think>``):
    the model always opens one."""

    mode: ReasoningMode = ReasoningMode.NONE
    start: str = ""
    end: str = ""
    switched: bool = False
    always: bool = False


@dataclass(frozen=True)
class ContentAnalysis(_Jsonable):
    """Content wrapping markers."""

    mode: ContentMode = ContentMode.PLAIN
    start: str = ""
    end: str = ""
    requires_nonnull_content: bool = False


@dataclass(frozen=True)
class ToolFormatAnalysis(_Jsonable):
    """Section / per-call markers and, for JSON calls, the field names."""

    mode: ToolFormat = ToolFormat.NONE
    section_start: str = ""
    section_end: str = ""
    per_call_start: str = ""
    per_call_end: str = ""
    fun_name_is_key: bool = False
    tools_array_wrapped: bool = False
    function_field: str = "function"
    name_field: str = "name"
    args_field: str = "arguments"
    id_field: str = ""
    gen_id_field: str = ""
    parameter_order: tuple[str, ...] = ()
    #: the template writes a turn's content after its calls (not in the reference's analysis)
    content_after_calls: bool = False


@dataclass(frozen=True)
class FunctionAnalysis(_Jsonable):
    """Markers around a function name, and the call closer."""

    name_prefix: str = ""
    name_suffix: str = ""
    close: str = ""


@dataclass(frozen=True)
class ArgumentsAnalysis(_Jsonable):
    """Argument container, name and value markers, and the separator between arguments."""

    start: str = ""
    end: str = ""
    name_prefix: str = ""
    name_suffix: str = ""
    value_prefix: str = ""
    value_suffix: str = ""
    separator: str = ""


@dataclass(frozen=True)
class CallIdAnalysis(_Jsonable):
    """Where the call id goes and what surrounds it."""

    pos: CallIdPosition = CallIdPosition.NONE
    prefix: str = ""
    suffix: str = ""


@dataclass(frozen=True)
class ToolsAnalysis(_Jsonable):
    """Everything about tool calls."""

    format: ToolFormatAnalysis = field(default_factory=ToolFormatAnalysis)
    function: FunctionAnalysis = field(default_factory=FunctionAnalysis)
    arguments: ArgumentsAnalysis = field(default_factory=ArgumentsAnalysis)
    call_id: CallIdAnalysis = field(default_factory=CallIdAnalysis)


@dataclass(frozen=True)
class Evidence(_Jsonable):
    """Where a marker came from: the comparison and its (shortened) diff, or
    (``source`` "handler", "workaround" or "rule") the rule over the template
    source that set it, named in ``by``, with ``comparison`` saying how."""

    field: str
    comparison: str
    prefix: str
    left: str
    right: str
    suffix: str
    source: str = "comparison"
    by: str = ""


@dataclass(frozen=True)
class Degradation(_Jsonable):
    """A phase (or part of one) that could not run, and the template's reason."""

    phase: str
    comparison: str
    reason: str


@dataclass(frozen=True)
class GenerationPromptAnalysis(_Jsonable):
    """What ``add_generation_prompt=true`` appends, and its reasoning-prefill outcome."""

    text: str = ""
    prefill: PrefillOutcome = PrefillOutcome.NONE
    enable_thinking: bool = True


@dataclass(frozen=True)
class TemplateAnalysis(_Jsonable):
    """The whole result of :func:`analysis.generation.analyzer.analyze_template`."""

    #: the template's name (its file, model or source)
    template_name: str
    caps: Capabilities
    user_start: str = ""
    assistant_start: str = ""
    #: what the history writes before a reply's text only when tools are given
    #: (``助手：``): a model given tools writes it first
    tools_reply_lead: str = ""
    #: the markers that end an assistant turn (``<|im_end|>``, ``<|eot_id|>``, the
    #: end-of-sequence token): engines that keep special tokens pass them through,
    #: and a parser drops them at the end of the output (not in the reference's analysis)
    turn_end: tuple[str, ...] = ()
    reasoning: ReasoningAnalysis = field(default_factory=ReasoningAnalysis)
    content: ContentAnalysis = field(default_factory=ContentAnalysis)
    tools: ToolsAnalysis = field(default_factory=ToolsAnalysis)
    preserved_tokens: tuple[str, ...] = ()
    generation_prompt: GenerationPromptAnalysis = field(default_factory=GenerationPromptAnalysis)
    workarounds: tuple[str, ...] = ()
    degraded: tuple[Degradation, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    #: the name of the dedicated handler that owns the template (None: the generic reading)
    handler: str | None = None
    handler_rule: str = ""  #: the detection rule that matched

    def to_json(self) -> dict[str, Any]:
        """The reference's fields plus ``generation_prompt``, ``workarounds``,
        ``degraded`` and ``evidence``; where a dedicated handler owns the
        template, ``specialized: true`` (as the reference marks it), the
        ``handler``'s name and its ``handler_rule``."""
        data: dict[str, Any] = {("template" if key == "template_name" else key): value for key, value in _to_json(self).items()}
        data["caps"] = self.caps.to_dict()
        data["generation_prompt"] = self.generation_prompt.text
        data["reasoning_prefill"] = self.generation_prompt.prefill.value
        if self.handler is None:
            data.pop("handler")
            data.pop("handler_rule")
        else:
            data["specialized"] = True
        return data

    def marker_fields(self) -> dict[str, str]:
        """Every non-empty marker, keyed by its dotted field name."""
        out: dict[str, str] = {}
        for group_name in ("reasoning", "content"):
            group = getattr(self, group_name)
            for key in ("start", "end"):
                if getattr(group, key):
                    out[f"{group_name}.{key}"] = getattr(group, key)
        for sub in ("format", "function", "arguments", "call_id"):
            obj = getattr(self.tools, sub)
            for f in fields(obj):
                value = getattr(obj, f.name)
                if isinstance(value, str) and not isinstance(value, enum.Enum) and value and not f.name.endswith("_field"):
                    out[f"tools.{sub}.{f.name}"] = value
        return out
