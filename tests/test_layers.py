"""The layering the README and ``analysis/__init__`` describe, checked on the
sources: ``autoparser_cli`` -> ``analysis`` -> ``peg``, and ``autoparser_vllm``
(the vLLM plugin) beside the CLI, the only package that imports vLLM; inside
``analysis``, each layer package imports only the layers before it; no import
cycles; the library never prints."""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import ROOT

LAYERS = ["template", "probing", "phases", "messages", "parsers", "generation", "export", "lint", "checks"]
SHARED = {"errors", "userio", "fixtures", "disk_cache", "_lazy"}  # beside the layers, usable by all


def _modules() -> dict[str, Path]:
    out = {}
    for package in ("peg", "analysis", "autoparser_cli", "autoparser_vllm"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A source's syntax tree, parsed once per test process (the tests here walk each file several times)."""
    return ast.parse(path.read_text())


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    """Every module ``path`` imports, inside functions too (``from a.b import c``
    counts a.b, and a.b.c when that is a module), but for ``if TYPE_CHECKING:`` blocks."""
    tree = _tree(path)
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module:
                found.add(child.module)
                found.update(f"{child.module}.{a.name}" for a in child.names if f"{child.module}.{a.name}" in MODULES)
            visit(child)

    visit(tree)
    return frozenset(found)


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("peg")))
def test_peg_knows_nothing_of_the_layers_above(module: str) -> None:
    assert not {i for i in _imports(MODULES[module]) if i.split(".")[0] in ("analysis", "autoparser_cli", "autoparser_vllm", "vllm", "jinja2", "typer", "rich")}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("analysis")))
def test_analysis_layers_import_only_layers_before_them(module: str) -> None:
    imports = _imports(MODULES[module])
    assert not {i for i in imports if i.split(".")[0] in ("autoparser_cli", "typer", "rich")}, "only the CLI formats"
    assert not {i for i in imports if i.split(".")[0] in ("autoparser_vllm", "vllm")}, "the core never imports vLLM"
    layer = _layer(module)
    for imported in imports:
        if not imported.startswith("analysis.") or _layer(imported) in SHARED:
            continue
        if layer in SHARED or layer == "":
            assert _layer(imported) == "" or module == "analysis", (module, imported)  # shared modules use no layer
            continue
        assert LAYERS.index(_layer(imported)) <= LAYERS.index(layer), f"{module} imports {imported}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("autoparser_cli")))
def test_the_cli_knows_nothing_of_vllm(module: str) -> None:
    assert not {i for i in _imports(MODULES[module]) if i.split(".")[0] in ("autoparser_vllm", "vllm")}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("autoparser_vllm")))
def test_only_the_plugins_vllm_module_imports_vllm(module: str) -> None:
    """``autoparser_vllm.vllm_parsers`` is the one module that imports vLLM (the
    entry point imports it inside ``register``); the plugin uses the library, never the CLI."""
    imports = _imports(MODULES[module])
    assert not {i for i in imports if i.split(".")[0] in ("autoparser_cli", "typer", "rich")}
    if module not in ("autoparser_vllm.vllm_parsers", "autoparser_vllm.plugin"):
        assert not {i for i in imports if i.split(".")[0] == "vllm" or i == "autoparser_vllm.vllm_parsers"}, module
    if module == "autoparser_vllm.plugin":
        assert not {i for i in imports if i.split(".")[0] == "vllm"}


def test_the_vllm_module_is_the_only_one_importing_vllm() -> None:
    importers = {m for m, path in MODULES.items() if any(i.split(".")[0] == "vllm" for i in _imports(path))}
    assert importers == {"autoparser_vllm.vllm_parsers"}


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in MODULES.items():
        for imported in _imports(path):
            if imported in MODULES and imported != module and not imported.startswith(module + "."):
                graph[module].add(imported)
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError(" -> ".join([*stack[stack.index(nxt):], nxt]))
            if nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [module])


def test_the_library_never_prints() -> None:
    for module, path in MODULES.items():
        if module.startswith(("analysis", "peg")):
            calls = [n for n in ast.walk(_tree(path)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"]
            assert not calls, module
