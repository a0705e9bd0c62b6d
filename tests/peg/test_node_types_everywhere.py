"""Every parser node type is handled wherever the code dispatches on node
types: the engine, the GBNF writer, the validator's nullable test, and every
walk (``children()`` returns every sub-parser a node holds).  A new node type
fails here until each of them knows it.  (The CLI's tree labels fall back to
the type's name for any node, and the stream's fast paths take only the
primitives that can run out of input, ``until``, ``rest`` and JSON, by design.)"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from peg import combinators as c
from peg import engine, gbnf_writer, validate

NODE_TYPES = {t for t in vars(c).values() if isinstance(t, type) and issubclass(t, c.Parser) and t is not c.Parser}

_LIT = c.Literal("a")
_RULE = c.Rule("r", _LIT)
EXAMPLES: dict[type, c.Parser] = {
    c.Literal: _LIT,
    c.CharClass: c.CharClass((("a", "z"),)),
    c.Sequence: c.Sequence((_LIT, c.Literal("b"))),
    c.Choice: c.Choice((_LIT, c.Literal("b"))),
    c.Repetition: c.Repetition(_LIT),
    c.Until: c.Until(("x",), then=c.Literal("x"), repairs=("y",), repair_then=c.Literal("y")),
    c.Rest: c.Rest(),
    c.Space: c.Space(),
    c.Eps: c.Eps(),
    c.End: c.End(),
    c.Peek: c.Peek(_LIT),
    c.Not: c.Not(_LIT),
    c.Atomic: c.Atomic(_LIT),
    c.Tag: c.Tag("t", _LIT),
    c.Json: c.Json(),
    c.Schema: c.Schema(_LIT, "s", {"type": "string"}),
    c.Rule: _RULE,
    c.Ref: c.Ref(_RULE),
}


def _isinstance_names(function: Callable[..., Any]) -> set[str]:
    """The class names a function tests with ``isinstance``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(function)))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            kinds = node.args[1]
            for kind in kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]:
                if isinstance(kind, ast.Name):
                    names.add(kind.id)
    return names


def test_every_node_type_has_an_example() -> None:
    assert set(EXAMPLES) == NODE_TYPES


def test_the_engine_parses_every_node_type() -> None:
    assert set(engine._DISPATCH) == NODE_TYPES


@pytest.mark.parametrize(
    "function", [gbnf_writer.GbnfWriter.expr, validate._Nullable._decide], ids=["gbnf_writer", "validate.nullable"]
)
def test_each_dispatcher_names_every_node_type(function: Callable[..., Any]) -> None:
    assert _isinstance_names(function) == {t.__name__ for t in NODE_TYPES}


@pytest.mark.parametrize("kind", sorted(NODE_TYPES, key=lambda t: t.__name__), ids=lambda t: t.__name__)
def test_children_are_every_sub_parser_a_node_holds(kind: type) -> None:
    node = EXAMPLES[kind]
    held: list[c.Parser] = []
    for field in dataclasses.fields(node):
        value = getattr(node, field.name)
        values = value if isinstance(value, tuple) else (value,)
        held.extend(v for v in values if isinstance(v, c.Parser))
    if kind is c.Ref:
        assert node.children() == () and validate._children(node) == (_RULE,)  # (a reference is followed by the walks, not a child)
        return
    assert list(node.children()) == held


@pytest.mark.parametrize("kind", sorted(NODE_TYPES, key=lambda t: t.__name__), ids=lambda t: t.__name__)
def test_every_node_type_parses_writes_gbnf_and_validates(kind: type) -> None:
    root = c.Rule("root", c.Sequence((EXAMPLES[kind], c.Rest())))
    assert engine.parse(root, "abc", partial=True) is not None
    assert "root ::=" in gbnf_writer.to_gbnf(root)
    assert isinstance(validate.problems(root), list)
    assert EXAMPLES[kind].dump()
