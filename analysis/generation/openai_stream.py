"""A stream's deltas as OpenAI's chat-completion chunks: what
``autoparser parse --stream --json`` prints, line by line, for an engine that
embeds the library.

OpenAI's rules, on top of :class:`~analysis.generation.streaming.StreamParser`'s deltas:

* a call's id comes once, in its first chunk: the model's own where it wrote
  one, else a generated one (``call_0``, ``call_1``...), and never again;
* where the format writes a call's id after its name (Mistral's
  ``[CALL_ID]``), a call's first chunk waits for the next one, which brings
  the id if the model wrote one;
* the final message carries the ids the stream gave.

    stream = OpenAIStream(generated)
    for chunk in model_output_chunks:
        for delta in stream.feed(chunk):
            send({"delta": delta})
    last, outcome = stream.finish()
"""

from __future__ import annotations

from typing import Any

from analysis.generation.generated import Generated
from analysis.generation.results import ParseOutcome
from analysis.generation.streaming import StreamParser
from analysis.messages.mapper import Delta, Message, generated_call_id
from analysis.phases.result import CallIdPosition


class OpenAIStream:
    """Model output in, OpenAI ``choices[].delta`` objects out (see the module docstring)."""

    def __init__(self, generated: Generated, show_open_arguments: bool = False) -> None:
        """``show_open_arguments``: as :class:`StreamParser`'s (JSON arguments
        shown as they are written, instead of once they close)."""
        self.parser = StreamParser(generated, show_open_arguments)
        #: the id each call's first chunk carried (the model's, else a generated one)
        self.ids: dict[int, str] = {}
        #: the format writes a call's id after its name: a call's first delta waits for the next one
        self.id_follows_name = generated.analysis.tools.call_id.pos is CallIdPosition.BETWEEN_FUNC_AND_ARGS
        self._held: Delta | None = None

    def feed(self, chunk: str) -> list[dict[str, Any]]:
        """Add a chunk of model output; the OpenAI deltas it produces."""
        return self.convert(self.parser.feed(chunk))

    def finish(self) -> tuple[list[dict[str, Any]], ParseOutcome]:
        """The output is complete: the last OpenAI deltas (a held call's first
        chunk included) and the final outcome (its message as the stream ends)."""
        deltas, outcome = self.parser.finish()
        return self.convert(deltas) + self.flush(), outcome

    def convert(self, deltas: list[Delta] | tuple[Delta, ...]) -> list[dict[str, Any]]:
        """Stream deltas as OpenAI deltas, holding a call's first one where its id follows its name."""
        out: list[dict[str, Any]] = []
        for delta in deltas:
            held = self._held
            if held is not None and delta.tool_index == held.tool_index:  # the id (if written) comes now
                delta = held._replace(tool_id=delta.tool_id, arguments=(held.arguments or "") + (delta.arguments or "") or None)
                self._held = None
            elif held is not None:
                out.append(self._openai(held))
                self._held = None
            if self.id_follows_name and delta.tool_name is not None and delta.tool_id is None:
                self._held = delta
                continue
            out.append(self._openai(delta))
        return out

    def flush(self) -> list[dict[str, Any]]:
        """A call's first delta still held (the stream ended before the call's next one)."""
        held, self._held = self._held, None
        return [self._openai(held)] if held is not None else []

    def message(self, message: Message) -> dict[str, Any]:
        """The final message as OpenAI returns it, with the ids the stream gave."""
        data: dict[str, Any] = message.to_openai()
        for i, call in enumerate(data.get("tool_calls", [])):
            if i in self.ids:
                call["id"] = self.ids[i]
        return data

    def _openai(self, delta: Delta) -> dict[str, Any]:
        data: dict[str, Any] = delta.to_json()
        index = delta.tool_index
        if index is not None:
            call = data["tool_calls"][0]
            if index not in self.ids:
                self.ids[index] = delta.tool_id or generated_call_id(index)
                call["id"] = self.ids[index]
            else:
                call.pop("id", None)
        return data


__all__ = ["OpenAIStream"]
