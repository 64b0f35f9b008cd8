"""The dashboard's poller on real databases: snapshots while connected, a state (never an exception) while not,
back-off between attempts, and recovery by itself when the database is back."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from queuetop.act.queue import Queue
from queuetop.db import Database, parse_target
from queuetop.layouts.schema import init_schema
from queuetop.watch.monitor import CLOSED, CONNECTED, NO_SCHEMA, RECONNECTING, TIMED_OUT, Monitor, backoff_delay
from tests.conftest import PG_TARGET, Backend
from tests.helpers import enqueue


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def sqlite_files(path: Path) -> list[Path]:
    return [p for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()]


def test_polls_a_real_queue(backend: Backend) -> None:
    enqueue(backend, "email", 3)
    monitor = Monitor(backend.target, backend.layout)
    try:
        outcome = monitor.poll()
        assert outcome.state == CONNECTED and outcome.error is None
        assert outcome.snapshot is not None and outcome.snapshot.type_named("email").depth == 3
        assert outcome.snapshot.to_json()["reads"] == "committed"  # only SQL Server without RCSI reads dirty
        enqueue(backend, "email", 2)
        assert monitor.poll().snapshot.type_named("email").depth == 5  # the same connection, polled again
    finally:
        monitor.close()


def test_a_poll_after_close_opens_nothing(sqlite_backend: Backend) -> None:
    """A dashboard's poll thread may still run once after the app closed its monitor: it must not reconnect (the
    connection would outlive the app)."""
    monitor = Monitor(sqlite_backend.target, sqlite_backend.layout)
    assert monitor.poll().state == CONNECTED
    monitor.close()
    outcome = monitor.poll()
    assert (outcome.state, outcome.snapshot, monitor._db) == (CLOSED, None, None)


def test_job_types_limit_the_view(sqlite_backend: Backend) -> None:
    enqueue(sqlite_backend, "email", 1)
    enqueue(sqlite_backend, "report", 1)
    monitor = Monitor(sqlite_backend.target, job_types=["report"])
    assert [row.job_type for row in monitor.poll().snapshot.types] == ["report"]
    monitor.close()


def test_auto_init_creates_the_embedded_database_on_first_connect(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "queuetop.db"
    monitor = Monitor(parse_target(str(path)), auto_init=True)
    outcome = monitor.poll()
    assert outcome.connected and outcome.snapshot.types == ()
    assert path.exists()
    monitor.close()


def test_a_missing_file_is_reported_as_no_schema_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.db"
    outcome = Monitor(parse_target(str(path))).poll()
    assert outcome.state == NO_SCHEMA and "queuetop init" in outcome.error
    assert not path.exists()


def test_a_schema_created_later_is_picked_up(tmp_path: Path) -> None:
    target = parse_target(str(tmp_path / "later.db"))
    Database.open(target, create=True).close()  # a file without the queue tables
    clock = Clock()
    monitor = Monitor(target, clock=clock)
    first = monitor.poll()
    assert first.state == NO_SCHEMA and first.retry_in_s == 1.0
    with Database.open(target) as db:
        init_schema(db)
    clock.now += first.retry_in_s
    assert monitor.poll().connected
    monitor.close()


def test_a_removed_file_means_reconnecting_with_back_off_then_recovery(sqlite_backend: Backend, tmp_path: Path) -> None:
    enqueue(sqlite_backend, "email", 4)
    path = Path(sqlite_backend.target.value)
    clock = Clock()
    monitor = Monitor(sqlite_backend.target, clock=clock, backoff=(1.0, 2.0, 4.0), auto_init=True)
    assert monitor.poll().connected

    away = tmp_path / "away"
    away.mkdir()
    for file in sqlite_files(path):
        file.rename(away / file.name)
    lost = monitor.poll()
    assert (lost.state, lost.retry_in_s, lost.failures) == (RECONNECTING, 1.0, 1)
    assert "gone" in lost.error and not lost.unexpected

    waiting = monitor.poll()  # before the retry is due: no attempt, the same state
    assert (waiting.state, waiting.error, waiting.failures, waiting.retry_in_s) == (RECONNECTING, lost.error, 1, 1.0)

    clock.now += 1.0
    again = monitor.poll()
    assert (again.state, again.failures, again.retry_in_s) == (RECONNECTING, 2, 2.0)
    assert not path.exists()  # auto_init is for the first connect only: a vanished file is not replaced

    clock.now += 0.5
    assert monitor.poll().retry_in_s == pytest.approx(1.5)

    for file in away.iterdir():
        file.rename(path.parent / file.name)
    clock.now += 1.5
    back = monitor.poll()
    assert back.connected and back.failures == 0
    assert back.snapshot.type_named("email").depth == 4
    monitor.close()


def test_a_replaced_file_is_read_afresh(sqlite_backend: Backend, tmp_path: Path) -> None:
    enqueue(sqlite_backend, "email", 2)
    path = Path(sqlite_backend.target.value)
    clock = Clock()
    monitor = Monitor(sqlite_backend.target, clock=clock)
    assert monitor.poll().connected

    other = parse_target(str(tmp_path / "other.db"))
    with Database.open(other, create=True) as db:
        init_schema(db)
        Queue(db).enqueue_many("report", 7)
    for file in sqlite_files(path):
        file.unlink()
    Path(other.value).rename(path)
    for suffix in ("-wal", "-shm"):
        if Path(other.value + suffix).exists():
            Path(other.value + suffix).rename(str(path) + suffix)

    replaced = monitor.poll()
    assert replaced.state == RECONNECTING and "replaced" in replaced.error
    clock.now += replaced.retry_in_s
    fresh = monitor.poll()
    assert fresh.connected and [row.job_type for row in fresh.snapshot.types] == ["report"]
    monitor.close()


SHM_LOCKER = textwrap.dedent("""
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1] + "-shm", os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 8, 120)  # every WAL lock: no reader can start
    print("locked", flush=True)
    time.sleep(120)
""")


def lock_sqlite(path: Path) -> subprocess.Popen:
    """Another process holding every WAL lock of the file, as a wedged writer would (POSIX locks are per
    process, so it must be a separate one)."""
    locker = subprocess.Popen([sys.executable, "-c", SHM_LOCKER, str(path)], stdout=subprocess.PIPE, text=True)
    assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
    return locker


def test_a_locked_database_is_a_timed_out_poll_not_a_lost_connection(sqlite_backend: Backend) -> None:
    enqueue(sqlite_backend, "email", 1)
    clock = Clock()
    monitor = Monitor(sqlite_backend.target, clock=clock)
    assert monitor.poll().connected
    connection = monitor._db
    locker = lock_sqlite(Path(sqlite_backend.target.value))
    try:
        locked = monitor.poll()  # SQLite retries for its busy timeout before it gives up
        assert locked.state == TIMED_OUT and "lock" in locked.error and not locked.link_lost
        assert locked.retry_in_s is None  # no back-off: the next poll comes at the usual interval
    finally:
        locker.kill()
        locker.wait()
    assert monitor.poll().connected and monitor._db is connection  # kept, not reopened
    monitor.close()


@pytest.mark.postgres
def test_a_lost_postgres_connection_is_reopened(pg_backend: Backend) -> None:
    clock = Clock()
    monitor = Monitor(pg_backend.target, pg_backend.layout, clock=clock)
    assert monitor.poll().connected
    pid = monitor._db.fetchone("SELECT pg_backend_pid()")[0]  # only this test's own monitor connection
    with pg_backend.open() as admin:
        admin.execute("SELECT pg_terminate_backend(?)", (pid,))
    lost = monitor.poll()
    assert lost.state == RECONNECTING and not lost.unexpected
    clock.now += lost.retry_in_s
    assert monitor.poll().connected
    monitor.close()


@pytest.mark.postgres
def test_an_unreachable_server_is_a_state_not_an_exception() -> None:
    target = parse_target(PG_TARGET.replace("PORT=5432", "PORT=1"))
    outcome = Monitor(target).poll()
    assert outcome.state == RECONNECTING and "cannot reach the database server" in outcome.error
    assert not outcome.unexpected


def test_a_bug_is_logged_with_its_traceback_and_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def broken_open(*args: object, **kwargs: object) -> Database:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="queuetop"):
        outcome = Monitor(parse_target(str(tmp_path / "q.db")), open_database=broken_open).poll()
    assert outcome.unexpected and outcome.error == "RuntimeError: boom" and outcome.state == RECONNECTING
    assert any(record.exc_info for record in caplog.records)


def test_back_off_grows_then_stays_at_its_cap() -> None:
    assert [backoff_delay(n) for n in range(1, 8)] == [1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0]
    assert backoff_delay(0) == 1.0


def test_close_twice_is_harmless(sqlite_backend: Backend) -> None:
    monitor = Monitor(sqlite_backend.target)
    monitor.poll()
    monitor.close()
    monitor.close()
    assert os.path.exists(sqlite_backend.target.value)


def test_a_layouts_table_that_goes_away_is_named_with_no_init_advice(tmp_path: Path) -> None:
    from queuetop.layouts import load_layout, with_tables

    target = parse_target(str(tmp_path / "seed.db"))
    with Database.open(target, create=True) as db:
        db.execute("CREATE TABLE jobs (ID INTEGER PRIMARY KEY, COMMAND TEXT, PROCESSED INTEGER)")
    monitor = Monitor(target, with_tables(load_layout("processed"), "jobs"))
    assert monitor.poll().connected
    with Database.open(target) as db:
        db.execute("DROP TABLE jobs")
    gone = monitor.poll()
    assert gone.state == NO_SCHEMA and gone.error == "table jobs not found (layout processed)"  # not `queuetop init`
    monitor.close()
