"""What a new user hit on a fresh clone, round 2 (issue 45): a template that
recursed, closed pipes, options given beside nothing they act on, empty
templates, carets under wide characters, lock drift, ..."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import PROJECT_TEMPLATES, ZOO, needs_shared

DEMO = PROJECT_TEMPLATES / "demo.jinja"
TAGGED = PROJECT_TEMPLATES / "tests" / "tagged_xml.jinja"

#: a Python-typed tool, as users write them ("str" is no JSON Schema type)
STR_TOOL = {
    "type": "function",
    "function": {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {"a": {"type": "str", "description": "x"}}}},
}

#: Hermes 2 Pro's json_to_python_type in short: a type it does not map is iterated, as a union
RECURSING = """{%- macro py_type(spec) %}
{%- if spec.type == "string" %}str
{%- elif spec.type is iterable %}
{%- for t in spec.type %}{{ py_type({"type": t}) }}{% endfor %}
{%- endif %}
{%- endmacro %}
{%- for tool in tools or [] %}{% for name, p in tool.function.parameters.properties.items() %}{{ name }}: {{ py_type(p) }}
{% endfor %}{% endfor %}
{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}
{%- if add_generation_prompt %}<|assistant|>{% endif %}"""


def test_a_template_that_recurses_on_the_request_says_so_with_its_macro_and_line(tmp_path: Path) -> None:
    template, tools = tmp_path / "recursing.jinja", tmp_path / "tools.json"
    template.write_text(RECURSING)
    tools.write_text(json.dumps([STR_TOOL]))
    err = assert_clean_error(run_cli("render", str(template), "--tools", str(tools)))
    assert err.splitlines() == ["error: recursing.jinja:4: the template recursed without end on this request: macro py_type calls itself"]


@needs_shared
def test_hermes_2_pro_recursing_on_a_str_type_names_its_macro(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([STR_TOOL]))
    template = ZOO / "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"
    err = assert_clean_error(run_cli("parse", "--template", str(template), "--tools", str(tools), "-", input="Hi"))
    assert ":22: the template recursed without end on this request: macro json_to_python_type calls itself" in err


def _run_into_closed_pipe(*args: str) -> tuple[int, str]:
    """Run ``autoparser ARGS`` with stdout a pipe whose reader is already gone
    (``| head -1`` once head has exited): its exit status and stderr."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "autoparser_cli", *args], stdout=write_end, stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(write_end)
    return done.returncode, done.stderr


def test_a_closed_pipe_is_quiet_and_exits_0() -> None:
    for args in (["analyze", str(TAGGED)], ["analyze", str(TAGGED), "--json"], ["caps", str(DEMO)]):
        code, err = _run_into_closed_pipe(*args)
        assert (code, err) in ((0, ""), (-13, "")), (args, code, err)  # (-13: ended by SIGPIPE, 141 in a shell)
