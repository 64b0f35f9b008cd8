"""What the dashboard's dialogs and drill-down do, on real databases: form parsing, enqueue, the release dry run
and release, and one type's detail with decoded times."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from queuetop.act.actions import (
    Actions,
    EnqueueRequest,
    EnqueueResult,
    describe_release,
    parse_enqueue_form,
)
from queuetop.act.queue import Queue, ReleaseResult
from queuetop.db import QueuetopError, parse_target
from tests.conftest import Backend
from tests.helpers import unclaimed_and_held


def count_rows(backend: Backend, job_type: str) -> tuple[int, int]:
    """(pending, claimed) rows of a type, straight from the queue table."""
    with backend.open() as db:
        return unclaimed_and_held(db, backend.layout, job_type)


# -- the form ----------------------------------------------------------------------------------------------
def test_a_valid_form_becomes_a_request() -> None:
    request, errors = parse_enqueue_form(" email ", "1,000", '{"to": "x"}', "10")
    assert errors == {} and request == EnqueueRequest("email", 1000, '{"to": "x"}', 10)


def test_an_empty_payload_is_no_payload() -> None:
    assert parse_enqueue_form("email", "1", "", "128")[0].info is None


@pytest.mark.parametrize(("field", "values", "words"), [
    ("job_type", ("", "1", "", "128"), "job type is empty"),
    ("job_type", ("x" * 129, "1", "", "128"), "129 characters"),
    ("count", ("email", "0", "", "128"), "count must be a whole number from 1"),
    ("count", ("email", "lots", "", "128"), "'lots'"),
    ("count", ("email", "2000000", "", "128"), "1,000,000"),
    ("priority", ("email", "1", "", "256"), "0 (most urgent) to 255"),
    ("priority", ("email", "1", "", "-1"), "not -1"),
])  # fmt: skip
def test_each_bad_field_gets_its_own_error(field: str, values: tuple[str, ...], words: str) -> None:
    request, errors = parse_enqueue_form(*values)
    assert request is None and list(errors) == [field] and words in errors[field]


def test_all_bad_fields_are_reported_at_once() -> None:
    assert set(parse_enqueue_form("", "0", "", "999")[1]) == {"job_type", "count", "priority"}


def test_enqueue_result_names_the_ids() -> None:
    assert EnqueueResult("email", (7,)).describe() == "enqueued 1 job of type 'email': id 7"
    assert EnqueueResult("email", tuple(range(10, 110))).describe() == "enqueued 100 jobs of type 'email': ids 10..109"


def test_release_sentences_say_nothing_to_release_plainly() -> None:
    assert describe_release(ReleaseResult(0, dry_run=True), "email") == \
        "Nothing to release: no claims of type 'email' are past their timeout."  # fmt: skip
    assert describe_release(ReleaseResult(1, dry_run=True), None) == "1 claim is past its timeout."
    assert describe_release(ReleaseResult(3, released=2, dead=1), "email") == \
        "Released 2 timed-out claims of type 'email' back to pending; 1 out of attempts moved to dead."  # fmt: skip


# -- on real databases ---------------------------------------------------------------------------------------
def test_enqueue_adds_exactly_the_jobs_asked_for(backend: Backend) -> None:
    actions = Actions(backend.target, backend.layout)
    try:
        result = actions.enqueue(EnqueueRequest("email", 25, "hello", 10))
        assert len(result.ids) == 25 and list(result.ids) == sorted(result.ids)
        assert count_rows(backend, "email") == (25, 0)
        detail = actions.type_detail("email")
        assert {job.priority for job in detail.pending} == {10} and detail.pending[0].info == "hello"
    finally:
        actions.close()


def make_claims(backend: Backend, job_type: str, count: int, lease: float) -> list[int]:
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many(job_type, count)
        return [job.id for job in queue.claim("w1", [job_type], batch=count, lease=lease)]


def test_release_dry_run_then_release_only_the_timed_out_claims(backend: Backend) -> None:
    make_claims(backend, "email", 3, lease=0.05)  # will time out
    make_claims(backend, "report", 2, lease=0.05)  # will time out, other type
    make_claims(backend, "email", 2, lease=600)  # in good standing
    time.sleep(0.2)
    actions = Actions(backend.target, backend.layout)
    try:
        assert actions.count_timed_out("email") == ReleaseResult(3, dry_run=True)
        assert actions.count_timed_out(None).timed_out == 5
        assert count_rows(backend, "email") == (0, 5)  # the dry run changed nothing

        assert actions.release("email") == ReleaseResult(timed_out=3, released=3, dead=0)
        assert count_rows(backend, "email") == (3, 2)
        assert count_rows(backend, "report") == (0, 2)  # the other type was left alone
        assert actions.count_timed_out("email").timed_out == 0
    finally:
        actions.close()


def test_claims_out_of_attempts_become_dead(backend: Backend) -> None:
    make_claims(backend, "email", 2, lease=0.05)
    time.sleep(0.2)
    actions = Actions(backend.target, backend.layout, max_attempts=1)
    try:
        assert actions.release(None) == ReleaseResult(timed_out=2, released=0, dead=2)
        assert count_rows(backend, "email") == (0, 0)
    finally:
        actions.close()


def test_a_type_with_nothing_in_the_queue_has_nothing_to_release(sqlite_backend: Backend) -> None:
    actions = Actions(sqlite_backend.target)
    assert actions.count_timed_out("ghost") == ReleaseResult(0, dry_run=True)
    assert actions.release("ghost") == ReleaseResult(0)
    actions.close()


def test_type_detail_decodes_pending_claims_and_completions(backend: Backend) -> None:
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("email", 3, info="line one\nline two")
        done, held = queue.claim("worker-a", ["email"], batch=2, lease=0.05)
        queue.complete(done.id, done.token)
    time.sleep(0.1)
    actions = Actions(backend.target, backend.layout)
    try:
        detail = actions.type_detail("email")
    finally:
        actions.close()
    assert [job.id for job in detail.pending] == [held.id + 1]
    assert detail.pending[0].age_s >= 0 and detail.pending[0].available_in_s <= 0
    assert [(c.id, c.worker, c.attempts) for c in detail.claims] == [(held.id, "worker-a", 1)]
    assert detail.claims[0].expires_in_s < 0  # overdue: the lease was 50 ms
    assert [(c.id, c.outcome) for c in detail.completions] == [(done.id, "succeeded")]
    assert detail.completions[0].wait_s >= 0 and detail.completions[0].processing_s >= 0
    assert detail.completions[0].ago_s >= 0


def test_type_detail_shows_a_dead_job_as_dead_without_a_processing_time(backend: Backend) -> None:
    with backend.open() as db:
        queue = Queue(db, backend.layout, max_attempts=1)
        queue.enqueue_many("email", 1)
        (job,) = queue.claim("worker-a", ["email"])
        assert queue.fail(job.id, job.token) == "dead"
    actions = Actions(backend.target, backend.layout)
    try:
        detail = actions.type_detail("email")
    finally:
        actions.close()
    assert [(c.id, c.outcome, c.processing_s) for c in detail.completions] == [(job.id, "dead", None)]
    assert detail.completions[0].wait_s is not None and detail.completions[0].wait_s >= 0


def test_a_failed_call_changes_nothing_and_the_next_one_reconnects(tmp_path: Path, sqlite_backend: Backend) -> None:
    missing = Actions(parse_target(str(tmp_path / "absent.db")))
    with pytest.raises(QueuetopError, match="queuetop init"):
        missing.enqueue(EnqueueRequest("email"))
    assert not (tmp_path / "absent.db").exists()

    actions = Actions(sqlite_backend.target)
    path = Path(sqlite_backend.target.value)
    away = path.with_suffix(".away")
    path.rename(away)
    with pytest.raises(QueuetopError):
        actions.enqueue(EnqueueRequest("email"))
    away.rename(path)
    assert len(actions.enqueue(EnqueueRequest("email", 2)).ids) == 2
    actions.close()
