"""The README's library example runs as written."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_the_readme_library_example_runs(capsys) -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "README.md", "exec"), {})  # its asserts check the outcome
    assert capsys.readouterr().out.strip() == "True ['<tool_call>']"
