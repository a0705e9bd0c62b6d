"""autoparser as vLLM plugins: one tool parser and one reasoning parser,
``autoparser``, for every model whose chat template autoparser reads.

``session`` holds what does not need vLLM (the template, the request, one
output read whole or streamed, the notes to log); ``vllm_parsers`` holds the
classes vLLM 0.33 calls, and ``plugin.register`` (the ``vllm.general_plugins``
entry point) registers them. Only ``vllm_parsers`` imports vLLM."""

from __future__ import annotations
