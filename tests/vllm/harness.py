"""Driving vLLM 0.33's parsers the way its chat serving does (imported only by
tests that need vLLM): ``ParserManager.get_parser`` composes the named tool
and reasoning parsers into one ``Parser`` class, serving builds one per request
and calls ``parse`` (whole) or ``parse_delta`` chunk by chunk, with the
chunk's token ids or without them, ``finished`` on the last.

A small tokenizer stands for the model's: the family's markers are single
tokens (ids from 200000 on), every other character is a token of its own, so
a chunk never splits a marker, as vLLM's detokenizer never splits a token."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import vllm.plugins
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.parser.parser_manager import ParserManager

vllm.plugins.load_general_plugins()  # the entry point: as `vllm serve` does


class Tokenizer:
    """The markers are single tokens; any other character is one token (its code point)."""

    def __init__(self, template: str, specials: list[str]) -> None:
        self.chat_template = template
        self.bos_token = ""
        self.eos_token = ""
        self.specials = sorted(set(specials), key=len, reverse=True)
        self._vocab = {s: 200000 + i for i, s in enumerate(self.specials)}
        self._inverse = {v: k for k, v in self._vocab.items()}
        self.all_special_tokens = list(self.specials)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    @property
    def vocab(self) -> dict[str, int]:
        return self._vocab

    def get_added_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def tokens(self, text: str) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(text):
            special = next((s for s in self.specials if text.startswith(s, i)), None)
            token = special or text[i]
            out.append(token)
            i += len(token)
        return out

    def encode(self, text: str, add_special_tokens: bool = False, **_: Any) -> list[int]:
        return [self._vocab[t] if t in self._vocab else ord(t) for t in self.tokens(text)]

    def decode(self, ids: list[int], **_: Any) -> str:
        return "".join(self._inverse.get(i, chr(i) if i < 200000 else "") for i in ids)

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self._vocab.get(tokens, ord(tokens) if len(tokens) == 1 else None)
        return [self.convert_tokens_to_ids(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: list[int], **_: Any) -> list[str]:
        return [self._inverse.get(i, chr(i) if i < 200000 else "") for i in ids]

    def __len__(self) -> int:
        return 200000 + len(self.specials)


@dataclass(frozen=True)
class Answer:
    """A message as a client sees it: reasoning, content, and calls (name, arguments as JSON)."""

    reasoning: str | None
    content: str | None
    calls: tuple[tuple[str, Any], ...]

    @staticmethod
    def of(reasoning: str | None, content: str | None, calls: list[tuple[str, str]]) -> Answer:
        """Surrounding whitespace left out (where a template's markers hold it, parsers differ), arguments read as JSON."""
        parsed: list[tuple[str, Any]] = []
        for name, arguments in calls:
            try:
                parsed.append((name, json.loads(arguments)))
            except ValueError:
                parsed.append((name, arguments))
        return Answer((reasoning or "").strip() or None, (content or "").strip() or None, tuple(parsed))


def request(tools: list[dict[str, Any]] | None, tool_choice: Any = "auto", **fields: Any) -> ChatCompletionRequest:
    return ChatCompletionRequest(
        model="m", messages=[{"role": "user", "content": "Hello"}], tools=tools, tool_choice=tool_choice if tools else None, **fields
    )


def parser_class(tool: str | None, reasoning: str | None, tokenizer: Tokenizer) -> Any:
    return ParserManager.get_parser(tool_parser_name=tool, reasoning_parser_name=reasoning, enable_auto_tools=True, tokenizer=tokenizer)


def whole(cls: Any, tokenizer: Tokenizer, req: ChatCompletionRequest, output: str) -> Answer:
    parser = cls(tokenizer, req.tools, chat_template_kwargs={}, model_config=None)
    reasoning, content, calls = parser.parse(output, req, enable_auto_tools=True)
    return Answer.of(reasoning, content, [(c.name, c.arguments) for c in calls or []])


@dataclass(frozen=True)
class Streamed:
    answer: Answer
    ids: tuple[str | None, ...]  #: each call's id, as its first delta carried it
    names_first: bool  #: each call's first delta carried its name and id


def streamed(cls: Any, tokenizer: Tokenizer, req: ChatCompletionRequest, output: str, size: int, with_ids: bool = True) -> Streamed:
    """``output`` in chunks of at most ``size`` characters that never split a
    marker (a marker longer than ``size`` is a chunk of its own), with the
    chunks' token ids or none; the deltas added up as a client adds them up."""
    parser = cls(tokenizer, req.tools, chat_template_kwargs={}, model_config=None)
    chunks: list[str] = []
    for token in tokenizer.tokens(output):
        if chunks and len(chunks[-1]) + len(token) <= size:
            chunks[-1] += token
        else:
            chunks.append(token)
    reasoning, content = "", ""
    calls: dict[int, list[str]] = {}
    ids: dict[int, str | None] = {}
    names_first = True
    prompt = tokenizer.encode("Hello") if with_ids else None
    for i, chunk in enumerate(chunks):
        delta = parser.parse_delta(chunk, tokenizer.encode(chunk) if with_ids else [], req, prompt, finished=i == len(chunks) - 1)
        if delta is None:
            continue
        reasoning += delta.reasoning or ""
        content += delta.content or ""
        for call in delta.tool_calls:
            function = call.function
            if call.index not in calls:
                calls[call.index] = ["", ""]
                ids[call.index] = call.id
                names_first = names_first and bool(function and function.name)
            if function is not None:
                calls[call.index][0] += function.name or ""
                calls[call.index][1] += function.arguments or ""
    answer = Answer.of(reasoning, content, [(n, a) for n, a in (calls[i] for i in sorted(calls))])
    return Streamed(answer, tuple(ids[i] for i in sorted(ids)), names_first)
