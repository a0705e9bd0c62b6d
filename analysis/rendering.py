"""Compiling and rendering chat templates inside the sandbox."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

import jinja2

from analysis.errors import SandboxViolation, TemplateRenderError, TemplateSyntaxError
from analysis.loading import LoadedTemplate
from analysis.sandbox import RenderLimits, SandboxedTemplateEnvironment, template_line

#: The clock analysis uses so that renders are reproducible.
FROZEN_CLOCK: Callable[[], datetime] = lambda: datetime(2026, 1, 1, 12, 0, 0)  # noqa: E731


@dataclass(frozen=True)
class RenderRequest:
    """The variables a chat template is rendered with."""

    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] | None = None
    add_generation_prompt: bool = False
    enable_thinking: bool | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def variables(self, template: LoadedTemplate) -> dict[str, Any]:
        """The Jinja context for this request."""
        ctx: dict[str, Any] = {
            "bos_token": template.bos_token,
            "eos_token": template.eos_token,
            **template.extra,
            "messages": copy.deepcopy(list(self.messages)),
            "tools": copy.deepcopy(list(self.tools)) if self.tools else None,
            "add_generation_prompt": self.add_generation_prompt,
        }
        if self.enable_thinking is not None:
            ctx["enable_thinking"] = self.enable_thinking
        ctx.update(copy.deepcopy(dict(self.extra)))
        return ctx


def _syntax_column(source: str, line: int | None) -> int | None:
    """Best-effort column: the first Jinja tag opener on the faulty line."""
    if not line:
        return None
    lines = source.splitlines()
    if not 0 < line <= len(lines):
        return None
    match = re.search(r"\{[%{#]", lines[line - 1])
    return match.start() + 1 if match else 1


class ChatTemplate:
    """A compiled chat template, rendered in the sandbox."""

    def __init__(
        self,
        template: LoadedTemplate,
        limits: RenderLimits | None = None,
        clock: Callable[[], datetime] | None = None,
    ):
        self.template = template
        self.name = template.name
        self.source = template.source
        self.env = SandboxedTemplateEnvironment(limits=limits, clock=clock)
        try:
            self._compiled = self.env.from_string(template.source)
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateSyntaxError(
                exc.message or "invalid syntax",
                template.name,
                exc.lineno,
                _syntax_column(template.source, exc.lineno),
            ) from None
        except RecursionError:
            raise TemplateSyntaxError("template nests too deeply to compile", template.name, None) from None

    def render(self, request: RenderRequest) -> str:
        """Render ``request``; raises a :class:`TemplateRenderError` subclass on failure."""
        try:
            return self.env.render_guarded(self._compiled, request.variables(self.template), self.name)
        except TemplateRenderError:
            raise
        except jinja2.exceptions.SecurityError as exc:
            raise SandboxViolation(f"blocked by the sandbox: {exc}", self.name, template_line(exc)) from None
        except Exception as exc:  # the template's own runtime errors (TypeError, ...)
            raise TemplateRenderError(
                f"render failed: {type(exc).__name__}: {exc}", self.name, template_line(exc)
            ) from None

    def line_text(self, line: int) -> str:
        """The text of template line ``line`` (1-based), for error excerpts."""
        lines = self.source.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""
