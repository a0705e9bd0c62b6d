"""The capture tags: the contract between the parsers that generation builds
(``analysis.parsers.builder`` and the dedicated handlers) and the code that
reads their parse trees (``mapper`` for a message, ``streaming`` for deltas,
the checks).

A parser marks what it reads with ``peg.combinators.tag(NAME, parser)``, or
with the helper of the same name (``tags.tool_name(parser)``, as llama.cpp's
builder writes ``p.tool_name(...)``); the readers find those nodes by the same
names.  Every name is here, once.

    CONTENT            reply text
    REASONING          reasoning text (inside a REASONING_BLOCK)
    REASONING_BLOCK    a whole reasoning block, markers included
    REASONING_UNOPENED a reasoning block written without its opener (``plan</think>``): shown once its end marker comes
    CALLS_HELD         a block of calls that reads only as a whole (a pythonic list): its calls shown once it is complete
    TOOL               one call; holds TOOL_NAME, TOOL_ID, and TOOL_ARGS or TOOL_ARGs
    TOOL_NAME          the function's name
    TOOL_ID            the call's id as written
    TOOL_ARGS          the arguments as raw JSON text
    TOOL_ARGS_UNREAD   inside TOOL_ARGS: arguments kept as written, as no JSON reads there (never a finished call's)
    TOOL_ARG           one tagged argument: TOOL_ARG_NAME and one value capture
    TOOL_ARG_NAME      the argument's name
    TOOL_ARG_STRING    a value that is text (trimmed of one newline at each end, escaped)
    TOOL_ARG_JSON      a value that is JSON text (text when it is not JSON)
    TOOL_ARG_RAW       a value that is text, kept as written (escaped)
    TOOL_ARG_PY        a Python literal (True, None, 'single quotes')
    TOOL_ARG_PY_STRING the inside of a Python string, between its quotes (escapes decoded; a quote in it is text)
    TOOL_ARG_ENCODED   a JSON string holding the JSON of an object or array (GLM's double-escaped arguments)
    TOOL_ARG_TYPED     a value read by its schema's type, which may still turn out to be text: shown once complete

A dedicated format's own captures are named in its handler module (harmony's
messages, Gemma 4's values), which tells the readers how to read them
through its ``OutputHooks``.
"""

from __future__ import annotations

from peg import combinators as p
from peg.combinators import Parser

CONTENT = "content"
#: reply text shown only once complete (the turn's text a section opener holds,
#: Llama 4's ``<|python_start|>…<|python_end|>``: until a call reads after it, it may be prose)
CONTENT_HELD = "content-held"
#: a block of calls that reads only as a whole (LFM2's ``<|tool_call_start|>[a(), b()]<|tool_call_end|>``):
#: a stream shows its calls once the block is complete, as a list broken after a call is text, that call included
CALLS_HELD = "calls-held"
REASONING = "reasoning"
REASONING_BLOCK = "reasoning-block"
REASONING_UNOPENED = "reasoning-unopened"
TOOL = "tool"
TOOL_NAME = "tool-name"
TOOL_ID = "tool-id"
TOOL_ARGS = "tool-args"
TOOL_ARGS_UNREAD = "tool-args-unread"
TOOL_ARG = "tool-arg"
TOOL_ARG_NAME = "tool-arg-name"
TOOL_ARG_STRING = "tool-arg-string"
TOOL_ARG_JSON = "tool-arg-json"
TOOL_ARG_RAW = "tool-arg-raw"
TOOL_ARG_PY = "tool-arg-py"
TOOL_ARG_PY_STRING = "tool-arg-py-string"
TOOL_ARG_ENCODED = "tool-arg-encoded"
TOOL_ARG_TYPED = "tool-arg-typed"


def content(item: Parser) -> Parser:
    """``item`` read as reply text."""
    return p.tag(CONTENT, item)


def calls_held(item: Parser) -> Parser:
    """``item``, a block of calls shown once complete (see :data:`CALLS_HELD`)."""
    return p.tag(CALLS_HELD, item)


def content_held(item: Parser) -> Parser:
    """``item`` read as reply text, shown once complete (see :data:`CONTENT_HELD`)."""
    return p.tag(CONTENT_HELD, item)


def reasoning(item: Parser) -> Parser:
    """``item`` read as reasoning text."""
    return p.tag(REASONING, item)


def reasoning_block(item: Parser) -> Parser:
    """``item`` read as a whole reasoning block (markers included)."""
    return p.tag(REASONING_BLOCK, item)


def tool(item: Parser) -> Parser:
    """``item`` read as one tool call."""
    return p.tag(TOOL, item)


def tool_name(item: Parser) -> Parser:
    """``item`` read as a call's function name."""
    return p.tag(TOOL_NAME, item)


def tool_id(item: Parser) -> Parser:
    """``item`` read as a call's id."""
    return p.tag(TOOL_ID, item)


def tool_args(item: Parser) -> Parser:
    """``item`` read as a call's arguments, raw JSON text."""
    return p.tag(TOOL_ARGS, item)
