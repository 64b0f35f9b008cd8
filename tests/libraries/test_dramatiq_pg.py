"""dramatiq-pg (0.12, dramatiq 1.18), the real library on the test PostgreSQL server: its own `init`, messages sent
through dramatiq's API, dramatiq's own worker. The actor is read from each message's JSON; a delayed message
(a delay, a retry's backoff) is scheduled while it carries its eta, in the queue NAME.DQ, whether it waits in
the table or in a worker's memory. What queuetop shows per actor equals the table read here (each message
decoded with json.loads) and, per state, dramatiq-pg's own `stats`."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from queuetop.db import Database, parse_target
from queuetop.watch import recount
from queuetop.watch.snapshot import Snapshot
from tests.conftest import PG_TARGET
from tests.libraries import LibraryApp, detected, made_by, wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def dramatiq() -> Iterator[LibraryApp]:
    with made_by("dramatiq_pg") as app:
        yield app


def table_truth(db: Database, schema: str) -> dict[str, tuple[int, int, int, int]]:
    """Per actor, from dramatiq.queue: (queued without an eta, queued or consumed with one, consumed without one,
    rejected)."""
    counts: dict[str, Counter] = {}
    for state, message in db.fetchall(f"SELECT state, message::text FROM {schema}.queue"):
        decoded = json.loads(message)
        delayed = "eta" in decoded["options"]
        kind = {("queued", False): "pending", ("consumed", False): "claimed", ("rejected", False): "dead",
                ("queued", True): "scheduled", ("consumed", True): "scheduled"}.get((state, delayed), state)
        counts.setdefault(decoded["actor_name"], Counter())[kind] += 1
    return {actor: (c["pending"], c["scheduled"], c["claimed"], c["dead"]) for actor, c in counts.items()}


def shown(snapshot: Snapshot) -> dict[str, tuple[int | None, ...]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.scheduled, t.claimed, t.dead) for t in snapshot.types}


def test_queuetop_finds_dramatiq_pg_and_reads_each_actor_and_eta_from_the_messages(dramatiq: LibraryApp) -> None:
    dramatiq.run("defer", "fast=3", "hold=1", "flaky=1", "doomed=1", "later=2", "orphan=1")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        sent = shown(detected(db, dramatiq, "dramatiq_pg").poll())
        with dramatiq.worker():
            wait_for(lambda: dramatiq.json("counts") == {"queued": 1, "consumed": 4, "done": 3, "rejected": 1},
                     "dramatiq's worker to take the mix")  # fmt: skip
            snapshot = detected(db, dramatiq, "dramatiq_pg", first_count_wait_s=None).poll()
            figures = shown(snapshot)
            truth = table_truth(db, dramatiq.schema)
    assert sent == {"fast": (3, 2, 0, 0), "hold": (1, 0, 0, 0), "flaky": (1, 0, 0, 0), "doomed": (1, 0, 0, 0),
                    "orphan": (1, 0, 0, 0)}  # the later ones wait in default.DQ with their eta  # fmt: skip
    assert figures == truth
    assert figures == {"fast": (0, 2, 0, 0), "hold": (0, 0, 1, 0), "flaky": (0, 1, 0, 0), "doomed": (0, 0, 0, 1),
                       "orphan": (1, 0, 0, 0)}  # fmt: skip
    # the three done messages stay in the table: ended (the preset's `ended`), not rows in no state
    assert {t.job_type: t.in_no_state for t in snapshot.types} == dict.fromkeys(figures, 0)


def test_what_dramatiq_pg_cannot_tell_is_null_with_its_reason(dramatiq: LibraryApp) -> None:
    dramatiq.run("defer", "orphan=2")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        (age,) = db.fetchone(f"SELECT extract(epoch FROM now() - min(mtime)) FROM {dramatiq.schema}.queue")
        snapshot = detected(db, dramatiq, "dramatiq_pg").poll()
    (orphan,) = snapshot.types
    assert orphan.depth == 2 and abs(orphan.oldest_age_s - float(age)) < 1.0
    assert (orphan.timed_out, orphan.arrivals_total, orphan.completions_total) == (None, None, None)
    why = snapshot.to_json()["cannot_know"]
    assert set(why) == {"timed_out", "lost", "arrivals", "completions", "wait", "processing"}
    assert "advisory lock" in why["timed_out"]


def test_a_poll_after_the_first_is_one_statement_and_a_deep_queues_count_is_spaced(
        dramatiq: LibraryApp, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """dramatiq-pg reads no arrival and no completion, so no event marks its first poll as done: every poll was a
    first one (its catalog read again, its count of the rows in no state waited for). Past SPACED_PAST_JOBS (here
    2) its count of the states is spaced like any untracked shape's (here: never due again by itself)."""
    monkeypatch.setattr(recount, "SPACED_PAST_JOBS", 2)
    monkeypatch.setattr(recount, "SPACED_MAX_SHARE", 1e-9)
    dramatiq.run("defer", "orphan=3")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = detected(db, dramatiq, "dramatiq_pg")
        first = collector.poll()
        dramatiq.run("defer", "orphan=1")
        sent: list[str] = []

        def recorded(send: Callable[..., Any]) -> Callable[..., Any]:
            return lambda sql, *args, **kwargs: sent.append(sql) or send(sql, *args, **kwargs)

        for method in ("fetchall", "fetchone", "execute"):
            monkeypatch.setattr(db, method, recorded(getattr(db, method)))
        kept = collector.poll()
        assert len(sent) == 1, sent  # the poll's own statement, not the first poll's catalog read again
        fresh = collector.poll(fresh=True)
    assert [(t.depth, t.depth_is_estimate) for t in (*first.types, *kept.types, *fresh.types)] == [
        (3, False), (3, True), (4, False)]  # fmt: skip
