"""Django's tasks with django-tasks-db (0.13 on Django 5.2), the real library on SQLite and on the test PostgreSQL
server: Django's own migrations, tasks enqueued through Django's task API, django-tasks-db's own worker. The same
preset serves both databases; what queuetop shows per task equals the table and the library's own querysets
(`ready()`, `running()`, `failed()`), the "no delay" date 9999-01-01 counts as due, not as scheduled for the year
9999; a burst's arrivals, completions, wait and processing match the rows' own times. The watched SQLite file
keeps its journal mode: watching changes nothing."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from queuetop.db import Database, parse_target
from queuetop.watch.snapshot import Snapshot
from tests.libraries import Placed, assert_advice_fixes_the_scans, placed, wait_for

TABLE = "django_tasks_database_dbtaskresult"
PRESET = "django_tasks"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def django(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Placed]:
    with placed("django_tasks", request.param, tmp_path) as place:
        yield place


def by_status(db: Database, django: Placed) -> dict[str, Counter]:
    """Per task, its rows per status, read from the table."""
    counts: dict[str, Counter] = {}
    for task, status, n in db.fetchall(f"SELECT task_path, status, count(*) FROM {django.table(TABLE)} GROUP BY 1, 2"):
        counts.setdefault(task, Counter())[status] += int(n)
    return counts


def shown(snapshot: Snapshot) -> dict[str, tuple[int | None, ...]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.scheduled, t.claimed, t.dead) for t in snapshot.types}


def test_queuetop_finds_django_tasks_and_shows_what_its_table_and_its_querysets_say(django: Placed) -> None:
    django.app.run("defer", "doomed=1", "fast=5", "hold=1", "later=3", "orphan=1")  # one worker: hold blocks it last
    with Database.open(parse_target(django.target), purpose="monitor") as db:
        journal = db.fetchone("PRAGMA journal_mode")[0] if db.dialect.name == "sqlite" else None
        with django.app.worker():
            wait_for(lambda: by_status(db, django).get("tasks.hold", Counter())["RUNNING"] == 1, "the worker at hold")
            figures = shown(django.collector(db, PRESET).poll())
            rows = by_status(db, django)
            library = django.app.json("counts")
        if journal is not None:
            assert db.fetchone("PRAGMA journal_mode")[0] == journal == "delete"  # Django's, not switched to WAL
    assert figures == {"tasks.doomed": (0, 0, 0, 1), "tasks.fast": (0, 3, 0, 0), "tasks.hold": (0, 0, 1, 0),
                       "tasks.orphan": (1, 0, 0, 0)}  # fmt: skip
    for task, (depth, scheduled, claimed, dead) in figures.items():
        ready = library["ready"].get(task, 0)
        assert (depth, scheduled) == (ready, rows[task]["READY"] - ready), task
        assert (claimed, dead) == (library["running"].get(task, 0), library["failed"].get(task, 0)), task
        assert claimed == rows[task]["RUNNING"] and dead == rows[task]["FAILED"], task
    assert library["successful"] == {"tasks.fast": 5}


def test_a_burst_is_counted_whole_with_its_wait_and_processing(django: Placed) -> None:
    with django.app.worker(), Database.open(parse_target(django.target), purpose="monitor") as db:
        collector = django.collector(db, PRESET)
        collector.poll()
        django.app.run("defer", "fast=40")
        wait_for(lambda: by_status(db, django).get("tasks.fast", Counter())["SUCCESSFUL"] == 40, "the worker to finish")
        (fast,) = collector.poll().types
        times = db.fetchall(f"SELECT enqueued_at, started_at, finished_at FROM {django.table(TABLE)}")
    assert (fast.arrivals_total, fast.completions_total, fast.depth) == (40, 40, 0)
    decoded = [[db.dialect.decode_time(t) if isinstance(t, str) else t for t in row] for row in times]
    waits = [(started - enqueued).total_seconds() for enqueued, started, _ in decoded]
    processing = [(finished - started).total_seconds() for _, started, finished in decoded]
    assert fast.wait_p50_s is not None and fast.processing_p50_s is not None
    assert min(waits) <= fast.wait_p50_s <= max(waits)
    assert abs(fast.wait_p50_s - statistics.median(waits)) <= 0.01 + 0.1 * statistics.median(waits)
    assert min(processing) <= fast.processing_p50_s <= max(processing)


def test_doctor_names_the_indexes_django_tasks_db_lacks_and_with_them_no_poll_read_scans(django: Placed) -> None:
    """django-tasks-db indexes only its READY rows: doctor says which of the poll's reads scan the table and prints
    the index each needs (the preset's [[advice]]); made, those reads are index reads (bench: a poll at 10^6 rows
    860 -> 11 ms)."""
    django.app.run("defer", "fast=2", "later=1")
    assert_advice_fixes_the_scans(django.target, django.schema, {
        "plan: poll: states (full pass)", "plan: poll: arrivals past the watermark",
        "plan: poll: completions past the watermark", "plan: drill-down: pending rows"})
