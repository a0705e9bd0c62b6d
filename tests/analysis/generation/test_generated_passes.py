"""How many passes ``Generated.parse`` makes (its docstring says why):
one on well-formed output, never more than five."""

from __future__ import annotations

import pytest

import analysis.generation.generated as generated_module
from analysis.generation import auto_parser
from analysis.parsers import ChatRequest
from analysis.template import load_template
from tests.conftest import PROJECT_TEMPLATES, WEATHER_TOOLS

TAGGED = PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"
CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"


def _passes(output: str, monkeypatch: pytest.MonkeyPatch, partial: bool = False) -> int:
    generated = auto_parser(load_template(TAGGED)).generate(ChatRequest([{"role": "user", "content": "hi"}], tools=WEATHER_TOOLS))
    count = 0
    real = generated_module.parse

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal count
        count += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(generated_module, "parse", counting)
    generated.parse(output, partial=partial)
    return count


@pytest.mark.parametrize("output", ["Just text.", "Let me check.\n" + CALL, CALL + "\n" + CALL, "Done: " + CALL + " ok"])
def test_well_formed_output_is_read_in_one_pass(output: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _passes(output, monkeypatch) == 1
    assert _passes(output[: len(output) // 2], monkeypatch, partial=True) == 1


@pytest.mark.parametrize(
    "output",
    [
        "Quoting `<tool_call>` in prose, then " + CALL,  # a marker in text that is prose
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar",  # cut short inside a call
        "<tool_call>\n<function=\n</tool_call>",  # a block that does not read
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call> and `<tool_call>`",
    ],
)
def test_an_output_that_does_not_read_as_it_stands_takes_at_most_five_passes(output: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert 1 < _passes(output, monkeypatch) <= 5  # (more than one: each is explained)
