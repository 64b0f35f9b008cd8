#!/usr/bin/env python3
"""Regenerate the README's screenshots: `.venv/bin/python scripts/screenshots.py`.

Each SVG in screenshots/ is a scene of queuetop/tui/scenes.py — the same fixed data, frozen clock and key presses
the snapshot tests in tests/tui/test_snapshots.py compare against — rendered headless at its own size (most
at 120×40). Name scenes to render only those (`scripts/screenshots.py main release`); `--list` shows them all.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from queuetop.tui.scenes import SCENES, SCREENSHOTS, render_svg  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenes", nargs="*", metavar="SCENE", help=f"default: {' '.join(SCREENSHOTS)}")
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots", help="folder for the SVGs")
    parser.add_argument("--list", action="store_true", help="list the scenes and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, scene in SCENES.items():
            print(f"{name:16} {scene.description}")
        return 0
    unknown = [name for name in args.scenes if name not in SCENES]
    if unknown:
        parser.error(f"unknown scene(s): {', '.join(unknown)} (see --list)")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.scenes or SCREENSHOTS:
        path = args.out / f"{name}.svg"
        path.write_text(render_svg(SCENES[name]), encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
