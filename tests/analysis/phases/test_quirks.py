"""Family quirks are declared in one table (analysis.phases.quirks): no other
generic module names a family's marker, and each quirk does what it says."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analysis.phases.quirks import END_OF_MESSAGE, OPENS_A_TURN, PYTHON_TAG, QUIRKS, quirk_named

ANALYSIS = Path(__file__).resolve().parents[3] / "analysis"
#: where a family's markers belong: the table, the analysis patches, the handlers, the lint rules' own conversations
OWNERS = ("phases/quirks.py", "phases/workarounds.py", "parsers/handlers/", "lint/", "fixtures.py")


def _literals(path: Path) -> list[str]:
    return [n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


@pytest.mark.parametrize("quirk", QUIRKS, ids=[q.name for q in QUIRKS])
def test_no_generic_module_names_a_quirk_marker(quirk) -> None:  # type: ignore[no-untyped-def]
    found = [
        str(path.relative_to(ANALYSIS))
        for path in sorted(ANALYSIS.rglob("*.py"))
        if not any(str(path.relative_to(ANALYSIS)).startswith(owner) for owner in OWNERS)
        and any(quirk.marker in text for text in _literals(path))
    ]
    assert found == []


def test_the_table_names_each_quirk_once() -> None:
    assert len({q.name for q in QUIRKS}) == len(QUIRKS)
    assert quirk_named("python-tag") is PYTHON_TAG and quirk_named("end-of-message") is END_OF_MESSAGE
    with pytest.raises(KeyError):
        quirk_named("nothing")


def test_a_marker_named_for_opening_opens_a_turn() -> None:
    assert OPENS_A_TURN.search("<|start_header_id|>") and OPENS_A_TURN.search("<|BEGIN_OF_TURN|>")
    assert not OPENS_A_TURN.search("<|eot_id|>")


def test_the_python_tag_before_a_marker_less_json_call_is_read(tmp_path: Path) -> None:
    """Declared, and read: a Llama-3-style template (JSON calls, no marker)."""
    from analysis.generation import auto_parser
    from analysis.parsers import ChatRequest
    from analysis.template import load_template
    from tests.conftest import WEATHER_TOOLS

    source = tmp_path / "llama.jinja"
    source.write_text(
        "{% for m in messages %}<|start|>{{ m.role }}\n"
        "{% if m.tool_calls %}{% for c in m.tool_calls %}"
        '{"name": "{{ c.function.name }}", "parameters": {{ c.function.arguments | tojson }}}'
        "{% endfor %}{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<|start|>assistant\n{% endif %}"
    )
    parser = auto_parser(load_template(source))
    generated = parser.generate(ChatRequest([{"role": "user", "content": "hi"}], tools=WEATHER_TOOLS))
    outcome = generated.parse(PYTHON_TAG.marker + '{"name": "get_weather", "parameters": {"city": "Paris"}}')
    assert outcome.ok and [c.name for c in outcome.message.tool_calls] == ["get_weather"]
    assert not outcome.message.content
