"""A traced render notes the template line that wrote each piece of its text."""

from __future__ import annotations

from analysis.template import ChatTemplate, LoadedTemplate
from analysis.template.rendering import RenderRequest

SOURCE = "{%- for m in messages -%}\n<{{ m.role }}>\n{{- m.content -}}\n{%- endfor -%}\n{%- if add_generation_prompt %}\n<assistant>{% endif -%}"
USER = [{"role": "user", "content": "hi"}]


def test_each_piece_of_a_traced_render_names_its_line() -> None:
    template = ChatTemplate(LoadedTemplate("t.jinja", SOURCE))
    attempt = template.attempt(RenderRequest(USER, add_generation_prompt=True), trace=True)
    text = attempt.text or ""
    assert text == "<user>hi<assistant>"
    lines = attempt.notes.line_at
    # (template text, and a constant output, is named by its own line, not the statement before it)
    assert (lines(text.index("user")), lines(text.index("hi")), lines(text.index("<assistant>"))) == (2, 3, 6)


def test_an_untraced_render_notes_no_lines_and_a_raise_keeps_its_line() -> None:
    template = ChatTemplate(LoadedTemplate("t.jinja", SOURCE))
    assert template.attempt(RenderRequest(USER)).notes.lines == ()
    raising = ChatTemplate(LoadedTemplate("r.jinja", "ok\n{{ raise_exception('no') }}"))
    failed = raising.attempt(RenderRequest(USER), trace=True)
    assert failed.text is None and failed.error is not None and failed.error.line == 2
