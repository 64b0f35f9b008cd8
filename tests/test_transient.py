"""Deadlocks, serialization failures and busy databases are transient: classified as such on real databases,
retried by the one retry helper (bounded, jittered), and safe to retry for every queue operation because each
is a compare-and-set on the claim token."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from queuetop.act.queue import Queue
from queuetop.db import Conflict, Database, LeaseLost, Timeout, TransientError, UsageError, connection, retry_transient
from queuetop.db.retry import ATTEMPTS, MAX_DELAY_S, backoff_s
from queuetop.watch.monitor import CONNECTED, TIMED_OUT, Monitor

from .helpers import completed_ids_with_repeats, layout_sql, queue_rows


# -- the helper ---------------------------------------------------------------------------------------------
def test_retry_runs_again_on_a_transient_error_a_bounded_number_of_times() -> None:
    calls, pauses, heard = [], [], []

    def deadlocked() -> None:
        calls.append(1)
        raise Conflict("chosen as the deadlock victim")

    with pytest.raises(Conflict):
        retry_transient(deadlocked, on_retry=heard.append, sleep=pauses.append)
    assert len(calls) == ATTEMPTS and len(heard) == ATTEMPTS - 1 and len(pauses) == ATTEMPTS - 1
    assert all(0 < pause <= MAX_DELAY_S for pause in pauses)


def test_retry_returns_the_first_success_and_never_retries_other_errors() -> None:
    answers = iter([Timeout("database is locked"), "done"])

    def flaky() -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert retry_transient(flaky, sleep=lambda s: None) == "done"
    calls = []

    def wrong() -> None:
        calls.append(1)
        raise UsageError("bad input")

    with pytest.raises(UsageError):
        retry_transient(wrong, sleep=lambda s: None)
    assert len(calls) == 1


def test_back_off_is_jittered_and_capped() -> None:
    assert backoff_s(1, rng=lambda: 1.0) < backoff_s(4, rng=lambda: 1.0) <= MAX_DELAY_S
    assert backoff_s(30, rng=lambda: 1.0) == MAX_DELAY_S
    assert backoff_s(3, rng=lambda: 0.2) < backoff_s(3, rng=lambda: 0.9)  # spread, so colliders part


# -- real databases say "transient" -------------------------------------------------------------------------
@pytest.mark.postgres
def test_a_real_postgres_deadlock_is_a_conflict_not_a_lost_connection(pg_backend) -> None:
    q = Queue(pg_backend.open(), pg_backend.layout)
    first, second = q.enqueue_many("email", 2)
    update = layout_sql(q.db, pg_backend.layout, "UPDATE {queue} SET {priority} = 1 WHERE {id} = ?")
    a, b = pg_backend.open(), pg_backend.open()
    both_hold_one = threading.Barrier(2)
    errors: list[BaseException] = []

    def cross(db, mine: int, theirs: int) -> None:
        try:
            with db.transaction():
                db.execute(update, (mine,))
                both_hold_one.wait(timeout=10)
                db.execute(update, (theirs,))  # each waits for the other: PostgreSQL picks a victim
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=cross, args=(a, first, second)),
               threading.Thread(target=cross, args=(b, second, first))]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(errors) == 1 and isinstance(errors[0], Conflict), errors
    assert isinstance(errors[0], TransientError) and "deadlock" in str(errors[0])
    for db in (a, b):  # the victim's connection is fine: nothing to reconnect
        assert db.fetchone("SELECT 1") == (1,)
    for db in (a, b, q.db):
        db.close()


def test_a_sqlite_worker_waits_out_a_writer_the_monitor_gives_up_on(sqlite_backend, monkeypatch) -> None:
    """A worker waits longer for the write lock than the monitor: SQLite's busy handler is not fair, and under a
    saturated load a consumer that missed the lock for 5 s six times over stopped the whole load run (the
    defaults are 60 s and 5 s; shortened here)."""
    monkeypatch.setitem(connection.SQLITE_BUSY_TIMEOUT_MS, "monitor", 100)
    monkeypatch.setitem(connection.SQLITE_BUSY_TIMEOUT_MS, "worker", 5_000)
    holder = sqlite3.connect(sqlite_backend.target.value, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another connection's writer holds the lock, then 2 s more (past the retries)
    let_go = threading.Timer(2.0, lambda: holder.execute("ROLLBACK"))
    try:
        with Database.open(sqlite_backend.target, purpose="monitor") as monitor, \
                Database.open(sqlite_backend.target, purpose="worker") as worker:
            with pytest.raises(Timeout):
                Queue(monitor, sqlite_backend.layout).enqueue("email")
            let_go.start()
            assert Queue(worker, sqlite_backend.layout).enqueue("email") >= 1  # once the writer is done
    finally:
        let_go.join()
        holder.close()


def test_sqlite_busy_past_its_timeout_is_transient(sqlite_backend) -> None:
    path = sqlite_backend.target.value
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a writer that holds the write lock
    try:
        db = sqlite_backend.open()
        db._connection.execute("PRAGMA busy_timeout = 50")
        with pytest.raises(Timeout) as caught:
            Queue(db, sqlite_backend.layout).enqueue("email")
        assert isinstance(caught.value, TransientError) and "locked" in str(caught.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert Queue(db, sqlite_backend.layout).enqueue("email") >= 1  # the same connection goes on
    db.close()


# -- retrying a queue operation is safe ---------------------------------------------------------------------
def answer_lost_once(operation):
    """The operation runs and commits, then its answer is lost (as when a deadlock or timeout is reported for
    a statement whose effect was already done): the retry helper runs it again."""
    runs = []

    def run():
        result = operation()
        runs.append(result)
        if len(runs) == 1:
            raise Conflict("the answer was lost")
        return result

    return run, runs


def test_a_complete_retried_after_it_succeeded_does_nothing_twice(backend) -> None:
    with backend.open() as db:
        q = Queue(db, backend.layout)
        job_id = q.enqueue("email")
        job = q.claim("w1")[0]
        run, _ = answer_lost_once(lambda: q.complete(job.id, job.token))
        with pytest.raises(LeaseLost):  # the second run finds the claim gone: said, never done twice
            retry_transient(run, sleep=lambda s: None)
        assert completed_ids_with_repeats(db, backend.layout) == [job_id]
        assert job_id not in queue_rows(db, backend.layout)


def test_a_fail_retried_after_it_succeeded_does_nothing_twice(backend) -> None:
    with backend.open() as db:
        q = Queue(db, backend.layout, max_attempts=3)
        job_id = q.enqueue("email")
        job = q.claim("w1")[0]
        run, _ = answer_lost_once(lambda: q.fail(job.id, job.token, retry_after=60))
        with pytest.raises(LeaseLost):
            retry_transient(run, sleep=lambda s: None)
        _type, claimed_at, token, attempts = queue_rows(db, backend.layout)[job_id]
        assert (claimed_at, token, attempts) == (None, None, 1)  # given back once, its attempt spent once
        assert completed_ids_with_repeats(db, backend.layout) == []


def test_a_claim_retried_after_it_succeeded_never_claims_a_job_twice(backend) -> None:
    with backend.open() as db:
        q = Queue(db, backend.layout)
        q.enqueue_many("email", 4)
        run, runs = answer_lost_once(lambda: q.claim("w1", batch=2))
        second = retry_transient(run, sleep=lambda s: None)
        first = runs[0]
        assert {j.id for j in first}.isdisjoint({j.id for j in second})  # other jobs, never the same twice
        rows = queue_rows(db, backend.layout)
        for job in [*first, *second]:  # each held by the one token that took it, attempt spent once
            assert str(rows[job.id][2]).lower() == job.token and rows[job.id][3] == 1


# -- the monitor: a poll stopped by a lock is not a lost connection -------------------------------------------
@pytest.mark.postgres
def test_a_postgres_poll_past_its_lock_timeout_keeps_the_connection(pg_backend) -> None:
    Queue(pg_backend.open(), pg_backend.layout).enqueue("email")
    monitor = Monitor(pg_backend.target, pg_backend.layout)
    assert monitor.poll().state == CONNECTED
    pid = monitor._db.fetchone("SELECT pg_backend_pid()")[0]
    locker = pg_backend.open()
    table = locker.dialect.qualify(pg_backend.layout.schema, pg_backend.layout.queue_table)
    with locker.transaction():
        locker.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        stopped = monitor.poll()  # waits lock_timeout (2 s), then gives up
    assert stopped.state == TIMED_OUT and not stopped.connected and not stopped.link_lost
    assert stopped.retry_in_s is None and "did not answer in time" in stopped.error
    again = monitor.poll()
    assert again.state == CONNECTED and again.snapshot.type_named("email").depth == 1
    assert monitor._db.fetchone("SELECT pg_backend_pid()")[0] == pid  # the same connection: no reconnect
    monitor.close()
    locker.close()
