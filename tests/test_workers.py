"""Workers read from the claims, a dead worker's claims released, scheduled jobs made available: on real SQLite
files and the real PostgreSQL server, on the native schema and on seed 004's own dbo.Job_Queue (its own DDL,
its own batch claim)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
import sqlglot
from sqlfluff.core import FluffConfig, Linter

from queuetop.act.queue import Queue
from queuetop.act.workers import make_available, no_claimer, read_workers, release_worker
from queuetop.db import Database, UsageError, parse_target
from queuetop.db.dialects import MSSQLDialect
from queuetop.layouts import NATIVE, load_layout
from queuetop.layouts.sql import Statements

from .helpers import FakeClock, completed_rows, layout_sql, native_queue_file, queue_rows, travel
from .seedshapes import QUEUESAMPLE_JOB_TYPES, create_seed, drop_seed, finish, pop, push, worker_guid
from .test_cli import queuetop
from .test_shapes import Seeded, make_seeded


# -- the native schema -----------------------------------------------------------------------------------------
@pytest.fixture
def two_workers(backend):
    """`alive` keeps working (one claim in flight, one timed out that it will get back to, one completion and one
    failure); `crashed` took three jobs with a 5 s lease and went silent. The queue's times run on the database's
    clock, so time passes by moving the stored times into the past (`travel`): 4 s to the completions, 10 s in
    all."""
    db = Database.open(backend.target)
    queue = Queue(db, backend.layout)
    queue.enqueue_many("email", 10)
    crashed = queue.claim("crashed", batch=3, lease=5)
    done, failed = queue.claim("alive", batch=2, lease=30)
    slow = queue.claim("alive", lease=2)[0]
    travel(db, backend.layout, 4)
    queue.complete(done.id, done.token)
    queue.complete(failed.id, failed.token, outcome="failed")
    travel(db, backend.layout, 6)
    fresh = queue.claim("alive", lease=30)[0]
    yield db, backend.layout, {"crashed": crashed, "slow": slow, "fresh": fresh}
    db.close()


def test_two_workers_one_probably_dead(two_workers):
    db, layout, _ = two_workers
    view = read_workers(db, layout)
    workers = {w.worker: w for w in view.workers}
    assert set(workers) == {"alive", "crashed"} and view.claimer_column == "RetrievedBy"
    crashed, alive = workers["crashed"], workers["alive"]
    figures = (crashed.held, crashed.timed_out, crashed.claims_1m, crashed.completed_1m, crashed.failed_1m)
    assert figures == (3, 3, 3, 0, 0)
    assert crashed.probably_dead and crashed.last_claim_ago_s == pytest.approx(10.0, abs=0.5)
    assert (alive.held, alive.timed_out, alive.claims_1m, alive.completed_1m, alive.failed_1m) == (2, 1, 4, 1, 1)
    assert not alive.probably_dead and alive.processing_p95_s == pytest.approx(4.0, abs=0.5)
    assert alive.last_claim_ago_s == pytest.approx(0.0, abs=0.5)
    assert view.workers[0].worker == "crashed"  # the probably dead first


def test_a_client_clock_far_off_changes_nothing_of_who_is_dead(two_workers, backend):
    """Timed out, the last minute and the release are the database's clock: a monitor host whose clock is months
    off (a frozen FakeClock as its `db.now()`) sees and releases exactly what the database's clock says."""
    with Database.open(backend.target, clock=FakeClock()) as late:
        workers = {w.worker: w for w in read_workers(late, backend.layout).workers}
        assert (workers["crashed"].held, workers["crashed"].timed_out, workers["crashed"].claims_1m) == (3, 3, 3)
        assert (workers["alive"].timed_out, workers["alive"].claims_1m, workers["alive"].completed_1m) == (1, 4, 1)
        assert workers["crashed"].last_claim_ago_s == pytest.approx(10.0, abs=0.5)
        assert release_worker(late, backend.layout, "crashed").released == 3


def test_release_from_one_worker_releases_only_its_timed_out_claims(two_workers):
    db, layout, jobs = two_workers
    dry = release_worker(db, layout, "crashed", dry_run=True)
    assert (dry.timed_out, dry.released, dry.dry_run) == (3, 0, True)
    before = queue_rows(db, layout)
    assert queue_rows(db, layout) == before  # the dry run changed nothing
    # One of its claims used its last attempt: it becomes dead, as `release` does.
    db.execute(layout_sql(db, layout, "UPDATE {queue} SET {attempts} = 3 WHERE {id} = ?"), (jobs["crashed"][0].id,))
    done = release_worker(db, layout, "crashed")
    assert (done.timed_out, done.released, done.dead) == (3, 2, 1)
    after = queue_rows(db, layout)
    for job in jobs["crashed"][1:]:
        assert after[job.id][1] is None and after[job.id][2] is None  # back to pending
    assert completed_rows(db, layout)[jobs["crashed"][0].id][1] == "dead"
    for job in (jobs["slow"], jobs["fresh"]):  # alive's claims, the timed-out one too, are untouched
        assert after[job.id] == before[job.id]
    assert release_worker(db, layout, "crashed").timed_out == 0


def before_the_first_release(monkeypatch, meanwhile) -> None:
    """Run `meanwhile` once, after a worker's release read its claims and before it releases the first one."""
    release = Statements.clear_claim
    done: list[int] = []

    def read_then(*args, **kwargs):
        if not done:
            done.append(1)
            meanwhile()
        return release(*args, **kwargs)

    monkeypatch.setattr(Statements, "clear_claim", read_then)


def test_a_claim_completed_between_the_read_and_the_release_is_left_alone(two_workers, monkeypatch):
    db, layout, jobs = two_workers
    late = jobs["crashed"][1]
    # the "crashed" worker was only slow: it completes the job after queuetop read its claim
    before_the_first_release(monkeypatch, lambda: Queue(db, layout).complete(late.id, late.token))
    result = release_worker(db, layout, "crashed")
    assert (result.timed_out, result.released) == (3, 2)
    assert completed_rows(db, layout)[late.id][1] == "succeeded"  # its completion stands


def test_a_claim_no_longer_timed_out_at_the_release_is_left_alone(two_workers, monkeypatch):
    """The release re-checks the timeout by the database's clock in its UPDATE, as `release` does: a claim whose
    lease runs again when the release comes (its end moved an hour on after the read) keeps its claimer."""
    db, layout, jobs = two_workers
    renewed = jobs["crashed"][2]
    # every stored time an hour on: no claim is past its timeout any more
    before_the_first_release(monkeypatch, lambda: travel(db, layout, -3600))
    before = queue_rows(db, layout)[renewed.id]
    result = release_worker(db, layout, "crashed")
    assert (result.timed_out, result.released) == (3, 0)
    after = queue_rows(db, layout)[renewed.id]
    assert after[1] is not None and after[2:] == before[2:]  # still claimed, same token, same attempts


def test_make_available_counts_then_makes_pending_and_leaves_a_claimed_job_alone(backend):
    with Database.open(backend.target) as db:
        queue = Queue(db, backend.layout)
        later = queue.enqueue_many("report", 4, delay_s=3600)
        queue.enqueue_many("other", 2, delay_s=3600)
        now_ids = queue.enqueue_many("report", 1)
        dry = make_available(db, backend.layout, "report", dry_run=True)
        assert (dry.scheduled, dry.made_available) == (4, 0)
        assert queue.claim("w", job_types=["report"])[0].id == now_ids[0]  # the scheduled ones are not claimable
        # Meanwhile one scheduled job came due and a worker took it.
        db.execute(layout_sql(db, backend.layout, f"UPDATE {{queue}} SET {{available}} = {db.dialect.now_sql('utc')} "
                                                  "WHERE {id} = ?"), (later[0],))
        time.sleep(0.004)  # a millisecond column rounds the clock up to half a millisecond ahead (seedshapes: pop)
        taken = queue.claim("w", job_types=["report"])[0]
        assert taken.id == later[0]
        before = queue_rows(db, backend.layout)[taken.id]
        result = make_available(db, backend.layout, "report")
        assert (result.scheduled, result.made_available) == (3, 3)
        assert queue_rows(db, backend.layout)[taken.id] == before  # still claimed, untouched
        claimed = {job.id for job in queue.claim("w2", job_types=["report"], batch=10)}
        assert claimed == set(later[1:])  # pending now
        assert make_available(db, backend.layout, "other", dry_run=True).scheduled == 2  # the other type waits


# -- seed 004's dbo.Job_Queue ------------------------------------------------------------------------------------
@pytest.fixture(params=["sqlite", "postgres"])
def job_queue(request, tmp_path) -> Iterator[Seeded]:
    made = make_seeded("job_queue", request.param, tmp_path)
    yield made
    with made.open() as db:
        drop_seed(db, made.tables)


def test_job_queue_workers_by_processing_server_and_a_dead_ones_release(job_queue: Seeded):
    s = job_queue
    with s.open() as db:
        for i in range(8):
            push(db, s.tables, payload=f"job {i}")
        dead = pop(db, s.tables, "box-7", batch=3, lease_s=0.3)
        live = pop(db, s.tables, "box-2", batch=2)
        finish(db, s.tables, live[0])
    time.sleep(0.6)
    with s.open() as db:
        view = read_workers(db, s.layout)
        workers = {w.worker: w for w in view.workers}
        assert view.claimer_column == "Processing_Server" and view.figures["failed_1m"] is False
        assert (workers["box-7"].held, workers["box-7"].timed_out, workers["box-7"].claims_1m) == (3, 3, 3)
        assert workers["box-7"].probably_dead and workers["box-7"].completed_1m == 0
        box2 = workers["box-2"]
        assert (box2.held, box2.timed_out, box2.claims_1m, box2.completed_1m, box2.failed_1m) == (1, 0, 2, 1, None)
        assert not box2.probably_dead and box2.processing_p95_s is not None
        # The seed's own dequeue takes one of box-7's timed-out jobs again before the release: it keeps the claim.
        retaken = pop(db, s.tables, "box-2", batch=1)
        assert retaken[0]["id"] in {job["id"] for job in dead}
        assert release_worker(db, s.layout, "box-7", dry_run=True).timed_out == 2
        marks_before = dict(db.fetchall(f'SELECT "ID", "Processing_Mark" FROM {s.q(s.tables.queue)}'))
        result = release_worker(db, s.layout, "box-7")
        assert (result.timed_out, result.released) == (2, 2)
        marks = dict(db.fetchall(f'SELECT "ID", "Processing_Mark" FROM {s.q(s.tables.queue)}'))
    for job in dead:
        if job["id"] == retaken[0]["id"]:
            assert marks[job["id"]] == marks_before[job["id"]] is not None  # never stolen
        else:
            assert marks[job["id"]] is None
    for job in live:
        assert marks[job["id"]] == marks_before[job["id"]]


def test_job_queue_make_available_and_the_cli_json(job_queue: Seeded):
    s = job_queue
    with s.open() as db:
        for i in range(3):
            push(db, s.tables, payload=f"later {i}", available_in_s=3600)
        push(db, s.tables, payload="now")
        time.sleep(0.004)  # its Available_Date may be rounded up to half a millisecond ahead (seedshapes: pop)
        assert make_available(db, s.layout, dry_run=True).scheduled == 3
        assert pop(db, s.tables, "w", batch=10)[0]["payload"] == "now"  # the seed's dequeue skips scheduled jobs
        assert make_available(db, s.layout).made_available == 3
        assert len(pop(db, s.tables, "w", batch=10)) == 3  # and takes them now
    result = s.cli("workers", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["claimer_column"] == "Processing_Server" and data["reason"] is None
    assert [(w["worker"], w["held"], w["probably_dead"]) for w in data["workers"]] == [("w", 4, False)]


@pytest.fixture(params=["sqlite", "postgres"])
def queuesample(request, tmp_path) -> Iterator[Seeded]:
    made = make_seeded("queuesample", request.param, tmp_path)
    yield made
    with made.open() as db:
        drop_seed(db, made.tables)


def test_queuesample_workers_are_its_retrievedby_guids_with_only_what_retrieval_tells(queuesample: Seeded):
    s = queuesample
    with s.open() as db:
        for _ in range(6):
            push(db, s.tables, job_type=QUEUESAMPLE_JOB_TYPES[0], payload="<info/>")
        for _ in range(4):
            pop(db, s.tables, "reader-1", job_type=QUEUESAMPLE_JOB_TYPES[0])
        pop(db, s.tables, "reader-2", job_type=QUEUESAMPLE_JOB_TYPES[0])
        view = read_workers(db, s.layout)
    assert view.claimer_column == "RetrievedBy"
    assert {w.worker.upper(): w.claims_1m for w in view.workers} == {worker_guid("reader-1"): 4,
                                                                     worker_guid("reader-2"): 1}
    for worker in view.workers:  # retrieval is final: nothing is held, nothing times out, nothing is "dead"
        assert (worker.held, worker.timed_out, worker.completed_1m, worker.processing_p95_s) == (None,) * 4
        assert not worker.probably_dead and 0 <= worker.last_claim_ago_s < 30
    with s.open() as db, pytest.raises(UsageError, match="no claims that time out"):
        release_worker(db, s.layout, worker_guid("reader-1"))


@pytest.mark.parametrize("preset", ["requests", "work_queue", "processed"])
def test_shapes_without_a_claimer_say_so(preset: str, tmp_path):
    layout = load_layout(preset)
    reason = no_claimer(layout)
    assert reason is not None and f"layout {preset} has no claimer column" in reason
    with Database.open(parse_target(str(tmp_path / "x.db")), create=True) as db:  # nothing is read: no table
        assert read_workers(db, layout).reason == reason
        with pytest.raises(UsageError, match="no claimer column"):
            release_worker(db, layout, "w")
        with pytest.raises(UsageError, match="no scheduled jobs"):
            make_available(db, layout)


def test_the_cli_workers_table_and_a_shape_without_claimer(tmp_path):
    path = tmp_path / "q.db"
    native_queue_file(path)
    with Database.open(parse_target(str(path))) as db:
        queue = Queue(db)
        queue.enqueue_many("email", 5)
        queue.claim("請求-worker", batch=2)
    result = queuetop("workers", "--db", str(path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["RetrievedBy", "HELD", "TIMED-OUT", "CLAIMS/1m", "DONE/1m", "FAILED/1m", "PROC",
                                "p95", "LAST", "CLAIM"]
    assert lines[2].split()[:4] == ["請求-worker", "2", "0", "2"]


# -- the statements, as SQL Server would receive them ------------------------------------------------------------
def tsql_statements() -> list[tuple[str, tuple]]:
    out = []
    for preset in ("native", "job_queue", "queuesample"):
        layout = load_layout(preset)
        s = Statements(MSSQLDialect(), layout)
        out += [s.clock(), s.worker_claims(60, 300)]
        if preset == "job_queue":
            out += [s.worker_completions(60, 20_000), s.ids_of_claimer("timed_out", "box-7", 500),
                    s.ids_of_claimer("timed_out", None, 500)]
        if "scheduled" in layout.states:
            out += [s.make_available(None), s.make_available("x") if layout.has_job_type else s.make_available(None)]
    return out


@pytest.mark.parametrize("sql,params", tsql_statements())
def test_the_workers_statements_parse_as_tsql_with_their_parameters(sql: str, params: tuple) -> None:
    sqlglot.parse_one(sql, read="tsql")
    parsed = Linter(config=FluffConfig(overrides={"dialect": "tsql"})).parse_string(sql.replace("?", "@p"))
    assert not parsed.violations, parsed.violations[0]
    assert sql.count("?") == len(params) and sql.startswith("/* queuetop */ ")
    assert " LIMIT " not in sql and " RETURNING " not in sql
    if " GROUP BY " in sql or " DESC" in sql:  # the panel's reads never lock
        assert sql.count("WITH (NOLOCK)") == sql.count(" FROM ")


def test_the_cli_releases_one_workers_claims(tmp_path):
    path = tmp_path / "q.db"
    native_queue_file(path)
    with Database.open(parse_target(str(path))) as db:
        queue = Queue(db)
        queue.enqueue_many("email", 6)
        queue.claim("crashed", batch=3, lease=60)
        queue.claim("slow", batch=2, lease=60)
        travel(db, NATIVE, 120)
    dry = queuetop("release", "--worker", "crashed", "--dry-run", "--db", str(path))
    assert dry.returncode == 0 and dry.stdout.strip() == (
        "3 timed-out claim(s) of worker 'crashed' would be released (dry run: nothing changed)")
    done = queuetop("release", "--worker", "crashed", "--db", str(path))
    assert done.stdout.strip() == ("released 3 of 3 timed-out claim(s) of worker 'crashed' back to pending; "
                                   "0 out of attempts moved to dead")
    with Database.open(parse_target(str(path))) as db:
        held = {worker.worker: worker.held for worker in read_workers(db, NATIVE).workers if worker.held}
    assert held == {"slow": 2}  # the other worker's timed-out claims wait for their own release
    both = queuetop("release", "--worker", "slow", "--type", "email", "--db", str(path))
    assert both.returncode == 2 and "--worker and --type cannot be combined" in both.stderr
    with Database.open(parse_target(str(tmp_path / "w.db")), create=True) as db:
        create_seed(db, "work_queue")
    refused = queuetop("release", "--worker", "x", "--layout", "work_queue", "--db", str(tmp_path / "w.db"))
    assert refused.returncode == 2 and "layout work_queue has no claimer column" in refused.stderr


def test_a_claim_dated_a_rounded_millisecond_ahead_was_made_no_time_ago():
    """A timestamp(3) column rounds to the nearest millisecond, so a claim just made can read up to 0.5 ms ahead of
    the clock that asks (seen: last_claim_ago_s = −0.000055): it was made 0 s ago, never in the future."""
    from datetime import datetime, timedelta

    from queuetop.act.workers import _ago

    now = datetime(2026, 11, 24, 7, 0, 0)
    assert _ago(now, now + timedelta(microseconds=55)) == 0.0
    assert _ago(now, now - timedelta(seconds=2)) == 2.0 and _ago(now, None) is None


def test_a_claim_out_of_attempts_whose_lease_runs_again_is_not_buried(two_workers, monkeypatch):
    """A worker's release buries a claim out of attempts only while it is still timed out, by the database's clock,
    as it gives the others back: one whose lease runs again when the release comes keeps its claim."""
    db, layout, jobs = two_workers
    last = jobs["crashed"][0]
    db.execute(layout_sql(db, layout, "UPDATE {queue} SET {attempts} = 3 WHERE {id} = ?"), (last.id,))
    # every stored time an hour on: no claim is past its timeout any more
    before_the_first_release(monkeypatch, lambda: travel(db, layout, -3600))
    result = release_worker(db, layout, "crashed")
    assert (result.timed_out, result.released, result.dead) == (3, 0, 0)
    assert last.id in queue_rows(db, layout) and last.id not in completed_rows(db, layout)
