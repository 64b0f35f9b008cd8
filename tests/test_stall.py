"""A database that stops answering, or ends the connection: every read has a deadline the server need not keep,
and a connection the server ended is said to be lost, never "refused". Real PostgreSQL: the backend serving the
connection is stopped with SIGSTOP (as a frozen host or a partition without a reset) or ended with
pg_terminate_backend (as an administrator or a restart)."""

from __future__ import annotations

import time

import pytest

from queuetop.db import ConnectionLost, Database, NotAnswering
from queuetop.db.watchdog import DEADLINE_ENV_VAR

from .helpers import stopped_backend, terminate_backend

DEADLINE_S = 2.0


@pytest.fixture
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setenv(DEADLINE_ENV_VAR, str(DEADLINE_S))
    return DEADLINE_S


def test_a_read_on_a_stalled_server_ends_at_its_deadline_as_not_answering(pg_backend, short_deadline) -> None:
    with Database.open(pg_backend.target, purpose="monitor") as db:
        assert db.client_port is not None
        with stopped_backend(pg_backend.target, db.client_port):
            started = time.monotonic()
            with pytest.raises(NotAnswering) as raised:
                db.fetchall("SELECT 1")
            took = time.monotonic() - started
        assert short_deadline - 0.1 <= took < short_deadline + 1.5, took
        assert "not answering: no reply for 2 s" in str(raised.value)
        with pytest.raises(ConnectionLost):  # the connection is gone for good: the caller opens another
            db.fetchall("SELECT 1")


def test_an_owner_that_stops_waiting_cuts_the_statement_in_flight(pg_backend) -> None:
    import threading

    with Database.open(pg_backend.target, purpose="worker") as db:
        assert db.client_port is not None
        assert not db.abandon()  # nothing in flight: nothing cut
        with stopped_backend(pg_backend.target, db.client_port):
            threading.Timer(0.5, db.abandon).start()
            started = time.monotonic()
            with pytest.raises(NotAnswering):
                db.fetchall("SELECT 1")
            assert time.monotonic() - started < 3.0


def test_a_connection_the_server_ended_is_lost_not_refused(pg_backend) -> None:
    with Database.open(pg_backend.target, purpose="monitor") as db:
        assert db.client_port is not None
        terminate_backend(pg_backend.target, db.client_port)
        with pytest.raises(ConnectionLost) as raised:
            db.fetchall("SELECT 1")
    assert str(raised.value) == ("lost the connection to the database (the server ended it: terminating connection "
                                 "due to administrator command)")
