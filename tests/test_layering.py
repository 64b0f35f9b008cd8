"""The layer order of DESIGN.md, held for every module, one folder per layer: core (errors, files, units,
arithmetic), then db, then layouts, then what watches, then what acts, then load and the history store, then
what serves a target (exporter, check, doctor), then the dashboard, then the command.
A module imports only from its own layer or the ones below (imports under `if TYPE_CHECKING:` are for type
hints and never run, so they do not count). And every module imports cleanly on its own, in a fresh
interpreter: an import cycle shows there, not only in the order the test suite happens to import things."""

from __future__ import annotations

import ast
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import queuetop

PACKAGE = Path(queuetop.__file__).parent
LAYERS = [  # bottom first: (rank, module prefixes); the folders are the layers
    (0, ("queuetop", "queuetop.core")),
    (1, ("queuetop.db",)),
    (2, ("queuetop.layouts",)),
    (3, ("queuetop.watch",)),
    (4, ("queuetop.act",)),
    (5, ("queuetop.load", "queuetop.store")),
    (6, ("queuetop.serve",)),
    (7, ("queuetop.tui",)),
    (8, ("queuetop.cli", "queuetop.__main__")),
]  # fmt: skip


def rank(module: str) -> int:
    """The layer of a module: its longest matching prefix decides."""
    best, best_len = None, -1
    for layer, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = layer, len(prefix)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def runtime_imports(path: Path) -> set[str]:
    """The queuetop modules a file imports when it runs (not those under `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for child in node.body for inner in ast.walk(child))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names
                         if (PACKAGE.parent / node.module.replace(".", "/") / f"{alias.name}.py").exists())
    return {name for name in names if name.split(".")[0] == "queuetop"}


def all_modules() -> list[str]:
    found = ["queuetop"]
    found += [info.name for info in pkgutil.walk_packages(queuetop.__path__, "queuetop.")]
    return sorted(found)


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        here = module_name(path)
        for imported in runtime_imports(path):
            if rank(imported) > rank(here):
                offences.append(f"{here} (layer {rank(here)}) imports {imported} (layer {rank(imported)})")
    assert offences == []


def test_the_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The check above must be able to fail: a db module importing the collector is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("from typing import TYPE_CHECKING\nfrom queuetop.watch.collector import ShapeCollector\n"
                   "if TYPE_CHECKING:\n    from queuetop.tui.app import QueuetopApp\n")  # fmt: skip
    imported = runtime_imports(bad)
    assert imported == {"queuetop.watch.collector"}
    assert rank("queuetop.watch.collector") > rank("queuetop.db.connection")


# Each module is imported in a fresh child of one interpreter that holds the third-party packages queuetop uses but
# no module of queuetop: a cycle among queuetop's modules shows as it would in a fresh interpreter, without paying
# each time for Textual's own import (a subprocess per module cost the suite ~30 s of CPU).
IMPORT_EACH_ALONE = """
import importlib, os, sys
import pyodbc, prometheus_client, rich, sqlite3, textual.app, textual.widgets, textual_plotext  # not under test
assert not [name for name in sys.modules if name.split(".")[0] == "queuetop"]
for module in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(module)
        except BaseException as error:
            print(f"{module}: {type(error).__name__}: {error}", flush=True)
            os._exit(1)
        os._exit(0)
    os.waitpid(pid, 0)
"""


def test_every_module_imports_on_its_own() -> None:
    modules = [m for m in all_modules() if not m.endswith("__main__")]
    result = subprocess.run([sys.executable, "-c", IMPORT_EACH_ALONE, *modules], capture_output=True, text=True,
                            timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # one line per module that failed to import alone


def test_a_module_that_cannot_import_alone_is_caught(tmp_path: Path) -> None:
    """The check above must be able to fail: two modules importing each other's names at the top."""
    (tmp_path / "cyc").mkdir()
    (tmp_path / "cyc" / "__init__.py").write_text("")
    (tmp_path / "cyc" / "a.py").write_text("from cyc.b import B\nA = 1\n")
    (tmp_path / "cyc" / "b.py").write_text("from cyc.a import A\nB = 2\n")
    result = subprocess.run([sys.executable, "-c", IMPORT_EACH_ALONE, "cyc.a", "cyc.b"], capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(tmp_path)})  # fmt: skip
    assert result.stdout.count("ImportError") == 2, result.stdout + result.stderr


def test_the_import_linter_contract_in_pyproject_holds() -> None:
    """The same order, declared as data in pyproject.toml and checked by import-linter (`lint-imports`)."""
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache", "--no-logo"], cwd=PACKAGE.parent, capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout
