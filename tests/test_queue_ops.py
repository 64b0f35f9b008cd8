"""Queue operations on real databases: ordering, leases, retries, dead jobs, validation."""

from __future__ import annotations

from datetime import timedelta

import pytest

from queuetop.act.queue import Queue
from queuetop.db import Database, LeaseLost, QueuetopError, UsageError, utc_now
from queuetop.layouts.schema import init_schema

from .helpers import FakeClock, completed_rows, layout_sql, queue_rows, travel


class ServerClock:
    """The database's clock, moved by hand: `clock.at(7)` moves every stored time of the queue back so that it is
    as if 7 s had passed since `at(0)` (the queue's operations take their times from the database, in the
    statement: there is no client clock to set)."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds
        self.queue: Queue | None = None

    def at(self, seconds: float) -> ServerClock:
        assert self.queue is not None
        travel(self.queue.db, self.queue.layout, seconds - self.seconds)
        self.seconds = seconds
        return self


def open_queue(backend, clock: ServerClock, max_attempts: int = 3) -> Queue:
    clock.queue = Queue(Database.open(backend.target), backend.layout, max_attempts=max_attempts)
    return clock.queue


def test_claim_serves_most_urgent_then_oldest_and_respects_availability(backend):
    clock = ServerClock(0)
    q = open_queue(backend, clock)
    late = q.enqueue("email", priority=128)
    clock.at(1)
    urgent = q.enqueue("email", priority=5)
    later = q.enqueue("email", priority=1, delay_s=300)  # not yet available
    clock.at(2)
    first = q.claim("w1", batch=1)
    second = q.claim("w1", batch=5)
    assert [j.id for j in first] == [urgent]
    assert [j.id for j in second] == [late]  # the delayed job is not served before its time
    clock.at(400)
    assert [j.id for j in q.claim("w1")] == [later]


def test_a_job_is_claimable_the_moment_its_enqueue_returns(backend):
    """A timestamp(3) column rounds to the nearest millisecond: a job enqueued in the last half of one was dated
    after a claim sent right after it, which then found nothing (seen once in CI, in the release race test)."""
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        missed = 0
        for _ in range(400):
            job_id = queue.enqueue("instant")
            claimed = queue.claim("w", job_types=["instant"], batch=2)
            missed += [job.id for job in claimed] != [job_id]
            for job in claimed:
                queue.complete(job.id, job.token)
        assert missed == 0


def test_claim_by_type_and_batch_sets_claim_columns(backend):
    clock = ServerClock(0)
    q = open_queue(backend, clock)
    q.enqueue_many("email", 3)
    reports = q.enqueue_many("report", 4, info="r")
    jobs = q.claim("worker-7", job_types=["report"], batch=3, lease=20)
    assert len(jobs) == 3 and {j.job_type for j in jobs} == {"report"}
    assert len({j.token for j in jobs}) == 1 and all(j.attempts == 1 for j in jobs)
    rows = queue_rows(q.db, q.layout)
    for job in jobs:
        job_type, claimed_at, token, attempts = rows[job.id]
        assert job_type == "report" and claimed_at is not None and str(token).lower() == job.token and attempts == 1
    assert set(reports) - {j.id for j in jobs} == {j for j in reports if rows[j][1] is None}


def test_complete_moves_the_row_once_and_a_lost_lease_is_reported(backend):
    clock = ServerClock(0)
    q = open_queue(backend, clock)
    job_id = q.enqueue("email")
    job = q.claim("w1", lease=5)[0]
    with pytest.raises(LeaseLost):
        q.complete(job_id, "00000000-0000-0000-0000-000000000000")
    q.complete(job.id, job.token)
    assert job_id not in queue_rows(q.db, q.layout)
    assert completed_rows(q.db, q.layout)[job_id] == ("email", "succeeded", 1)
    with pytest.raises(LeaseLost):  # twice is never fine
        q.complete(job.id, job.token)


def test_a_released_claim_cannot_be_completed_by_its_old_worker(backend):
    clock = ServerClock(0)
    q = open_queue(backend, clock)
    q.enqueue("email")
    old = q.claim("slow-worker", lease=1)[0]
    clock.at(5)
    assert q.release_timed_out().released == 1
    new = q.claim("fast-worker", lease=30)[0]
    assert new.id == old.id and new.attempts == 2
    with pytest.raises(LeaseLost):
        q.complete(old.id, old.token)
    q.complete(new.id, new.token)
    assert completed_rows(q.db, q.layout)[old.id][1:] == ("succeeded", 2)


def test_fail_retries_after_the_delay_then_buries_the_job_as_dead(backend):
    clock = ServerClock(0)
    q = open_queue(backend, clock, max_attempts=2)
    job_id = q.enqueue("email")
    job = q.claim("w1")[0]
    assert q.fail(job.id, job.token, retry_after=30) == "retry"
    clock.at(10)
    assert q.claim("w1") == []  # not before the retry delay
    clock.at(31)
    job = q.claim("w1")[0]
    assert job.attempts == 2
    assert q.fail(job.id, job.token) == "dead"
    assert job_id not in queue_rows(q.db, q.layout)
    assert completed_rows(q.db, q.layout)[job_id] == ("email", "dead", 2)
    with pytest.raises(LeaseLost):
        q.fail(job.id, job.token)


def test_release_dry_run_counts_and_changes_nothing_then_releases_and_buries(backend):
    clock = ServerClock(0)
    q = open_queue(backend, clock, max_attempts=2)
    q.enqueue_many("email", 3)
    q.enqueue_many("report", 1)
    first = q.claim("w1", job_types=["email"], batch=3, lease=1)
    clock.at(2)
    q.release_timed_out()  # attempts 1 < 2: all three back to pending
    again = q.claim("w1", job_types=["email"], batch=1, lease=1)  # second attempt of one of them
    q.claim("w1", job_types=["report"], lease=100)  # not timed out
    clock.at(4)
    before = queue_rows(q.db, q.layout)
    dry = q.release_timed_out(dry_run=True)
    assert (dry.timed_out, dry.released, dry.dead, dry.dry_run) == (1, 0, 0, True)
    assert queue_rows(q.db, q.layout) == before
    done = q.release_timed_out("email")
    assert (done.timed_out, done.released, done.dead) == (1, 0, 1)
    assert completed_rows(q.db, q.layout)[again[0].id][1] == "dead"
    assert len(first) == 3
    assert q.release_timed_out().timed_out == 0


def test_release_of_an_unknown_type_is_refused_and_changes_nothing(backend):
    clock = ServerClock(0)
    q = open_queue(backend, clock)
    q.enqueue("email")
    q.claim("w1", lease=1)
    clock.at(5)
    before = queue_rows(q.db, q.layout)
    with pytest.raises(UsageError, match=r"no such job type 'emial' \(did you mean 'email'\?\)"):
        q.release_timed_out("emial")
    assert queue_rows(q.db, q.layout) == before


def test_the_types_an_error_lists_are_those_of_the_newest_jobs_a_bounded_read(backend):
    q = open_queue(backend, ServerClock(0))
    for job_type in ("old", "report", "email", "email"):
        q.enqueue(job_type)
    assert q.job_types() == ["email", "old", "report"]
    assert [row[0] for row in q.db.fetchall(*q.statements.queued_types(newest=3))] == ["email", "report"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda q: q.enqueue(""), "job type is empty"),
        (lambda q: q.enqueue("x" * 129), "129 characters"),
        (lambda q: q.enqueue("email", priority=256), "priority must be"),
        (lambda q: q.enqueue("email", priority=-1), "priority must be"),
        (lambda q: q.enqueue_many("email", 0), "count must be"),
        (lambda q: q.claim("w", batch=0), "batch must be"),
        (lambda q: q.claim("w", lease=0), "lease must be"),
        (lambda q: q.complete(1, "t", outcome="great"), "unknown outcome"),
    ],
)
def test_bad_arguments_are_refused_before_touching_the_queue(sqlite_backend, call, message):
    q = open_queue(sqlite_backend, ServerClock(0))
    q.enqueue("email")
    before = queue_rows(q.db, q.layout)
    with pytest.raises(UsageError, match=message):
        call(q)
    assert queue_rows(q.db, q.layout) == before


def stop_inserts_above(db, layout, last_id: int) -> None:
    """A trigger that refuses any row past `last_id`, as a full disk or a constraint would."""
    if db.dialect.name == "sqlite":
        db.execute(layout_sql(db, layout, f"CREATE TRIGGER stop AFTER INSERT ON {{queue}} WHEN NEW.{{id}} > {last_id} "
                                          "BEGIN SELECT RAISE(ABORT, 'full'); END"))
        return
    fn = db.dialect.qualify(layout.schema, "stop")
    db.execute(f"CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
               f"IF NEW.{db.dialect.quote(layout.columns['id'])} > {last_id} THEN RAISE EXCEPTION 'full'; END IF; "
               "RETURN NEW; END $$")
    db.execute(layout_sql(db, layout, "CREATE TRIGGER stop AFTER INSERT ON {queue} FOR EACH ROW "
                                      f"EXECUTE FUNCTION {fn}()"))


def test_enqueue_many_commits_chunks_of_a_thousand_and_says_which_ids_stayed(backend):
    with backend.open() as db:
        q = Queue(db, backend.layout)
        ids = q.enqueue_many("bulk", 2_500)  # three chunks, all there
        assert len(ids) == 2_500 and ids == sorted(set(ids))
        stop_inserts_above(db, backend.layout, ids[-1] + 2_000)
        with pytest.raises(QueuetopError) as caught:  # the third chunk fails: the first two stay, and it says so
            q.enqueue_many("bulk", 2_500)
        stayed = sorted(set(queue_rows(db, backend.layout)) - set(ids))
        assert len(stayed) == 2_000  # each chunk its own short transaction: no lock held for the whole batch
        assert "full" in str(caught.value)
        assert f"2,000 of 2,500 jobs were enqueued before it (ids {stayed[0]}..{stayed[-1]})" in str(caught.value)


def test_init_is_idempotent_and_says_what_it_found(backend):
    with backend.open() as db:
        steps = init_schema(db, backend.layout)
    assert steps and not any(step.created for step in steps)
    assert {step.kind for step in steps} >= {"table", "view", "index"}


def test_give_back_returns_an_unstarted_job_without_spending_an_attempt(backend):
    clock = ServerClock(0)
    q = open_queue(backend, clock)
    job_id = q.enqueue("email")
    job = q.claim("w1")[0]
    q.give_back(job.id, job.token)
    again = q.claim("w2")[0]
    assert again.id == job_id and again.attempts == 1
    with pytest.raises(LeaseLost):
        q.give_back(job.id, job.token)


def test_leases_are_the_databases_clock_whatever_the_workers_clock_says(backend):
    """Two worker hosts whose clocks are far apart (one frozen on 1 January) still agree on every lease: the claim
    time, the lease's end and the release's now are the database's, computed in the statement."""
    late = Queue(Database.open(backend.target, clock=FakeClock(0)), backend.layout)  # months behind
    ahead = Queue(Database.open(backend.target, clock=lambda: utc_now() + timedelta(hours=1)), backend.layout)
    late.enqueue("email")
    job = late.claim("late-host", lease=60)[0]
    server_now = late.db.dialect.decode_time(late.db.fetchone(late.db.dialect.server_now_sql())[0])
    assert abs((job.timeout - server_now).total_seconds() - 60) < 5  # not 1 January + 60 s
    assert ahead.release_timed_out().timed_out == 0  # an hour-fast host cannot end the lease early
    ahead.enqueue("email", delay_s=600)
    assert ahead.claim("fast-host") == []  # nor claim a job before its time by its own clock
    late.complete(job.id, job.token)
    assert completed_rows(late.db, late.layout)[job.id][1] == "succeeded"
