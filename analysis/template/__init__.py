"""Loading a chat template and rendering it in a sandboxed, resource-limited worker.

The names below are this layer's public API; each is imported on first use
(``analysis.template.NAME``), so importing one of its modules stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis._lazy import lazy_getattr

if TYPE_CHECKING:
    from analysis.template.builtin import demo_template_path, templates_dir
    from analysis.template.loading import LoadedTemplate, load_template, read_json
    from analysis.template.rendering import (
        FROZEN_CLOCK,
        RENDER_ARGUMENTS,
        ChatTemplate,
        RenderRequest,
    )
    from analysis.template.sandbox import RenderLimits, compile_template

_EXPORTS = {
    "load_template": "loading",
    "LoadedTemplate": "loading",
    "ChatTemplate": "rendering",
    "RenderRequest": "rendering",
    "FROZEN_CLOCK": "rendering",
    "RENDER_ARGUMENTS": "rendering",
    "RenderLimits": "sandbox",
    "compile_template": "sandbox",
    "templates_dir": "builtin",
    "demo_template_path": "builtin",
    "read_json": "loading",
}
__all__ = [
    "FROZEN_CLOCK",
    "RENDER_ARGUMENTS",
    "ChatTemplate",
    "LoadedTemplate",
    "RenderLimits",
    "RenderRequest",
    "compile_template",
    "demo_template_path",
    "load_template",
    "read_json",
    "templates_dir",
]
__getattr__ = lazy_getattr(__name__, _EXPORTS)
