"""peg.validate: left recursion and shadowed alternatives, found in constructed
parsers and in none of the parsers the project builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.checks.round_trip import TYPED_TOOL
from analysis.fixtures import WEATHER_TOOL
from analysis.generation.generator import auto_parser
from analysis.parsers.request import ChatRequest
from analysis.template.loading import load_template
from peg import combinators as p
from peg.validate import problems
from tests.conftest import PROJECT_TEMPLATES, zoo_templates


def test_left_recursion_is_found() -> None:
    r = p.rule("r")
    r.body = p.choice(p.seq(p.Ref(r), p.literal("a")), p.literal("b"))
    assert problems(r) == ["left recursion: rule r reaches itself before consuming input"]


def test_recursion_after_input_is_not_left_recursion() -> None:
    nested = p.rule("list")
    nested.body = p.seq(p.literal("["), p.optional(p.Ref(nested)), p.literal("]"))
    assert problems(nested) == []


def test_recursion_behind_a_nullable_item_is_left_recursion() -> None:
    r = p.rule("r")
    r.body = p.seq(p.optional(p.literal("x")), p.Ref(r))
    assert problems(r) == ["left recursion: rule r reaches itself before consuming input"]


@pytest.mark.parametrize(
    "choice, shadowed",
    [
        (p.choice(p.literal("a"), p.literal("ab")), "'ab' comes after its prefix 'a'"),
        (p.choice(p.zero_or_more(p.literal("a")), p.literal("b")), "Literal(b) comes after"),
        (p.choice(p.eps(), p.literal("b")), "Literal(b) comes after Eps"),
    ],
)
def test_shadowed_alternatives_are_found(choice: p.Parser, shadowed: str) -> None:
    found = problems(choice)
    assert len(found) == 1 and shadowed in found[0]


def test_longer_literals_first_shadow_nothing() -> None:
    assert problems(p.choice(p.literal("ab"), p.literal("a"), p.seq(p.literal("c"), p.optional(p.literal("d"))))) == []


def _templates() -> list[Path]:
    own = sorted(PROJECT_TEMPLATES.rglob("*.jinja"))
    return [t for t in zoo_templates() + own if t.name != "picky.jinja"]  # (picky needs a system turn)


@pytest.mark.slow
@pytest.mark.parametrize("path", _templates(), ids=lambda t: t.name)
def test_no_parser_the_project_builds_has_a_problem(path: Path) -> None:
    """The parsing parser and the strict one the grammar is made from, with and without tools."""
    parser = auto_parser(load_template(path, has_tools=True))
    for request in (
        {"messages": [{"role": "user", "content": "x"}], "tools": [WEATHER_TOOL, TYPED_TOOL], "parallel_tool_calls": True},
        {"messages": [{"role": "user", "content": "x"}]},
    ):
        generated = parser.generate(ChatRequest.from_json(request))
        for built in (generated.built, generated._built_for_grammar):
            assert problems(built.parser) == [], path.name
