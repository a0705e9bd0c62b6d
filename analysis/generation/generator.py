""":class:`AutoParser`: a template with its (cached) analysis; ``generate``
costs one prompt render per request, and a parser build per request unlike
the last few (the same tools and options reuse theirs)."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from analysis.generation.analysis_cache import cached_analysis
from analysis.generation.generated import Generated
from analysis.messages.hooks import GENERIC
from analysis.parsers.builder import BuiltParser, build_parser
from analysis.parsers.handlers import handler_named
from analysis.parsers.prompting import build_prompt
from analysis.parsers.request import ChatRequest
from analysis.phases.reasoning import prefill_outcome
from analysis.phases.result import PrefillOutcome, TemplateAnalysis
from analysis.probing.caps import Capabilities, chat_template_problem
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate


class AutoParser:
    """A template with its analysis, ready to generate parsers for requests."""

    def __init__(self, template: ChatTemplate, analysis: TemplateAnalysis | None = None):
        self.template = template
        self.analysis = analysis or cached_analysis(template)
        #: the dedicated handler that owns the template, if any (found once)
        self.handler = handler_named(self.analysis.handler) if self.analysis.handler else None
        #: a request was generated: the next starts the template's budget afresh
        #: (one command spends one budget, analysis and its request together)
        self._generated = False
        #: the parsers built for the requests seen last, by what a build reads
        #: (a server sees the same tools and options again and again)
        self._built: OrderedDict[tuple[Any, ...], tuple[BuiltParser, Callable[[], BuiltParser] | None]] = OrderedDict()

    @property
    def caps(self) -> Capabilities:
        return self.analysis.caps

    @functools.cached_property
    def template_problem(self) -> str:
        """Why the source does not look like a chat template ("" when it does;
        see :func:`~analysis.probing.chat_template_problem`): rendered once, on
        first use, so a front end warns in every command, not only ``caps``."""
        return chat_template_problem(self.template)

    def generate(self, request: ChatRequest) -> Generated:
        """Prompt, parser, grammar, triggers and preserved tokens for ``request``."""
        handler = self.handler
        if handler is not None and handler.adapt_request is not None:
            request = handler.adapt_request(request)
        if self._generated:  # a later request's prompt renders under a budget of its own
            self.template.new_budget()
        self._generated = True
        prompt = build_prompt(self.template, self.caps, request, self.analysis.reasoning, self.analysis.content.start)
        own = len(prompt.continued_text)
        template_part = prompt.generation_prompt[: len(prompt.generation_prompt) - own] if own else prompt.generation_prompt
        prefill = prefill_outcome(template_part, self.analysis.reasoning)  # the continued text is the model's
        key = _build_key(request, prompt.generation_prompt, prompt.continued_text, prefill.value)
        cached = self._built.get(key)
        if cached is not None:
            self._built.move_to_end(key)
            built, build_for_grammar = cached
        else:
            built, build_for_grammar = self._build(request, prompt.generation_prompt, prompt.continued_text, prefill)
            self._built[key] = (built, build_for_grammar)
            if len(self._built) > _BUILT_KEPT:
                self._built.popitem(last=False)
        return Generated(
            self.analysis,
            request,
            prompt,
            prefill,
            built,
            self.analysis.preserved_tokens,
            handler.output if handler is not None else GENERIC,
            build_for_grammar,
        )

    def _build(
        self, request: ChatRequest, generation_prompt: str, continued_text: str, prefill: PrefillOutcome
    ) -> tuple[BuiltParser, Callable[[], BuiltParser] | None]:
        """The parser for ``request`` (and how to build the grammar's form)."""
        handler = self.handler
        build_for_grammar: Callable[[], BuiltParser] | None = None
        if handler is not None and handler.build is not None:
            built = handler.build(self.analysis, request, generation_prompt, continued_text, prefill)
            build_for_grammar = functools.partial(handler.build, self.analysis, request, generation_prompt, continued_text, prefill, for_grammar=True)
        else:
            calls = handler.calls if handler is not None else None
            built = build_parser(self.analysis, request, generation_prompt, continued_text, prefill, calls)
            if request.has_tools or request.json_schema is not None:
                # the grammar constrains arguments by the schema and markers exactly, and
                # takes no end-of-turn markers (the engine stops there); the parser reads more
                build_for_grammar = functools.partial(
                    build_parser, self.analysis, request, generation_prompt, continued_text, prefill, calls, for_grammar=True
                )
        return built, build_for_grammar


#: how many requests' parsers an :class:`AutoParser` keeps
_BUILT_KEPT = 32


def _build_key(request: ChatRequest, generation_prompt: str, continued_text: str, prefill: str) -> tuple[Any, ...]:
    """What a parser build reads: the request but for its messages, and what the prompt ends with."""
    fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(request) if f.name != "messages"}
    return (json.dumps(fields, sort_keys=True, default=repr), generation_prompt, continued_text, prefill)


def auto_parser(loaded: Any) -> AutoParser:
    """An :class:`AutoParser` for a loaded template (rendered with the frozen clock)."""
    return AutoParser(ChatTemplate(loaded, clock=FROZEN_CLOCK))
