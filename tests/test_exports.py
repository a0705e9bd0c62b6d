"""Each package's public API is one list: the names ``__all__`` gives, the
names its lazy ``__getattr__`` serves (``_EXPORTS``) and the names its
``TYPE_CHECKING`` block imports (for type checkers) are the same, each from
the module ``_EXPORTS`` names; and ``peg.__all__`` names everything the layers
above import from ``peg``."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ["peg", *sorted(f"analysis.{p.parent.name}" for p in (ROOT / "analysis").glob("*/__init__.py"))]


def _type_checking_imports(path: Path) -> dict[str, str]:
    """name -> module, for the ``from X import name`` lines of the ``if TYPE_CHECKING:`` block."""
    out: dict[str, str] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    out.update({alias.asname or alias.name: stmt.module for alias in stmt.names})
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_the_three_lists_agree(package: str) -> None:
    module = importlib.import_module(package)
    public = set(module.__all__)
    assert len(public) == len(module.__all__), "a name twice in __all__"
    exports = getattr(module, "_EXPORTS", None)
    if exports is None:  # (a package that imports its API eagerly)
        assert all(hasattr(module, name) for name in public)
        return
    typed = _type_checking_imports(ROOT / Path(*package.split(".")) / "__init__.py")
    assert set(exports) == public == set(typed), (set(exports) ^ public, public ^ set(typed))
    for name, submodule in exports.items():
        assert typed[name] == f"{package}.{submodule}", name
        assert getattr(module, name) is getattr(importlib.import_module(f"{package}.{submodule}"), name)


def test_peg_all_names_what_the_layers_above_use() -> None:
    import peg

    used: set[str] = set()
    for package in ("analysis", "autoparser_cli"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "peg":
                    for alias in node.names:
                        if not (ROOT / Path(*node.module.split(".")) / f"{alias.name}.py").exists():  # (a module: not a name)
                            used.add(alias.name)
    assert used <= set(peg.__all__), sorted(used - set(peg.__all__))
