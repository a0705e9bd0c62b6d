"""What a dedicated format adds to the generic reading of parse trees.

The mapper (a whole message) and the stream parser (deltas) read the generic
captures of :mod:`analysis.messages.tags` the same way for every format.  A format with
captures of its own declares how to read them here, in an :class:`OutputHooks`
that its handler carries, and both readers use the same hooks:

- ``value_decoders``: value captures of its own (Gemma 4's ``<|"|>`` strings),
  each with its decoder ``(text, complete) -> JSON text``; the inside of such
  a string streams as its JSON escape;
- ``names``: how the format's names (a call's function, an argument's key)
  read, as written (Kimi K3 escapes them as XML attributes: ``&amp;``);
- ``message_tags``, ``body_tag`` and ``route``: captures that are whole
  messages of their own shape (harmony's), the capture of a message's body,
  and where a message's body goes (:class:`Route`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from analysis.messages.tags import CONTENT
from peg.engine import TagNode

#: a :class:`Route` field for a message that is not part of the reply
DROP = "drop"


@dataclass(frozen=True)
class Route:
    """Where one message-shaped capture goes.

    ``field`` is ``CONTENT``, ``REASONING``, ``TOOL_ARGS`` (a call to
    ``call_name``; shown once ``name_complete``) or :data:`DROP`; ``text`` is
    the node whose text goes there (the body, or the whole message when its
    markup stays in the content); None while the message's header is still
    being written."""

    field: str
    text: TagNode | None
    call_name: str = ""
    name_complete: bool = True


@dataclass(frozen=True)
class OutputHooks:
    """A format's own captures and how to read them (see the module docstring)."""

    value_decoders: Mapping[str, Callable[[str, bool], str]] = field(default_factory=lambda: MappingProxyType({}))
    #: a name as written -> the name
    names: Callable[[str], str] = str
    message_tags: tuple[str, ...] = ()
    body_tag: str = ""
    #: ``route(message, keep_reasoning_in_content)``
    route: Callable[[TagNode, bool], Route] = lambda node, keep: Route(CONTENT, node)


#: the hooks of a format with only the generic captures
GENERIC = OutputHooks()
