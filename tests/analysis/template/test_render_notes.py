"""What a render notices that lint reads: the variables read but not set,
the ``{% generation %}`` blocks rendered, and the tokenizer's BOS setting."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.template import ChatTemplate, LoadedTemplate, load_template
from analysis.template.rendering import RenderRequest

USER = [{"role": "user", "content": "hi"}]


def _attempt(source: str, messages: list[dict[str, str]] = USER):  # type: ignore[no-untyped-def]
    return ChatTemplate(LoadedTemplate("t.jinja", source)).attempt(RenderRequest(messages))


def test_variables_read_but_not_set_are_noted() -> None:
    notes = _attempt("{% if enable_thinking is defined %}x{% endif %}{{ reasoning_effort or 'low' }}{{ messages[0].content }}").notes
    assert notes.read_unset == ("enable_thinking", "reasoning_effort")  # (messages is set: not noted)


def test_a_set_variable_is_not_noted() -> None:
    attempt = ChatTemplate(LoadedTemplate("t.jinja", "{{ enable_thinking }}")).attempt(RenderRequest(USER, enable_thinking=True))
    assert attempt.text == "True" and attempt.notes.read_unset == ()


def test_a_render_that_raises_still_says_what_it_read() -> None:
    attempt = _attempt("{{ thinking }}{{ raise_exception('no') }}")
    assert attempt.text is None and attempt.error is not None and "no" in str(attempt.error)
    assert attempt.notes.read_unset == ("thinking",)


def test_generation_blocks_are_counted_and_write_nothing_of_their_own() -> None:
    source = "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% endif %}{% endfor %}"
    attempt = _attempt(source, [*USER, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}])
    assert attempt.text == "ab" and attempt.notes.generation_blocks == 2
    assert _attempt(source).notes.generation_blocks == 0


def test_add_bos_token_is_read_from_a_tokenizer_config_and_a_model_folder(tmp_path: Path) -> None:
    config = {"chat_template": "{{ bos_token }}x", "bos_token": "<s>", "add_bos_token": True}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    assert load_template(tmp_path / "tokenizer_config.json").add_bos_token is True
    assert load_template(tmp_path).add_bos_token is True
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({**config, "add_bos_token": "yes"}))
    assert load_template(tmp_path).add_bos_token is None  # (not a boolean: the source does not say)
    (tmp_path / "t.jinja").write_text("x")
    assert load_template(tmp_path / "t.jinja").add_bos_token is None
