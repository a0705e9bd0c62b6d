"""One memoized renderer (RenderMemo) serves the analysis's probes and the lint
rules: each distinct request renders once, a template's error is data, and a
sandbox limit is raised every time, never remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.errors import RenderLimitError, TemplateRenderError
from analysis.lint.conversations import Renderer
from analysis.probing.caps import Capabilities
from analysis.probing.probes import Prober
from analysis.template import ChatTemplate, load_template
from analysis.template.rendering import RenderMemo, RenderRequest

USER = [{"role": "user", "content": "hi"}]


def _template(tmp_path: Path, source: str) -> ChatTemplate:
    path = tmp_path / "t.jinja"
    path.write_text(source)
    return ChatTemplate(load_template(path))


def _counting(template: ChatTemplate, monkeypatch: pytest.MonkeyPatch) -> list[RenderRequest]:
    calls: list[RenderRequest] = []
    real = template.attempt

    def attempt(request: RenderRequest, strict_undefined_json: bool = False, trace: bool = False):  # type: ignore[no-untyped-def]
        calls.append(request)
        return real(request, strict_undefined_json, trace)

    monkeypatch.setattr(template, "attempt", attempt)
    return calls


def test_each_distinct_request_renders_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    template = _template(tmp_path, "{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}>{% endif %}")
    calls = _counting(template, monkeypatch)
    memo = RenderMemo(template)
    first = memo.attempt(RenderRequest(USER, add_generation_prompt=True))
    again = memo.attempt(RenderRequest([dict(m) for m in USER], add_generation_prompt=True))  # an equal request
    other = memo.attempt(RenderRequest(USER, add_generation_prompt=False))
    assert (first.text, again.text, other.text) == ("hi>", "hi>", "hi")
    assert len(calls) == 2


def test_a_template_error_is_data_the_prober_raises_and_lint_keeps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    template = _template(tmp_path, "{{ raise_exception('no users here') }}")
    calls = _counting(template, monkeypatch)
    attempt = RenderMemo(template).attempt(RenderRequest(USER))
    assert attempt.text is None and isinstance(attempt.error, TemplateRenderError)
    prober = Prober(template, Capabilities())
    for _ in range(2):
        with pytest.raises(TemplateRenderError):
            prober.render(RenderRequest(USER))
    renderer = Renderer(template)
    assert [renderer.render(USER).error for _ in range(2)] == ["no users here"] * 2
    assert len(calls) == 3  # once for the memo, once for the prober, once for lint


def test_a_sandbox_limit_is_raised_each_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    template = _template(tmp_path, "x")
    tries = 0

    def over(request: RenderRequest, strict_undefined_json: bool = False):  # type: ignore[no-untyped-def]
        nonlocal tries
        tries += 1
        raise RenderLimitError("over the limit", "t.jinja")

    monkeypatch.setattr(template, "attempt", over)
    memo = RenderMemo(template)
    for _ in range(2):
        with pytest.raises(RenderLimitError):
            memo.attempt(RenderRequest(USER))
    assert tries == 2
