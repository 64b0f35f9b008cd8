"""Maintenance writes in batches (`act.batches`): dead delete, dead retry and make-available change at most a
batch of rows per statement, each committed on its own, until a batch comes back short; a stop between two
batches keeps what the earlier ones did and leaves the rest as it was. Real SQLite files and PostgreSQL, with
the batch made small so a few hundred rows take several (SQL Server's TOP form is in the golden T-SQL)."""

from __future__ import annotations

import pytest

from queuetop.act import batches, shape_queue, workers
from queuetop.act.queue import Queue
from queuetop.act.shape_queue import ShapeQueue
from queuetop.act.workers import make_available
from queuetop.db import Database

from .conftest import Backend
from .helpers import layout_sql

BATCH = 100


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shape_queue, "MAINTENANCE_BATCH", BATCH)
    monkeypatch.setattr(shape_queue, "RELEASE_BATCH", BATCH)  # the native dead retry's sets of ids
    monkeypatch.setattr(workers, "MAINTENANCE_BATCH", BATCH)
    monkeypatch.setattr(batches, "MAINTENANCE_BATCH", BATCH)  # the native release's


def bury(db: Database, backend: Backend, count: int, job_type: str = "email", first_id: int = 1_000_000) -> None:
    """`count` dead jobs in the completed table, as a release out of attempts leaves them."""
    sql = layout_sql(db, backend.layout, "INSERT INTO {completed} ({c_id}, {c_type}, {c_created}, {c_completed}, "
                                         "{c_attempts}, {c_outcome}) VALUES (?, ?, ?, ?, 3, 'dead')")  # fmt: skip
    now = db.now()
    with db.transaction():
        for i in range(count):
            db.execute(sql, (first_id + i, job_type, now, now))


def counting(statements: list[str], db: Database) -> Database:
    """`db`, its execute() recording each statement it runs."""
    execute = db.execute

    def recorded(sql, params=()):
        statements.append(sql)
        return execute(sql, params)

    db.execute = recorded  # type: ignore[method-assign]
    return db


@pytest.mark.parametrize("action", ["delete", "retry"])
def test_dead_jobs_are_deleted_or_retried_a_batch_per_statement(backend: Backend, action: str) -> None:
    with backend.open() as db:
        bury(db, backend, 250)
        bury(db, backend, 7, "report", first_id=2_000_000)  # another type: untouched
        progress: list[int] = []
        assert ShapeQueue(db, backend.layout).dead(action, "email", on_progress=progress.append) == 250
        assert progress[-1] == 250 and len(progress) >= 3  # three batches at least: 100, 200, 250
        assert ShapeQueue(db, backend.layout).dead("count", "email") == 0
        assert ShapeQueue(db, backend.layout).dead("count", "report") == 7


def test_a_stop_between_batches_keeps_what_was_done_and_leaves_the_rest(backend: Backend) -> None:
    def stop_after_the_first(done: int) -> None:
        raise KeyboardInterrupt

    with backend.open() as db:
        bury(db, backend, 250)
        with pytest.raises(KeyboardInterrupt):
            ShapeQueue(db, backend.layout).dead("delete", on_progress=stop_after_the_first)
        assert ShapeQueue(db, backend.layout).dead("count") == 150  # the first batch committed, nothing else


def test_scheduled_jobs_are_made_available_a_batch_per_statement(backend: Backend) -> None:
    with backend.open() as db:
        Queue(db, backend.layout).enqueue_many("email", 230, delay_s=3600)
        sent: list[str] = []
        result = make_available(counting(sent, db), backend.layout, "email")
        assert (result.scheduled, result.made_available) == (230, 230)
        assert len([sql for sql in sent if "UPDATE" in sql]) == 3  # 100, 100, 30: the short one ends it
        assert make_available(db, backend.layout, "email", dry_run=True).scheduled == 0


def test_a_release_after_an_outage_takes_a_batch_of_claims_per_statement(backend: Backend) -> None:
    import time

    with backend.open() as db:
        queue = Queue(db, backend.layout, max_attempts=5)
        queue.enqueue_many("email", 250)
        assert len(queue.claim("crashed", ["email"], batch=250, lease=0.05)) == 250
        time.sleep(0.1)
        sent: list[str] = []
        result = Queue(counting(sent, db), backend.layout, max_attempts=5).release_timed_out("email")
        assert (result.timed_out, result.released, result.dead) == (250, 250, 0)
        gives_back = [sql for sql in sent if sql.removeprefix("/* queuetop */ ").startswith("UPDATE")]
        # PostgreSQL: 100, 100, 50 (the short one ends it); SQLite: one statement in its one write transaction
        assert len(gives_back) == (3 if backend.name == "postgres" else 1)
        assert queue.release_timed_out("email", dry_run=True).timed_out == 0
