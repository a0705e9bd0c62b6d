"""The plugin behind vLLM 0.33's own chat serving, end to end, the engine alone
mocked: ``OpenAIServingChat.create_chat_completion`` as ``vllm serve MODEL
--enable-auto-tool-choice --tool-call-parser autoparser --reasoning-parser
autoparser`` builds it (skipped without vLLM: ``tests/vllm/run_vllm_tests.sh``).

The model is a real Hugging Face fast tokenizer written at test time (byte-level
BPE, every byte a token, Qwen3's markers as added tokens) whose
``tokenizer_config.json`` carries Qwen3's chat template from ../shared; the
parsers are found by name, through vLLM's ``vllm.general_plugins`` entry point.
The mocked engine answers as vLLM's does for the request's ``output_kind``:
one final output (whole text, every token id) when not streamed, deltas of a
few tokens each when streamed. A streamed answer, assembled from its SSE
chunks, must equal the whole one, and both the expected message."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("vllm.entrypoints.openai.chat_completion.serving", reason="vLLM 0.33 is not installed (tests/vllm/run_vllm_tests.sh installs it)")

from tests.conftest import SHARED

TEMPLATE = SHARED / "templates" / "Qwen-Qwen3-0.6B.jinja"
MODEL = "local-qwen3-bytes"
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]  # special=True in Qwen3's tokenizer
MARKERS = ["<think>", "</think>", "<tool_call>", "</tool_call>"]  # added, special=False in Qwen3's tokenizer
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CALL_OUTPUT = '<think>\nI should check.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
PLAIN_OUTPUT = "<think>\nTwo and two make four.\n</think>\n\nThe answer is 4."


@dataclass(frozen=True)
class Answer:
    reasoning: str | None
    content: str | None
    calls: tuple[tuple[str, Any], ...]
    finish_reason: str | None


CALL_ANSWER = Answer("I should check.", None, (("get_weather", {"city": "Paris"}),), "tool_calls")
PLAIN_ANSWER = Answer("Two and two make four.", "The answer is 4.", (), "stop")


def _write_tokenizer(folder: Path, template: str) -> None:
    """A byte-level BPE with no merges (every byte one token) and Qwen3's markers
    as added tokens, saved as a model folder transformers loads offline."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKERS])
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "chat_template": template,
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "model_max_length": 32768,
        "add_bos_token": False,
        "clean_up_tokenization_spaces": False,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not TEMPLATE.is_file():
        pytest.skip(f"the reference templates are missing ({TEMPLATE})")
    folder = tmp_path_factory.mktemp("model")
    _write_tokenizer(folder, TEMPLATE.read_text())
    return folder


@dataclass
class _HFConfig:
    model_type: str = "qwen3"


@dataclass
class _ModelConfig:
    """The model configuration serving reads (as vLLM's own serving tests mock it)."""

    model: str = ""
    tokenizer: str = ""
    served_model_name: str = MODEL
    task = "generate"
    runner_type = "generate"
    trust_remote_code: bool = False
    tokenizer_mode: str = "auto"
    max_model_len: int = 8192
    revision: Any = None
    code_revision: Any = None
    tokenizer_revision: Any = None
    multimodal_config: Any = None
    hf_config: _HFConfig = field(default_factory=_HFConfig)
    hf_text_config: _HFConfig = field(default_factory=_HFConfig)
    logits_processors: list[str] | None = None
    diff_sampling_param: dict[str, Any] | None = None
    allowed_local_media_path: str = ""
    allowed_media_domains: list[str] | None = None
    encoder_config: Any = None
    generation_config: str = "auto"
    override_generation_config: dict[str, Any] = field(default_factory=dict)
    media_io_kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    skip_tokenizer_init: bool = False
    is_encoder_decoder: bool = False
    is_multimodal_model: bool = False
    supports_multimodal_inputs: bool = False
    renderer_num_workers: int = 1
    enable_prompt_embeds: bool = False
    vocab_size: int = 0

    def get_diff_sampling_param(self) -> dict[str, Any]:
        return self.diff_sampling_param or {}

    def get_vocab_size(self) -> int:
        return self.vocab_size


@dataclass
class _ParallelConfig:
    _api_process_rank: int = 0


@dataclass
class _VllmConfig:
    model_config: _ModelConfig
    parallel_config: _ParallelConfig


class _Engine:
    """What the mocked engine was asked, and the output it answers every request with."""

    def __init__(self, tokenizer: Any, output: str, chunk: int) -> None:
        self.tokenizer = tokenizer
        self.output = output
        self.chunk = chunk
        self.calls: list[Any] = []  # the sampling parameters of each generate()
        self.prompts: list[str] = []  # the prompt of each, decoded

    def steps(self, skip_special_tokens: bool) -> list[tuple[str, list[int]]]:
        """The output as vLLM's detokenizer hands it out: token ids by chunks of
        ``chunk``, each with the text its tokens add (decoded incrementally)."""
        ids = self.tokenizer.encode(self.output, add_special_tokens=False)
        assert self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens) == self.output
        for marker in MARKERS:  # the markers are single tokens, as in Qwen3's tokenizer
            assert self.tokenizer.convert_tokens_to_ids(marker) in ids or marker not in self.output
        out, before = [], ""
        for end in range(self.chunk, len(ids) + self.chunk, self.chunk):
            text = self.tokenizer.decode(ids[:end], skip_special_tokens=skip_special_tokens)
            out.append((text[len(before) :], ids[end - self.chunk : end]))
            before = text
        return out

    async def generate(self, prompt: Any, sampling_params: Any, request_id: str, **_: Any) -> Any:
        from vllm.outputs import CompletionOutput, RequestOutput
        from vllm.sampling_params import RequestOutputKind

        self.calls.append(sampling_params)
        prompt_ids = list(prompt["prompt_token_ids"])
        self.prompts.append(self.tokenizer.decode(prompt_ids, skip_special_tokens=False))
        steps = self.steps(sampling_params.skip_special_tokens)

        def output(text: str, ids: list[int], last: bool) -> RequestOutput:
            completion = CompletionOutput(index=0, text=text, token_ids=ids, cumulative_logprob=None, logprobs=None, finish_reason="stop" if last else None)
            return RequestOutput(request_id=request_id, prompt=None, prompt_token_ids=prompt_ids, prompt_logprobs=None, outputs=[completion], finished=last)

        if sampling_params.output_kind == RequestOutputKind.FINAL_ONLY:
            yield output("".join(t for t, _ in steps), [i for _, ids in steps for i in ids], True)
            return
        assert sampling_params.output_kind == RequestOutputKind.DELTA
        for n, (text, ids) in enumerate(steps):
            await asyncio.sleep(0)
            yield output(text, ids, n == len(steps) - 1)


def _serving(model_dir: Path, output: str, chunk: int = 1) -> tuple[Any, _Engine]:
    """``OpenAIServingChat`` as ``vllm serve`` builds it with the autoparser flags, over a mocked engine."""
    from unittest.mock import MagicMock

    import vllm.plugins
    from vllm.entrypoints.openai.chat_completion.serving import OpenAIServingChat
    from vllm.entrypoints.openai.models.serving import BaseModelPath, OpenAIServingModels
    from vllm.renderers.hf import HfRenderer
    from vllm.renderers.online_renderer import OnlineRenderer
    from vllm.tokenizers.registry import cached_tokenizer_from_config
    from vllm.v1.engine.async_llm import AsyncLLM

    vllm.plugins.load_general_plugins()  # as every vLLM process does: the entry point registers "autoparser"
    config = _ModelConfig(model=str(model_dir), tokenizer=str(model_dir))
    tokenizer = cached_tokenizer_from_config(config)
    config.vocab_size = len(tokenizer)
    engine = _Engine(tokenizer, output, chunk)
    client = MagicMock(spec=AsyncLLM)
    client.errored = False
    client.model_config = config
    client.input_processor = MagicMock()
    client.renderer = HfRenderer(_VllmConfig(config, _ParallelConfig()), tokenizer)
    client.generate = engine.generate
    flags: dict[str, Any] = {"enable_auto_tools": True, "tool_parser": "autoparser", "reasoning_parser": "autoparser"}
    models = OpenAIServingModels(engine_client=client, base_model_paths=[BaseModelPath(name=MODEL, model_path=str(model_dir))])
    renderer = OnlineRenderer(
        model_config=config, renderer=client.renderer, request_logger=None, chat_template=None, chat_template_content_format="auto", **flags
    )
    serving = OpenAIServingChat(
        client,
        models,
        response_role="assistant",
        online_renderer=renderer,
        request_logger=None,
        chat_template=None,
        chat_template_content_format="auto",
        **flags,
    )
    return serving, engine


def _request(stream: bool, tools: bool, tool_choice: Any = None) -> Any:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": "What is the weather in Paris?"}], "stream": stream}
    if tools:
        body["tools"] = [WEATHER_TOOL]
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    return ChatCompletionRequest(**body)


def _whole(serving: Any, request: Any) -> Answer:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionResponse

    response = asyncio.run(serving.create_chat_completion(request))
    assert isinstance(response, ChatCompletionResponse), response
    (choice,) = response.choices
    message = choice.message
    calls = []
    for call in message.tool_calls or []:
        assert call.type == "function" and call.id
        calls.append((call.function.name, json.loads(call.function.arguments)))
    return Answer(message.reasoning, message.content, tuple(calls), choice.finish_reason)


def _streamed(serving: Any, request: Any) -> tuple[Answer, int]:
    """The SSE chunks assembled as a client does (text concatenated, calls by
    index), and how many chunks carried a delta."""

    async def collect() -> list[str]:
        stream = await serving.create_chat_completion(request)
        assert not hasattr(stream, "choices"), stream  # a generator of SSE frames, not an answer or an error
        return [frame async for frame in stream]

    frames = asyncio.run(collect())
    assert frames[-1] == "data: [DONE]\n\n"
    reasoning, content, finish = "", "", None
    calls: dict[int, dict[str, str]] = {}
    deltas = 0
    for frame in frames[:-1]:
        assert frame.startswith("data: ") and frame.endswith("\n\n")
        data = json.loads(frame[len("data: ") :])
        assert "error" not in data, data
        for choice in data["choices"]:
            assert choice["index"] == 0
            delta = choice.get("delta") or {}
            assert set(delta) <= {"role", "content", "reasoning", "tool_calls"}, delta
            deltas += bool(delta.get("content") or delta.get("reasoning") or delta.get("tool_calls"))
            reasoning += delta.get("reasoning") or ""
            content += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                seen = calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
                if call.get("id"):
                    assert not seen["id"], f"call {call['index']} given a second id"
                    seen["id"] = call["id"]
                function = call.get("function") or {}
                seen["name"] += function.get("name") or ""
                seen["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason") is not None:
                assert finish is None, "two finish reasons"
                finish = choice["finish_reason"]
    assert sorted(calls) == list(range(len(calls)))
    assert all(c["id"] for c in calls.values())
    answer = Answer(reasoning or None, content or None, tuple((c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())), finish)
    return answer, deltas


CASES = {
    "reasoning-then-call": (CALL_OUTPUT, True, CALL_ANSWER),
    "reasoning-then-content": (PLAIN_OUTPUT, False, PLAIN_ANSWER),
}


@pytest.mark.parametrize("case", CASES)
def test_whole_answer_through_create_chat_completion(model_dir: Path, case: str) -> None:
    output, tools, expected = CASES[case]
    serving, engine = _serving(model_dir, output)
    assert serving.parser_cls is not None and serving.parser_cls.__module__ == "autoparser_vllm.vllm_parsers"
    assert _whole(serving, _request(stream=False, tools=tools)) == expected
    (params,) = engine.calls
    assert params.structured_outputs is None  # tool_choice auto: the output is left unconstrained
    (prompt,) = engine.prompts  # rendered by the tokenizer's own template (Qwen3's)
    assert prompt.startswith("<|im_start|>") and prompt.endswith("What is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n")
    assert ('"name": "get_weather"' in prompt) == tools


@pytest.mark.parametrize("chunk", [1, 3, 8])
@pytest.mark.parametrize("case", CASES)
def test_streamed_answer_equals_the_whole_one(model_dir: Path, case: str, chunk: int) -> None:
    output, tools, expected = CASES[case]
    serving, engine = _serving(model_dir, output, chunk)
    whole = _whole(serving, _request(stream=False, tools=tools))
    streamed, deltas = _streamed(serving, _request(stream=True, tools=tools))
    assert streamed == whole == expected
    assert deltas >= 2  # streamed in pieces, not held to the end
    assert [p.output_kind.name for p in engine.calls] == ["FINAL_ONLY", "DELTA"]


def test_a_tool_call_without_tools_declared_stays_content(model_dir: Path) -> None:
    """The call output with no tools in the request: nothing to call, so the
    call's text is the answer's content (as the template would show it), both ways."""
    serving, _ = _serving(model_dir, CALL_OUTPUT, 4)
    whole = _whole(serving, _request(stream=False, tools=False))
    streamed, _ = _streamed(serving, _request(stream=True, tools=False))
    assert whole == streamed
    assert whole.calls == () and whole.reasoning == "I should check."
    assert whole.content is not None and '"get_weather"' in whole.content and whole.finish_reason == "stop"


def test_named_tool_choice_constrains_the_output_and_reads_the_call(model_dir: Path) -> None:
    """tool_choice naming get_weather: the plugin's adjust_request hands the
    engine a grammar (vLLM's renderer calls it), which the model's output
    matches; the output is read as the call, whole and streamed."""
    import xgrammar as xgr

    named = {"type": "function", "function": {"name": "get_weather"}}
    serving, engine = _serving(model_dir, CALL_OUTPUT, 3)
    whole = _whole(serving, _request(stream=False, tools=True, tool_choice=named))
    streamed, _ = _streamed(serving, _request(stream=True, tools=True, tool_choice=named))
    # vLLM's own shaping of a forced call (message_assembly, resolve_finish_reason):
    # the whole message's content is "" (none streams), the finish reason "stop", as OpenAI's
    assert whole == replace(CALL_ANSWER, content="", finish_reason="stop")
    assert streamed == replace(whole, content=None)
    assert len(engine.calls) == 2
    for params in engine.calls:
        grammar = params.structured_outputs.grammar if params.structured_outputs is not None else None
        assert grammar and "get_weather" in grammar
        compiled = xgr.GrammarCompiler(xgr.TokenizerInfo([chr(i) for i in range(32, 127)] + ["\n", *MARKERS])).compile_grammar(grammar)
        matcher = xgr.GrammarMatcher(compiled)
        assert matcher.accept_string(CALL_OUTPUT)
        assert matcher.is_completed()  # and may end there
        assert not xgr.GrammarMatcher(compiled).accept_string(CALL_OUTPUT.replace("get_weather", "get_time"))
