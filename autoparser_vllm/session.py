"""What the vLLM plugin does, without vLLM: the template a tokenizer carries
(or ``AUTOPARSER_CHAT_TEMPLATE`` names), analysed once per template text; a
vLLM request read as a :class:`~analysis.parsers.ChatRequest`; and one
output read whole or streamed through the library's own API, with the
deviations and unread blocks the reading reports as log lines.

Nothing here imports vLLM: requests, tools and tokenizers are read by their
attributes (``messages``, ``tools``, ``tool_choice``, ``chat_template``...),
so the tests drive it with small fakes."""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.generation import AutoParser, Generated, ParseOutcome, StreamParser, auto_parser
from analysis.messages.deviations import DeviationKind
from analysis.messages.mapper import Delta
from analysis.parsers import ChatRequest
from analysis.parsers.request import ReasoningFormat, ToolChoice
from analysis.template import LoadedTemplate, RenderRequest
from peg.errors import AutoparserError

#: the environment variable that names a template file (vLLM does not hand ``--chat-template`` to parsers)
TEMPLATE_ENV = "AUTOPARSER_CHAT_TEMPLATE"

#: a call id the model did not write: (function name, call index) -> id
IdMaker = Callable[[str, int], str]


class PluginError(Exception):
    """A template the plugin cannot serve: one line, said at start-up."""


def vllm_style_id(name: str, index: int) -> str:
    """An id as vLLM's own parsers make one (``make_tool_call_id``: ``chatcmpl-tool-`` and a random hex)."""
    return f"chatcmpl-tool-{uuid.uuid4().hex}"


def template_of(tokenizer: Any) -> tuple[str, str]:
    """The template text to analyse and where it came from: the file
    ``AUTOPARSER_CHAT_TEMPLATE`` names, else the tokenizer's ``chat_template``
    (a mapping of named variants picks ``tool_use``, else ``default``)."""
    path = os.environ.get(TEMPLATE_ENV, "").strip()
    if path:
        try:
            return Path(path).read_text(encoding="utf-8"), path
        except (OSError, UnicodeDecodeError) as exc:
            raise PluginError(f"{TEMPLATE_ENV}={path}: cannot read the template: {exc.__class__.__name__}") from None
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, Mapping):
        template = template.get("tool_use") or template.get("default") or next(iter(template.values()), None)
    if isinstance(template, Sequence) and not isinstance(template, str):  # [{"name": ..., "template": ...}]
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, Mapping)}
        template = named.get("tool_use") or named.get("default") or next(iter(named.values()), None)
    if not isinstance(template, str) or not template.strip():
        raise PluginError(f"the tokenizer has no chat_template: set {TEMPLATE_ENV} to the template file")
    return template, "the tokenizer's chat_template"


def _token(tokenizer: Any, name: str) -> str:
    value = getattr(tokenizer, name, None)
    return value if isinstance(value, str) else ""


@functools.lru_cache(maxsize=8)
def _analysed(text: str, origin: str, bos: str, eos: str) -> AutoParser:
    parser = auto_parser(LoadedTemplate(name=origin, source=text, bos_token=bos, eos_token=eos))
    parser.analysis  # noqa: B018  (the analysis runs now, at start-up, not on the first request)
    return parser


@functools.lru_cache(maxsize=8)
def thinking_default(parser: AutoParser) -> bool:
    """Whether the template thinks when ``enable_thinking`` is not given, as
    vLLM renders it unless the request sets it (the library always passes the
    flag): the generation prompt rendered without it is the one rendered with it on."""
    messages = [{"role": "user", "content": "Hello"}]
    unset = parser.template.render(RenderRequest(messages, add_generation_prompt=True))
    return unset == parser.template.render(RenderRequest(messages, add_generation_prompt=True, enable_thinking=True))


def parser_for(tokenizer: Any) -> AutoParser:
    """The template's :class:`AutoParser`, analysed once per template text
    (cached); a template that cannot be analysed is a one-line :class:`PluginError`."""
    text, origin = template_of(tokenizer)
    try:
        parser = _analysed(text, origin, _token(tokenizer, "bos_token"), _token(tokenizer, "eos_token"))
        thinking_default(parser)
        return parser
    except AutoparserError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise PluginError(f"autoparser cannot analyse {origin}: {first}") from None


def _plain(value: Any) -> Any:
    """A pydantic model, a mapping or a list as plain JSON-like data."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump(exclude_none=True))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)) or (hasattr(value, "__iter__") and not isinstance(value, (str, bytes))):
        return [_plain(v) for v in value]
    return value


def _message(message: Any) -> dict[str, Any]:
    data = _plain(message)
    if not isinstance(data, dict):
        return {"role": "user", "content": str(data)}
    content = data.get("content")
    if isinstance(content, list):  # content parts: the text ones, joined
        data["content"] = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return data


def _chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool as Chat Completions writes it: the Responses API's flat function
    tool (``{"type": "function", "name": ..., "parameters": ...}``) nested under ``function``."""
    if "function" in tool or "name" not in tool:
        return tool
    function = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
    return {"type": "function", "function": function}


def _tool_choice(choice: Any) -> tuple[ToolChoice, str | None]:
    """vLLM's tool_choice: ``auto``/``none``/``required``/None, or a named function (read as required, that one tool)."""
    if choice is None or choice == "auto":
        return ToolChoice.AUTO, None
    if choice in ("none", "required"):
        return ToolChoice(choice), None
    data = _plain(choice)
    name = data.get("function", {}).get("name") or data.get("name") if isinstance(data, dict) else None
    return ToolChoice.REQUIRED, name if isinstance(name, str) else None


def chat_request(
    request: Any,
    chat_template_kwargs: Mapping[str, Any] | None = None,
    *,
    reasoning: bool = True,
    tools: bool = True,
    thinking: bool = True,
) -> ChatRequest:
    """A vLLM chat request as the library's :class:`ChatRequest`: messages,
    tools (a named ``tool_choice`` is ``required`` with that tool alone),
    ``parallel_tool_calls``, the template kwargs (``enable_thinking`` among
    them; ``thinking`` where they do not say, the template's default:
    :func:`thinking_default`). ``reasoning=False`` leaves reasoning in the
    content as written (no reasoning parser); ``tools=False`` reads no calls
    (no tool parser)."""
    kwargs = dict(chat_template_kwargs or getattr(request, "chat_template_kwargs", None) or {})
    thinking = kwargs.pop("enable_thinking", kwargs.get("thinking", thinking))
    choice, named = _tool_choice(getattr(request, "tool_choice", None))
    tool_list = [_chat_tool(t) for t in (_plain(getattr(request, "tools", None)) or []) if isinstance(t, dict)]
    if named is not None:
        tool_list = [t for t in tool_list if t.get("function", {}).get("name") == named] or tool_list
    messages = [_message(m) for m in getattr(request, "messages", None) or []] or [{"role": "user", "content": "Hello"}]
    continued = bool(getattr(request, "continue_final_message", False))
    data = {
        "messages": messages,
        "tools": tool_list if tools and tool_list else None,
        "tool_choice": choice.value if tools else "none",
        "parallel_tool_calls": bool(getattr(request, "parallel_tool_calls", True) is not False),
        "reasoning_format": "auto" if reasoning else ReasoningFormat.NONE.value,
        "enable_thinking": thinking if isinstance(thinking, bool) else True,
        "add_generation_prompt": bool(getattr(request, "add_generation_prompt", True)) and not continued,
        "continue_final_message": "auto" if continued else "none",
        "chat_template_kwargs": kwargs,
    }
    return ChatRequest.from_json(data)


@dataclass(frozen=True)
class Call:
    """One tool call as vLLM returns it."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """A whole output read: reasoning, content (None when empty, as vLLM's parsers give it) and calls."""

    reasoning: str | None
    content: str | None
    calls: tuple[Call, ...]
    outcome: ParseOutcome


@dataclass(frozen=True)
class CallPiece:
    """A piece of one call in a streamed delta: its id and name with its first piece, then arguments."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass
class Piece:
    """What one streamed chunk adds (vLLM's ``DeltaMessage``, as plain data)."""

    reasoning: str = ""
    content: str = ""
    calls: list[CallPiece] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.reasoning or self.content or self.calls)


def notes(outcome: ParseOutcome, skip: Collection[DeviationKind] = ()) -> list[str]:
    """The deviations (but those of the kinds in ``skip``) and unread blocks a
    reading reports, one line each (what the plugin logs)."""
    lines = [d.describe() for d in outcome.deviations if d.kind not in skip]
    if not outcome.ok and outcome.warning:
        lines.append(outcome.warning.strip().splitlines()[0])
    return lines


class Session:
    """One request's reading: whole (:meth:`parse`) or streamed (:meth:`feed`, :meth:`finish`).

    ``log`` receives the notes once per request (a whole parse, or a stream's
    end), but for deviations of the kinds in ``skip``."""

    def __init__(
        self,
        generated: Generated,
        make_id: IdMaker = vllm_style_id,
        log: Callable[[list[str]], None] | None = None,
        skip: Collection[DeviationKind] = (),
    ) -> None:
        self.generated = generated
        self.skip = skip
        self.make_id = make_id
        self.log = log
        self.stream = StreamParser(generated)
        self.ids: dict[int, str] = {}
        self.names: dict[int, str] = {}
        self.finished: ParseOutcome | None = None
        self._logged = False
        #: reasoning left in the content (no reasoning parser) starts with what the
        #: generation prompt wrote of it (``<think></think>``): the model did not write that
        self.echo = generated.parse("").message.content if generated.request.reasoning_format is ReasoningFormat.NONE else ""
        self._echo_left = self.echo

    def _content(self, text: str) -> str:
        """Streamed content less the generation prompt's echo."""
        if self._echo_left:
            cut = 0
            while cut < min(len(text), len(self._echo_left)) and text[cut] == self._echo_left[cut]:
                cut += 1
            self._echo_left = self._echo_left[cut:] if cut == min(len(text), len(self._echo_left)) else ""
            text = text[cut:]
        return text

    def _report(self, outcome: ParseOutcome) -> None:
        if self.log is not None and not self._logged:
            self._logged = True
            lines = notes(outcome, self.skip)
            if lines:
                self.log(lines)

    def _id(self, index: int, name: str, written: str | None) -> str:
        if index not in self.ids:
            self.ids[index] = written or self.make_id(name, index)
        return self.ids[index]

    def parse(self, output: str) -> Reply:
        """The whole output read at once."""
        outcome = self.generated.parse(output)
        message = outcome.message
        calls = tuple(Call(self._id(i, c.name, c.id), c.name, c.arguments) for i, c in enumerate(message.tool_calls))
        self._report(outcome)
        content = message.content[len(self.echo) :] if self.echo and message.content.startswith(self.echo) else message.content
        return Reply(message.reasoning_content or None, content or None, calls, outcome)

    def _piece(self, deltas: Sequence[Delta]) -> Piece:
        piece = Piece()
        for delta in deltas:
            if delta.reasoning_content:
                piece.reasoning += delta.reasoning_content
            if delta.content:
                piece.content += self._content(delta.content)
            index = delta.tool_index
            if index is None:
                continue
            name = delta.tool_name if index not in self.names else None
            if name is not None:
                self.names[index] = name
            call_id = self._id(index, name, delta.tool_id) if name is not None else None
            last = piece.calls[-1] if piece.calls else None
            if last is not None and last.index == index and call_id is None:
                piece.calls[-1] = CallPiece(index, last.id, last.name, last.arguments + (delta.arguments or ""))
            elif call_id is not None or delta.arguments:
                piece.calls.append(CallPiece(index, call_id, name, delta.arguments or ""))
        return piece

    def feed(self, text: str) -> Piece:
        """A chunk of output: what it adds (nothing shown is ever taken back)."""
        return self._piece(self.stream.feed(text)) if text else Piece()

    def finish(self) -> Piece:
        """The output is complete: the last of it, and the notes logged."""
        if self.finished is not None:
            return Piece()
        deltas, outcome = self.stream.finish()
        self.finished = outcome
        self._report(outcome)
        return self._piece(deltas)


def xgrammar_ebnf(gbnf: str) -> str:
    """A GBNF grammar in the EBNF vLLM's grammar backend (xgrammar) reads: the
    same but for an empty alternative (``space ::= | " "``), which GBNF allows
    and xgrammar's reader does not: it is written ``""``."""
    out: list[str] = []
    last = ""  # the last token outside literals: "::=", "(", "|" or another
    i = 0
    while i < len(gbnf):
        ch = gbnf[i]
        if ch in "\"[":  # a string literal or a character class, copied whole
            close = '"' if ch == '"' else "]"
            j = i + 1
            while j < len(gbnf) and gbnf[j] != close:
                j += 2 if gbnf[j] == "\\" else 1
            out.append(gbnf[i : j + 1])
            last, i = "x", j + 1
            continue
        if ch == "#":  # a comment, to the line's end
            j = gbnf.find("\n", i)
            j = len(gbnf) if j < 0 else j
            out.append(gbnf[i:j])
            i = j
            continue
        if ch == "\n" and last == "|":
            out.append(' ""')
            last = "x"
        if gbnf.startswith("::=", i):
            out.append("::=")
            last, i = "::=", i + 3
            continue
        if ch in "|)":
            if last in ("::=", "(", "|") if ch == "|" else last == "|":
                out.append('"" ')
            last = ch
        elif ch == "(":
            last = "("
        elif not ch.isspace():
            last = "x"
        out.append(ch)
        i += 1
    if last == "|":
        out.append(' ""')
    return "".join(out)


def reasoning_markers(parser: AutoParser) -> tuple[str, str]:
    """The template's reasoning opener and closer, without the whitespace the template writes around them."""
    reasoning = parser.analysis.reasoning
    return reasoning.start.strip(), reasoning.end.strip()


def single_token_ids(tokenizer: Any, markers: tuple[str, str]) -> tuple[int | None, int | None]:
    """The token ids of markers that are single tokens in the tokenizer's vocabulary (None where one is not)."""
    vocab: Mapping[str, int] = {}
    get_vocab = getattr(tokenizer, "get_vocab", None)
    if callable(get_vocab):
        vocab = get_vocab()
    out = [vocab.get(marker) if marker else None for marker in markers]
    return out[0], out[1]


__all__ = [
    "TEMPLATE_ENV",
    "Call",
    "CallPiece",
    "IdMaker",
    "Piece",
    "PluginError",
    "Reply",
    "Session",
    "chat_request",
    "notes",
    "parser_for",
    "reasoning_markers",
    "single_token_ids",
    "template_of",
    "thinking_default",
    "vllm_style_id",
    "xgrammar_ebnf",
]
