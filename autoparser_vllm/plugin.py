"""The ``vllm.general_plugins`` entry point: vLLM calls :func:`register` in
each of its processes, so that ``--tool-call-parser autoparser`` and
``--reasoning-parser autoparser`` need no path flag."""

from __future__ import annotations


def register() -> None:
    """Register the ``autoparser`` tool and reasoning parsers with vLLM (imported here: vLLM is loaded by then)."""
    from autoparser_vllm.vllm_parsers import register as register_parsers

    register_parsers()


__all__ = ["register"]
