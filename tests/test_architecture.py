"""The package's shape (DESIGN.md): no import cycle between modules, small modules, Qt-free lower layers.

The cycle check counts every import a module makes, wherever it is written (module level, inside a function, under
``TYPE_CHECKING``), and an import *through* a package: ``from . import x`` and ``from pkg import name`` depend on
``pkg/__init__.py`` as well as on ``pkg.x``. The layer contracts between packages are import-linter's
(``lint-imports``, configured in pyproject.toml); these tests add what it cannot see.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ztviewer"
MAX_LINES = 600
QT = ("PySide6", "shiboken6", "pyqtgraph")


def module_files() -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, whether it is a package's ``__init__``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imported_names(path: Path, module: str, is_package: bool) -> Iterator[str]:
    """Every module name an import statement anywhere in ``path`` names (relative ones made absolute)."""
    here = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target                                            # the package (or module) imported from …
            yield from (f"{target}.{alias.name}" for alias in node.names)   # … and each name that is a module


def import_graph() -> dict[str, set[str]]:
    modules = module_files()

    def known(name: str) -> str | None:
        while name and name not in modules:   # "pkg.mod.function" → "pkg.mod"
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, (path, is_package) in modules.items():
        targets = {known(name) for name in imported_names(path, module, is_package)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_no_module_level_import_cycle():
    graph = import_graph()
    found = cycles(graph)
    described = ["\n".join(f"  {m} -> {sorted(graph[m] & set(group))}" for m in group) for group in found]
    assert not found, "import cycles:\n" + "\n\n".join(described)


def test_the_cycle_finder_sees_lazy_and_package_imports(tmp_path):
    """The check itself: a function-level import and a ``from . import`` through ``__init__`` both count."""
    graph = {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p"}, "q": set()}
    assert cycles(graph) == [["p", "p.a", "p.b"]]
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from . import sibling\n")
    assert set(imported_names(source, "pkg.m", False)) == {"pkg", "pkg.sibling"}


@pytest.mark.parametrize("module", sorted(module_files()))
def test_module_is_small(module):
    path, _ = module_files()[module]
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE.parent)} has {lines} lines; split it (≤ {MAX_LINES})"


def _qt_free_modules() -> list[str]:
    return [m for m in module_files() if m.startswith(("ztviewer.codec", "ztviewer.analysis", "ztviewer.session"))]


def test_lower_layers_load_no_qt():
    """Importing every module of codec, analysis and session loads no Qt (and the built-in formats register)."""
    modules = _qt_free_modules()
    code = (f"import sys, importlib; [importlib.import_module(m) for m in {modules!r}]; "
            "from ztviewer.codec.registry import formats; formats(); "
            f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {QT!r}); print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workers_use_qtcore_only():
    """Workers run jobs and signal progress: QtCore only (import-linter cannot forbid part of PySide6)."""
    graph = import_graph()
    widgets = []
    for module, (path, is_package) in module_files().items():
        if module.startswith("ztviewer.workers"):
            widgets += [(module, name) for name in imported_names(path, module, is_package)
                        if name.startswith(("PySide6.QtWidgets", "PySide6.QtGui", "pyqtgraph"))]
    assert graph and not widgets, widgets


#: a count's noun spelled out by hand: ``f"{n} tensor{'s' if n != 1 else ''}"`` in the source, ``file(s)`` in a string
HAND_PLURAL = re.compile(r"""\{['"]s?['"] if [^}]*1 else ['"]s?['"]\}""")
MAYBE_PLURAL = re.compile(r"[a-z]\(s\)")


def _hand_plurals(path: Path) -> Iterator[str]:
    source = path.read_text(encoding="utf-8")
    for number, line in enumerate(source.splitlines(), 1):
        if HAND_PLURAL.search(line):
            yield f"{number}: {line.strip()}"
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and MAYBE_PLURAL.search(node.value):
            yield f"{node.lineno}: {node.value!r}"


def test_the_gui_and_session_say_counts_through_plural():
    """``session.formatting.plural`` is the one place a count gets its noun (``1 tensor``, ``2,000 tensors``)."""
    found = [f"{path.relative_to(PACKAGE.parent)}:{where}"
             for module, (path, _) in module_files().items() if module.startswith(("ztviewer.gui", "ztviewer.session"))
             for where in _hand_plurals(path)]
    assert not found, "use session.formatting.plural:\n" + "\n".join(found)


def test_import_linter_forbids_qt_and_upper_layers_in_every_qt_free_layer():
    """CI's `lint-imports` holds each Qt-free layer to a forbidden contract, the session layer included, so a
    ``QtWidgets`` import (even a lazy one inside a function) in ``session/`` fails CI, not just at run time."""
    import tomllib

    contracts = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    forbidden = {m: set(c["forbidden_modules"]) for c in contracts if c["type"] == "forbidden"
                 for m in c["source_modules"]}
    for layer in ("ztviewer.codec", "ztviewer.analysis", "ztviewer.session"):
        assert {"PySide6", "pyqtgraph", "ztviewer.gui", "ztviewer.workers"} <= forbidden.get(layer, set()), layer
