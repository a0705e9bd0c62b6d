"""The vLLM side of the plugin (imports vLLM 0.33): the ``autoparser`` tool
parser and reasoning parser, and the whole :class:`AutoparserParser` that
serving uses when both are selected.

Why a whole ``Parser``: vLLM's ``DelegatingParser`` splits one reading in two.
Its reasoning parser streams without the request (no tools, no thinking
switch), decides where reasoning ends on its own, and hands the tool parser
the text after it, which the tool parser must then read as if the template's
generation prompt had not opened a reasoning block. autoparser reads
reasoning, content and calls in one pass over generation prompt + output,
streamed with one :class:`~analysis.generation.StreamParser`, so
:func:`register` has ``ParserManager`` build an :class:`AutoparserParser`
whenever ``autoparser`` is the tool parser, the reasoning parser or both and
the other is not a parser of vLLM's own. Paired with one of vLLM's own parsers
(``--tool-call-parser autoparser --reasoning-parser qwen3``), the split
classes below serve through vLLM's ``DelegatingParser``."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.logger import init_logger
from vllm.parser.abstract_parser import Parser
from vllm.parser.parser_manager import ParserManager
from vllm.reasoning import ReasoningParser, ReasoningParserManager
from vllm.renderers.chat_utils import get_tool_call_id_type, make_tool_call_id
from vllm.sampling_params import StructuredOutputsParams
from vllm.tool_parsers import ToolParser, ToolParserManager

from analysis.generation import AutoParser, Generated
from analysis.messages.deviations import DeviationKind
from analysis.phases.result import PrefillOutcome
from autoparser_vllm.session import (
    Piece,
    PluginError,
    Session,
    chat_request,
    parser_for,
    reasoning_markers,
    single_token_ids,
    thinking_default,
    xgrammar_ebnf,
)

logger = init_logger("autoparser_vllm")

NAME = "autoparser"


def _log(lines: list[str]) -> None:
    """The deviations and unread blocks of one request: one log record."""
    logger.warning("autoparser: %s", "; ".join(lines))


def _id_maker(model_config: Any) -> Any:
    id_type = get_tool_call_id_type(model_config) if model_config is not None else "random"

    def make(name: str, index: int) -> str:
        return str(make_tool_call_id(id_type=id_type, func_name=name, idx=index))

    return make


def _delta(piece: Piece, include_reasoning: bool = True) -> DeltaMessage | None:
    fields: dict[str, Any] = {}
    if piece.reasoning and include_reasoning:
        fields["reasoning"] = piece.reasoning
    if piece.content:
        fields["content"] = piece.content
    if piece.calls:
        fields["tool_calls"] = [
            DeltaToolCall(
                index=c.index,
                id=c.id,
                type="function" if c.id is not None else None,
                function=DeltaFunctionCall(name=c.name, arguments=c.arguments if c.arguments or c.name is None else ""),
            )
            for c in piece.calls
        ]
    return DeltaMessage(**fields) if fields else None


def _merge(first: Piece, second: Piece) -> Piece:
    return Piece(first.reasoning + second.reasoning, first.content + second.content, first.calls + second.calls)


def _reads_tools(request: Any, enabled: bool) -> bool:
    return enabled and bool(getattr(request, "tools", None)) and getattr(request, "tool_choice", None) != "none"


def _forced(request: Any) -> bool:
    choice = getattr(request, "tool_choice", None)
    return bool(getattr(request, "tools", None)) and choice not in (None, "auto", "none")


def _started(tokenizer: Any) -> AutoParser:
    try:
        return parser_for(tokenizer)
    except PluginError as exc:
        logger.error("%s", exc)
        raise


class AutoparserParser(Parser):  # type: ignore[misc,unused-ignore]
    """Reasoning, content and tool calls read in one pass (see the module docstring)."""

    reasoning_parser_cls: type[ReasoningParser] | None = None
    tool_parser_cls: type[ToolParser] | None = None

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None, *args: Any, model_config: Any = None, **kwargs: Any) -> None:
        self.autoparser = _started(tokenizer)
        super().__init__(tokenizer, tools, *args, model_config=model_config, **kwargs)
        self.chat_template_kwargs: dict[str, Any] = dict(kwargs.get("chat_template_kwargs") or {})
        self.make_id = _id_maker(model_config)
        self.session: Session | None = None
        self.markers = reasoning_markers(self.autoparser)
        self.marker_ids = single_token_ids(tokenizer, self.markers)

    def _generated(self, request: Any, enable_auto_tools: bool) -> Generated:
        tools = self.tool_parser_cls is not None and (_reads_tools(request, enable_auto_tools) or _forced(request))
        return self.autoparser.generate(
            chat_request(
                request, self.chat_template_kwargs, reasoning=self.reasoning_parser_cls is not None, tools=tools, thinking=thinking_default(self.autoparser)
            )
        )

    def _session(self, request: Any, enable_auto_tools: bool = True) -> Session:
        if self.session is None:
            self.session = Session(self._generated(request, enable_auto_tools), self.make_id, _log)
        return self.session

    def adjust_request(self, request: Any) -> Any:
        """``tool_choice`` required or a named function: the grammar autoparser
        generates for the output, as vLLM's structured output (``grammar``, in
        the EBNF xgrammar reads), from the first generated token."""
        if self.tool_parser_cls is None or not _forced(request) or getattr(request, "structured_outputs", None) is not None:
            return request
        try:
            grammar, why = self._generated(request, True).output_grammar()
        except Exception as exc:  # noqa: BLE001  (a request the template cannot render: served unconstrained)
            grammar, why = "", str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        if not grammar:
            logger.warning("autoparser: no grammar for tool_choice=%s: %s", getattr(request, "tool_choice", None), why)
            return request
        request.structured_outputs = StructuredOutputsParams(grammar=xgrammar_ebnf(grammar))
        if hasattr(request, "response_format"):
            request.response_format = None
        if hasattr(request, "_grammar_from_parser"):
            request._grammar_from_parser = True
        return request

    def is_reasoning_end(self, input_ids: list[int]) -> bool:
        if self.reasoning_parser is None:
            return False
        return bool(self.reasoning_parser.is_reasoning_end(input_ids))

    def parse(
        self,
        model_output: str,
        request: Any,
        enable_auto_tools: bool = False,
        model_output_token_ids: Sequence[int] = (),
    ) -> tuple[str | None, str | None, list[FunctionCall] | None]:
        self.session = None
        reply = self._session(request, enable_auto_tools).parse(model_output)
        calls = [FunctionCall(id=c.id, name=c.name, arguments=c.arguments) for c in reply.calls]
        return reply.reasoning, reply.content, calls or None

    def parse_delta(
        self,
        delta_text: str,
        delta_token_ids: list[int],
        request: Any,
        prompt_token_ids: list[int] | None = None,
        *,
        finished: bool,
    ) -> DeltaMessage | None:
        session = self._session(request, True)
        piece = session.feed(delta_text)
        if finished:
            piece = _merge(piece, session.finish())
        return _delta(piece, bool(getattr(request, "include_reasoning", True)))


class AutoparserToolParser(ToolParser):  # type: ignore[misc,unused-ignore]
    """vLLM 0.33's ``ToolParser`` over autoparser: the text it is given read as
    the model's output, reasoning left in the content as written (a reasoning
    parser in front has taken it out). Streams through
    ``extract_tool_calls_streaming``; the held end comes out of
    ``finish_streaming``, which vLLM calls at the stream's end."""

    supports_required_and_named = False  # the model writes its own format under a grammar: read it as such
    engine_based_streaming = True  # so that DelegatingParser calls finish_streaming() at the end

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None) -> None:
        super().__init__(tokenizer, tools)
        self.autoparser = _started(tokenizer)
        self.session: Session | None = None
        self.opened_by_prompt: bool | None = None

    def _generated(self, request: Any) -> Generated:
        return self.autoparser.generate(chat_request(request, reasoning=False, tools=True, thinking=thinking_default(self.autoparser)))

    def _prefix(self, generated: Generated, text: str) -> str:
        """Where the generation prompt opened reasoning that the text no longer
        holds (a reasoning parser took it out), the closer that ends it."""
        closer = generated.analysis.reasoning.end
        if generated.prefill is PrefillOutcome.OPENED and closer.strip() and closer.strip() not in text:
            return closer
        return ""

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        generated = self._generated(request)
        prefix = self._prefix(generated, model_output)
        reply = Session(generated, _id_maker(None), _log).parse(prefix + model_output)
        calls = [ToolCall(id=c.id, function=FunctionCall(name=c.name, arguments=c.arguments)) for c in reply.calls]
        content = reply.content
        if prefix and content is not None and content.startswith(prefix):
            content = content[len(prefix) :] or None
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=content)

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> DeltaMessage | None:
        if self.session is None:
            generated = self._generated(request)
            self.session = Session(generated, _id_maker(None), _log)
            prefix = self._prefix(generated, current_text or delta_text)
            if prefix:
                self.session.feed(prefix)
        return _delta(self.session.feed(delta_text))

    def finish_streaming(self) -> DeltaMessage | None:
        if self.session is None:
            return None
        return _delta(self.session.finish())


class AutoparserReasoningParser(ReasoningParser):  # type: ignore[misc,unused-ignore]
    """vLLM 0.33's ``ReasoningParser`` over autoparser: the reasoning block the
    template's analysis found; the rest of the output, calls included, is
    content as written, for the tool parser after it. ``is_reasoning_end`` and
    ``extract_content_ids`` read token ids where the markers are single tokens,
    else the decoded text."""

    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self.autoparser = _started(tokenizer)
        self.chat_template_kwargs: dict[str, Any] = dict(kwargs.get("chat_template_kwargs") or {})
        self.markers = reasoning_markers(self.autoparser)
        self.marker_ids = single_token_ids(tokenizer, self.markers)
        self.session: Session | None = None
        self.ended = False

    @property
    def reasoning_start_str(self) -> str | None:
        return self.markers[0] or None

    @property
    def reasoning_end_str(self) -> str | None:
        return self.markers[1] or None

    def _decode(self, ids: Sequence[int]) -> str:
        decode = getattr(self.model_tokenizer, "decode", None)
        return str(decode(list(ids))) if callable(decode) else ""

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        start_id, end_id = self.marker_ids
        if end_id is not None:
            ids = list(input_ids)
            last_end = max((i for i, t in enumerate(ids) if t == end_id), default=-1)
            last_start = max((i for i, t in enumerate(ids) if t == start_id), default=-1) if start_id is not None else -1
            return last_end > last_start
        start, end = self.markers
        if not end:
            return False
        text = self._decode(input_ids)
        return text.rfind(end) > (text.rfind(start) if start else -1)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        end_id = self.marker_ids[1]
        if end_id is not None and end_id in input_ids:
            return input_ids[len(input_ids) - input_ids[::-1].index(end_id) :]
        return input_ids if end_id is not None or not self.markers[1] else []

    def _generated(self, request: Any) -> Generated:
        return self.autoparser.generate(
            chat_request(request, self.chat_template_kwargs, reasoning=True, tools=False, thinking=thinking_default(self.autoparser))
        )

    def _session(self, generated: Generated) -> Session:
        """Calls are the tool parser's: their markers, read as text here, are not noted."""
        return Session(generated, _id_maker(None), _log, skip=(DeviationKind.CALL_MARKER_IN_TEXT,))

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        reply = self._session(self._generated(request)).parse(model_output)
        return reply.reasoning, reply.content

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> DeltaMessage | None:
        if self.session is None:  # no request here: the template's default request (tools do not change reasoning)
            self.session = self._session(self._generated(_DefaultRequest(self.chat_template_kwargs)))
        piece = self.session.feed(delta_text)
        if piece.content.strip():  # the reading has left the reasoning block (its closer and the whitespace after it)
            self.ended = True
        return _delta(piece)

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self.ended

    def finish_streaming(self) -> DeltaMessage | None:
        if self.session is None:
            return None
        return _delta(self.session.finish())


class _DefaultRequest:
    """A request with one user message, for a reasoning parser that streams without one."""

    def __init__(self, chat_template_kwargs: dict[str, Any]) -> None:
        self.messages = [{"role": "user", "content": "Hello"}]
        self.chat_template_kwargs = chat_template_kwargs


def _compose(original: Any) -> Any:
    @functools.wraps(original)
    def compose(
        cls: type[ParserManager],
        tool_parser_name: str | None,
        reasoning_parser_name: str | None,
        enable_auto_tools: bool,
        model_name: str | None,
        is_harmony: bool,
        tool_strict_level: str | None,
        tokenizer: Any,
    ) -> type[Parser] | None:
        names = {tool_parser_name, reasoning_parser_name} - {None, ""}
        if is_harmony or NAME not in names or names != {NAME}:
            composed: type[Parser] | None = original(
                cls, tool_parser_name, reasoning_parser_name, enable_auto_tools, model_name, is_harmony, tool_strict_level, tokenizer
            )
            return composed
        tool_cls = AutoparserToolParser if tool_parser_name == NAME and enable_auto_tools else None
        reasoning_cls = AutoparserReasoningParser if reasoning_parser_name == NAME else None
        if tool_cls is None and reasoning_cls is None:
            return None
        return type("AutoparserParser", (AutoparserParser,), {"tool_parser_cls": tool_cls, "reasoning_parser_cls": reasoning_cls})

    compose.autoparser = True  # type: ignore[attr-defined]
    return compose


def register() -> None:
    """Register both parsers as ``autoparser`` and have ``ParserManager`` build
    the whole parser for them (idempotent: vLLM loads plugins in every process)."""
    ToolParserManager.register_module(NAME, module=AutoparserToolParser)
    ReasoningParserManager.register_module(NAME, module=AutoparserReasoningParser)
    current = ParserManager.__dict__["_compose_parser"]
    if not getattr(current.__func__, "autoparser", False):
        ParserManager._compose_parser = classmethod(_compose(current.__func__))  # type: ignore[method-assign,assignment,unused-ignore]


__all__ = ["NAME", "AutoparserParser", "AutoparserReasoningParser", "AutoparserToolParser", "register"]
