"""Compiling and rendering chat templates inside the sandbox."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NoReturn

from analysis import disk_cache
from analysis.errors import (
    RenderLimitError,
    SandboxViolation,
    TemplateLoadError,
    TemplateRaisedError,
    TemplateRenderError,
    TemplateSyntaxError,
)
from analysis.template.loading import LoadedTemplate
from analysis.template.render_worker import RenderStats, WorkerRequest, worker
from analysis.template.sandbox import RenderLimits, RenderNotes

#: The clock analysis uses so that renders are reproducible.
FROZEN_CLOCK: Callable[[], datetime] = lambda: datetime(2026, 1, 1, 12, 0, 0)  # noqa: E731


#: the variables a render request sets itself: an extra variable of one of
#: these names would replace the request's own
RENDER_ARGUMENTS = frozenset(
    {"messages", "tools", "add_generation_prompt", "enable_thinking", "bos_token", "eos_token"}
)


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


def default_limits() -> RenderLimits:
    """The limits in force: the defaults, changed by ``AUTOPARSER_*`` variables."""
    return RenderLimits.from_env(os.environ)


def _source_key(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


class ChatTemplate:
    """A chat template, compiled and rendered in the sandbox of a resource-limited
    worker process (:mod:`analysis.template.render_worker`).

    Compiling happens at construction (syntax errors surface there).  All renders
    of one ``ChatTemplate`` share a CPU budget (``limits.template_cpu_s``): a
    template slow enough to exhaust it fails every later render at once.
    """

    def __init__(
        self,
        template: LoadedTemplate,
        limits: RenderLimits | None = None,
        clock: Callable[[], datetime] | None = None,
    ):
        #: the loaded source: its text, name, special tokens and where it came from
        self.loaded = template
        self.name = template.name
        self.source = template.source
        self.limits = limits or default_limits()
        self.clock = clock
        #: CPU seconds this template's compile and renders have used so far.
        self.cpu_used = 0.0
        #: Characters all renders so far produced (see ``RenderLimits.template_output_chars``).
        self.output_chars = 0
        #: All renders share one budget, requests included (see :meth:`new_budget`).
        self.one_budget = False
        if len(self.source) > self.limits.max_template_chars:
            raise TemplateLoadError(
                f"{self.name}: template too large: {len(self.source):,} characters, over the limit of "
                f"{self.limits.max_template_chars:,} (AUTOPARSER_MAX_TEMPLATE_CHARS)"
            )
        self._key = _source_key(self.source)
        # the worker outlives settings: the parent says where the cache is
        status, payload, _ = self._call("compile", cache=disk_cache.cache_dir())
        if status != "ok":
            _raise_reply(payload, self.name)

    def new_budget(self) -> None:
        """Start the template's budgets (CPU time and output of all renders)
        afresh, unless :attr:`one_budget` (``check`` spends one budget on a
        template, its probes' requests included): a long-lived user (a server
        generating a prompt per request) gets one per request, each render
        still under its own limits."""
        if not self.one_budget:
            self.cpu_used = 0.0
            self.output_chars = 0

    def _call(self, op: Literal["compile", "render"], **fields: Any) -> tuple[str, Any, RenderStats | None]:
        """One worker request under what is left of the CPU budget: (status, payload, stats)."""
        remaining = self.limits.template_cpu_s - self.cpu_used
        if remaining <= 0.001:
            raise RenderLimitError(
                f"the template used more than {self.limits.template_cpu_s:g} s of CPU time in all "
                "(AUTOPARSER_TEMPLATE_CPU_S)",
                self.name,
            )
        request = WorkerRequest(op, self._key, self.name, self.limits, min(self.limits.cpu_s, remaining), **fields)
        reply = worker().request(request, self.source)
        if reply.stats is not None:
            self.cpu_used += reply.stats.cpu_s
        return reply.status, reply.payload, reply.stats

    def render(self, request: RenderRequest) -> str:
        """Render ``request``; raises a :class:`TemplateRenderError` subclass on failure."""
        text, error, _ = self._render(request, strict_undefined_json=False)
        if text is None:
            _raise_reply(error, self.name)
        return text

    def probe(self, request: RenderRequest, strict_undefined_json: bool = False) -> ProbeRender:
        """Render ``request`` for a capability probe: its text (None when the
        template raised) and what the render noticed, failed or not.  With
        ``strict_undefined_json``, ``tojson`` of an undefined value raises (as
        in llama.cpp's engine, which the reference probes with).  A sandbox
        limit still raises: a runaway template is an error, not a missing capability."""
        attempt = self.attempt(request, strict_undefined_json)
        return ProbeRender(attempt.text, attempt.stats)

    def attempt(self, request: RenderRequest, strict_undefined_json: bool = False, trace: bool = False) -> RenderAttempt:
        """Render ``request``: its text, or the error the template raised (as
        data), and what the render noticed either way (with ``trace``, the
        template line that wrote each piece of the text: ``notes.line_at``).
        A sandbox limit still raises: a runaway template is an error of its own."""
        text, error, stats = self._render(request, strict_undefined_json, trace)
        if text is not None:
            return RenderAttempt(text, None, stats)
        try:
            _raise_reply(error, self.name)
        except RenderLimitError:
            raise
        except TemplateRenderError as exc:
            return RenderAttempt(None, exc, stats)

    def _render(self, request: RenderRequest, strict_undefined_json: bool, trace: bool = False) -> tuple[str | None, Any, RenderStats | None]:
        """(text, None, stats) for a render, (None, the worker's error, stats) for a failed one."""
        if self.output_chars > self.limits.template_output_chars:
            raise RenderLimitError(self._over_output(), self.name)
        status, payload, stats = self._call(
            "render",
            variables=request.variables(self.loaded),
            now=self.clock() if self.clock is not None else None,
            strict_undefined_json=strict_undefined_json,
            trace=trace,
        )
        if status != "ok":
            return None, payload, stats
        text: str = payload
        self.output_chars += len(text)
        if self.output_chars > self.limits.template_output_chars:
            raise RenderLimitError(self._over_output(), self.name)
        return text, None, stats

    def _over_output(self) -> str:
        return (
            f"sandbox limit: the template's renders produced over {self.limits.template_output_chars:,} characters "
            "in all (RenderLimits.template_output_chars)"
        )


@dataclass(frozen=True)
class RenderAttempt:
    """A render's text, or (None and) the error the template raised; and its stats."""

    text: str | None
    error: TemplateRenderError | None
    stats: RenderStats | None

    @property
    def notes(self) -> RenderNotes:
        """What the render noticed (empty when the worker could not say)."""
        return self.stats.notes if self.stats is not None else RenderNotes()


class RenderMemo:
    """The renders of one template, each distinct request rendered once: its
    text, or the template's error as data (:class:`RenderAttempt`).  A sandbox
    limit still raises, and is not remembered.  The analysis's probes and the
    lint rules render through one of these each."""

    def __init__(self, template: ChatTemplate, trace: bool = False):
        self.template = template
        #: whether each render notes the template line that wrote each piece of its text
        self.trace = trace
        self._done: dict[str, RenderAttempt] = {}

    @staticmethod
    def key(request: RenderRequest) -> str:
        """What tells two requests apart (their JSON)."""
        fields = [request.messages, request.tools, request.add_generation_prompt, request.enable_thinking, request.extra]
        return json.dumps(fields, sort_keys=True, default=repr)

    def attempt(self, request: RenderRequest) -> RenderAttempt:
        """``request`` rendered, once (see :meth:`ChatTemplate.attempt`)."""
        key = self.key(request)
        found = self._done.get(key)
        if found is None:
            found = self._done[key] = self.template.attempt(request, trace=True) if self.trace else self.template.attempt(request)
        return found


@dataclass(frozen=True)
class ProbeRender:
    """A probe render's text (None: the template raised) and what it noticed."""

    text: str | None
    stats: RenderStats | None

    @property
    def stringified_containers(self) -> int:
        """How often the render's ``+`` turned a dict or list into JSON text."""
        return self.notes.stringified_containers

    @property
    def indexed_strings(self) -> int:
        """How often the render indexed an ``IndexTrackingStr`` like a list."""
        return self.notes.indexed_strings

    @property
    def notes(self) -> RenderNotes:
        """Everything the render noticed (empty when the worker could not say)."""
        return self.stats.notes if self.stats is not None else RenderNotes()


def _raise_reply(fields: tuple[Any, ...], name: str) -> NoReturn:
    kind, message, line, *rest = fields
    if kind == "syntax":
        raise TemplateSyntaxError(message, name, line, rest[0] if rest else None)
    if kind == "raised":
        raise TemplateRaisedError(message, name, line)
    if kind == "limit":
        raise RenderLimitError(message, name, line)
    if kind == "sandbox":
        raise SandboxViolation(message, name, line)
    raise TemplateRenderError(message, name, line)
