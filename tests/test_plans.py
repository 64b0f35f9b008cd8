"""The drill-down and the multi-type claim seek, on a real PostgreSQL server: EXPLAIN at a few thousand rows
shows the index the statement was written for, never a sequential scan of the backlog. And a claim for several
types serves them in priority order across the types, on every backend."""

from __future__ import annotations

import uuid

import pytest

from queuetop.act.queue import Queue
from queuetop.layouts.sql import Statements

from .helpers import layout_sql


def plan(db, sql: str, params: tuple) -> str:
    return "\n".join(row[0] for row in db.fetchall("EXPLAIN " + sql, params))


@pytest.fixture
def backlog(pg_backend):
    with pg_backend.open() as db:
        q = Queue(db, pg_backend.layout)
        for job_type in ("email", "report", "resize", "thumbs"):
            q.enqueue_many(job_type, 1_500)
        db.execute(layout_sql(db, pg_backend.layout, "ANALYZE {queue}"))
        yield q


@pytest.mark.postgres
def test_oldest_pending_seeks_the_pending_age_index(backlog):
    db, layout = backlog.db, backlog.layout  # the drill-down's read, as Actions.type_detail sends it
    shown = plan(db, *Statements(db.dialect, layout).rows_in_states(
        ["pending"], "email", ["id", "created", "available", "priority", "attempts", "info"], ["created", "id"], 20))
    assert "IX_WorkQueue_PendingAge" in shown and "Seq Scan" not in shown, shown


@pytest.mark.postgres
def test_a_claim_for_several_types_is_one_seek_per_type(backlog):
    db, layout = backlog.db, backlog.layout
    values = {"__worker": "w", "__token": str(uuid.uuid4()), "__lease": 30, "__batch": 5}
    shown = plan(db, *Statements(db.dialect, layout).claim_batch(["email", "report"], values))
    assert "IX_WorkQueue_Pending" in shown and "IX_WorkQueue_Dequeue" not in shown, shown
    assert "Seq Scan on \"WorkQueue\"" not in shown and "= ANY" not in shown, shown


def test_a_claim_for_several_types_takes_the_most_urgent_across_them(backend):
    with backend.open() as db:
        q = Queue(db, backend.layout)
        q.enqueue_many("email", 3, priority=200)
        urgent_reports = q.enqueue_many("report", 2, priority=5)
        q.enqueue_many("other", 3, priority=0)  # more urgent still, but not asked for
        emails = q.enqueue_many("email", 2, priority=100)
        jobs = q.claim("w", job_types=["email", "report"], batch=4)
        assert sorted(j.id for j in jobs) == sorted(urgent_reports + emails)
        assert [j.priority for j in jobs] == [5, 5, 100, 100]
        assert q.claim("w", job_types=["email", "report"], batch=10) and not q.claim("w", job_types=["nothing", "x"])
