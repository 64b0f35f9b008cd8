"""A dead job retried is the same job: the native completed table keeps its payload (WorkCompleted.JobInfo), and
the retry puts it back. An install made by an older queuetop, without that column, is still the native schema
for watching; its writes are refused before any SQL with "run `queuetop init`", `doctor` says the same, and
`init` adds the column and nothing else (the embedded default is brought up to date as it is opened). Real
SQLite files and PostgreSQL."""

from __future__ import annotations

import pytest

from queuetop.act.queue import Queue
from queuetop.act.shape_queue import ShapeQueue
from queuetop.db import Database, UsageError
from queuetop.layouts.schema import init_schema, missing_columns, schema_current, schema_present
from queuetop.serve.doctor import Status, run_doctor
from queuetop.watch.monitor import Monitor

from .conftest import Backend
from .helpers import layout_sql

PAYLOAD = '{"to": "ops@example.com", "invoice": 1047}'


def die(db: Database, backend: Backend, job_type: str = "email") -> int:
    """One job of `job_type` with a payload, failed until it is dead; its id."""
    queue = Queue(db, backend.layout, max_attempts=1)
    job_id = queue.enqueue(job_type, info=PAYLOAD)
    (job,) = queue.claim("w", [job_type], lease=30)
    assert queue.fail(job.id, job.token) == "dead"
    return job_id


def test_a_dead_job_retried_comes_back_with_its_payload(backend: Backend) -> None:
    with backend.open() as db:
        die(db, backend)
        assert ShapeQueue(db, backend.layout).dead("retry", "email") == 1
        (job,) = Queue(db, backend.layout).claim("w", ["email"], lease=30)
        assert job.info == PAYLOAD


def drop_payload_column(db: Database, backend: Backend) -> None:
    """The completed table as queuetop made it before it kept payloads."""
    db.execute(layout_sql(db, backend.layout, "ALTER TABLE {completed} DROP COLUMN {c_info}"))


def test_an_older_install_is_watched_refused_writes_and_brought_up_to_date_by_init(backend: Backend) -> None:
    with backend.open() as db:
        die(db, backend)
        drop_payload_column(db, backend)
        assert schema_present(db, backend.layout) and not schema_current(db, backend.layout)
        assert missing_columns(db, backend.layout) == ["WorkCompleted.JobInfo"]
        with pytest.raises(UsageError, match=r"made by an older queuetop: it lacks WorkCompleted\.JobInfo"):
            ShapeQueue(db, backend.layout).dead("retry", "email")
        assert ShapeQueue(db, backend.layout).dead("count", "email") == 1  # watching and counting need no write
        (finding,) = [f for f in run_doctor(db, backend.layout, sample_s=0).findings
                      if f.check == "native schema's columns"]  # fmt: skip
        assert finding.status is Status.WARN and "ADD" in (finding.fix or "")
        steps = init_schema(db, backend.layout)
        assert [(s.kind, s.name) for s in steps if s.created] == [("column", "WorkCompleted.JobInfo")]
        assert schema_current(db, backend.layout)
        assert ShapeQueue(db, backend.layout).dead("retry", "email") == 1  # its payload was lost before: None


def test_the_embedded_default_is_brought_up_to_date_as_it_is_opened(sqlite_backend: Backend) -> None:
    with sqlite_backend.open() as db:
        drop_payload_column(db, sqlite_backend)
    monitor = Monitor(sqlite_backend.target, sqlite_backend.layout, auto_init=True)
    try:
        assert monitor.poll().snapshot is not None
    finally:
        monitor.close()
    with sqlite_backend.open() as db:
        assert schema_current(db, sqlite_backend.layout)


def test_an_older_install_named_with_layout_native_is_still_watched(backend: Backend) -> None:
    from queuetop.layouts.detect import check_layout

    with backend.open() as db:
        drop_payload_column(db, backend)
        assert check_layout(db, backend.layout).made_by_init  # no "has no column JobInfo": init adds it
