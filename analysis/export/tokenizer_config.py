"""A model folder's ``tokenizer_config.json``: where a ``response_template`` lives.

Writing keeps every other key, in its order, and the file's style: its
indentation (spaces or tabs, how many), whether non-ASCII text is escaped,
and whether it ends with a newline.  The file is replaced whole or not at
all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analysis.errors import InputError
from analysis.userio import loads, read_text, write_atomic

CONFIG_NAME = "tokenizer_config.json"
KEY = "response_template"
#: the files of a model folder that a folder's ``tokenizer_config.json`` speaks for
FOLDER_FILES = (CONFIG_NAME, "chat_template.jinja", "chat_template.json")


def config_path(target: Path) -> Path:
    """The ``tokenizer_config.json`` of a model folder (or the file itself)."""
    path = target / CONFIG_NAME if target.is_dir() else target
    if path.name != CONFIG_NAME:
        raise InputError(f"{target}: not a model folder or a {CONFIG_NAME}")
    if not path.is_file():
        raise InputError(f"{target}: has no {CONFIG_NAME} (the response_template is written there)")
    return path


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    text = read_text(path)
    data = loads(text, str(path))
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a JSON object")
    return text, data


def read_response_template(path: Path) -> Mapping[str, Any] | None:
    """The ``response_template`` that applies to a template file: the one in its
    model folder's ``tokenizer_config.json`` (None when there is none)."""
    if path.name not in FOLDER_FILES:
        return None
    config = path.parent / CONFIG_NAME
    if not config.is_file():
        return None
    _, data = _read(config)
    spec = data.get(KEY)
    if spec is None:
        return None
    if not isinstance(spec, Mapping):
        raise InputError(f"{config}: {KEY} is not a JSON object")
    return spec


def write_response_template(target: Path, spec: Mapping[str, Any]) -> Path:
    """Add or replace ``response_template`` in ``target``'s ``tokenizer_config.json``
    (a model folder, or the file), keeping the file's other keys and its style."""
    path = config_path(target)
    text, data = _read(path)
    data[KEY] = dict(spec)
    write_atomic(path, dump_like(text, data), CONFIG_NAME)
    return path


def dump_like(original: str, data: Mapping[str, Any]) -> str:
    """``data`` as JSON in the style of ``original``: its indentation, its
    escaping of non-ASCII text, its final newline."""
    indent: str | int | None = None
    found = re.search(r"^\{[ \t]*\r?\n([ \t]+)\S", original)
    if found:
        unit = found.group(1)
        indent = unit if "\t" in unit else len(unit)
    elif "\n" in original.strip():
        indent = 2
    escaped = bool(re.search(r"\\u[0-9a-fA-F]{4}", original)) and original.isascii()
    separators = (",", ": ") if indent is not None else (", ", ": ")
    out = json.dumps(data, indent=indent, ensure_ascii=escaped, separators=separators)
    if "\r\n" in original:
        out = out.replace("\n", "\r\n")
    return out + original[len(original.rstrip("\r\n")) :]


__all__ = ["CONFIG_NAME", "FOLDER_FILES", "KEY", "config_path", "dump_like", "read_response_template", "write_response_template"]
