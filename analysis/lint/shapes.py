"""Rule: the message shapes every client sends must render (the template's
own error, when one raises, is the evidence)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from analysis.lint import engines
from analysis.lint.conversations import (
    REPLY,
    SYSTEM,
    TOOLS,
    USER_1,
    USER_2,
    Message,
    Renderer,
    as_json,
    call,
    call_turn,
    tool_result,
)
from analysis.lint.findings import Evidence, Finding, Severity
from analysis.probing.caps import Capabilities

RAISES = "raises"

#: a call id every template takes (nine letters and digits, as Mistral's demand)
CALL_ID = "Zq81Lint0"


@dataclass(frozen=True)
class Shape:
    """A conversation shape clients send, and how much it matters when it raises."""

    name: str
    what: str
    messages: tuple[Message, ...]
    severity: Severity
    needs_tools: bool = False
    generation_prompt: bool = True


SHAPES = (
    Shape(
        "null-content-with-calls",
        "an assistant turn with content null beside its tool calls (what OpenAI clients send)",
        (USER_1, call_turn([call(CALL_ID, {"city": "Paris"})], content=None), tool_result(CALL_ID)),
        Severity.ERROR,
        needs_tools=True,
    ),
    Shape(
        "tool-message",
        "a tool message answering a call",
        (USER_1, call_turn([call(CALL_ID, {"city": "Paris"})]), tool_result(CALL_ID)),
        Severity.ERROR,
        needs_tools=True,
    ),
    Shape(
        "content-parts",
        "content as a list of text parts",
        ({"role": "user", "content": [{"type": "text", "text": USER_1["content"]}]},),
        Severity.WARNING,
    ),
    Shape("system-mid-conversation", "a system message after the first turn", (USER_1, REPLY, SYSTEM, USER_2), Severity.WARNING),
    Shape("two-user-turns", "two user turns in a row", (USER_1, USER_2), Severity.WARNING),
    Shape(
        "continue-final-message",
        "a final assistant turn to continue (continue_final_message)",
        (USER_1, {"role": "assistant", "content": "It is"}),
        Severity.WARNING,
        generation_prompt=False,
    ),
)


def _null_content_as(content: str) -> tuple[Message, ...]:
    """The null-content shape as an engine passes it on: content None, "" or no content key."""
    turn = call_turn([call(CALL_ID, {"city": "Paris"})], content=None)
    if content == engines.EMPTY:
        turn["content"] = ""
    elif content == engines.ABSENT:
        del turn["content"]
    return (USER_1, turn, tool_result(CALL_ID))


#: how each engine's form of content null is described
_NULL_FORMS = {
    engines.NULL: "content null beside its tool calls (what OpenAI clients send)",
    engines.ABSENT: "no content beside its tool calls (the call turn transformers documents)",
    engines.EMPTY: 'content "" beside its tool calls (what vLLM, SGLang and llama.cpp pass for null)',
}


def _null_content(renderer: Renderer, shape: Shape, tools: list[Message] | None) -> Finding | None:
    """Content null beside calls, as each engine passes it on: a finding for
    the first form that raises, naming every engine whose form raises (the
    form OpenAI clients send, null, when only it raises: an error for none)."""
    renders = {form: renderer.render(list(_null_content_as(form)), tools=tools) for form in _NULL_FORMS}
    broken = tuple(e.name for e in engines.ENGINES if e.renders_jinja and not renders[e.null_content].ok)
    form = next((engines.engine(name).null_content for name in broken), engines.NULL)
    rendered = renders[form]
    if rendered.ok:
        return None
    return Finding(
        RAISES,
        shape.severity,
        f"{shape.name}: the template raises on an assistant turn with {_NULL_FORMS[form]}: {rendered.error}",
        (Evidence("conversation", as_json([*renderer.base, *_null_content_as(form)])),),
        engines=broken,
        line=rendered.error_line,
    )


def raises(renderer: Renderer, caps: Capabilities) -> Iterator[Finding]:
    """One finding per common shape the template raises on (tool shapes only
    where the template takes tools), at the line that raised, naming the
    engines that send the shape in a form that raises."""
    for shape in SHAPES:
        if shape.needs_tools and not caps.supports_tool_calls:
            continue
        tools = TOOLS if shape.needs_tools else None
        if shape.name == "null-content-with-calls":
            finding = _null_content(renderer, shape, tools)
            if finding is not None:
                yield finding
            continue
        rendered = renderer.render(list(shape.messages), generation_prompt=shape.generation_prompt, tools=tools)
        conversation = Evidence("conversation", as_json([*renderer.base, *shape.messages]))
        if not rendered.ok:
            yield Finding(
                RAISES,
                shape.severity,
                f"{shape.name}: the template raises on {shape.what}: {rendered.error}",
                (conversation,),
                engines=engines.with_property("content_parts", "parts") if shape.name == "content-parts" else None,
                line=rendered.error_line,
            )
        elif shape.name == "continue-final-message" and "It is" not in (rendered.text or ""):
            text = rendered.text or ""
            yield Finding(
                RAISES,
                shape.severity,
                f"{shape.name}: the final assistant turn's text is not in the render, so transformers' "
                "continue_final_message (which cuts the render after it) raises",
                (conversation, Evidence("render", text, None, rendered.line_at(len(text) - 1) if text else None)),
            )
