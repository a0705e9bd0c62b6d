"""SOURCE as a Hugging Face Hub repository id, read from a local cache (no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.errors import TemplateLoadError
from analysis.template.loading import HUB_REPO, load_hub
from tests.conftest import PROJECT_TEMPLATES, ROOT

pytest.importorskip("huggingface_hub")

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def _cache(tmp_path: Path) -> Path:
    """A hub cache holding org/model at two revisions: main (a .jinja and a
    tokenizer_config) and v1 (a tokenizer_config only)."""
    cache = tmp_path / "hub"
    repo = cache / "models--org--model"
    main = repo / "snapshots" / COMMIT
    main.mkdir(parents=True)
    (main / "chat_template.jinja").write_text((PROJECT_TEMPLATES / "demo.jinja").read_text())
    (main / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|im_end|>"}))
    v1 = repo / "snapshots" / OTHER
    v1.mkdir(parents=True)
    (v1 / "tokenizer_config.json").write_text(json.dumps({"chat_template": "V1 {{ messages[0].content }}"}))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    (repo / "refs" / "v1").write_text(OTHER)
    return cache


def test_repo_ids_are_recognised() -> None:
    assert HUB_REPO.match("Qwen/Qwen3-8B")["repo"] == "Qwen/Qwen3-8B"
    assert HUB_REPO.match("Qwen/Qwen3-8B@refs/pr/1")["revision"] == "refs/pr/1"
    for local_looking in ("model.jinja", "a/b/c", "./x/y", "/abs/path"):
        assert not HUB_REPO.match(local_looking), local_looking


def test_load_from_the_cache_at_a_revision(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    main = load_hub("org/model", cache_dir=cache, local_files_only=True)
    assert main.origin == "org/model" and main.eos_token == "<|im_end|>"
    assert main.pick().source == (PROJECT_TEMPLATES / "demo.jinja").read_text()
    v1 = load_hub("org/model", "v1", cache_dir=cache, local_files_only=True)
    assert v1.origin == "org/model@v1" and v1.pick().source.startswith("V1 ")


def test_not_cached_offline_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TemplateLoadError, match="org/missing: cannot read it from the Hugging Face Hub"):
        load_hub("org/missing", cache_dir=_cache(tmp_path), local_files_only=True)


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HF_HUB_CACHE=str(_cache(tmp_path)), HF_HUB_OFFLINE="1")
    return subprocess.run(
        [sys.executable, "-m", "autoparser_cli.main", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )


@pytest.mark.slow  # (a Python run of its own: not the fast loop's)
def test_cli_reads_a_repo_id_through_the_users_cache(tmp_path: Path) -> None:
    result = _cli(tmp_path, "render", "org/model@v1", "--messages", str(_messages(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "V1 hello"


@pytest.mark.slow  # (a Python run of its own: not the fast loop's)
def test_cli_repo_not_in_the_offline_cache(tmp_path: Path) -> None:
    result = _cli(tmp_path, "analyze", "org/other")
    assert result.returncode == 2
    assert result.stderr.startswith("error: org/other: cannot read it from the Hugging Face Hub")
    assert len(result.stderr.strip().splitlines()) == 1


def _messages(tmp_path: Path) -> Path:
    path = tmp_path / "m.json"
    path.write_text(json.dumps([{"role": "user", "content": "hello"}]))
    return path
