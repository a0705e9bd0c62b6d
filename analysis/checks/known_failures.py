"""Known failures: a JSON object ``{case id or template name: reason}``
whose listed failures pass (with their reason)."""

from __future__ import annotations

from pathlib import Path

from analysis.errors import InputError
from analysis.userio import loads, read_text


def read_known_failures(path: Path) -> dict[str, str]:
    """``--known-failures``: a JSON object mapping a case id or template name to
    the reason it is expected to fail."""
    data = loads(read_text(path), f"{path} (known failures)")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise InputError(f"{path}: known failures must be a JSON object {{\"id or template\": \"reason\"}}")
    return data
