"""The engines a template is served with, and what each does to a
conversation before the template sees it: the one table lint reads to decide
which engines a finding breaks (an error only for those).

Each fact names its source: a file and version (a release, the commit it was
read at, or the pull request that made it so) in the engine's repository
(docs/lint.md shows the table)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from analysis.errors import InputError

#: arguments: what a template receives for a call's ``arguments`` that the client sent as a JSON string
OBJECT = "object"  #: parsed into an object
STRING = "string"  #: passed on as the string

#: content: what a template receives for an assistant turn's ``content: null`` beside calls
NULL = "null"  #: None, as sent
EMPTY = "empty"  #: ""
ABSENT = "absent"  #: no ``content`` key (the documented shape of a call turn)

#: bos: whether the text the template writes gets a second BOS from the tokenizer
ADDS = "adds"  #: tokenized with the tokenizer's special tokens (a BOS the template wrote is doubled)
KEEPS = "keeps"  #: tokenized without special tokens: the template's BOS is the only one
STRIPS = "strips"  #: a leading BOS the template wrote is removed when the tokenizer adds one


@dataclass(frozen=True)
class Engine:
    """What one engine does to a chat request before the template renders it."""

    name: str
    #: whether the engine renders the model's Jinja chat template at all
    renders_jinja: bool
    arguments: str
    null_content: str
    #: where system messages may stand (the engine passes them where the client put them, or moves them)
    system: str
    #: what reaches the template of a call's ``id`` and a tool message's ``tool_call_id``
    call_ids: str
    bos: str
    #: the template variables the engine sets
    variables: tuple[str, ...]
    #: property -> where the fact comes from (file and version in the engine's repository)
    sources: tuple[tuple[str, str], ...]
    #: the part of the content a text-parts list becomes: "string" (joined for a string template) or "parts"
    content_parts: str = "parts"

    def source(self, what: str) -> str:
        """The citation of one property ("" when none)."""
        return dict(self.sources).get(what, "")


_VLLM = "vllm-project/vllm"
_SGLANG = "sgl-project/sglang"
_LLAMA_CPP = "ggml-org/llama.cpp"

ENGINES: tuple[Engine, ...] = (
    Engine(
        "transformers",
        renders_jinja=True,
        arguments=OBJECT,
        null_content=ABSENT,
        system="anywhere (passed as given)",
        call_ids="as given",
        bos=ADDS,
        variables=("messages", "tools", "documents", "add_generation_prompt", "bos_token", "eos_token",
                   "every special token", "chat_template_kwargs"),
        sources=(
            ("arguments", "docs/source/en/chat_extras.md (tool use: 'arguments' is a dict; at commit 35c622d757ad); "
                          "utils/chat_template_utils.py render_jinja_template passes messages unchanged (5.25.0, checked)"),
            ("null_content", "docs/source/en/chat_extras.md: a call turn is {'role': 'assistant', 'tool_calls': [...]}, no content "
                             "(at commit 35c622d757ad)"),
            ("bos", "tokenization_utils_base.py apply_chat_template tokenizes with add_special_tokens=False (5.25.0, checked); "
                    "the two-step tokenize=False then tokenizer(text), which the docs warn about and training scripts use, adds it again"),
            ("variables", "tokenization_utils_base.py apply_chat_template: **special_tokens_map, **kwargs (5.25.0, checked)"),
        ),
    ),
    Engine(
        "vllm",
        renders_jinja=True,
        arguments=OBJECT,
        null_content=EMPTY,
        system="anywhere (passed as given)",
        call_ids="as given (truncated to 9 characters for Mistral tokenizers)",
        bos=KEEPS,
        variables=("messages", "tools", "documents", "add_generation_prompt", "bos_token", "eos_token",
                   "every special token", "chat_template_kwargs"),
        sources=(
            ("arguments", f"{_VLLM} vllm/entrypoints/chat_utils.py _postprocess_messages: json.loads of string arguments "
                          "('per the Transformers docs & maintainers'; at commit bd5ec6d50b83)"),
            ("null_content", f"{_VLLM} vllm/entrypoints/chat_utils.py _parse_chat_message_content: content None -> [] -> "
                             "'\\n'.join([]) == '' for string-format templates ([] for 'openai' ones; at commit bd5ec6d50b83)"),
            ("bos", f"{_VLLM} vllm/entrypoints/openai/protocol.py ChatCompletionRequest.add_special_tokens=False by default "
                    "(at commit ec3b890c14b0)"),
            ("content_parts", f"{_VLLM} vllm/entrypoints/chat_utils.py _parse_chat_message_content_parts: text parts '\\n'-joined "
                              "for 'string' content-format templates (at commit bd5ec6d50b83)"),
        ),
        content_parts="string",
    ),
    Engine(
        "sglang",
        renders_jinja=True,
        arguments=OBJECT,
        null_content=EMPTY,
        system="anywhere (passed as given)",
        call_ids="as given",
        bos=KEEPS,
        variables=("messages", "tools", "add_generation_prompt", "reasoning_effort", "bos_token", "eos_token",
                   "every special token", "chat_template_kwargs"),
        sources=(
            ("arguments", f"{_SGLANG} python/sglang/srt/entrypoints/openai/serving_chat.py _apply_jinja_template: "
                          "orjson.loads of string arguments (at commit 0c078e6f4268)"),
            ("null_content", f"{_SGLANG} python/sglang/srt/entrypoints/openai/serving_chat.py _apply_jinja_template: "
                             "'if message.content is None: message.content = \"\"' (at commit 0c078e6f4268)"),
            ("bos", f"{_SGLANG} serving_chat.py _apply_jinja_template: tokenizer.apply_chat_template(tokenize=True), which encodes "
                    "without special tokens (at commit 0c078e6f4268)"),
            ("content_parts", f"{_SGLANG} python/sglang/srt/parser/jinja_template_utils.py process_content_for_template_format "
                              "(called from serving_chat.py): text parts ' '-joined for 'string' templates (at commit 584506b453d0)"),
        ),
        content_parts="string",
    ),
    Engine(
        "llama.cpp",
        renders_jinja=True,
        arguments=OBJECT,
        null_content=EMPTY,
        system="anywhere (moved into the first user turn for a template without a system role)",
        call_ids="as given (when not empty)",
        bos=STRIPS,
        variables=("messages", "tools", "add_generation_prompt", "bos_token", "eos_token", "enable_thinking",
                   "chat_template_kwargs", "strftime_now"),
        sources=(
            ("arguments", f"{_LLAMA_CPP} common/chat.cpp common_chat_templates_apply_jinja: workaround::func_args_not_string "
                          "when tmpl.original_caps().supports_object_arguments (common/jinja/caps.cpp: the template reads a "
                          "probe call's arguments.arg), since PR #20612 (merged 2026-03-16); before it, minja's "
                          "chat_template::apply parsed string arguments when caps.requires_object_arguments (at commit "
                          "85c9a5042b06, vendor/minja/chat-template.hpp). Builds between them pass strings: at commits "
                          "7e1d7d48a12b and 0374c5b6e4c1 func_args_not_string is never called; at 2393b17fc895 only some "
                          "formats call it"),
            ("null_content", f"{_LLAMA_CPP} common/chat.cpp workaround::requires_non_null_content: a call turn without "
                             "content gets \"\" for every template that writes tool calls (caps.supports_tool_calls; at commit 7e1d7d48a12b)"),
            ("system", f"{_LLAMA_CPP} common/chat.cpp workaround::system_message_not_supported: a leading system message is "
                       "merged into the next one (at commit 7e1d7d48a12b)"),
            ("bos", f"{_LLAMA_CPP} common/chat.cpp: a leading bos_token is cut when the vocabulary adds one: apply() "
                    "('To avoid double BOS / EOS tokens'; minja, at commit 85c9a5042b06), "
                    "common_chat_template_direct_apply (native engine, at commit 7e1d7d48a12b)"),
            ("content_parts", f"{_LLAMA_CPP} common/chat.cpp common_chat_templates_apply_jinja: common_chat_msgs_to_json_oaicompat "
                              "'\\n'-joins text parts unless caps.requires_typed_content (at commit 7e1d7d48a12b)"),
        ),
        content_parts="string",
    ),
    Engine(
        "ollama",
        renders_jinja=False,
        arguments=OBJECT,
        null_content=EMPTY,
        system="anywhere",
        call_ids="as given",
        bos=KEEPS,
        variables=(".Messages", ".Tools", ".System", ".Prompt (Go text/template, not Jinja)",),
        sources=(
            ("renders_jinja", "ollama/ollama template/template.go: Go text/template from the Modelfile; Named() only matches a GGUF's "
                              "Jinja template to a built-in Go template (Levenshtein distance; at commit aac17d5f158d)"),
            ("arguments", "ollama/ollama api/types.go ToolCallFunction.Arguments is ToolCallFunctionArguments, a map[string]any "
                          "(at commit b8761ab020a9)"),
        ),
    ),
)

ENGINE_NAMES = tuple(engine.name for engine in ENGINES)

#: the engines lint checks by default: every engine that renders the model's Jinja template
DEFAULT_ENGINES = tuple(engine.name for engine in ENGINES if engine.renders_jinja)

_BY_NAME = {engine.name: engine for engine in ENGINES}


def engine(name: str) -> Engine:
    """The engine called ``name`` (an :class:`InputError` for an unknown one)."""
    return check_engines([name])[0]


def check_engines(names: Iterable[str]) -> tuple[Engine, ...]:
    """The engines named (an :class:`InputError` naming an unknown one); in
    table order, each once."""
    names = tuple(names)
    unknown = [n for n in names if n not in _BY_NAME]
    if unknown:
        raise InputError(f"no engine {', '.join(map(repr, unknown))} (engines: {', '.join(ENGINE_NAMES)})")
    return tuple(e for e in ENGINES if e.name in names)


def rendering(engines: Iterable[Engine] = ENGINES) -> tuple[str, ...]:
    """The names of ``engines`` that render the Jinja template (those a template defect can break)."""
    return tuple(e.name for e in engines if e.renders_jinja)


def with_property(what: str, *values: str) -> tuple[str, ...]:
    """The engines (rendering the template) whose ``what`` is one of ``values``."""
    return tuple(e.name for e in ENGINES if e.renders_jinja and getattr(e, what) in values)
