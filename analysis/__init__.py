"""Chat-template analysis and parser generation, in layers (each imports only
the layers above it in this list, and ``peg``):

- ``template``: loading a template (files, model folders, GGUF, the Hub) and
  compiling and rendering it in a sandboxed, resource-limited worker;
- ``probing``: capability probes, controlled renders and their diffs, markers;
- ``phases``: the analysis phases (reasoning, content, tool calls,
  workarounds) and the result types they fill;
- ``messages``: the message model, the capture tags parsers mark their trees
  with, the hooks formats add, and the mapping of trees to messages and deltas;
- ``parsers``: requests, generation prompts, and the PEG parsers built for
  them (the generic builder and the dedicated handlers);
- ``generation``: the analysis of a template (phases and handler, cached) and
  what it generates per request: parser, grammar and triggers; parsing,
  streaming, hints and the checks of a parsed message;
- ``export``: the inferred parser as a Hugging Face ``response_template``,
  transformers' reading of it, and ``tokenizer_config.json`` writing;
- ``lint``: template defects found by rendering conversations (history
  that is not a prefix, shapes that raise, tool calls that lose
  information, thinking switches…), each with its evidence;
- ``checks``: expected-parse cases, round-trip probes, and ``check``'s
  orchestration.

Beside them: ``errors`` (the analysis layer's errors), ``userio`` (reading
user input safely), ``fixtures`` (built-in conversations and tools) and
``disk_cache`` (compiled templates and analyses kept across runs).  Each layer
package names its public API in ``__all__``.  The library never prints.
"""
