"""Loading chat templates from every common source.

A ``SOURCE`` may be a ``.jinja`` file, a Hugging Face ``tokenizer_config.json``,
a ``chat_template.json`` / ``chat_template.jinja``, a model folder holding any of
them, a ``.gguf`` file (metadata only), or a Hugging Face Hub repository id
(``Qwen/Qwen3-8B``, ``Qwen/Qwen3-8B@main``) when no such local path exists.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from analysis.errors import InputError, TemplateLoadError, one_line
from analysis.userio import loads, read_text, regular_file_size

DEFAULT_VARIANT = "default"
TOOL_VARIANT = "tool_use"


@dataclass(frozen=True)
class TemplateSource:
    """The text of every named template variant a source holds, plus special tokens."""

    origin: str
    variants: Mapping[str, str]
    bos_token: str = ""
    eos_token: str = ""
    #: the tokenizer config's ``add_bos_token`` (None when the source does not say)
    add_bos_token: bool | None = None

    def pick(self, variant: str | None = None, has_tools: bool = False) -> LoadedTemplate:
        """Choose one variant: the named one, else ``tool_use`` when tools are present
        (as llama.cpp does), else ``default``, else the only one.  An empty
        (or blank) template is a :class:`TemplateLoadError`."""
        if variant is not None:
            if variant not in self.variants:
                raise TemplateLoadError(
                    f"{self.origin}: no template variant {variant!r} "
                    f"(available: {', '.join(sorted(self.variants))})"
                )
            name = variant
        elif has_tools and TOOL_VARIANT in self.variants:
            name = TOOL_VARIANT
        elif DEFAULT_VARIANT in self.variants:
            name = DEFAULT_VARIANT
        else:
            name = sorted(self.variants)[0]
        if not self.variants[name].strip():  # (one policy for every command: nothing to render is bad input)
            raise TemplateLoadError(f"{_display_name(self.origin, name, len(self.variants))}: the template is empty")
        return LoadedTemplate(
            name=_display_name(self.origin, name, len(self.variants)),
            source=self.variants[name],
            variant=name,
            bos_token=self.bos_token,
            eos_token=self.eos_token,
            add_bos_token=self.add_bos_token,
        )


@dataclass(frozen=True)
class LoadedTemplate:
    """One template's text and the special tokens it is rendered with."""

    name: str
    source: str
    variant: str = DEFAULT_VARIANT
    bos_token: str = ""
    eos_token: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: whether the tokenizer adds a BOS token of its own (None: the source does not say)
    add_bos_token: bool | None = None


def _display_name(origin: str, variant: str, count: int) -> str:
    base = Path(origin).name or origin
    return f"{base}[{variant}]" if count > 1 else base


def _token_text(value: Any) -> str:
    """bos/eos as a string or an AddedToken-style ``{"content": ...}`` dict."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(content := value.get("content"), str):
        return content
    return ""


def _read_text(path: Path) -> str:
    """A template file: over the size limit (``AUTOPARSER_MAX_TEMPLATE_CHARS``
    characters, so 4 bytes each at most) it is refused before it is read."""
    import os

    from analysis.template.sandbox import RenderLimits

    max_chars = RenderLimits.from_env(os.environ).max_template_chars
    try:
        size = regular_file_size(path)
        if size > 4 * max_chars:
            raise TemplateLoadError(
                f"{path}: template too large: {size:,} bytes, over the limit of {max_chars:,} characters "
                "(AUTOPARSER_MAX_TEMPLATE_CHARS)"
            )
        return read_text(path)
    except InputError as exc:
        raise TemplateLoadError(str(exc)) from None


def read_json(path: Path, what: str = "") -> Any:
    """Read a JSON file; errors name the file, the position and (optionally) what it holds."""
    text = read_text(path)
    return loads(text, f"{path}" + (f" ({what})" if what else ""))


def _variants_from_field(value: Any, path: Path) -> dict[str, str]:
    """``chat_template`` as a string or as a list of ``{name, template}``."""
    if isinstance(value, str):
        return {DEFAULT_VARIANT: value}
    if isinstance(value, list):
        out: dict[str, str] = {}
        for item in value:
            if not (isinstance(item, Mapping) and isinstance(item.get("template"), str)):
                raise TemplateLoadError(
                    f"{path}: chat_template list items must be {{name, template}} objects"
                )
            out[str(item.get("name", DEFAULT_VARIANT))] = item["template"]
        if out:
            return out
    raise TemplateLoadError(
        f"{path}: no chat template inside (expected a 'chat_template' string or list)"
    )


def _load_json_config(path: Path) -> TemplateSource:
    data = read_json(path)
    if not isinstance(data, Mapping):
        raise TemplateLoadError(f"{path}: expected a JSON object")
    if "chat_template" not in data:
        raise TemplateLoadError(f"{path}: no 'chat_template' field")
    return TemplateSource(
        origin=str(path),
        variants=_variants_from_field(data["chat_template"], path),
        bos_token=_token_text(data.get("bos_token")),
        eos_token=_token_text(data.get("eos_token")),
        add_bos_token=_flag(data.get("add_bos_token")),
    )


_KEY = re.compile(r'"chat_template"\s*:\s*')
_ITEM_TEMPLATE = re.compile(r'"template"\s*:\s*"')


def _string_lines(path: Path) -> dict[str, int]:
    """The line of ``path`` (a JSON config) each variant's template string
    starts on (a JSON string is one line: the template's own lines are
    escaped ``\\n``); found in the text (the first ``"chat_template"`` key,
    its list items' ``"template"`` keys in order), empty when not found."""
    try:
        text = read_text(path)
        variants = list(_variants_from_field(loads(text, str(path)).get("chat_template"), path))
    except (TemplateLoadError, InputError, AttributeError):
        return {}
    key = _KEY.search(text)
    if key is None:
        return {}
    if text.startswith('"', key.end()):
        starts = [key.end()]
    else:
        starts = [m.end() - 1 for m in _ITEM_TEMPLATE.finditer(text, key.end())][: len(variants)]
    return {name: text.count("\n", 0, at) + 1 for name, at in zip(variants, starts, strict=False)}


def json_template_lines(source: str | Path) -> dict[str, tuple[Path, int]]:
    """Where the templates of ``source`` are in a JSON file, by display name
    (as :class:`LoadedTemplate` names them): the file and the line its string
    starts on.  Errors count lines within the template string; this names the
    line of the file (empty: no template of ``source`` is held in JSON)."""
    path = Path(source)
    if path.is_dir():
        files = [path / "chat_template.json"] if (path / "chat_template.json").is_file() else [path / "tokenizer_config.json"]
        if (path / "chat_template.jinja").is_file():
            return {}
    else:
        files = [path] if path.suffix == ".json" else []
    try:
        held = load_source(path)
    except (TemplateLoadError, InputError):
        return {}
    out = {}
    for file in files:
        for variant, line in _string_lines(file).items():
            if variant in held.variants:
                out[_display_name(held.origin, variant, len(held.variants))] = (file, line)
    return out


def _flag(value: Any) -> bool | None:
    """A config's boolean setting; None when absent or not a boolean."""
    return value if isinstance(value, bool) else None


def _load_folder(path: Path) -> TemplateSource:
    config = path / "tokenizer_config.json"
    bos = eos = ""
    add_bos: bool | None = None
    config_source = None
    if config.is_file():
        data = read_json(config)
        if isinstance(data, Mapping):
            bos, eos = _token_text(data.get("bos_token")), _token_text(data.get("eos_token"))
            add_bos = _flag(data.get("add_bos_token"))
            if "chat_template" in data:
                config_source = _load_json_config(config)
    variants: dict[str, str] = {}
    if (path / "chat_template.jinja").is_file():
        variants[DEFAULT_VARIANT] = _read_text(path / "chat_template.jinja")
    elif (path / "chat_template.json").is_file():
        variants.update(_load_json_config(path / "chat_template.json").variants)
    extra_dir = path / "additional_chat_templates"
    if extra_dir.is_dir():
        for file in sorted(extra_dir.glob("*.jinja")):
            variants[file.stem] = _read_text(file)
    if not variants and config_source is not None:
        variants.update(config_source.variants)
    if not variants:
        raise TemplateLoadError(
            f"{path}: no chat template in folder (expected chat_template.jinja, "
            "chat_template.json or tokenizer_config.json with chat_template)"
        )
    return TemplateSource(origin=str(path), variants=variants, bos_token=bos, eos_token=eos, add_bos_token=add_bos)


def _load_gguf(path: Path) -> TemplateSource:
    try:
        from gguf import GGUFReader, GGUFValueType  # imported lazily: numpy is slow to import
    except ImportError:  # gguf is an optional extra
        raise TemplateLoadError(
            f"{path}: reading GGUF needs the 'gguf' package (the gguf extra: pip install '.[gguf]' in the checkout)"
        ) from None
    from analysis.template.gguf_layout import check_gguf_layout

    regular_file_size(path)  # (a FIFO or a device: refused)
    check_gguf_layout(path)  # every declared count fits in the file, before the reader allocates
    try:
        reader = GGUFReader(str(path), "r")
    except Exception as exc:  # noqa: BLE001 - gguf raises ValueError/struct.error/etc. on junk
        raise TemplateLoadError(f"{path}: not a GGUF file ({exc})") from None

    def field_str(key: str) -> str | None:
        f = reader.fields.get(key)
        if f is None:
            return None
        if not f.types or f.types[0] != GGUFValueType.STRING or not f.data:
            kind = f.types[0].name.lower() if f.types else "empty"
            raise TemplateLoadError(f"{path}: GGUF metadata {key} is a {kind}, expected a string")
        raw = bytes(f.parts[f.data[0]])
        declared = int(f.parts[f.data[0] - 1][0])
        if len(raw) != declared:
            raise TemplateLoadError(
                f"{path}: GGUF metadata {key} declares {declared} bytes but the file holds {len(raw)} (truncated or corrupt)"
            )
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TemplateLoadError(f"{path}: GGUF metadata {key} is not UTF-8 ({exc.reason} at byte {exc.start})") from None

    variants: dict[str, str] = {}
    main = field_str("tokenizer.chat_template")
    if main is not None:
        variants[DEFAULT_VARIANT] = main
    prefix = "tokenizer.chat_template."
    for key in reader.fields:
        if key.startswith(prefix) and key != "tokenizer.chat_templates":
            text = field_str(key)
            if text is not None:
                variants[key[len(prefix):]] = text
    if not variants:
        raise TemplateLoadError(f"{path}: GGUF has no tokenizer.chat_template metadata")

    def token_text(id_key: str) -> str:
        id_field = reader.fields.get(id_key)
        tokens = reader.fields.get("tokenizer.ggml.tokens")
        if id_field is None or tokens is None:
            return ""
        try:
            token_id = int(id_field.parts[id_field.data[0]][0])
            return bytes(tokens.parts[tokens.data[token_id]]).decode("utf-8")
        except Exception:  # noqa: BLE001 - a token the reader cannot decode reads as none
            return ""

    def flag(key: str) -> bool | None:
        f = reader.fields.get(key)
        if f is None or not f.types or f.types[0] != GGUFValueType.BOOL or not f.data:
            return None
        return bool(f.parts[f.data[0]][0])

    return TemplateSource(
        origin=str(path),
        variants=variants,
        bos_token=token_text("tokenizer.ggml.bos_token_id"),
        eos_token=token_text("tokenizer.ggml.eos_token_id"),
        add_bos_token=flag("tokenizer.ggml.add_bos_token"),
    )


#: ``org/name`` or ``org/name@revision``: a model repository on the Hugging Face Hub.
HUB_REPO = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<revision>[\w./-]+))?$")

#: The files of a model repository that can hold its chat template.
HUB_FILES = ("chat_template.jinja", "chat_template.json", "tokenizer_config.json", "additional_chat_templates/*.jinja")


def load_hub(
    repo_id: str, revision: str | None = None, cache_dir: Path | None = None, local_files_only: bool = False
) -> TemplateSource:
    """The chat templates of a Hugging Face Hub model repository, through
    ``huggingface_hub`` (its cache, ``HF_HUB_OFFLINE``, ``HF_TOKEN`` or the
    stored login): only the template files are fetched, never weights."""
    origin = f"{repo_id}@{revision}" if revision else repo_id
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise TemplateLoadError(
            f"{origin}: reading from the Hugging Face Hub needs the 'huggingface_hub' package "
            "(the hub extra: pip install '.[hub]' in the checkout), or give a local path"
        ) from None
    try:
        folder = snapshot_download(
            repo_id,
            revision=revision,
            cache_dir=cache_dir,
            local_files_only=local_files_only,
            allow_patterns=list(HUB_FILES),
        )
    except Exception as exc:  # noqa: BLE001 - offline and not cached, no such repo or revision, gated, network
        detail = one_line(exc) or type(exc).__name__
        raise TemplateLoadError(f"{origin}: cannot read it from the Hugging Face Hub ({detail})") from None
    source = _load_folder(Path(str(folder)))
    return replace(source, origin=origin)


#: a file name's extension (``.jinja``, ``.jinj``, ``.json``), not a version in a
#: repository's name (``GLM-4.6``, ``Llama-3.2-1B-Instruct``)
_FILE_EXTENSION = re.compile(r"^\.[A-Za-z]{1,5}$")


def _looks_local(path: Path) -> bool:
    """Whether a missing ``org/name`` is a mistyped local path rather than a
    Hub repository id: its parent folder exists here, or it ends in a file
    extension."""
    return (path.parent.is_dir() and str(path.parent) not in ("", ".")) or bool(_FILE_EXTENSION.match(path.suffix))


def load_source(source: str | Path) -> TemplateSource:
    """Read every template variant from ``source`` (see module docstring): a
    local path, or else a Hub repository id (``org/name[@revision]``)."""
    path = Path(source)
    if not path.exists():
        hub = HUB_REPO.match(str(source))
        if hub and not _looks_local(path):
            try:
                return load_hub(hub["repo"], hub["revision"])
            except TemplateLoadError as exc:  # a mistyped local path reads as a repository id too
                raise TemplateLoadError(f"{exc}; and no local file or folder {str(path)!r} exists") from None
        raise TemplateLoadError(f"{path}: no such file or folder")
    if path.is_dir():
        return _load_folder(path)
    if path.suffix == ".gguf":
        return _load_gguf(path)
    if path.suffix == ".json":
        return _load_json_config(path)
    if path.suffix == ".jinja" or path.suffix in {".j2", ".txt", ""}:
        return TemplateSource(origin=str(path), variants={DEFAULT_VARIANT: _read_text(path)})
    raise TemplateLoadError(
        f"{path}: unsupported source (expected .jinja, tokenizer_config.json, "
        "chat_template.json, a model folder or .gguf)"
    )


def load_template(
    source: str | Path, variant: str | None = None, has_tools: bool = False
) -> LoadedTemplate:
    """Load ``source`` and pick one variant (see :meth:`TemplateSource.pick`)."""
    return load_source(source).pick(variant, has_tools)
