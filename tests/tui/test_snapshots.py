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
