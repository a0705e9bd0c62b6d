"""The disk cache of compiled templates and analyses (analysis.disk_cache)."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import disk_cache
from analysis.errors import TemplateSyntaxError
from analysis.generation.analysis_cache import _CACHE, cached_analysis
from analysis.generation.analyzer import analyze_template
from analysis.template.loading import load_template
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate
from analysis.template.sandbox import RenderLimits, compile_template
from tests.cli_helpers import run_cli
from tests.conftest import PROJECT_TEMPLATES, ROOT

QWEN_LIKE = PROJECT_TEMPLATES / "demo.jinja"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A fresh, empty cache folder for one test (and no in-memory analyses)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(disk_cache.ENV_DIR, str(folder))
    monkeypatch.delenv(disk_cache.ENV_OFF, raising=False)
    monkeypatch.setattr(disk_cache, "_enabled", True)
    _CACHE.clear()
    yield folder
    _CACHE.clear()


def _entries(folder: Path, kind: str) -> list[Path]:
    return sorted(p for p in (folder / kind).glob("*") if not p.name.startswith(".tmp-")) if (folder / kind).is_dir() else []


def test_compile_stores_code_and_a_second_compile_renders_the_same(cache):
    source = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    first = compile_template(source, "t", RenderLimits(), disk_cache.cache_dir())
    assert len(_entries(cache, "code")) == 1
    second = compile_template(source, "t", RenderLimits(), disk_cache.cache_dir())
    variables = {"messages": [{"role": "user", "content": "hi"}]}
    assert first.template.render(**variables) == second.template.render(**variables) == "<user>hi"
    # a different source is a different entry
    compile_template(source + "!", "t", RenderLimits(), disk_cache.cache_dir())
    assert len(_entries(cache, "code")) == 2


def test_a_failed_compile_is_not_stored_and_still_fails(cache):
    for _ in range(2):
        with pytest.raises(TemplateSyntaxError):
            compile_template("{% if %}", "t", RenderLimits(), disk_cache.cache_dir())
    assert _entries(cache, "code") == []


def test_the_nesting_limit_is_part_of_the_key(cache):
    deep = "{% if true %}" * 5 + "x" + "{% endif %}" * 5
    compile_template(deep, "t", RenderLimits(), disk_cache.cache_dir())
    with pytest.raises(TemplateSyntaxError, match="nests deeper than 3"):
        compile_template(deep, "t", RenderLimits(max_nesting=3), disk_cache.cache_dir())


def test_a_corrupt_entry_is_a_miss_and_is_replaced(cache):
    source = "{{ messages | length }}"
    compile_template(source, "t", RenderLimits(), disk_cache.cache_dir())
    (entry,) = _entries(cache, "code")
    entry.write_bytes(b"\x00 not marshal data")
    compiled = compile_template(source, "t", RenderLimits(), disk_cache.cache_dir())
    assert compiled.template.render(messages=[1, 2]) == "2"
    (entry,) = _entries(cache, "code")
    assert entry.read_bytes() != b"\x00 not marshal data"


def test_analysis_from_disk_equals_a_fresh_one(cache):
    template = ChatTemplate(load_template(QWEN_LIKE), clock=FROZEN_CLOCK)
    fresh = analyze_template(template)
    stored = cached_analysis(template)
    assert stored == fresh
    assert len(_entries(cache, "analysis")) == 1
    _CACHE.clear()  # a new process: only the disk has it
    again = cached_analysis(ChatTemplate(load_template(QWEN_LIKE), clock=FROZEN_CLOCK))
    assert again == fresh and again is not stored
    # enable_thinking is part of the key
    cached_analysis(template, enable_thinking=False)
    assert len(_entries(cache, "analysis")) == 2


def test_the_real_clock_and_the_cache_switch_keep_analyses_off_disk(cache):
    cached_analysis(ChatTemplate(load_template(QWEN_LIKE)))  # the real clock: dates may differ by day
    assert _entries(cache, "analysis") == []
    disk_cache.set_enabled(False)
    _CACHE.clear()
    cached_analysis(ChatTemplate(load_template(QWEN_LIKE), clock=FROZEN_CLOCK))
    assert not cache.exists() or _entries(cache, "analysis") == []


def test_the_environment_variable_turns_the_cache_off(cache, monkeypatch):
    monkeypatch.setenv(disk_cache.ENV_OFF, "1")
    compile_template("{{ 1 }}", "t", RenderLimits(), disk_cache.cache_dir())
    assert disk_cache.cache_dir() is None and not cache.exists()


def test_no_cache_option_writes_nothing(cache, tmp_path):
    # templates no process of this run has compiled or analysed yet
    fresh = [tmp_path / "fresh1.jinja", tmp_path / "fresh2.jinja"]
    for path in fresh:
        path.write_text(QWEN_LIKE.read_text() + "{#- " + str(path) + " -#}")
    result = run_cli("--no-cache", "analyze", "--json", str(fresh[0]))
    assert result.exit_code == 0, result.stderr
    assert not cache.exists()
    result = run_cli("analyze", "--json", str(fresh[1]))
    assert result.exit_code == 0, result.stderr
    assert _entries(cache, "analysis") and _entries(cache, "code")


def test_warm_analyze_prints_what_a_cold_one_does(cache):
    cold = run_cli("analyze", "--json", str(QWEN_LIKE))
    _CACHE.clear()
    warm = run_cli("analyze", "--json", str(QWEN_LIKE))
    uncached = run_cli("--no-cache", "analyze", "--json", str(QWEN_LIKE))
    assert cold.exit_code == warm.exit_code == uncached.exit_code == 0
    assert json.loads(cold.stdout) == json.loads(warm.stdout) == json.loads(uncached.stdout)


def test_an_unwritable_cache_is_skipped(cache):
    cache.write_text("a file where the folder should be")
    compiled = compile_template("{{ 'ok' }}", "t", RenderLimits(), disk_cache.cache_dir())
    assert compiled.template.render() == "ok"


def _write_and_read(folder: str, n: int) -> list[bool]:
    os.environ[disk_cache.ENV_DIR] = folder
    key = disk_cache.entry_key("test", "same key")
    payload = bytes(range(256)) * 400
    seen = []
    for _ in range(n):
        disk_cache.store("test", key, payload, disk_cache.cache_dir())
        data = disk_cache.load("test", key, disk_cache.cache_dir())
        seen.append(data == payload)
    return seen


def test_concurrent_writers_never_expose_a_partial_entry(tmp_path):
    folder = str(tmp_path / "shared-cache")
    with multiprocessing.get_context("fork").Pool(4) as pool:
        results = pool.starmap(_write_and_read, [(folder, 50)] * 4)
    assert all(all(seen) for seen in results)
    leftovers = [p for p in (tmp_path / "shared-cache" / "test").iterdir() if p.name.startswith(".tmp-")]
    assert leftovers == []


def test_prune_keeps_the_newest_entries(tmp_path):
    folder = tmp_path / "kind"
    folder.mkdir()
    for i in range(10):
        path = folder / f"e{i}"
        path.write_text(str(i))
        os.utime(path, ns=(i * 10**9, i * 10**9))
    disk_cache.prune(folder, 3)
    assert sorted(p.name for p in folder.iterdir()) == ["e7", "e8", "e9"]


def test_code_changes_change_every_key(cache, monkeypatch):
    before = disk_cache.entry_key("code", "source")
    monkeypatch.setattr(disk_cache, "code_fingerprint", lambda: "another version")
    assert disk_cache.entry_key("code", "source") != before


@pytest.mark.slow  # (a Python run of its own: not the fast loop's)
def test_the_installed_command_uses_the_cache_across_runs(tmp_path):
    env = dict(os.environ, AUTOPARSER_CACHE_DIR=str(tmp_path / "c"))
    command = [sys.executable, "-m", "autoparser_cli", "analyze", "--json"]
    first = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)
    second = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout == second.stdout
    assert _entries(tmp_path / "c", "analysis") and _entries(tmp_path / "c", "code")
