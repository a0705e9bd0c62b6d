"""Locating the templates autoparser ships (the demo default and test templates)."""

from __future__ import annotations

import sys
from pathlib import Path

DEMO_TEMPLATE = "demo.jinja"


def templates_dir() -> Path:
    """The project's ``templates/`` folder: beside the sources in a checkout or
    editable install, else where the wheel installs it (``share/autoparser``)."""
    checkout = Path(__file__).resolve().parents[2] / "templates"
    if (checkout / DEMO_TEMPLATE).is_file():
        return checkout
    return Path(sys.prefix) / "share" / "autoparser" / "templates"


def demo_template_path() -> Path:
    """The built-in demo template used when no SOURCE is given."""
    return templates_dir() / DEMO_TEMPLATE
