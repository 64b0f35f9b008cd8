"""huey (3.5) with SqliteHuey, the real library: its own tables in a SQLite file, tasks enqueued by calling them,
its own consumer. huey's rows hold pickles and no time, and a task's row is deleted as a worker takes it: what
queuetop can show is the depth per Huey instance, equal to huey's own `pending_count()`; every other figure is
null with its reason, never 0. The file keeps huey's own journal mode."""

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


def depths(snapshot: Snapshot) -> dict[str, int | None]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: t.depth for t in snapshot.types}


def pending(app: LibraryApp) -> dict[str, int]:
    return {name: counts["pending"] for name, counts in app.json("counts").items()}


def test_queuetop_finds_huey_and_shows_its_own_pending_count_per_instance(tmp_path: Path) -> None:
    app, path = huey_app(tmp_path)
    app.run("defer", "fast=3", "hold=1", "doomed=1", "later=2", "other=2")
    with Database.open(parse_target(path), purpose="monitor") as db:
        (found,) = detect(db)
        assert found.preset == "huey"
        collector = ShapeCollector(db, found.layout)
        before = depths(collector.poll())
        assert before == pending(app) == {"huey": 7, "reports": 2}  # the later ones wait in task until taken
        with app.worker():
            wait_for(lambda: app.json("counts")["huey"] == {"pending": 0, "scheduled": 2}, "huey's consumer")
            after = depths(collector.poll())
        journal = db.fetchone("PRAGMA journal_mode")[0]
    assert {name: after.get(name, 0) for name in ("huey", "reports")} == {"huey": 0, "reports": 2}
    assert journal == "wal"  # huey's own choice, as it left it


def test_every_figure_but_the_depth_is_null_with_its_reason(tmp_path: Path) -> None:
    app, path = huey_app(tmp_path)
    app.run("defer", "fast=2")
    with Database.open(parse_target(path), purpose="monitor") as db:
        (found,) = detect(db)
        snapshot = ShapeCollector(db, found.layout).poll()
    (huey,) = snapshot.types
    assert huey.depth == 2
    assert (huey.oldest_age_s, huey.scheduled, huey.claimed, huey.dead, huey.arrivals_total) == (None,) * 5
    why = snapshot.to_json()["cannot_know"]
    assert set(why) == {"oldest_age_s", "scheduled", "claimed", "timed_out", "lost", "dead", "arrivals",
                        "completions", "wait", "processing"}  # fmt: skip
    assert "pickle" in why["oldest_age_s"] and "schedule table" in why["scheduled"]
