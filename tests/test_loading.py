"""Loading templates from every supported source, and the bad-input paths."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis.errors import TemplateLoadError
from analysis.template.loading import load_source, load_template
from tests.cli_helpers import assert_clean_error, run_cli

SIMPLE = "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}{{ eos_token }}"
TOOL = "TOOLS{% for m in messages %}{{ m.content }}{% endfor %}"


def test_jinja_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jinja"
    path.write_text(SIMPLE)
    loaded = load_template(path)
    assert loaded.source == SIMPLE
    assert loaded.name == "t.jinja"


def test_tokenizer_config_string_and_added_tokens(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer_config.json"
    path.write_text(
        json.dumps(
            {
                "chat_template": SIMPLE,
                "bos_token": {"content": "<s>", "lstrip": False},
                "eos_token": "</s>",
            }
        )
    )
    loaded = load_template(path)
    assert (loaded.bos_token, loaded.eos_token) == ("<s>", "</s>")


def test_tokenizer_config_named_list_prefers_tool_use_with_tools(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer_config.json"
    path.write_text(
        json.dumps(
            {"chat_template": [{"name": "default", "template": SIMPLE}, {"name": "tool_use", "template": TOOL}]}
        )
    )
    assert load_template(path).source == SIMPLE
    assert load_template(path, has_tools=True).source == TOOL
    assert load_template(path, variant="tool_use").source == TOOL
    with pytest.raises(TemplateLoadError, match="no template variant 'rag'"):
        load_template(path, variant="rag")


def test_folder_prefers_separate_files(tmp_path: Path) -> None:
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": "OLD", "bos_token": "<s>", "eos_token": "</s>"})
    )
    (tmp_path / "chat_template.json").write_text(json.dumps({"chat_template": "FROM_JSON"}))
    assert load_template(tmp_path).source == "FROM_JSON"
    (tmp_path / "chat_template.jinja").write_text("FROM_JINJA")
    loaded = load_template(tmp_path)
    assert loaded.source == "FROM_JINJA"
    assert loaded.bos_token == "<s>"


def _write_gguf(path: Path, template: str | None, named: dict[str, str] | None = None) -> None:
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    if template is not None:
        writer.add_string("tokenizer.chat_template", template)
    for name, text in (named or {}).items():
        writer.add_string(f"tokenizer.chat_template.{name}", text)
    writer.add_token_list(["<unk>", "<s>", "</s>"])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_tensor("dummy", np.zeros((2,), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_gguf_metadata(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    _write_gguf(path, SIMPLE, {"tool_use": TOOL})
    source = load_source(path)
    assert set(source.variants) == {"default", "tool_use"}
    assert (source.bos_token, source.eos_token) == ("<s>", "</s>")
    assert load_template(path, has_tools=True).source == TOOL


def test_gguf_without_template(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    _write_gguf(path, None)
    with pytest.raises(TemplateLoadError, match=r"no tokenizer\.chat_template"):
        load_source(path)


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("missing.jinja", None, "no such file"),
        ("tokenizer_config.json", "{not json", "invalid JSON at line 1"),
        ("tokenizer_config.json", json.dumps({"bos_token": "<s>"}), "no 'chat_template'"),
        ("chat_template.json", json.dumps({"chat_template": 42}), "no chat template inside"),
        ("model.gguf", "this is not a gguf file", "not a GGUF file"),
        ("weights.bin", "x", "unsupported source"),
    ],
)
def test_bad_sources_exit_2_with_one_line(tmp_path: Path, name: str, content: str | None, expected: str) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    err = assert_clean_error(run_cli("render", str(path)))
    assert expected in err
    assert name in err


def test_unknown_variant_cli(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps({"chat_template": [{"name": "default", "template": SIMPLE}]}))
    err = assert_clean_error(run_cli("caps", str(path), "--variant", "nope"))
    assert "no template variant 'nope'" in err


def test_empty_folder(tmp_path: Path) -> None:
    err = assert_clean_error(run_cli("render", str(tmp_path)))
    assert "no chat template in folder" in err


def test_bad_messages_file_is_one_line_error(tmp_path: Path) -> None:
    messages = tmp_path / "m.json"
    messages.write_text("[{")
    err = assert_clean_error(run_cli("render", "--messages", str(messages)))
    assert "m.json (messages): invalid JSON at line 1" in err
    err = assert_clean_error(run_cli("render", "--messages", str(tmp_path / "nope.json")))
    assert "nope.json: no such file" in err
