"""The real thing end to end: Prometheus (Debian's package, on loopback, a fresh data folder, a scrape and an
evaluation every second) scrapes `queuetop serve` watching a PostgreSQL queue, with the rules `queuetop alerts`
made from an SLO. A backlog that `queuetop load` builds (more jobs in than its consumer takes out) makes the
depth SLO's alert and the backing-up alert fire, as Prometheus' HTTP API says; the consumers catching up resolve
them; a database that stops makes the monitor's own alert fire. The server is a
cluster of the test's own (tests/private_pg.py), so stopping it stops nobody else's."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from queuetop.act.queue import Queue
from queuetop.db import Database, parse_target
from queuetop.layouts import NATIVE
from queuetop.layouts.schema import init_schema

from .private_pg import PrivateServer, _free_port
from .test_cli import queuetop

pytestmark = pytest.mark.postgres
PROMETHEUS = shutil.which("prometheus") or "prometheus"  # absent: the test fails, saying so (setup.sh installs it)


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def wait_until(condition, what: str, timeout_s: float = 40.0):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.25)
    return value


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[PrivateServer, str]]:
    with prometheus_over_serve(tmp_path, "--max-depth", "50", "--for", "2s", "--backing-up-for", "3s") as watching:
        yield watching


@contextmanager
def prometheus_over_serve(tmp_path: Path, *alerts: str) -> Iterator[tuple[PrivateServer, str]]:
    """A queue on a private server, `queuetop serve` on it, and Prometheus scraping that with the rules of
    `queuetop alerts ALERTS` (files in `tmp_path`); yields the server and Prometheus' base URL. Also
    scripts/alert_screenshot.py's, for the picture in docs/metrics.md."""
    server = PrivateServer()
    processes: list[subprocess.Popen] = []
    try:
        with Database.open(parse_target(server.target_text)) as db:
            init_schema(db, NATIVE)
        env = {**os.environ, "QUEUETOP_DB": ""}
        serve = subprocess.Popen([sys.executable, "-m", "queuetop", "serve", "--db", server.target_text, "--listen",
                                  "127.0.0.1:0", "--interval", "0.3"], stderr=subprocess.PIPE, text=True, env=env)
        processes.append(serve)
        exporter = re.search(r"http://(127\.0\.0\.1:\d+)/metrics", serve.stderr.readline())
        assert exporter, "serve said where it listens"
        rules = queuetop("alerts", *alerts)
        assert rules.returncode == 0, rules.stderr
        (tmp_path / "queuetop.rules.yml").write_text(rules.stdout)
        config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                  "rule_files": ["queuetop.rules.yml"],
                  "scrape_configs": [{"job_name": "queuetop", "static_configs": [{"targets": [exporter.group(1)]}]}]}
        (tmp_path / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        port = _free_port()
        processes.append(subprocess.Popen(
            [PROMETHEUS, "--config.file=prometheus.yml", f"--storage.tsdb.path={tmp_path / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}"], cwd=tmp_path, stdout=subprocess.DEVNULL,
            stderr=(tmp_path / "prometheus.log").open("w")))  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _ready(base), "Prometheus to be ready")
        yield server, base
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        server.close()


def _ready(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def firing(base: str) -> set[tuple[str, str | None]]:
    """(alert name, job type) of the alerts Prometheus says are firing."""
    alerts = get_json(f"{base}/api/v1/alerts")["data"]["alerts"]
    return {(a["labels"]["alertname"], a["labels"].get("job_type")) for a in alerts if a["state"] == "firing"}


def backlog(server: PrivateServer, log: Path) -> subprocess.Popen:
    """`queuetop load` building a backlog of email jobs: 40 a second in, one consumer taking 0.2 s a job out."""
    return subprocess.Popen([sys.executable, "-m", "queuetop", "load", "--db", server.target_text, "--types",
                             "email:1", "--rate", "40", "--producers", "1", "--consumers", "1", "--work", "fixed:200",
                             "--duration", "120"], env={**os.environ, "QUEUETOP_DB": ""},
                            stdout=subprocess.DEVNULL, stderr=log.open("w"))  # fmt: skip


def test_a_backlog_fires_the_depth_and_backing_up_alerts_catching_up_resolves_them_a_stopped_database_fires_its_own(
        watched, tmp_path):  # fmt: skip
    server, base = watched
    load = backlog(server, tmp_path / "load.log")
    try:
        wait_until(lambda: {("QueuetopQueueTooDeep", "email"), ("QueuetopBackingUp", "email")} <= firing(base),
                   "the depth and backing-up alerts to fire")  # fmt: skip
    finally:
        load.send_signal(signal.SIGINT)
        load.wait(timeout=30)
    with Database.open(parse_target(server.target_text)) as db:
        queue = Queue(db)
        while jobs := queue.claim("consumer", batch=100):  # the consumers catch up
            for job in jobs:
                queue.complete(job.id, job.token)
    wait_until(lambda: not {"QueuetopQueueTooDeep", "QueuetopBackingUp"} & {name for name, _ in firing(base)},
               "the depth and backing-up alerts to resolve")  # fmt: skip
    assert ("QueuetopCannotRead", None) not in firing(base)
    server.stop()
    wait_until(lambda: ("QueuetopCannotRead", None) in firing(base), "the monitor's alert to fire")
