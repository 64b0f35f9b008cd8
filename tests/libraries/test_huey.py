"""huey (3.5) with SqliteHuey, the real library: its own tables in a SQLite file, tasks enqueued by calling them,
its own consumer. huey's rows hold pickles and no time, and a task's row is deleted as a worker takes it: what
queuetop can show is the depth and the scheduled tasks (its schedule table) per Huey instance, equal to huey's own
`pending_count()` and `scheduled_count()`; every other figure is null with its reason, never 0. The file keeps
huey's own journal mode."""

from __future__ import annotations

from pathlib import Path

from queuetop.db import Database, parse_target
from queuetop.layouts.detect import detect
from queuetop.watch.collector import ShapeCollector
from queuetop.watch.snapshot import Snapshot
from tests.libraries import LibraryApp, wait_for


def huey_app(tmp_path: Path) -> tuple[LibraryApp, str]:
    app = LibraryApp("huey")
    path = str(tmp_path / "huey.db")
    app.schema = path  # SqliteHuey's file is the app's first argument
    app.run("schema")
    return app, path


def depths(snapshot: Snapshot) -> dict[str, tuple[int, int | None]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.scheduled) for t in snapshot.types}


def huey_counts(app: LibraryApp) -> dict[str, tuple[int, int]]:
    return {name: (counts["pending"], counts["scheduled"]) for name, counts in app.json("counts").items()}


def test_queuetop_finds_huey_and_shows_its_own_counts_per_instance(tmp_path: Path) -> None:
    app, path = huey_app(tmp_path)
    app.run("defer", "fast=3", "hold=1", "doomed=1", "later=2", "other=2")
    with Database.open(parse_target(path), purpose="monitor") as db:
        (found,) = detect(db)
        assert found.preset == "huey" and found.completed is not None  # its schedule table, found beside task
        collector = ShapeCollector(db, found.layout)
        before = depths(collector.poll())
        assert before == huey_counts(app) == {"huey": (7, 0), "reports": (2, 0)}  # the later ones wait in task
        with app.worker():  # the consumer takes them, sees their eta ahead, and moves them into schedule
            wait_for(lambda: app.json("counts")["huey"] == {"pending": 0, "scheduled": 2}, "huey's consumer")
            after = depths(collector.poll())
            library = huey_counts(app)
        journal = db.fetchone("PRAGMA journal_mode")[0]
    assert after == {"huey": (0, 2), "reports": (2, 0)} == library
    assert journal == "wal"  # huey's own choice, as it left it


def test_every_figure_but_the_depth_and_the_scheduled_is_null_with_its_reason(tmp_path: Path) -> None:
    app, path = huey_app(tmp_path)
    app.run("defer", "fast=2")
    with Database.open(parse_target(path), purpose="monitor") as db:
        (found,) = detect(db)
        snapshot = ShapeCollector(db, found.layout).poll()
    (huey,) = snapshot.types
    assert huey.depth == 2
    assert (huey.oldest_age_s, huey.claimed, huey.dead, huey.arrivals_total) == (None,) * 4 and huey.scheduled == 0
    why = snapshot.to_json()["cannot_know"]
    assert set(why) == {"oldest_age_s", "claimed", "timed_out", "lost", "dead", "arrivals", "completions", "wait",
                        "processing"}  # fmt: skip
    assert "pickle" in why["oldest_age_s"]
