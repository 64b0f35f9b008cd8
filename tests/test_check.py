"""`queuetop check` on real queues (a SQLite file and the PostgreSQL server): the exit code in each state — ok,
breach, could not check — as cron, CI and Nagios read it, the printed breaches and the JSON."""

from __future__ import annotations

import json
import time

import pytest

from queuetop.act.queue import Queue
from queuetop.serve.check import Status, report_lines, run_check
from queuetop.watch.collector import collector_for
from queuetop.watch.slo import Limit, Slo, Slos

from .conftest import PG_TARGET, Backend
from .helpers import enqueue
from .seedshapes import drop_seed, push
from .test_cli import queuetop
from .test_shapes import make_seeded


def where(backend: Backend) -> list[str]:
    """The options that name the backend's queue on the command line."""
    if backend.name == "sqlite":
        return ["--db", backend.target.value]
    return ["--db", backend.target.value, "--layout", "native", "--table", f"{backend.layout.schema}.WorkQueue"]


def test_ok_exits_0_and_says_how_many_checks_were_met(backend):
    enqueue(backend, "email", 3)
    result = queuetop("check", *where(backend), "--max-depth", "10", "--max-timed-out", "0")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK: 2 checks met, 1 poll" in result.stdout


def test_a_breach_exits_1_and_names_the_type_the_figure_and_the_limit(backend):
    enqueue(backend, "email", 5)
    enqueue(backend, "report", 1)
    result = queuetop("check", *where(backend), "--max-depth", "3", "--slo", "report:max_depth=0")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert "BREACH: 2 of 2 checks" in lines[0]
    assert any("email depth 5 > 3 (max_depth)" in line for line in lines)
    assert any("report depth 1 > 0 (max_depth)" in line for line in lines)  # its own limit, not the default


def test_timed_out_claims_breach_and_json_carries_what_a_history_would_keep(backend):
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("email", 2)
        assert len(queue.claim("w1", ["email"], batch=2, lease=0.2)) == 2
    time.sleep(0.5)
    result = queuetop("check", *where(backend), "--max-timed-out", "0", "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "breach" and report["exit_code"] == 1
    (breach,) = report["targets"][0]["breaches"]
    assert {k: breach[k] for k in ("job_type", "slo", "limit", "value")} == {
        "job_type": "email", "slo": "max_timed_out", "limit": 0.0, "value": 2.0}
    assert breach["taken_at"] and breach["since"] == breach["taken_at"]


def test_an_slo_the_shape_cannot_know_exits_2_unless_something_is_breached(backend):
    enqueue(backend, "email", 5)
    unknown = queuetop("check", *where(backend), "--max-lost", "0", "--max-depth", "10")
    assert unknown.returncode == 2, unknown.stdout
    assert "NOT CHECKABLE  max_lost: layout native cannot know lost jobs" in unknown.stdout
    breach = queuetop("check", *where(backend), "--max-lost", "0", "--max-depth", "1")
    assert breach.returncode == 1  # the breach is what needs acting on


@pytest.mark.parametrize("db", [
    "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=1;DATABASE=queuetop_test;UID=postgres",  # nothing listens
    "absent.db",  # no such file
])  # fmt: skip
def test_an_unreachable_target_exits_2_could_not_check(db, tmp_path):
    result = queuetop("check", "--db", str(tmp_path / db) if db.endswith(".db") else db, "--max-depth", "1")
    assert result.returncode == 2
    assert "COULD NOT CHECK" in result.stdout and "Traceback" not in result.stdout + result.stderr


def test_no_slo_at_all_is_could_not_check(backend):
    result = queuetop("check", *where(backend))
    assert result.returncode == 2 and "no SLO to check" in result.stdout


def test_check_for_a_while_reports_only_what_was_breached_at_every_poll(backend):
    """Between polls the queue changes: email stays too deep throughout, report is too deep at one poll only."""
    enqueue(backend, "email", 5)
    steps = iter([lambda: enqueue(backend, "report", 3), lambda: drain(backend, "report"), lambda: None])

    def session():
        db = backend.open("monitor")
        return collector_for(db, backend.layout).poll, db.close

    elapsed = [0.0]

    def sleep(seconds: float) -> None:  # time passes as the queue changes
        elapsed[0] += seconds
        next(steps)()

    limits = Slos((Limit(Slo.MAX_DEPTH, 2),))
    result = run_check("t", "q", session, limits, for_s=2.0, interval_s=1.0, sleep=sleep, clock=lambda: elapsed[0])
    assert result.polls == 3
    assert [b.job_type for b in result.breaches] == ["email"]
    assert [b.job_type for b in result.passing] == ["report"]
    assert result.status is Status.BREACH
    assert any("not sustained  report depth 3 > 2" in line for line in report_lines(result))


def drain(backend: Backend, job_type: str) -> None:
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        for job in queue.claim("w", [job_type], batch=100, lease=30):
            queue.complete(job.id, job.token)


def test_check_on_postgres_and_a_dead_server_at_once_exits_2_with_both_reported(tmp_path, pg_backend):
    enqueue(pg_backend, "email", 1)
    config = tmp_path / "config.toml"
    config.write_text(f"""
[targets.live]
db = "{PG_TARGET}"
layout = "native"
table = "{pg_backend.layout.schema}.WorkQueue"
[targets.dead]
db = "DRIVER={{PostgreSQL Unicode}};SERVER=127.0.0.1;PORT=1;DATABASE=x;UID=postgres"
[slo]
max_depth = 10
""")
    result = queuetop("--config", str(config), "check", "-t", "live", "-t", "dead", "--json")
    assert result.returncode == 2, result.stderr
    report = {t["target"]: t for t in json.loads(result.stdout)["targets"]}
    assert report["live"]["status"] == "ok" and report["live"]["judged"] == 1
    assert report["dead"]["status"] == "could not check" and report["dead"]["error"]


@pytest.mark.parametrize("backend_name", ["sqlite", "postgres"])
def test_on_a_seed_s_own_table_what_the_shape_cannot_know_is_said_not_passed(tmp_path, backend_name):
    """Seed 002's work_queue has no times: depth is checked against its own rows, wait cannot be."""
    seeded = make_seeded("work_queue", backend_name, tmp_path)
    try:
        with seeded.open() as db:
            for i in range(4):
                push(db, seeded.tables, payload=f"job {i}")
        breach = seeded.cli("check", "--max-depth", "3", "--max-wait-p95", "5")
        assert breach.returncode == 1, breach.stdout + breach.stderr
        assert "depth 4 > 3" in breach.stdout
        assert "NOT CHECKABLE  max_wait_p95_s: layout work_queue cannot know wait p95" in breach.stdout
        unknown = seeded.cli("check", "--max-depth", "10", "--max-wait-p95", "5")
        assert unknown.returncode == 2, unknown.stdout
    finally:
        with seeded.open() as db:
            drop_seed(db, seeded.tables)
