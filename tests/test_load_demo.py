"""`queuetop demo` end to end: the command makes a fresh queue, runs its load under the dashboard (driven by
Textual's Pilot in place of a terminal), shows its job types, and on quit stops the load and says where the
queue is."""

from __future__ import annotations

import asyncio

import pytest

from queuetop.cli import main
from queuetop.db import Database, parse_target
from queuetop.layouts import NATIVE
from queuetop.tui.app import QueuetopApp

from .helpers import queue_rows

DEMO_TYPES = {"email", "webhook", "thumbnail", "report"}


def test_demo_shows_its_job_types_and_stops_its_load_on_quit(tmp_path, monkeypatch, capsys):
    seen: dict[str, object] = {}

    def run_under_pilot(app: QueuetopApp, *args: object, **kwargs: object) -> int:
        async def drive() -> None:
            async with app.run_test(size=(140, 40)) as pilot:
                for _ in range(150):  # `report` is one job in sixteen: give it a few seconds to show up
                    await pilot.pause(0.1)
                    latest = app.session.latest
                    if latest is not None and {row.job_type for row in latest.types} >= DEMO_TYPES:
                        break
                seen["types"] = {row.job_type for row in app.session.latest.types} if app.session.latest else set()
                seen["load"] = app.background.progress_line() if app.background else None
                await pilot.press("q")

        asyncio.run(drive())
        return app.return_code or 0

    monkeypatch.setattr(QueuetopApp, "run", run_under_pilot)
    path = str(tmp_path / "demo.db")
    assert main(["demo", "--db", path]) == 0
    out = capsys.readouterr().out
    assert seen["types"] >= DEMO_TYPES
    assert "enqueued" in str(seen["load"])
    assert "none lost or duplicated" in out
    assert f"the demo queue is in {path}" in out
    with Database.open(parse_target(path)) as db:
        assert all(row[1] is None for row in queue_rows(db, NATIVE).values()), "the load left a claim behind"


def watch_until(monkeypatch, figure: str) -> dict[str, object]:
    """Run the app under Pilot in place of a terminal until the totals show `figure` (at most 10 s), then quit;
    what it showed lands in the returned dict."""
    seen: dict[str, object] = {}

    def run_under_pilot(app: QueuetopApp, *args: object, **kwargs: object) -> int:
        async def drive() -> None:
            async with app.run_test(size=(140, 40)) as pilot:
                for _ in range(100):
                    await pilot.pause(0.1)
                    if app.session.latest is not None and getattr(app.session.latest.totals, figure):
                        break
                seen["snapshot"] = app.session.latest
                seen["greeting"] = app.greeting
                await pilot.press("q")

        asyncio.run(drive())
        return app.return_code or 0

    monkeypatch.setattr(QueuetopApp, "run", run_under_pilot)
    return seen


@pytest.mark.parametrize(("preset", "extra", "says"), [
    ("queuesample", (), "stays taken and unfinished"),
    ("requests", (), "move lost requests back"),
    ("work_queue", ("--claim-form", "update_top"), "stays taken and unfinished"),
    ("processed", ("--table", "jobs"), "stays taken and unfinished"),
    ("job_queue", (), "press r to release them"),
])  # fmt: skip
def test_demo_of_each_shape_runs_its_seeds_dequeue_live(tmp_path, monkeypatch, capsys, preset, extra, says):
    seen = watch_until(monkeypatch, "arrivals_60s_per_s")
    path = str(tmp_path / "demo.db")
    assert main(["demo", "--db", path, "--layout", preset, *extra]) == 0
    out = capsys.readouterr().out
    snapshot = seen["snapshot"]
    assert snapshot is not None and snapshot.layout == preset and snapshot.error is None
    assert snapshot.totals.arrivals_60s_per_s, "the demo's producers write the shape's rows, and the poll sees them"
    assert says in str(seen["greeting"])
    assert "none lost or duplicated" in out and f"--layout {preset}" in out


def test_watch_with_load_drives_a_seed_table_that_already_exists(tmp_path, monkeypatch, capsys):
    from tests.test_shapes import make_seeded

    seeded = make_seeded("job_queue", "sqlite", tmp_path)
    seen = watch_until(monkeypatch, "completions_60s_per_s")
    assert main(["watch", "--db", seeded.db_text, "--layout", "job_queue", "--with-load", "--batch", "3",
                 "--lease", "2", "--crash", "0.05", "--rate", "50"]) == 0  # fmt: skip
    snapshot = seen["snapshot"]
    assert snapshot is not None and snapshot.layout == "job_queue" and snapshot.totals.completions_60s_per_s
    out = capsys.readouterr().out
    assert "none lost or duplicated" in out
    assert seeded.count(f'SELECT COUNT(*) FROM {seeded.q("Job_Queue")} WHERE "Last_Attempt_End_Date" IS NOT NULL') > 0
