"""Shared fixtures: the read-only reference material in ../shared (optional)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
ZOO = SHARED / "templates"
PROJECT_TEMPLATES = ROOT / "templates"

needs_shared = pytest.mark.skipif(not ZOO.is_dir(), reason="../shared is absent")


def zoo_templates() -> list[Path]:
    return sorted(ZOO.glob("*.jinja")) if ZOO.is_dir() else []


def reference_analysis() -> list[dict]:
    path = SHARED / "reference" / "analysis.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
