"""The OpenMetrics exporter on real queues: scraped over HTTP on a real socket (127.0.0.1, a free port) and
read back with prometheus_client's own OpenMetrics parser; several targets, one refusing connections and one
hanging, without either holding up the live ones; one poll per interval, never one per scrape."""

from __future__ import annotations

import errno
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from queuetop.act.queue import Queue
from queuetop.cli import _parser, main
from queuetop.db import parse_target
from queuetop.serve.exporter import Exporter, TargetPoller, TargetState
from queuetop.watch.monitor import Monitor

from .conftest import Backend

OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"
REFUSED = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=1;DATABASE=queuetop_test;UID=postgres"


def scrape(url: str) -> tuple[dict[tuple[str, tuple], float], str, float]:
    """(sample name + sorted labels -> value, the content type, seconds the scrape took)."""
    started = time.perf_counter()
    request = urllib.request.Request(url, headers={"Accept": OPENMETRICS})
    with urllib.request.urlopen(request, timeout=10) as response:
        body, content_type = response.read().decode(), response.headers["Content-Type"]
    took = time.perf_counter() - started
    samples = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples, content_type, took


def value(samples: dict, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def names_for(samples: dict, target: str) -> set[str]:
    return {name for name, labels in samples if ("target", target) in labels}


class Counting(Monitor):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.polls = 0

    def poll(self):
        self.polls += 1
        return super().poll()


def poller(name: str, backend: Backend | None, interval: float, db: str | None = None) -> TargetPoller:
    target = parse_target(db) if db else backend.target
    layout = backend.layout if backend else None
    monitor = Counting(target, layout, backoff=(0.2,)) if layout else Counting(target, backoff=(0.2,))
    return TargetPoller(name, monitor, interval)


@pytest.fixture
def exporters():
    started: list[Exporter] = []

    def start(*pollers: TargetPoller) -> Exporter:
        exporter = Exporter(list(pollers), "127.0.0.1", 0)
        exporter.start()
        started.append(exporter)
        return exporter

    yield start
    for exporter in started:
        exporter.stop()


def wait_until(predicate, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_a_scrape_is_the_queue_s_figures_as_openmetrics(backend, exporters):
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("email", 4)
        queue.enqueue_many("report", 2)
        for job in queue.claim("w", ["report"], batch=2, lease=30):
            queue.complete(job.id, job.token)
        queue.enqueue_many("sms", 1)
        queue.claim("w", ["sms"], batch=1, lease=30)
    exporter = exporters(poller("main", backend, 0.2))
    wait_until(lambda: exporter.pollers[0].state.snapshot is not None, "the first poll")
    samples, content_type, _ = scrape(exporter.url)
    assert content_type.startswith("application/openmetrics-text")
    q = {"target": "main", "layout": "native"}
    assert value(samples, "queuetop_up", target="main") == 1.0
    assert value(samples, "queuetop_poll_seconds", target="main") > 0
    assert value(samples, "queuetop_depth", **q, job_type="email") == 4.0
    assert value(samples, "queuetop_claimed", **q, job_type="sms") == 1.0
    assert value(samples, "queuetop_arrivals_total", **q, job_type="email") == 4.0
    assert value(samples, "queuetop_completions_total", **q, job_type="report") == 2.0
    assert value(samples, "queuetop_wait_seconds", **q, job_type="report", quantile="0.95") >= 0
    # Null is absent, never 0: no completion of email yet (no wait quantiles), no pending sms (no oldest age),
    # and the native shape cannot know lost jobs at all (it shows scheduled ones: none here).
    assert value(samples, "queuetop_wait_seconds", **q, job_type="email", quantile="0.95") is None
    assert value(samples, "queuetop_oldest_age_seconds", **q, job_type="sms") is None
    assert value(samples, "queuetop_oldest_age_seconds", **q, job_type="email") >= 0
    assert "queuetop_lost" not in {name for name, _ in samples}
    assert value(samples, "queuetop_scheduled", **q, job_type="email") == 0.0


def test_scrapes_read_the_latest_poll_and_never_poll_themselves(sqlite_backend, exporters):
    exporter = exporters(poller("main", sqlite_backend, 60.0))  # one poll now, the next a minute later
    wait_until(lambda: exporter.pollers[0].state.snapshot is not None, "the first poll")
    for _ in range(10):
        samples, _, _ = scrape(exporter.url)
        assert value(samples, "queuetop_up", target="main") == 1.0
    assert exporter.pollers[0].monitor.polls == 1


class Blackhole:
    """A server that accepts connections and never says a word: a database host that hangs."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self) -> None:
        self.socket.close()
        for connection in self.held:
            connection.close()


def test_several_targets_one_endpoint_a_dead_and_a_hanging_one_never_hold_up_the_live_ones(
        sqlite_backend, pg_backend, exporters):  # fmt: skip
    for backend, count in ((sqlite_backend, 3), (pg_backend, 7)):
        with backend.open() as db:
            Queue(db, backend.layout).enqueue_many("email", count)
    hole = Blackhole()
    try:
        hanging = f"DRIVER={{PostgreSQL Unicode}};SERVER=127.0.0.1;PORT={hole.port};DATABASE=x;UID=postgres"
        exporter = exporters(poller("file", sqlite_backend, 0.1), poller("pg", pg_backend, 0.1),
                             poller("refused", None, 0.1, db=REFUSED), poller("hanging", None, 0.1, db=hanging))
        live = exporter.pollers[:2]
        # Within the hanging target's 5 s login timeout: polled in turn, the live ones would wait for it.
        wait_until(lambda: all(p.monitor.polls >= 5 for p in live), "five polls of each live target", timeout=4.0)
        assert exporter.pollers[3].state.outcome is None  # still stuck in its first connect
        samples, _, took = scrape(exporter.url)
        assert took < 1.0
        assert {t: value(samples, "queuetop_up", target=t) for t in ("file", "pg", "refused", "hanging")} == {
            "file": 1.0, "pg": 1.0, "refused": 0.0, "hanging": 0.0}
        assert value(samples, "queuetop_depth", target="file", layout="native", job_type="email") == 3.0
        pg_layout = pg_backend.layout.name
        assert value(samples, "queuetop_depth", target="pg", layout=pg_layout, job_type="email") == 7.0
        assert names_for(samples, "refused") == {"queuetop_up", "queuetop_poll_seconds"}  # no queue series at all
        assert names_for(samples, "hanging") == {"queuetop_up"}  # not even a poll time: its first is not over
    finally:
        hole.close()


def test_serve_from_the_command_line_listens_on_loopback_and_stops_on_ctrl_c(sqlite_backend):
    assert _parser().parse_args(["serve"]).listen == "127.0.0.1:9187"
    with sqlite_backend.open() as db:
        Queue(db, sqlite_backend.layout).enqueue_many("email", 2)
    env = {**os.environ, "QUEUETOP_DB": ""}
    process = subprocess.Popen([sys.executable, "-m", "queuetop", "serve", "--db", sqlite_backend.target.value,
                                "--listen", "127.0.0.1:0", "--interval", "0.2"], stderr=subprocess.PIPE, text=True,
                               env=env)  # fmt: skip
    try:
        line = process.stderr.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/metrics", line)
        assert url, line
        wait_until(lambda: value(scrape(url.group())[0], "queuetop_up", target="default") == 1.0, "a poll")
        samples, _, _ = scrape(url.group())
        assert value(samples, "queuetop_depth", target="default", layout="native", job_type="email") == 2.0
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_serve_stops_cleanly_on_sigterm_and_sighup(sqlite_backend, signum):
    env = {**os.environ, "QUEUETOP_DB": ""}
    process = subprocess.Popen([sys.executable, "-m", "queuetop", "serve", "--db", sqlite_backend.target.value,
                                "--listen", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    try:
        assert "serving http://127.0.0.1:" in process.stderr.readline()
    finally:
        process.send_signal(signum)
        assert process.wait(timeout=10) == 0


@pytest.mark.parametrize(("listen", "phrase"), [("9187", "is not HOST:PORT"), (":9187", "is not HOST:PORT"),
                                                ("localhost:http", "is not HOST:PORT")])  # fmt: skip
def test_a_bad_listen_address_is_one_clear_line(listen, phrase, capsys):
    assert main(["serve", "--db", "x.db", "--listen", listen]) == 2
    assert phrase in capsys.readouterr().err


def test_stats_openmetrics_is_one_exposition_for_the_textfile_collector(backend, capsys):
    from .test_check import where

    with backend.open() as db:
        Queue(db, backend.layout).enqueue_many("email", 5)
    assert main(["stats", "--format", "openmetrics", *where(backend)]) == 0
    text = capsys.readouterr().out
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    (depth,) = families["queuetop_depth"].samples
    assert depth.value == 5.0 and depth.labels["job_type"] == "email" and depth.labels["target"] == "default"
    assert families["queuetop_up"].samples[0].value == 1.0
    assert families["queuetop_lost"].samples == []  # the shape cannot know: absent


def test_a_target_that_never_answered_has_up_0_and_nothing_else():
    from queuetop.serve.exporter import exposition

    families = {f.name: f for f in text_string_to_metric_families(exposition([TargetState("x")]))}
    assert [(s.labels, s.value) for s in families["queuetop_up"].samples] == [({"target": "x"}, 0.0)]
    assert all(not f.samples for name, f in families.items() if name != "queuetop_up")


def test_the_exposition_is_built_once_per_poll_however_many_scrape_it(sqlite_backend, exporters, monkeypatch):
    import dataclasses

    from queuetop.serve.exporter import SnapshotMetrics

    builds = []
    original = SnapshotMetrics.collect
    monkeypatch.setattr(SnapshotMetrics, "collect", lambda self: (builds.append(1), (yield from original(self))))
    exporter = exporters(poller("main", sqlite_backend, 60.0))
    wait_until(lambda: exporter.pollers[0].state.snapshot is not None, "the first poll")
    first = [scrape(exporter.url)[0] for _ in range(5)]
    assert len(builds) == 1 and all(samples == first[0] for samples in first)
    for _ in range(3):
        with urllib.request.urlopen(exporter.url, timeout=10) as response:  # the classic text format: its own
            assert b"queuetop_up" in response.read() and "text/plain" in response.headers["Content-Type"]
    assert len(builds) == 2
    exporter.pollers[0].state = dataclasses.replace(exporter.pollers[0].state)  # what a new poll publishes
    scrape(exporter.url)
    assert len(builds) == 3


def test_breached_slos_are_series_of_their_own_and_absent_when_met(sqlite_backend, exporters):
    from queuetop.watch.slo import Limit, Slo, Slos

    with sqlite_backend.open() as db:
        Queue(db, sqlite_backend.layout).enqueue_many("email", 5)
        Queue(db, sqlite_backend.layout).enqueue_many("report", 1)
    slos = Slos((Limit(Slo.MAX_DEPTH, 2),))
    exporter = exporters(TargetPoller("main", Monitor(sqlite_backend.target), 0.1, slos=slos))
    wait_until(lambda: exporter.pollers[0].state.snapshot is not None, "the first poll")
    samples, _, _ = scrape(exporter.url)
    assert value(samples, "queuetop_slo_breach", target="main", job_type="email", slo="max_depth") == 1.0
    assert value(samples, "queuetop_slo_breach", target="main", job_type="report", slo="max_depth") is None
    wait_until(lambda: exporter.pollers[0].state.breaches and exporter.pollers[0].state.breaches[0].lasted_s > 0.3,
               "the breach to last a few polls")  # fmt: skip
    samples, _, _ = scrape(exporter.url)
    assert value(samples, "queuetop_slo_breach_duration_seconds", target="main", job_type="email",
                 slo="max_depth") > 0.3  # fmt: skip


def test_twenty_scrapers_connecting_at_once_are_all_taken_in_without_a_syn_retry():
    """The listen backlog holds 20 connections the server has not accepted yet (socketserver's default of 5
    held 6: the kernel dropped the other SYNs and each scraper retried a second later)."""
    import select
    import socket

    exporter = Exporter([], "127.0.0.1", 0)
    exporter.bind()  # listening, but not accepting: every connection waits in the backlog
    clients = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(20)]
    try:
        for client in clients:
            client.setblocking(False)
            assert client.connect_ex(("127.0.0.1", exporter.port)) in (0, errno.EINPROGRESS)
        deadline = time.monotonic() + 0.5  # well before the kernel's first SYN retry (1 s)
        pending = set(clients)
        while pending and time.monotonic() < deadline:
            _, writable, _ = select.select([], list(pending), [], max(0.0, deadline - time.monotonic()))
            pending -= set(writable)
        assert not pending, f"{len(pending)} of 20 connections not taken in by the listen backlog"
        assert all(client.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 for client in clients)
    finally:
        for client in clients:
            client.close()
        exporter.stop()
