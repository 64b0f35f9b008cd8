"""Textual is the top layer only: nothing outside queuetop/tui imports it, so the collector, the monitor and the
actions run (and are tested) without a screen."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import queuetop

PACKAGE = Path(queuetop.__file__).parent
UI_ONLY = ("textual", "textual_plotext")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_module_outside_the_tui_package_imports_textual() -> None:
    offenders = {}
    for path in PACKAGE.rglob("*.py"):
        if (PACKAGE / "tui") in path.parents:
            continue
        bad = {name for name in imported_modules(path) if name.split(".")[0] in UI_ONLY}
        if bad:
            offenders[str(path.relative_to(PACKAGE.parent))] = sorted(bad)
    assert offenders == {}


def test_importing_everything_but_the_tui_loads_no_textual() -> None:
    script = """
import importlib, pkgutil, sys
import queuetop
for info in pkgutil.walk_packages(queuetop.__path__, "queuetop."):
    if not info.name.startswith("queuetop.tui") and not info.name.endswith("__main__"):  # __main__ runs the CLI
        importlib.import_module(info.name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "textual_plotext"))
print(",".join(loaded))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            timeout=60)  # fmt: skip
    assert result.stdout.strip() == ""
