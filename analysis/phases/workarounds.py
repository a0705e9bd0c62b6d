"""The spec's five post-analysis patches, each keyed on a string in the template source.

Each patch is a named rule: ``applies(source, analysis)`` decides, ``apply``
returns the patched analysis.  They run after the differential phases, in order,
and the analysis lists the ones that fired.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from analysis.phases.result import (
    ContentAnalysis,
    ContentMode,
    ReasoningAnalysis,
    ReasoningMode,
    TemplateAnalysis,
)

_THINK = ReasoningAnalysis(ReasoningMode.TAG_BASED, "<think>", "</think>")


@dataclass(frozen=True)
class Workaround:
    """A named patch: when ``applies`` holds, ``apply`` rewrites the analysis."""

    name: str
    applies: Callable[[str, TemplateAnalysis], bool]
    apply: Callable[[TemplateAnalysis], TemplateAnalysis]


def _old_thinking(a: TemplateAnalysis) -> TemplateAnalysis:
    return replace(a, reasoning=_THINK)


def _granite(a: TemplateAnalysis) -> TemplateAnalysis:
    return replace(
        a,
        reasoning=_THINK,
        content=ContentAnalysis(
            ContentMode.WRAPPED_WITH_REASONING, "<response>", "</response>", a.content.requires_nonnull_content
        ),
    )


def _command_r_plus(a: TemplateAnalysis) -> TemplateAnalysis:
    return replace(
        a,
        content=ContentAnalysis(
            ContentMode.ALWAYS_WRAPPED, "<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>", a.content.requires_nonnull_content
        ),
    )


def _functionary_v31(a: TemplateAnalysis) -> TemplateAnalysis:
    tools = a.tools
    return replace(
        a,
        content=replace(a.content, mode=ContentMode.PLAIN, end=""),
        tools=replace(
            tools,
            format=replace(
                tools.format, section_start="", section_end="", per_call_start="<function=", per_call_end="</function>"
            ),
            function=replace(tools.function, name_prefix="", close=""),
        ),
    )


def _deepseek_r1_distill(a: TemplateAnalysis) -> TemplateAnalysis:
    tools = a.tools
    return replace(
        a,
        tools=replace(
            tools,
            format=replace(
                tools.format,
                section_start="<｜tool▁calls▁begin｜>",
                section_end="<｜tool▁calls▁end｜>",
                per_call_start="<｜tool▁call▁begin｜>function",
                per_call_end="<｜tool▁call▁end｜>",
            ),
            function=replace(tools.function, name_prefix="<｜tool▁sep｜>", close="```"),
        ),
    )


WORKAROUNDS: tuple[Workaround, ...] = (
    Workaround(
        "old Qwen/DeepSeek thinking template (splits content on </think>)",
        lambda src, a: "content.split('</think>')" in src
        and "reasoning_content" not in src
        and a.reasoning.mode is ReasoningMode.NONE,
        _old_thinking,
    ),
    Workaround(
        "Granite 3.3 (<think> and <response> instructions)",
        lambda src, a: "Write your thoughts between <think></think> and write your response between <response></response>"
        in src,
        _granite,
    ),
    Workaround(
        "Command R+ (<|CHATBOT_TOKEN|> content)",
        lambda src, a: "<|CHATBOT_TOKEN|>" in src and "<|END_OF_TURN_TOKEN|>" in src and not a.content.start,
        _command_r_plus,
    ),
    Workaround(
        "Functionary v3.1 (<function=...> calls, no section)",
        lambda src, a: 'set has_code_interpreter = tools | selectattr("type", "equalto", "code_interpreter") | list | length > 0'
        in src,
        _functionary_v31,
    ),
    Workaround(
        "DeepSeek-R1-Distill (tool-call markers in full-width characters)",
        lambda src, a: "{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>'" in src,
        _deepseek_r1_distill,
    ),
)


def apply_workarounds(source: str, analysis: TemplateAnalysis) -> tuple[TemplateAnalysis, tuple[str, ...]]:
    """Apply every workaround whose rule matches; return the result and the names that fired."""
    fired: list[str] = []
    for workaround in WORKAROUNDS:
        if workaround.applies(source, analysis):
            analysis = workaround.apply(analysis)
            fired.append(workaround.name)
    return analysis, tuple(fired)
