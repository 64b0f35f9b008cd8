"""The collector's incremental reads on a real PostgreSQL server: identities and completions that commit out
of order are still counted, exactly once; the type filter; a poll leaves no transaction open. Then, on every
backend, depths beyond the exact cap: tracked from arrivals and completions, marked as estimates, and put
right by the full count (purges and drift)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import FrozenInstanceError, asdict, fields
from typing import Any

import pytest

from queuetop.act.queue import Queue
from queuetop.watch import tracking
from queuetop.watch.collector import ShapeCollector, collector_for
from queuetop.watch.snapshot import OTHER, Snapshot, TypeStats

from .helpers import full_count_now, layout_sql


def counted(rate_per_s: float | None, window_s: float = 60.0) -> int:
    return round((rate_per_s or 0.0) * window_s)


def test_an_identity_that_commits_after_a_later_one_is_still_counted_once(pg_backend):
    slow_db, fast_db, monitor_db = pg_backend.open(), pg_backend.open(), pg_backend.open("monitor")
    slow, fast = Queue(slow_db, pg_backend.layout), Queue(fast_db, pg_backend.layout)
    collector = collector_for(monitor_db, pg_backend.layout)
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
    collector = collector_for(monitor_db, pg_backend.layout)
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
        snapshot = collector_for(monitor, pg_backend.layout, job_types=["report"]).poll()
        assert [row.job_type for row in snapshot.types] == ["report"] and snapshot.totals.depth == 2
        state = db.fetchone("SELECT state FROM pg_stat_activity WHERE pid = ?", (monitor_pid,))
        assert state == ("idle",)  # never "idle in transaction"
        monitor.close()


# -- depth beyond the exact cap: tracked, marked as an estimate, corrected by the full count ---------------
SMALL_CAP = 5


@pytest.fixture
def small_cap(monkeypatch):
    monkeypatch.setattr(tracking, "DEPTH_EXACT_UP_TO", SMALL_CAP)


def row(snapshot, job_type):
    found = snapshot.type_named(job_type)
    return (found.depth, found.depth_is_estimate) if found else (0, False)


def delete_jobs(db, layout, ids):
    sql = layout_sql(db, layout, "DELETE FROM {queue} WHERE {id} IN (" + db.dialect.placeholders(len(ids)) + ")")
    db.execute(sql, ids)


def test_a_deep_type_is_tracked_from_arrivals_and_completions(backend, small_cap):
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("bulk", 20)
        queue.enqueue_many("small", 3)
        collector = collector_for(monitor_db, backend.layout)
        first = collector.poll()
        assert row(first, "bulk") == (20, False) and row(first, "small") == (3, False)  # the first poll counts all
        queue.enqueue_many("bulk", 4)
        jobs = queue.claim("w", job_types=["bulk"], batch=6)
        for job in jobs[:2]:
            queue.complete(job.id, job.token)
        queue.fail(jobs[2].id, jobs[2].token, retry_after=0)  # back to pending
        second = collector.poll()
        assert row(second, "bulk") == (20 + 4 - 6 + 1, True)  # tracked: exact here, but marked ≈
        assert row(second, "small") == (3, False)
        assert second.type_named("bulk").claimed == 3
        assert second.totals.depth == 22 and second.totals.depth_is_estimate
        assert second.type_named("bulk").oldest_age_s is not None


def test_a_type_new_since_the_last_poll_shows_its_depth_and_age_at_once(backend):
    """The poll's one statement asks for the heads of the types it knew; one that arrived meanwhile is read too."""
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("old", 2)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        queue.enqueue_many("new", 4)
        new = collector.poll().type_named("new")
        assert (new.depth, new.depth_is_estimate) == (4, False) and new.oldest_age_s is not None
        assert collector.reads.statements == 2  # the poll's statement, then the new head (nothing done: no sample)


def test_a_type_drained_below_the_cap_is_counted_exactly_again(backend, small_cap):
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("bulk", 8)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        for job in queue.claim("w", batch=5):
            queue.complete(job.id, job.token)
        assert row(collector.poll(), "bulk") == (3, False)


def test_a_purge_by_hand_shows_at_once_and_a_partial_one_at_the_next_full_count(backend, small_cap):
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        bulk = queue.enqueue_many("bulk", 20)
        gone = queue.enqueue_many("gone", 10)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        delete_jobs(db, backend.layout, gone)  # no pending row left: the oldest is gone, so is the depth
        delete_jobs(db, backend.layout, bulk[:4])  # bypasses the reads the tracking rests on
        snapshot = collector.poll()
        assert row(snapshot, "gone") == (0, False)
        assert row(snapshot, "bulk")[0] == 20  # not seen yet
        full_count_now(collector)
        collector.poll()  # the full count begins, off the poll
        collector.settle()
        assert row(collector.poll(), "bulk") == (16, False)  # and the next poll takes it


def test_drift_above_the_cap_triggers_a_full_count(backend, small_cap):
    with backend.open() as db, backend.open("monitor") as monitor_db:
        Queue(db, backend.layout).enqueue_many("email", 3)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        # Rows the arrival reads cannot see: ids below the highest one already seen.
        insert = layout_sql(db, backend.layout, "INSERT INTO {queue} ({id}, {type}, {created}, {available}) "
                                                "VALUES (?, 'email', ?, ?)")  # fmt: skip
        now = db.dialect.encode_time(db.now())
        for job_id in range(-10, 0):
            db.execute(insert, (job_id, now, now))
        assert row(collector.poll(), "email") == (SMALL_CAP + 1, True)  # at least this many: it drifted
        collector.settle()  # the full count it started, off the poll
        assert row(collector.poll(), "email") == (13, False)


def test_dead_jobs_after_the_first_poll_are_counted_from_completions(backend):
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout, max_attempts=1)
        queue.enqueue_many("email", 3)
        collector = collector_for(monitor_db, backend.layout)
        assert collector.poll().totals.dead == 0
        for job in queue.claim("w", batch=2):
            assert queue.fail(job.id, job.token) == "dead"
        assert collector.poll().type_named("email").dead == 2


def test_a_deep_type_s_depth_stays_right_when_jobs_go_dead(backend, small_cap):
    """A job that goes dead moves to the completed table (a completion) but stays in a state (dead): the tracked
    depth must not count it out twice."""
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout, max_attempts=1)
        queue.enqueue_many("bulk", 20)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        for job in queue.claim("w", job_types=["bulk"], batch=4):
            assert queue.fail(job.id, job.token) == "dead"
        second = collector.poll().type_named("bulk")
        assert (second.depth, second.dead, second.claimed) == (16, 4, 0)


@contextmanager
def five_types(backend) -> Iterator[tuple[Any, Any, Queue, Any, list[str]]]:
    """Types t0 … t4 with 1 … 5 jobs waiting, and a collector that has polled them once: (db, the monitor's db,
    the queue, the collector, the names)."""
    names = [f"t{n}" for n in range(5)]
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        for n, name in enumerate(names):
            queue.enqueue_many(name, n + 1)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        yield db, monitor_db, queue, collector, names


def test_the_heads_of_many_types_are_read_a_batch_a_statement(backend, monkeypatch):
    """SQL Server takes at most 2,100 parameters a statement: the pending heads (two per type) go 500 types at a
    time (here 2), and every type still shows its depth."""
    monkeypatch.setattr(tracking, "HEADS_PER_STATEMENT", 2)
    with five_types(backend) as (_, monitor_db, queue, collector, names):
        asked = types_asked(monitor_db, names)
        queue.enqueue_many("t0", 1)
        snapshot = collector.poll()
        assert [snapshot.type_named(name).depth for name in names] == [2, 2, 3, 4, 5]
        assert max(map(len, asked)) == 2 and sum(map(len, asked)) == 5, asked


def types_asked(monitor_db, names: list[str]) -> list[list[str]]:
    """From now on, per statement the monitor sends, the job types among `names` it asks about."""
    asked: list[list[str]] = []
    fetchall = monitor_db.fetchall

    def counting(sql, params=()):
        asked.append([p for p in params if p in names])
        return fetchall(sql, params)

    monitor_db.fetchall = counting
    return asked


def flat(statements: list[list[str]]) -> list[str]:
    return [job_type for asked in statements for job_type in asked]


def test_past_a_statement_of_types_only_the_types_that_moved_and_a_turn_of_the_rest_are_read(backend, monkeypatch):
    """Past HEADS_PER_STATEMENT types (here 2 of 5) a poll reads the heads of the types that moved — an arrival, a
    claim (no arrival or completion: only its claimed count moves) — and 2 more in turn; the rest keep their last
    figures, and a change no figure shows (a row deleted by hand) is read within one turn."""
    monkeypatch.setattr(tracking, "HEADS_PER_STATEMENT", 2)
    with five_types(backend) as (db, monitor_db, queue, collector, names):
        collector.poll()  # every type's heads read once
        statements = types_asked(monitor_db, names)
        depths = [n + 1 for n in range(5)]
        for _ in range(3):  # a quiet queue: 2 types a poll, in turn
            statements.clear()
            snapshot = collector.poll()
            assert [snapshot.type_named(name).depth for name in names] == depths
            assert len(flat(statements)) == 2, statements
        seen: set[str] = set()
        queue.enqueue_many("t1", 1)
        queue.claim("w", job_types=["t0"])
        statements.clear()
        snapshot = collector.poll()  # its turn: t3 and t4
        depths[0], depths[1] = depths[0] - 1, depths[1] + 1
        assert [snapshot.type_named(name).depth for name in names] == depths
        assert snapshot.type_named("t0").claimed == 1
        assert sorted(flat(statements)) == ["t0", "t1", "t3", "t4"], statements
        job_id = db.fetchone(layout_sql(db, backend.layout, "SELECT MIN({id}) FROM {queue} WHERE {type} = ?"),
                             ("t4",))[0]  # fmt: skip
        db.execute(layout_sql(db, backend.layout, "DELETE FROM {queue} WHERE {id} = ?"), (job_id,))
        depths[4] -= 1
        for _ in range(3):  # 5 types, 2 a turn: read within 3 polls
            statements.clear()
            shown = collector.poll().type_named("t4").depth
            seen.update(flat(statements))
        assert shown == depths[4] and "t4" in seen


def test_a_type_kept_as_last_worked_out_takes_the_full_counts_word_without_its_turn(backend, monkeypatch, small_cap):
    """Past HEADS_PER_STATEMENT types a type that did not move keeps its figures as last worked out (tracking.py),
    not worked out again from its heads each poll; a full count can still change them without the type moving — a
    deep type that moved shows its depth as tracked (≈) until a full count finds it at rest, and from the poll that
    takes that count it is exact, its turn or not."""
    monkeypatch.setattr(tracking, "HEADS_PER_STATEMENT", 2)
    with five_types(backend) as (_, monitor_db, queue, collector, names):
        queue.enqueue_many("t4", 1)
        assert row(collector.poll(), "t4") == (6, True)  # past the cap, tracked since it moved
        for _ in range(3):  # 5 types, 2 a turn: the poll that takes the count below reads t0 and t1
            assert row(collector.poll(), "t4") == (6, True)  # kept as worked out
        full_count_now(collector)
        collector.poll()  # starts the count
        collector.settle()
        statements = types_asked(monitor_db, names)
        snapshot = collector.poll()  # takes it
        assert "t4" not in flat(statements), statements  # not its turn: the count's word, not a read of its heads
        assert row(snapshot, "t4") == (6, False)
        assert [row(snapshot, name)[0] for name in names] == [1, 2, 3, 4, 6]


def test_a_type_with_jobs_left_loses_its_rates_and_percentiles_as_its_events_leave_the_window(backend):
    """A type's windows are pruned when their earliest event or sample leaves the window (`TypeRows._prune`), not
    all on every poll: a type that keeps its row (jobs waiting) must still see its rates fall to 0 and its wait and
    processing percentiles go once its events are older than the window, its counters kept."""
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("a", 3)
        queue.enqueue_many("b", 1)
        collector = ShapeCollector(monitor_db, backend.layout, window_s=1.0)
        collector.poll()
        (job,) = queue.claim("w", job_types=["a"])
        queue.complete(job.id, job.token)
        moving = collector.poll().type_named("a")
        assert moving.completions_60s_per_s and moving.wait_p50_s is not None and moving.latency_sample
        time.sleep(2.2)  # every event and sample of a: past the 1 s window (stamped up to 0.5 s late)
        queue.enqueue_many("b", 1)  # another type moves: a poll with events, a's own untouched
        at_rest = collector.poll().type_named("a")
        assert at_rest is not None and at_rest.depth == 2
        assert (at_rest.arrivals_60s_per_s, at_rest.completions_60s_per_s) == (0.0, 0.0)
        assert (at_rest.wait_p50_s, at_rest.processing_p50_s, at_rest.latency_sample) == (None, None, None)
        assert (at_rest.arrivals_total, at_rest.completions_total) == (3, 1)


def test_each_row_a_poll_makes_is_the_row_the_constructor_makes(backend):
    """The collector makes its rows with `TypeStats.of` (no frozen __init__): each must have every field, no other,
    and equal the constructor's from the same figures — on a queue with jobs in every state it reads."""
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout, max_attempts=1)
        queue.enqueue_many("email", 5)
        queue.enqueue_many("report", 2)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        first, second = queue.claim("w", job_types=["email"], batch=2)
        queue.complete(first.id, first.token)
        assert queue.fail(second.id, second.token) == "dead"
        queue.claim("w", job_types=["report"])
        snapshot = collector.poll()
    names = {f.name for f in fields(TypeStats)}
    for row in (*snapshot.types, snapshot.totals):
        assert set(vars(row)) == names
        assert TypeStats(**asdict(row)) == row and hash(TypeStats(**asdict(row))) == hash(row)
    email = snapshot.type_named("email")
    assert (email.depth, email.claimed, email.dead, email.completions_total) == (3, 0, 1, 2)
    with pytest.raises(FrozenInstanceError):
        email.depth = 0  # type: ignore[misc]


def test_past_max_types_the_busiest_types_are_named_and_the_rest_summed_into_one_row(backend):
    """A dashboard of a type per tenant: past `max_types` the busiest (jobs waiting and in flight) keep their rows,
    a pinned type (an SLO limit of its own) keeps its row without taking a place, the rest are summed into
    `(other)` (no percentiles: they cannot be summed); the totals stay every type's."""
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        for n, name in enumerate(["a", "b", "c", "d", "e"]):
            queue.enqueue_many(name, n + 1)
        queue.claim("w", job_types=["c"], batch=3)  # c holds 3 still: 0 waiting, 3 in flight
        whole = collector_for(monitor_db, backend.layout).poll()
        collector = collector_for(monitor_db, backend.layout, max_types=2, pinned=["a"])
        collector.poll()
        queue.enqueue_many("b", 1)
        snapshot = collector.poll()
    assert whole.other is None and whole.folded == 0 and len(whole.types) == 5
    assert [row.job_type for row in snapshot.types] == ["a", "d", "e"]
    other = snapshot.other
    assert other is not None and other.job_type == OTHER and snapshot.folded == 2
    assert (other.depth, other.claimed) == (3, 3)  # b: 2 + 1 waiting; c: 3 claimed
    assert (snapshot.totals.depth, snapshot.totals.claimed) == (1 + 3 + 4 + 5, 3)
    assert other.arrivals_total == 2 + 1 + 3 and other.wait_p50_s is None
    shown = [*snapshot.types, other]
    assert snapshot.totals.arrivals_60s_per_s == pytest.approx(sum(row.arrivals_60s_per_s for row in shown))


def test_the_totals_counters_are_the_shown_types_also_after_a_quiet_one_is_dropped(backend):
    """The totals' and `(other)`'s counters are kept as sums (every event, less those of the types dropped from
    the window), not added up over every type each poll: they must stay the rows' sums when a type goes quiet and
    empty and leaves the snapshot, and when one comes. A collector listing every type is the truth for one that
    folds all but one."""
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("a", 2)
        queue.enqueue_many("b", 3)
        queue.enqueue_many("c", 1)
        # An event is stamped at the middle of its second, so with a window under a few seconds a's events could
        # leave it between the two collectors' polls (13 ms apart; the second poll's cutoff passing x.5 s), one
        # collector listing a and the other not: a window of 3 s, whose edge no poll here comes near.
        every, folding = (ShapeCollector(monitor_db, backend.layout, window_s=3.0, max_types=cap) for cap in (None, 1))
        polls: list[tuple[Snapshot, Snapshot]] = []

        def poll() -> None:
            polls.append((every.poll(), folding.poll()))
            # the background counts a poll starts end before the queue changes, so both collectors count the same
            # rows (under a loaded machine one collector's count ran after the completions below and the other's
            # before, and the quiet type stayed listed by one of them)
            every.settle()
            folding.settle()

        poll()
        for job in queue.claim("w", job_types=["a"], batch=2):
            queue.complete(job.id, job.token)
        poll()
        time.sleep(3.7)  # a: no job left, and no event in the window (3 s; an event is stamped up to 0.5 s late)
        poll()
        queue.enqueue_many("d", 4)
        poll()
    for whole, folded in polls:
        named = {row.job_type for row in folded.types}
        for counter in ("arrivals_total", "completions_total"):
            assert getattr(whole.totals, counter) == sum(getattr(row, counter) for row in whole.types)
            assert getattr(folded.totals, counter) == getattr(whole.totals, counter)
            assert getattr(folded.other, counter) == sum(getattr(row, counter) for row in whole.types
                                                         if row.job_type not in named)  # fmt: skip
    assert [sorted(row.job_type for row in whole.types) for whole, _ in polls] == \
        [["a", "b", "c"], ["a", "b", "c"], ["b", "c"], ["b", "c", "d"]]
    assert [whole.totals.arrivals_total for whole, _ in polls] == [6, 6, 4, 8]
    assert [whole.totals.completions_total for whole, _ in polls] == [0, 2, 0, 0]


def test_a_type_busier_than_a_named_one_takes_its_place():
    """The busiest are named afresh each poll: held jobs first, then events in the window, then the name."""
    from queuetop.watch.fold import busiest
    from queuetop.watch.rows import TypeHistory

    counts = {"pending": {"a": (5, None), "b": (1, None), "c": (1, None)}, "claimed": {"b": (1, None)}}
    moving = TypeHistory(60.0)
    moving.arrivals.add(100.0, 3)
    assert busiest(["a", "b", "c"], counts, {}, keep=2) == (["a", "b"], ["c"])
    assert busiest(["a", "b", "c", "d"], counts, {"d": moving}, keep=2) == (["a", "b"], ["c", "d"])
    counts["pending"]["c"] = (2, None)
    assert busiest(["a", "b", "c", "d"], counts, {"d": moving}, keep=3) == (["a", "b", "c"], ["d"])
    assert busiest(["b", "c", "d"], {"pending": {}}, {"d": moving}, keep=1) == (["d"], ["b", "c"])
    assert busiest(["a", "b", "c"], counts, {}, keep=1, pinned={"c"}) == (["a", "c"], ["b"])
    assert busiest(["a", "b", "Cc"], counts, {}, keep=1, looking_for=" c ") == (["Cc", "a"], ["b"])  # the filter
