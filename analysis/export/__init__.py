"""Exporting the inferred parser to the ecosystem: the Hugging Face
``response_template`` that transformers, vLLM and SGLang execute, reading it
back with transformers' own parser, and writing it into a model folder's
``tokenizer_config.json``.

The names below are this layer's public API; each is imported on first use
(``analysis.export.NAME``), so importing one of its modules stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis._lazy import lazy_getattr

if TYPE_CHECKING:
    from analysis.export.spec_writer import VERSION, response_template
    from analysis.export.tokenizer_config import (
        config_path,
        read_response_template,
        write_response_template,
    )

_EXPORTS = {
    "response_template": "spec_writer",
    "VERSION": "spec_writer",
    "config_path": "tokenizer_config",
    "write_response_template": "tokenizer_config",
    "read_response_template": "tokenizer_config",
}
__all__ = ["VERSION", "config_path", "read_response_template", "response_template", "write_response_template"]
__getattr__ = lazy_getattr(__name__, _EXPORTS)
