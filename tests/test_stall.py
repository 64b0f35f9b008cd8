"""A database that stops answering, or ends the connection: every read has a deadline the server need not keep,
and a connection the server ended is said to be lost, never "refused". Real PostgreSQL: the backend serving the
connection is stopped with SIGSTOP (as a frozen host or a partition without a reset) or ended with
pg_terminate_backend (as an administrator or a restart)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
import urllib.request

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from queuetop.act.queue import Queue
from queuetop.db import ConnectionLost, Database, NotAnswering
from queuetop.db.watchdog import DEADLINE_ENV_VAR
from queuetop.serve.exporter import Exporter, TargetPoller
from queuetop.watch.monitor import CONNECTED, RECONNECTING, Monitor

from .helpers import SilentProxy, stopped_backend, stopped_backends_of, terminate_backend, terminate_backends_of

ENDED = ("lost the connection to the database (the server ended it: terminating connection due to administrator "
         "command)")

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


def test_the_deadline_holds_through_a_proxy_that_goes_silent(pg_backend, short_deadline) -> None:
    """Through a proxy (pgbouncer, NAT, a docker port) the server sees the proxy's ports, not ours: the socket to cut
    is the one the connect opened."""
    import threading

    from queuetop.db import parse_target

    proxy = SilentProxy()
    db = Database.open(parse_target(proxy.target_text(pg_backend.target.value)), purpose="monitor")
    try:
        assert db.fetchone("SELECT 1") == (1,)
        proxy.go_silent()
        outcome: list[BaseException | None] = []

        def read() -> None:
            try:
                db.fetchall("SELECT 1")
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)

        started = time.monotonic()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(short_deadline + 5)
        took = time.monotonic() - started
        assert outcome and isinstance(outcome[0], NotAnswering), (outcome, took)  # before: still waiting
        assert took < short_deadline + 1.5, took
    finally:
        proxy.close()  # first: a read still waiting ends when the proxy's side closes, so close() cannot hang
        db.close()


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
    assert str(raised.value) == ENDED


def test_the_monitor_says_a_connection_the_server_ended_was_lost_and_reconnects(pg_backend, caplog) -> None:
    monitor = Monitor(pg_backend.target, pg_backend.layout, backoff=(0.1,))
    try:
        assert monitor.poll().state == CONNECTED
        terminate_backends_of(pg_backend.target, os.getpid())
        with caplog.at_level(logging.WARNING, logger="queuetop"):
            lost = monitor.poll()
        assert (lost.state, lost.error) == (RECONNECTING, f"{ENDED}; reconnecting")
        assert f"{ENDED}; reconnecting" in caplog.text  # the line `serve` logs
        assert "refused" not in caplog.text
        time.sleep(0.15)
        assert monitor.poll().state == CONNECTED
    finally:
        monitor.close()


def scrape_up(url: str) -> float | None:
    with urllib.request.urlopen(url, timeout=5) as response:
        text = response.read().decode()
    for family in text_string_to_metric_families(text):
        if family.name == "queuetop_up":
            return family.samples[0].value
    return None


def test_serve_says_up_0_soon_after_its_database_stops_answering(pg_backend, short_deadline) -> None:
    with pg_backend.open() as db:
        Queue(db, pg_backend.layout).enqueue_many("email", 2)
    poller = TargetPoller("pg", Monitor(pg_backend.target, pg_backend.layout), 0.2)
    exporter = Exporter([poller], "127.0.0.1", 0)
    exporter.start()
    try:
        deadline = time.monotonic() + 15
        while scrape_up(exporter.url) != 1.0:
            assert time.monotonic() < deadline, "no poll"
            time.sleep(0.05)
        with stopped_backends_of(pg_backend.target, os.getpid()):
            stalled = time.monotonic()
            while scrape_up(exporter.url) != 0.0:  # (the reconnect, on a new backend, may bring it back at once)
                assert time.monotonic() - stalled < 10, "queuetop_up stayed 1 on a database that does not answer"
                time.sleep(0.05)
            took = time.monotonic() - stalled
        assert took < short_deadline + 3.0, took
        assert "not answering" in (poller.state.outcome.error or "") or poller.state.outcome.connected
    finally:
        exporter.stop()


def test_check_on_a_database_that_stops_answering_could_not_check_and_exits_2(pg_backend, short_deadline) -> None:
    env = {**os.environ, "QUEUETOP_DB": "", DEADLINE_ENV_VAR: str(short_deadline)}
    process = subprocess.Popen([sys.executable, "-m", "queuetop", "check", "--db", pg_backend.target.value,
                                "--layout", "native", "--table", f"{pg_backend.layout.schema}.WorkQueue",
                                "--max-depth", "1000", "--for", "20s", "--interval", "0.2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while not _connected(process.pid):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "check never connected"
            time.sleep(0.05)
        time.sleep(0.5)  # a poll or two
        with stopped_backends_of(pg_backend.target, process.pid):
            stalled = time.monotonic()
            out, err = process.communicate(timeout=short_deadline + 5)
            took = time.monotonic() - stalled
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 2, (out, err)
    assert "COULD NOT CHECK" in out and "not answering" in out, out
    assert took < short_deadline + 3.0, took


def _connected(pid: int) -> bool:
    from .helpers import pg_client_ports

    try:
        return bool(pg_client_ports(pid))
    except OSError:
        return False


def test_a_watch_fires_only_for_a_statement_in_flight_past_its_deadline() -> None:
    from queuetop.db.watchdog import Watch

    cuts: list[int] = []
    watch = Watch(10.0, lambda: cuts.append(1) is None)
    assert not watch.fire()  # nothing in flight
    watch.arm()
    assert not watch.fire(time.monotonic())  # in flight, within its deadline
    watch.disarm()
    assert not watch.fire(time.monotonic() + 60)  # returned: never cut afterwards
    watch.arm()
    assert watch.fire(time.monotonic() + 11) and cuts == [1] and watch.fired_after_s is not None
    assert not watch.fire(time.monotonic() + 60)  # once


def test_the_time_the_database_was_away_counts_overlapping_threads_once() -> None:
    from queuetop.load.link import Outages

    outages = Outages()
    first = outages.lost(ConnectionLost("a"))
    second = outages.lost(NotAnswering("b", silent_s=2.0))  # silent for 2 s already: away since then
    time.sleep(0.1)
    outages.back(first)
    outages.back(second)
    figures = outages.figures()
    assert (figures.lost, figures.reconnects) == (2, 2)
    assert 2.0 <= figures.away_s < 2.5, figures  # not 2.1 + 0.1
    assert figures.last_error == "b"


def test_how_long_the_database_has_been_away_is_the_oldest_loss_not_yet_back() -> None:
    """What ends a load's drain at once when the database has been away past AWAY_ENDS_DRAIN_S."""
    from queuetop.load.link import Outages

    outages = Outages()
    assert outages.away_for_s() == 0.0
    first = outages.lost(NotAnswering("silent", silent_s=3.0))  # away since 3 s ago
    second = outages.lost(ConnectionLost("ended"))
    assert 3.0 <= outages.away_for_s() < 3.5
    outages.back(first)
    assert outages.away_for_s() < 0.5  # the other thread is still out, since just now
    outages.back(second)
    assert outages.away_for_s() == 0.0
