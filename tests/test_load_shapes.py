"""`queuetop load` on every seed's own table: the seed's own dequeue and completion under concurrent workers with
crashes (and failures, where the seed has a failure path), on SQLite and PostgreSQL.

Each run's verdict is checked against the tables themselves, counted by SQL written here from the seeds' texts,
and against the driver's own counters: none lost, none held by two workers at once, and every enqueued job in
exactly one place. The ledger that finds duplicates is shown to catch the real thing: seed 002's own broken
first try ("Discovering the Problem", no lock hints) on PostgreSQL hands rows to two workers, and the command
exits 1.
"""

from __future__ import annotations

import json
import math
import time

import pytest

from queuetop.db import UsageError
from queuetop.layouts import load_layout
from queuetop.load.command import load_types, report_of
from queuetop.load.config import ConsumerPool, LoadConfig, WorkTime
from queuetop.load.driver import LoadRun
from queuetop.load.ledger import Ledger
from tests.test_shapes import GUID_A, GUID_B, Seeded, make_seeded

RUN_LIMIT_S = 60
LOST_AFTER_S = 0.5  # seed 001: a request removed this long ago and not completed is lost (and released)
SHAPES = ("queuesample", "requests", "work_queue", "processed", "job_queue")


@pytest.fixture(params=["sqlite", "postgres"])
def backend_name(request) -> str:
    return request.param


@pytest.fixture
def seeded_for(backend_name, tmp_path):
    made: list[Seeded] = []

    def make(preset: str) -> Seeded:
        seeded = make_seeded(preset, backend_name, tmp_path)
        made.append(seeded)
        return seeded

    yield make
    from tests.seedshapes import drop_seed

    for seeded in made:
        with seeded.open() as db:
            drop_seed(db, seeded.tables)


def run_load(seeded: Seeded, jobs: int = 240, *, form: str | None = None, crash: float = 0.05, fail: float = 0.0,
             consumers: int = 6, batch: int = 1, lease_s: float = 0.6):  # fmt: skip
    layout = seeded.layout
    config = LoadConfig(types=load_types(None, layout), producers=2, pools=(ConsumerPool(consumers),), rate=None,
                        jobs=jobs, default_work=WorkTime("uniform", 1, 4), crash=crash, fail=fail, lease_s=lease_s,
                        batch=batch, seed=7, drain_s=15)  # fmt: skip
    run = LoadRun(seeded.target, config, layout, until_done=True, claim_form=form,
                  settings={"lost_after": LOST_AFTER_S}).start()  # fmt: skip
    finished = run.wait(RUN_LIMIT_S)
    run.shutdown()
    assert finished and run.error is None, run.progress_line()
    with seeded.open() as db:
        return run, report_of(db, run.facts())


def count(seeded: Seeded, where: str, table: str | None = None) -> int:
    """Rows of a seed table matching a condition written here, straight from the table."""
    with seeded.open() as db:
        name = db.dialect.qualify(seeded.tables.schema, table or seeded.tables.queue)
        return int(db.fetchone(f"SELECT COUNT(*) FROM {name} WHERE {where}")[0])


def flag(seeded: Seeded, value: int) -> str:
    return ("true" if value else "false") if seeded.backend == "postgres" else str(value)


def assert_clean(report, jobs: int) -> None:
    assert report.duplicates == 0 and report.found_twice == 0 and report.lost == 0, report.render()
    assert report.enqueued == jobs == report.accounted, report.render()
    assert report.ok
    assert report.claims_ledgered >= report.completed > 0
    assert report.claim_latency_s.p50 is not None and report.claim_latency_s.p99 >= report.claim_latency_s.p50


# -- shapes whose taking is final: 000, 002 (both locked forms), 003 ---------------------------------------
@pytest.mark.parametrize(("preset", "form"), [("queuesample", None), ("work_queue", "select_update"),
                                              ("work_queue", "update_top"), ("processed", None)])  # fmt: skip
def test_final_claims_lose_nothing_and_crashed_claims_are_stranded(seeded_for, preset, form):
    seeded = seeded_for(preset)
    run, report = run_load(seeded, form=form)
    assert_clean(report, 240)
    counters = run.counters()
    assert report.stranded == counters.crashed > 0, "every crashed claim is stranded: the shape never retakes it"
    assert report.completed == counters.succeeded and report.pending == report.claimed == report.dead == 0
    # The tables agree: every row taken (none pending), and each was taken once by the ledger.
    if preset == "queuesample":
        assert count(seeded, '"RetrievedDate" IS NULL') == 0
        assert count(seeded, '"RetrievedBy" IS NOT NULL') == 240
        with seeded.open() as db:
            types = {str(t).upper() for t, in db.fetchall(
                f'SELECT DISTINCT "JobType" FROM {seeded.q(seeded.tables.queue)}')}  # fmt: skip
        assert types == {GUID_A, GUID_B, load_types(None, seeded.layout)[2][0]}, "producers spread GUID types"
    else:
        column = '"processed_flag"' if preset == "work_queue" else '"PROCESSED"'
        assert count(seeded, f"{column} = {flag(seeded, 0)}") == 0
        assert count(seeded, f"{column} = {flag(seeded, 1)}") == 240
    assert report.claims_ledgered == 240, "a final claim takes each row exactly once"


def test_seed_001_moves_each_request_once_and_takes_crashed_ones_back_after_lost_after(seeded_for):
    seeded = seeded_for("requests")
    run, report = run_load(seeded, crash=0.08, fail=0.08)
    assert_clean(report, 240)
    counters = run.counters()
    assert counters.crashed > 0 and counters.failed > 0 and counters.swept_released > 0
    # Every request went through RequestsCompleted with a CompletedDate, once; the queue is empty.
    assert report.completed == 240 == count(seeded, '"CompletedDate" IS NOT NULL', "RequestsCompleted"), (
        report.render(), counters)  # 239, before a request completed twice counted once (see the test below)
    assert count(seeded, "1 = 1", "RequestsCompleted") == 240 and count(seeded, "1 = 1") == 0
    # Crashed and failed requests were taken again: more claims than requests, still none twice at once.
    assert report.claims_ledgered == 240 + counters.swept_released
    assert report.processing_s.p50 is not None


def test_seed_004_batches_by_mark_retakes_timed_out_claims_and_buries_the_third_attempt(seeded_for):
    seeded = seeded_for("job_queue")
    run, report = run_load(seeded, crash=0.08, fail=0.25, batch=4, lease_s=0.5)
    assert_clean(report, 240)
    counters = run.counters()
    assert counters.crashed > 0 and counters.failed > 0
    assert report.claims_ledgered > 240, "crashed and failed attempts were taken again after their timeout"
    # From the table: each finished job has Last_Attempt_End_Date after its start; attempts never above 3.
    done = count(seeded, '"Last_Attempt_End_Date" >= "Last_Attempt_Start_Date"')
    assert report.completed == done == counters.succeeded
    assert count(seeded, '"Attempts" > 3') == 0
    # A job failed on its third attempt is dead once its timeout passed, or still held until then.
    assert report.dead + report.stranded == counters.dead + counters.doomed
    assert report.completed + report.dead + report.stranded + report.pending == 240


# -- the verdict must be able to fail ------------------------------------------------------------------------
def test_seed_002s_broken_first_try_is_caught_as_duplicates_and_the_command_exits_1(tmp_path):
    seeded = make_seeded("work_queue", "postgres", tmp_path)
    try:
        result = seeded.cli("load", "--claim-form", "unlocked", "--jobs", "200", "--consumers", "8",
                            "--producers", "1", "--rate", "unlimited", "--work", "fixed:5", "--json")
        assert result.returncode == 1, result.stderr
        report = json.loads(result.stdout)
        assert report["ok"] is False and report["duplicates"] > 0 and report["claim_form"] == "unlocked"
        assert report["duplicate_examples"], "the report names jobs two workers held"
        # The same run with the seed's fix (UPDLOCK, READPAST -> SKIP LOCKED) is clean.
        fixed = seeded.cli("load", "--jobs", "200", "--consumers", "8", "--producers", "1", "--rate", "unlimited",
                           "--work", "fixed:5", "--json")  # fmt: skip
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert json.loads(fixed.stdout)["duplicates"] == 0
    finally:
        from tests.seedshapes import drop_seed

        with seeded.open() as db:
            drop_seed(db, seeded.tables)


def test_a_compacted_ledger_keeps_what_the_report_needs_and_little_else():
    ledger = Ledger()
    for job_id in range(1, 1001):  # a long run: each job claimed and finished in turn
        claim, = ledger.claimed([job_id], "w", job_id * 1.0, job_id + 0.1, lease_s=30)
        claim.let_go(job_id + 0.5, "finished")
    stranded, = ledger.claimed([2000], "w", 10.0, 10.1, lease_s=None)
    stranded.crashed()
    early, = ledger.claimed([5], "x", 5.2, 5.3, lease_s=30)  # held job 5 while "w" worked on it
    early.let_go(5.4, "finished")
    ledger.compact(now=900.0, keep_s=5.0)
    assert ledger.held < 110 and len(ledger) == 1002, "old claims dropped; the count of claims kept"
    assert [d.job_id for d in ledger.duplicates()] == [5], "an overlap found before compaction is kept"
    ledger.claimed([2000], "z", 950.0, 950.1, lease_s=None)  # a crashed claim without lease holds for ever
    assert sorted(d.job_id for d in ledger.duplicates()) == [5, 2000]
    outcome = ledger.outcomes()
    assert outcome(3) == "finished" and outcome(999) == "finished" and outcome(4242) is None


def test_the_ledger_sees_overlaps_only_while_both_claims_are_live():
    ledger = Ledger()
    first, = ledger.claimed([1], "a", sent_at=0.0, returned_at=0.1, lease_s=None)
    first.let_go(1.0, "finished")
    after, = ledger.claimed([1], "b", sent_at=1.0, returned_at=1.1, lease_s=None)  # taken after it was let go
    assert ledger.duplicates() == []
    during, = ledger.claimed([1], "c", sent_at=0.4, returned_at=0.5, lease_s=None)  # while "a" worked on it
    [dup] = ledger.duplicates()
    assert dup.job_id == 1 and dup.workers == ("a", "c") and dup.overlap_s == pytest.approx(0.5)
    # A crashed claim without a lease holds its job for ever; with one, until the lease ran out.
    forever = Ledger()
    dead, = forever.claimed([7], "x", 0.0, 0.1, lease_s=None)
    dead.crashed()
    forever.claimed([7], "y", 100.0, 100.1, lease_s=None)
    assert forever.duplicates()[0].overlap_s == math.inf
    leased = Ledger()
    held, = leased.claimed([7], "x", 0.0, 0.1, lease_s=5.0)
    held.crashed()
    leased.claimed([7], "y", 5.0, 5.1, lease_s=5.0)  # taken again once the lease expired: legitimate
    assert leased.duplicates() == []
    assert after.outcome == "held" and during.outcome == "held"


# -- what a shape cannot do is refused before anything runs --------------------------------------------------
@pytest.mark.parametrize(("preset", "args", "message"), [
    ("work_queue", ("--fail", "0.1"), "has no failure path"),
    ("queuesample", ("--fail", "0.1"), "has no failure path"),
    ("work_queue", ("--batch", "5"), "takes one job per claim"),
    ("work_queue", ("--claim-form", "batch_mark"), "has no claim form 'batch_mark'"),
    ("requests", ("--types", "2"), "has no job type column"),
    ("queuesample", ("--types", "email:2"), "is not a GUID"),
    ("processed", ("--release-every", "2"), "has nothing to release"),
])  # fmt: skip
def test_what_a_shape_cannot_do_is_refused_clearly_and_nothing_is_written(tmp_path, preset, args, message):
    seeded = make_seeded(preset, "sqlite", tmp_path)
    result = seeded.cli("load", "--jobs", "10", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert count(seeded, "1 = 1") == 0, "a refused load writes nothing"


def test_a_native_run_keeps_its_ledger_too(tmp_path):
    from tests.conftest import make_backend

    backend = make_backend("sqlite", tmp_path)
    config = LoadConfig(types=(("email", 1.0),), producers=1, pools=(ConsumerPool(3),), rate=None, jobs=60,
                        default_work=WorkTime("fixed", 1), seed=1)  # fmt: skip
    run = LoadRun(backend.target, config, backend.layout, until_done=True).start()
    assert run.wait(RUN_LIMIT_S)
    run.shutdown()
    with backend.open() as db:
        report = report_of(db, run.facts())
    assert report.ok and report.claims_ledgered == 60 and report.duplicates == 0


def test_load_types_for_a_guid_job_type():
    from queuetop.layouts import load_layout

    layout = load_layout("queuesample")
    assert [t for t, _ in load_types("3", layout)][:2] == [GUID_A, GUID_B]
    assert load_types(None, layout) == load_types("3", layout)
    with pytest.raises(UsageError):
        load_types("email", layout)


def test_each_seed_says_how_an_abandoned_claim_comes_back():
    from queuetop.layouts import load_layout

    came_back = {name: load_layout(name).claim.taken_back for name in SHAPES}
    assert came_back == {"queuesample": "never", "requests": "release", "work_queue": "never",
                         "processed": "never", "job_queue": "timeout"}


def test_seed_001_lets_a_worker_that_lost_its_request_complete_the_new_holders_and_a_run_counts_it_once(seeded_for):
    """Seed 001's completion (`UPDATE RequestsCompleted SET CompletedDate ... WHERE ID = ?`) has no compare-and-set:
    a worker whose request was swept back and taken again still completes it, on the new holder's row. A run must
    count that request's success once, or it ends one request early (seen as 239 of 240 on a loaded machine)."""
    from queuetop.act.shape_queue import ShapeQueue
    from queuetop.act.shape_worker import ShapeWorker

    seeded = seeded_for("requests")
    with seeded.open() as db:
        ShapeQueue(db, seeded.layout, {"lost_after": 0.2}).enqueue_many(None, 1)
        worker = ShapeWorker(db, seeded.layout, settings={"lost_after": 0.2})
        (lost,) = worker.claim("a")
        time.sleep(0.4)
        assert ShapeQueue(db, seeded.layout, {"lost_after": 0.2}).release().released == 1
        (again,) = worker.claim("b")
        assert again.id == lost.id
        worker.complete(lost)  # no LeaseLost: the seed cannot tell the two claims apart
        worker.complete(again)
    config = LoadConfig(types=load_types(None, seeded.layout), producers=1, pools=(ConsumerPool(1),), rate=None,
                        jobs=1)  # fmt: skip
    run = LoadRun(seeded.target, config, seeded.layout)
    assert [run._first_success(lost), run._first_success(again)] == [True, False]  # the second: completed_again
    job_queue = load_layout("job_queue")
    guarded = LoadRun(seeded.target, LoadConfig(types=load_types(None, job_queue), producers=1,
                                                pools=(ConsumerPool(1),), rate=None, jobs=1), job_queue)  # fmt: skip
    assert [guarded._first_success(lost), guarded._first_success(again)] == [True, True]  # LeaseLost guards it


@pytest.mark.parametrize("shape", ["requests", "job_queue"])
def test_one_claim_of_a_seed_is_released_as_its_release_says_and_only_that_one(seeded_for, shape) -> None:
    """Seed 001 moves a lost request back (`requeue`); seed 004 clears a timed-out claim by compare-and-set on
    its mark (`clear`): the job view's `r` does the same to one job, and nothing to a job that moved on."""
    from queuetop.act.jobs import read_job
    from queuetop.act.shape_queue import ShapeQueue
    from queuetop.act.shape_worker import ShapeWorker

    seeded = seeded_for(shape)
    settings = {"lost_after": 0.2, "timeout_s": 0.2}
    with seeded.open() as db:
        shapes = ShapeQueue(db, seeded.layout, settings)
        shapes.enqueue_many(None, 2)
        worker = ShapeWorker(db, seeded.layout, settings=settings)
        taken = [job for _ in range(2) for job in worker.claim("a", lease_s=0.2)]
        time.sleep(0.4)
        state = seeded.layout.release.state
        assert [read_job(db, seeded.layout, job.id, settings).state for job in taken] == [state, state]
        assert shapes.release_job(taken[0].id).released == 1
        assert read_job(db, seeded.layout, taken[0].id, settings).state == "pending"
        assert read_job(db, seeded.layout, taken[1].id, settings).state == state  # the other one untouched
        assert shapes.release_job(taken[0].id).released == 0  # moved on: nothing changed
