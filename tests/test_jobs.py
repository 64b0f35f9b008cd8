"""`queuetop jobs`: one state's jobs, a page at a time, every column, in the order a person asks of each state,
each page going on from the last job (keyset), none skipped or seen twice. Real SQLite files and PostgreSQL."""

from __future__ import annotations

import json
import time

import pytest

from queuetop.act.actions import ReleaseResult
from queuetop.act.jobs import read_jobs
from queuetop.act.queue import Queue
from queuetop.db import UsageError

from .conftest import Backend
from .test_cli import assert_clean_failure, queue_file, queuetop  # noqa: F401 (a fixture)

PAYLOAD = '{"to": "ops@example.com"}'


def test_pages_of_pending_jobs_walk_the_type_oldest_first_none_skipped_none_twice(backend: Backend) -> None:
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        ids = [queue.enqueue("email", info=f"job {n}") for n in range(7)]
        queue.enqueue_many("report", 2)
        seen, after = [], None
        while True:
            page = read_jobs(db, backend.layout, "pending", "email", after, limit=3)
            seen += [job["id"] for job in page.jobs]
            if page.after is None:
                break
            after = json.loads(json.dumps(page.as_json()["next_after"]))  # as a script hands it back
        assert seen == ids  # oldest first, every one once
        first = read_jobs(db, backend.layout, "pending", "email", None, limit=3).jobs[0]
        assert first["info"] == "job 0" and first["type"] == "email" and "created" in first


def test_claims_come_soonest_to_time_out_first_and_dead_jobs_with_their_payload(backend: Backend) -> None:
    with backend.open() as db:
        queue = Queue(db, backend.layout, max_attempts=1)
        queue.enqueue_many("email", 3)
        long, short = queue.claim("w", ["email"], lease=600), queue.claim("w", ["email"], lease=60)
        claimed = read_jobs(db, backend.layout, "claimed", "email").jobs
        assert [job["id"] for job in claimed] == [short[0].id, long[0].id]
        assert claimed[0]["claimed_by"] == "w"
        (last,) = queue.claim("w", ["email"], lease=0.05)
        time.sleep(0.1)
        queue.release_timed_out("email")  # out of attempts: dead, in the completed table
        dead = read_jobs(db, backend.layout, "dead").jobs
        assert [job["id"] for job in dead] == [last.id] and dead[0]["outcome"] == "dead"


def test_mistakes_are_one_line_and_a_page_has_the_size_asked(backend: Backend) -> None:
    with backend.open() as db:
        with pytest.raises(UsageError, match="has no state 'nope'"):
            read_jobs(db, backend.layout, "nope")
        with pytest.raises(UsageError, match="--after takes 2 value"):
            read_jobs(db, backend.layout, "pending", after=[1])
        with pytest.raises(UsageError, match="--limit must be"):
            read_jobs(db, backend.layout, "pending", limit=0)


def test_the_command_prints_a_page_and_the_after_that_continues_it(queue_file) -> None:  # noqa: F811
    db = str(queue_file)
    queuetop("enqueue", "--db", db, "-t", "email", "-n", "3")
    first = queuetop("jobs", "--db", db, "--limit", "2", "--json")
    assert first.returncode == 0, first.stderr
    document = json.loads(first.stdout)
    assert [job["id"] for job in document["jobs"]] == [1, 2] and document["next_after"][-1] == 2
    rest = queuetop("jobs", "--db", db, "--limit", "2", "--after", json.dumps(document["next_after"]))
    assert rest.returncode == 0 and "email" in rest.stdout and rest.stdout.count("\n") == 2  # a header and job 3
    table = queuetop("jobs", "--db", db, "--limit", "2")
    assert "--after" in table.stderr and table.stdout.splitlines()[0].startswith("ID")
    assert_clean_failure(queuetop("jobs", "--db", db, "--after", "3"), "--after '3' is not a JSON list")
    assert_clean_failure(queuetop("jobs", "--db", db, "--state", "nope"), "has no state 'nope'")


def test_one_job_is_found_wherever_it_is_now_with_its_state(backend: Backend) -> None:
    from queuetop.act.jobs import read_job

    with backend.open() as db:
        queue = Queue(db, backend.layout, max_attempts=1)
        waiting = queue.enqueue("email", info=PAYLOAD)
        done_id = queue.enqueue("report")
        held = queue.enqueue("sms")
        (done,) = queue.claim("w", ["report"], lease=30)
        queue.complete(done.id, done.token)
        queue.claim("w2", ["sms"], lease=30)
        view = read_job(db, backend.layout, waiting)
        assert (view.state, view.table, view.columns["info"]) == ("pending", "WorkQueue", PAYLOAD)
        assert read_job(db, backend.layout, held).columns["claimed_by"] == "w2"
        assert read_job(db, backend.layout, held).state == "claimed"
        finished = read_job(db, backend.layout, done_id)
        assert (finished.state, finished.table) == ("finished (succeeded)", "WorkCompleted")
        assert read_job(db, backend.layout, 10**9) is None


def test_the_job_command_prints_every_column_and_refuses_what_is_not_there(queue_file) -> None:  # noqa: F811
    db = str(queue_file)
    queuetop("enqueue", "--db", db, "-t", "email", "--info", PAYLOAD)
    shown = queuetop("job", "1", "--db", db)
    assert shown.returncode == 0 and shown.stdout.startswith("job 1: pending, in WorkQueue")
    assert '"to": "ops@example.com"' in shown.stdout  # the payload, pretty-printed
    document = json.loads(queuetop("job", "1", "--db", db, "--json").stdout)
    assert document["columns"]["info"] == PAYLOAD and document["state"] == "pending"
    assert_clean_failure(queuetop("job", "99", "--db", db), "no job 99 in WorkQueue or WorkCompleted")
    assert_clean_failure(queuetop("job", "x", "--db", db), "job id 'x' is not a whole number")


def test_one_jobs_actions_happen_only_while_it_is_still_in_their_state(backend: Backend) -> None:
    from queuetop.act.jobs import read_job
    from queuetop.act.shape_queue import ShapeQueue
    from queuetop.act.workers import make_job_available

    with backend.open() as db:
        queue = Queue(db, backend.layout, max_attempts=1)
        later = queue.enqueue("email", delay_s=3600)
        assert read_job(db, backend.layout, later).state == "scheduled"
        assert make_job_available(db, backend.layout, later) == 1
        assert read_job(db, backend.layout, later).state == "pending"
        assert make_job_available(db, backend.layout, later) == 0  # no longer scheduled: left alone
        (job,) = queue.claim("w", ["email"], lease=30)
        assert queue.fail(job.id, job.token) == "dead"
        assert ShapeQueue(db, backend.layout).dead_job("delete", later) == 1
        assert ShapeQueue(db, backend.layout).dead_job("delete", later) == 0 and read_job(db, backend.layout, later) \
            is None  # fmt: skip


def test_one_claim_is_released_only_while_it_is_past_its_timeout(backend: Backend) -> None:
    from queuetop.act.jobs import read_job
    from queuetop.act.shape_queue import ShapeQueue

    with backend.open() as db:
        queue = Queue(db, backend.layout, max_attempts=2)
        first, second, third = (queue.enqueue("email") for _ in range(3))
        queue.claim("gone", ["email"], batch=3, lease=0.1)
        live = queue.enqueue("report")
        queue.claim("busy", ["report"], lease=300)
        time.sleep(0.3)
        shapes = ShapeQueue(db, backend.layout, {"max_attempts": 2})
        assert shapes.release_job(first) == ReleaseResult(timed_out=1, released=1, dead=0)
        assert read_job(db, backend.layout, first).state == "pending"
        assert read_job(db, backend.layout, second).state == "timed_out"  # the other claims are left alone
        assert shapes.release_job(first) == ReleaseResult(timed_out=0)  # no longer timed out: nothing changed
        assert shapes.release_job(live) == ReleaseResult(timed_out=0)  # a claim in its lease is never taken
        assert read_job(db, backend.layout, live).state == "claimed"
        out_of_attempts = ShapeQueue(db, backend.layout, {"max_attempts": 1})
        assert out_of_attempts.release_job(second) == ReleaseResult(timed_out=1, released=0, dead=1)
        assert read_job(db, backend.layout, second).state == "dead"
        assert read_job(db, backend.layout, third).state == "timed_out"
