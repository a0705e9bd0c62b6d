"""Loading templates from every supported source, and the bad-input paths."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from analysis.errors import TemplateLoadError
from analysis.template.loading import load_source, load_template
from peg.errors import AutoparserError
from tests.cli_helpers import assert_clean_error, run_cli
from tests.conftest import needs_gguf

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
    import numpy as np

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


@needs_gguf
def test_gguf_metadata(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    _write_gguf(path, SIMPLE, {"tool_use": TOOL})
    source = load_source(path)
    assert set(source.variants) == {"default", "tool_use"}
    assert (source.bos_token, source.eos_token) == ("<s>", "</s>")
    assert load_template(path, has_tools=True).source == TOOL


@needs_gguf
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
        pytest.param("model.gguf", "this is not a gguf file", "not a GGUF file", marks=needs_gguf),
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


def _header(pairs: int, tensors: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, tensors, pairs)


def _key(name: str) -> bytes:
    return struct.pack("<Q", len(name)) + name.encode()


@pytest.mark.parametrize(
    "body, where",
    [
        # an array of 2^40 uint32 in a file of a few hundred bytes
        (_header(1) + _key("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 4, 1 << 40), "declares 1,099,511,627,776 items"),
        # an array of 2^40 strings
        (_header(1) + _key("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 1 << 40), "declares 1,099,511,627,776 items"),
        # a string of 2^60 bytes
        (_header(1) + _key("tokenizer.chat_template") + struct.pack("<IQ", 8, 1 << 60), "declares"),
        # 2^50 metadata pairs
        (_header(1 << 50), "the metadata declares"),
        # a tensor of 2^31 dimensions
        (_header(0, 1) + _key("t") + struct.pack("<I", 1 << 31), "dimensions"),
        (b"GGUF" + struct.pack("<I", 1), "GGUF version 1"),
    ],
)
def test_a_gguf_whose_counts_do_not_fit_is_refused_before_allocating(tmp_path: Path, body: bytes, where: str) -> None:
    """Every declared count times its items' smallest size is checked against
    the bytes left: a 262-byte file declaring 2^40 items fails in one line
    (it took 1.9 GB, then a MemoryError or a segfault)."""
    pytest.importorskip("gguf")
    import resource

    path = tmp_path / "hostile.gguf"
    path.write_bytes(body + b"\0" * 200)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TemplateLoadError, match=where):
        load_template(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KB: nothing large allocated


def test_a_fifo_or_device_is_refused_before_reading(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe.jinja"
    os.mkfifo(fifo)
    for source in (fifo, Path("/dev/zero")):
        with pytest.raises(AutoparserError, match="not a regular file"):
            load_template(source)
