"""The collector's incremental reads on a real PostgreSQL server: identities and completions that commit out
of order are still counted, exactly once; the type filter; a poll leaves no transaction open."""

from __future__ import annotations

from queuetop.collector import Collector
from queuetop.queue import Queue


def counted(rate_per_s: float | None, window_s: float = 60.0) -> int:
    return round((rate_per_s or 0.0) * window_s)


def test_an_identity_that_commits_after_a_later_one_is_still_counted_once(pg_backend):
    slow_db, fast_db, monitor_db = pg_backend.open(), pg_backend.open(), pg_backend.open("monitor")
    slow, fast = Queue(slow_db, pg_backend.layout), Queue(fast_db, pg_backend.layout)
    collector = Collector(monitor_db, pg_backend.layout)
    collector.poll()
    with slow_db.transaction():
        early_id = slow.enqueue("email")  # takes the lower id, commits last
        late_id = fast.enqueue("email")
        assert late_id > early_id
        first = collector.poll()
    assert counted(first.totals.arrivals_60s_per_s) == 1 and first.totals.depth == 1
    second = collector.poll()
    assert counted(second.totals.arrivals_60s_per_s) == 2 and second.totals.depth == 2
    third = collector.poll()
    assert counted(third.totals.arrivals_60s_per_s) == 2  # and never twice
    for db in (slow_db, fast_db, monitor_db):
        db.close()


def test_a_completion_that_commits_late_is_counted_once(pg_backend):
    slow_db, fast_db, monitor_db = pg_backend.open(), pg_backend.open(), pg_backend.open("monitor")
    slow, fast = Queue(slow_db, pg_backend.layout), Queue(fast_db, pg_backend.layout)
    slow.enqueue_many("email", 2)
    collector = Collector(monitor_db, pg_backend.layout)
    collector.poll()
    first_job, second_job = slow.claim("w", batch=2)
    with slow_db.transaction():
        slow.complete(first_job.id, first_job.token)  # stamped first, committed last
        fast.complete(second_job.id, second_job.token)
        assert counted(collector.poll().totals.completions_60s_per_s) == 1
    assert counted(collector.poll().totals.completions_60s_per_s) == 2
    assert counted(collector.poll().totals.completions_60s_per_s) == 2
    for db in (slow_db, fast_db, monitor_db):
        db.close()


def test_type_filter_and_no_transaction_left_open(pg_backend):
    with pg_backend.open() as db:
        queue = Queue(db, pg_backend.layout)
        queue.enqueue_many("email", 3)
        queue.enqueue_many("report", 2)
        monitor = pg_backend.open("monitor")
        (monitor_pid,) = monitor.fetchone("SELECT pg_backend_pid()")
        snapshot = Collector(monitor, pg_backend.layout, job_types=["report"]).poll()
        assert [row.job_type for row in snapshot.types] == ["report"] and snapshot.totals.depth == 2
        state = db.fetchone("SELECT state FROM pg_stat_activity WHERE pid = ?", (monitor_pid,))
        assert state == ("idle",)  # never "idle in transaction"
        monitor.close()
