"""The load driver on real databases: failures and crashes lose nothing, duplicate nothing, and a stop leaves
no claim behind. Every outcome is checked in the tables themselves, beside the driver's own report."""

from __future__ import annotations

import time

from queuetop.load.command import start_background_load
from queuetop.load.config import ConsumerPool, LoadConfig, WorkTime, demo_config
from queuetop.load.driver import LoadRun
from queuetop.load.report import build_report

from .helpers import completed_rows, queue_rows

RUN_LIMIT_S = 60


def held_claims(backend) -> dict[int, tuple]:
    with backend.open() as db:
        return {job_id: row for job_id, row in queue_rows(db, backend.layout).items() if row[1] is not None}


def report_of(backend, run: LoadRun):
    with backend.open() as db:
        return build_report(db, backend.layout, run.facts())


def test_jobs_run_with_failures_and_crashes_accounts_for_every_job_once(backend):
    config = LoadConfig(
        types=(("email", 3.0), ("report", 1.0)), producers=2, pools=(ConsumerPool(4),), rate=None, jobs=400,
        work={"report": WorkTime("uniform", 1, 4)}, default_work=WorkTime("fixed", 1), fail=0.15, crash=0.05,
        lease_s=0.5, batch=2, release_every_s=0.2, max_attempts=3, retry_after_s=0.05, seed=4,
    )  # fmt: skip
    run = LoadRun(backend.target, config, backend.layout, until_done=True).start()
    finished = run.wait(RUN_LIMIT_S)
    run.shutdown()
    assert finished and run.error is None, run.progress_line()
    report = report_of(backend, run)

    assert report.ok and report.duplicates == 0 and report.lost == 0
    assert report.enqueued == 400 == report.accounted
    assert report.completed + report.dead == 400, "a --jobs run ends when every job is completed or dead"
    assert report.pending == report.claimed == 0
    assert report.failed_attempts > 0 and report.crashed > 0
    assert report.crashed_recovered == report.crashed
    assert sum(t.enqueued for t in report.types) == 400
    assert report.processing_s.p50 is not None and report.wait_s.p99 is not None
    # The tables say the same: each job once, in the completed table, with the outcome the report counted.
    with backend.open() as db:
        done = completed_rows(db, backend.layout)
        left = queue_rows(db, backend.layout)
    assert len(done) == 400 and not left
    outcomes = [row[1] for row in done.values()]
    assert outcomes.count("succeeded") == report.completed and outcomes.count("dead") == report.dead
    assert all(row[2] <= config.max_attempts + 1 for row in done.values())


def test_stopping_mid_run_gives_back_every_claim_at_once(backend):
    # A long lease and no sweeper run within the test: without the clean stop, held and abandoned claims
    # would sit there for 30 s.
    config = LoadConfig(
        types=(("resize", 1.0),), producers=1, pools=(ConsumerPool(3),), rate=300.0, default_work=WorkTime("fixed", 20),
        crash=0.3, lease_s=30.0, batch=5, seed=11,
    )  # fmt: skip
    run = LoadRun(backend.target, config, backend.layout).start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (run.counters().crashed and run.counters().succeeded > 20):
        time.sleep(0.1)
    started = time.monotonic()
    run.shutdown()
    assert time.monotonic() - started < 5
    assert run.error is None
    assert not held_claims(backend), "a claim was left to wait out its lease"
    counters = run.counters()
    assert counters.crashed > 0 and counters.recovered_at_stop > 0
    report = report_of(backend, run)
    assert report.ok and report.enqueued == report.accounted
    assert report.claimed == 0 and report.crashed_recovered == report.crashed


def test_a_crashed_claim_released_at_the_stop_ends_there_in_the_ledger(sqlite_backend):
    """At a stop each consumer releases the claims it abandoned, long before their lease runs out; from then the
    job is anyone's, and a consumer still finishing its last claim may take it (under a loaded machine one did:
    the demo's stop said `1 DUPLICATED`). The abandoned claim ends at that release, so such a claim is no
    overlap; a claim taken while it is still held is one."""
    config = LoadConfig(types=(("resize", 1.0),), producers=1, pools=(ConsumerPool(2),), rate=300.0,
                        default_work=WorkTime("fixed", 5), crash=0.3, lease_s=30.0, batch=5, seed=7)  # fmt: skip
    run = LoadRun(sqlite_backend.target, config, sqlite_backend.layout).start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not run.counters().crashed:
        time.sleep(0.05)
    while_held = time.monotonic()  # the crashed claims so far are held now, and until the stop
    run.shutdown()
    assert run.counters().recovered_at_stop > 0
    released = [job_id for job_id, _ in run.facts().abandoned]
    now = time.monotonic()
    run.ledger.claimed(released, "late", now, now, config.lease_s)  # what the race does, after the releases
    assert run.ledger.duplicates() == []
    # and the check sees a claim made while a crashed one still held the job
    run.ledger.claimed(released[:1], "early", while_held, while_held, config.lease_s)
    assert [duplicate.job_id for duplicate in run.ledger.duplicates()] == released[:1]


def test_the_demo_load_runs_in_the_background_and_stops_cleanly(sqlite_backend):
    background = start_background_load(sqlite_backend.target, demo_config(), sqlite_backend.layout)
    time.sleep(2.0)
    line = background.progress_line()
    assert "enqueued" in line and "in flight" in line
    summary = background.stop()
    assert "none lost or duplicated" in summary, summary
    assert not held_claims(sqlite_backend)
    with sqlite_backend.open() as db:
        types = {row[0] for row in queue_rows(db, sqlite_backend.layout).values()}
        types |= {row[0] for row in completed_rows(db, sqlite_backend.layout).values()}
    assert types <= {"email", "webhook", "thumbnail", "report"} and len(types) >= 2
