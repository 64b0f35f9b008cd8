"""SQLite writers of one process take turns (queuetop/db/sqlite_writers.py): none starves in SQLite's busy
handler while the others keep the file's write lock busy, as a saturated `queuetop load` on SQLite did (a
consumer gave up with "database is locked" after six busy timeouts, and the whole run stopped)."""

from __future__ import annotations

import threading
import time

import pytest

from queuetop.db import Database, connection, parse_target, sqlite_writers
from queuetop.db.sqlite_writers import TurnLock, writes


def test_writes_are_told_from_reads_by_their_first_word_and_a_with_by_its_body():
    assert writes("/* queuetop */ UPDATE t SET a = 1") and writes("insert into t values (1)")
    assert writes("WITH RECURSIVE n(i) AS (SELECT 1) INSERT INTO t SELECT i FROM n")
    assert writes("CREATE INDEX i ON t (a)") and writes("/* queuetop */ DELETE FROM t")
    assert not writes("/* queuetop */ SELECT 'UPDATE' FROM t") and not writes("WITH c AS (SELECT 1) SELECT * FROM c")
    assert not writes("BEGIN IMMEDIATE") and not writes("PRAGMA wal_checkpoint(PASSIVE)")


def test_writers_out_of_patience_are_served_in_the_order_they_came():
    lock, order, threads = TurnLock(), [], []
    assert lock.acquire(1.0)
    for n in range(5):
        def wait_turn(n: int = n) -> None:
            assert lock.acquire(5.0)
            order.append(n)
            lock.release()

        threads.append(threading.Thread(target=wait_turn))
        threads[-1].start()
        while len(lock._line) < n + 1:  # this one is in line before the next one comes
            time.sleep(0.001)
    lock.release()
    for thread in threads:
        thread.join(5)
    assert order == [0, 1, 2, 3, 4]
    assert lock.acquire(0.0)  # free again once the line is served


def test_a_wait_past_the_timeout_leaves_the_line_and_the_lock_to_the_others():
    lock = TurnLock()
    assert lock.acquire(1.0)
    assert not lock.acquire(0.05)
    lock.release()
    assert lock.acquire(0.0) and not lock._line


def test_no_writer_starves_while_the_others_keep_the_file_busy(tmp_path, monkeypatch):
    """Eight threads, each on its own connection, write as fast as they can for two seconds with a busy timeout
    of 0.2 s: in SQLite's busy handler one of them missed the lock that long within a second (checked by running
    this with the turns taken out); in turns, none does."""
    monkeypatch.setattr(connection, "SQLITE_BUSY_TIMEOUT_MS", 200)
    target = parse_target(str(tmp_path / "busy.db"))
    with Database.open(target, create=True) as db:
        db.execute("CREATE TABLE counter (n INTEGER NOT NULL)")
        db.execute("INSERT INTO counter VALUES (0)")
    stop, errors, done = time.monotonic() + 2.0, [], [0] * 8

    def write(k: int) -> None:
        try:
            with Database.open(target) as db:
                while time.monotonic() < stop:
                    if k % 2:
                        with db.transaction():  # several statements as one
                            n = db.fetchone("SELECT n FROM counter")[0]
                            db.execute("UPDATE counter SET n = ?", (n + 1,))
                    else:
                        db.execute("UPDATE counter SET n = n + 1")
                    done[k] += 1
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors, errors[0]
    assert all(done), done  # every writer got its turns
    with Database.open(target) as db:
        assert db.fetchone("SELECT n FROM counter")[0] == sum(done)  # and no write was lost


@pytest.mark.parametrize("kind", ["write", "transaction"])
def test_a_read_takes_no_turn_but_a_write_waits_for_one(tmp_path, monkeypatch, kind):
    monkeypatch.setattr(connection, "SQLITE_BUSY_TIMEOUT_MS", 300)
    target = parse_target(str(tmp_path / "turns.db"))
    with Database.open(target, create=True) as db:
        db.execute("CREATE TABLE t (n INTEGER)")
    lock = sqlite_writers.lock_for(str((tmp_path / "turns.db").resolve()))
    assert lock.acquire(1.0)  # another writer of this process holds the turn
    try:
        with Database.open(target) as db:
            assert db.fetchall("SELECT n FROM t") == []  # reads go ahead
            started = time.monotonic()
            with pytest.raises(Exception, match="did not answer in time"):
                if kind == "write":
                    db.execute("INSERT INTO t VALUES (1)")
                else:
                    with db.transaction():
                        db.execute("INSERT INTO t VALUES (1)")
            assert time.monotonic() - started >= connection.SQLITE_BUSY_TIMEOUT_MS / 1000 * 0.9
    finally:
        lock.release()
    with Database.open(target) as db:
        assert db.fetchall("SELECT n FROM t") == []  # nothing half-written
