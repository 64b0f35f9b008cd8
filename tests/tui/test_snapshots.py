"""The dashboard's look, pixel for pixel, at 120×40: fixed data, a frozen clock, no polling (see
queuetop/tui/scenes.py, which `scripts/screenshots.py` renders too). After an intended change of look, run
`.venv/bin/pytest tests/tui/test_snapshots.py --snapshot-update` and look at the new SVGs before committing."""

from __future__ import annotations

import pytest

from queuetop.tui.scenes import SCENES


@pytest.mark.parametrize("name", sorted(SCENES))
def test_scene(name: str, snap_compare) -> None:
    scene = SCENES[name]
    assert snap_compare(scene.make(), press=scene.press, terminal_size=scene.size, run_before=scene.prepare)


def test_the_screenshots_command_still_imports_and_lists_its_pictures() -> None:
    """`scripts/screenshots.py` regenerates the README's pictures when the look changes: a module it imports that
    moved must fail here, not on the day the pictures are needed (its imports of `queuetop.cli` once did)."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "screenshots.py"
    done = subprocess.run([sys.executable, str(script), "--list"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "work-queue" in done.stdout and "main" in done.stdout
