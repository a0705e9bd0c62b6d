"""Lock files: each template's analysis recorded as sorted, stable JSON, and
the field-by-field differences a later run reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analysis.errors import InputError
from analysis.phases.result import TemplateAnalysis
from analysis.userio import loads, read_text

_LOCKED = ("caps", "user_start", "assistant_start", "reasoning", "content", "tools", "preserved_tokens", "generation_prompt")


def lock_entry(analysis: TemplateAnalysis) -> dict[str, Any]:
    """The parts of an analysis a lock file records (and the dedicated handler, if any)."""
    data = analysis.to_json()
    entry = {key: data[key] for key in _LOCKED}
    entry["specialized"] = analysis.handler or ""  # (the lock's key is still "specialized": lock files stay as they are)
    return entry


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(_flatten(sub, f"{prefix}.{key}" if prefix else key))
        return out
    return {prefix: value}


def lock_differences(name: str, locked: dict[str, Any] | None, current: dict[str, Any] | None) -> list[str]:
    """Field-by-field differences, one line each:
    ``Qwen3-Coder.jinja: tools.arguments.value_suffix '</parameter>\\n' -> '</parameter>'``."""
    if locked is None:
        return [f"{name}: not in the lock file (an update of the lock adds it)"]
    if current is None:
        return [f"{name}: in the lock file but not checked (removed, or failed to analyse)"]
    old, new = _flatten(locked), _flatten(current)
    lines = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            lines.append(f"{name}: {key} {old.get(key, '(absent)')!r} -> {new.get(key, '(absent)')!r}")
    return lines


def read_lock(path: Path) -> dict[str, Any]:
    """A lock file's entries (an absent file is an error naming it)."""
    if not path.exists():
        raise InputError(f"{path}: no such lock file (create it with `update_lock`)", ("update_lock",))
    data = loads(read_text(path), f"{path} (lock file)")
    templates = data.get("templates") if isinstance(data, dict) else None
    if not isinstance(templates, dict):
        raise InputError(f"{path}: not a lock file (expected an object with 'templates')")
    return templates


def lock_text(entries: dict[str, Any]) -> str:
    """Stable lock file text: sorted keys, two-space indent, one trailing newline."""
    return json.dumps({"version": 1, "templates": entries}, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
