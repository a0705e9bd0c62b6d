"""Finding the templates to check: files and folders walked for chat templates,
the names they are reported under, the named variants of a source, and shards
of a collection for a CI matrix."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from analysis.errors import InputError, TemplateLoadError
from analysis.template.loading import DEFAULT_VARIANT, load_source
from peg.errors import AutoparserError

TEMPLATE_FILE_NAMES = ("tokenizer_config.json", "chat_template.json")
_SEPARATE_FILES = ("chat_template.jinja", "chat_template.json")


def _is_template_file(path: Path) -> bool:
    return path.name.endswith((".jinja", ".gguf")) or path.name in TEMPLATE_FILE_NAMES


def find_templates(paths: Iterable[Path]) -> list[Path]:
    """Every template under ``paths``: ``.jinja``, ``tokenizer_config.json``,
    ``chat_template.json`` and ``.gguf`` files, recursively, sorted.  In a model
    folder with a separate chat template file, ``tokenizer_config.json`` is
    skipped (the separate file wins, as in transformers)."""
    found: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise TemplateLoadError(f"{path}: no such file or folder")
        if path.is_file() and not _is_template_file(path):
            raise InputError(
                f"{path}: not a template file (expected .jinja, .gguf, tokenizer_config.json or chat_template.json)"
            )
        candidates = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for candidate in candidates:
            name = candidate.name
            if _is_template_file(candidate):
                if name == "tokenizer_config.json" and any((candidate.parent / s).is_file() for s in _SEPARATE_FILES):
                    continue
                found.add(candidate)
    return sorted(found)


def display_name(path: Path, roots: Iterable[Path]) -> str:
    """``path`` relative to the root it was found under (posix style)."""
    for root in roots:
        base = root if root.is_dir() else root.parent
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def unique_names(paths: Sequence[Path], roots: Sequence[Path]) -> dict[Path, str]:
    """A name per template, unique across every root: relative to its root
    when that is unique (``GLM-4.6.jinja``), else relative to the roots' common
    folder (``a/GLM-4.6.jinja`` and ``b/GLM-4.6.jinja``).  Lock entries and
    reports are keyed by these names."""
    names = {path: display_name(path, roots) for path in paths}
    if len(set(names.values())) == len(names):
        return names
    resolved = {path: path.resolve() for path in paths}
    common = Path(os.path.commonpath([str(r.parent) for r in resolved.values()]))
    return {path: resolved[path].relative_to(common).as_posix() for path in paths}


def shard(paths: Sequence[Path], spec: str) -> list[Path]:
    """The ``I/N`` share of ``paths`` (1-based ``I``): every N-th template from
    the I-th, so a CI matrix of N jobs checks each template exactly once."""
    index_text, _, count_text = spec.partition("/")
    try:
        index, count = int(index_text), int(count_text)
    except ValueError:
        index = count = 0
    if not (count >= 1 and 1 <= index <= count):
        raise InputError(f"`shard` {spec!r}: expected I/N with 1 <= I <= N (for example 2/4)", ("shard",))
    return [p for i, p in enumerate(sorted(paths)) if i % count == index - 1]


def with_variants(named: Sequence[tuple[Path, str]]) -> list[tuple[Path, str, str | None]]:
    """Every template variant of each source (a ``tokenizer_config.json`` or
    GGUF with named templates: ``default``, ``tool_use``...): the default one
    keeps the source's name, the others are ``name#variant``.  A source that
    cannot be read stays one entry (its check reports why)."""
    out: list[tuple[Path, str, str | None]] = []
    for path, name in named:
        variants: list[str] = []
        if path.suffix in (".json", ".gguf"):
            try:
                variants = sorted(load_source(path).variants)
            except AutoparserError:
                variants = []
        if len(variants) <= 1:
            out.append((path, name, None))
            continue
        for variant in variants:
            out.append((path, name if variant == DEFAULT_VARIANT else f"{name}#{variant}", variant))
    return out
