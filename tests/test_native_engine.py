"""The native schema read by the one engine (issue 19): what it shows of a queue in every state is what the tables
hold, counted here by hand — and where the native collector it replaced said otherwise, the engine's meaning,
which is every layout's:

- `claimed` is held and not timed out (the native collector counted a timed-out claim in both);
- `scheduled` is shown, and a job scheduled for later is not in the depth (the native collector hid the column and
  counted those jobs as pending);
- a job that arrived and finished between two polls is an arrival (ids are read in both tables)."""

from __future__ import annotations

import time

import pytest

from queuetop.act.queue import Queue
from queuetop.watch.collector import collector_for

from .conftest import drop_backend, make_backend
from .helpers import layout_sql


def counted(db, layout, sql: str) -> dict[str, int]:
    return {job_type: int(n) for job_type, n in db.fetchall(layout_sql(db, layout, sql + " GROUP BY {type}"))}


@pytest.mark.parametrize("backend_name", ["sqlite", "postgres"])
def test_the_engine_shows_the_native_tables_as_they_are(backend_name, tmp_path):
    backend = make_backend(backend_name, tmp_path)
    opened = []
    try:
        worker = backend.open()
        opened.append(worker)
        queue = Queue(worker, backend.layout)
        monitor = backend.open("monitor")
        opened.append(monitor)
        collector = collector_for(monitor, backend.layout)
        collector.poll()
        queue.enqueue_many("email", 12)
        queue.enqueue_many("report", 5)
        queue.enqueue_many("report", 3, delay_s=600)  # scheduled
        leased = queue.claim("w1", ["email"], batch=6, lease=1)  # 3 of them time out
        queue.complete(leased[0].id, leased[0].token)
        queue.complete(leased[1].id, leased[1].token)
        queue.complete(leased[2].id, leased[2].token, outcome="failed")
        queue.claim("w2", ["report"], batch=2, lease=600)  # claimed, not timed out
        queue.enqueue("thumb")
        while True:  # dead: out of attempts
            (job,) = queue.claim("w3", ["thumb"])
            if queue.fail(job.id, job.token, retry_after=0) == "dead":
                break
        time.sleep(1.2)  # email's three other claims are past their lease
        rows = {t.job_type: t for t in collector.poll().types}
        layout = backend.layout  # "now" below is the newest job's creation: the scheduled ones are 600 s past it
        assert sorted(rows) == ["email", "report", "thumb"]
        truth = {
            "depth": counted(worker, layout, "SELECT {type}, COUNT(*) FROM {queue} WHERE {claimed_at} IS NULL "
                                             "AND {available} <= (SELECT MAX({created}) FROM {queue})"),
            "scheduled": counted(worker, layout, "SELECT {type}, COUNT(*) FROM {queue} WHERE {claimed_at} IS NULL "
                                                 "AND {available} > (SELECT MAX({created}) FROM {queue})"),
            "dead": counted(worker, layout, "SELECT {c_type}, COUNT(*) FROM {completed} WHERE {c_outcome} = 'dead'"),
        }
        for figure, by_type in truth.items():
            for job_type, row in rows.items():
                assert (getattr(row, figure) or 0) == by_type.get(job_type, 0), (figure, job_type)
        email, report, thumb = rows["email"], rows["report"], rows["thumb"]
        assert (email.claimed, email.timed_out) == (0, 3)  # the three unfinished claims are past their lease
        assert (report.depth, report.scheduled, report.claimed, report.timed_out) == (3, 3, 2, 0)
        assert (email.arrivals_total, report.arrivals_total, thumb.arrivals_total) == (12, 8, 1)
        assert (email.completions_total, thumb.completions_total, thumb.dead) == (3, 1, 1)
    finally:
        for db in opened:
            db.close()
        drop_backend(backend)
