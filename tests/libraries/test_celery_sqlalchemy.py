"""Celery (5.7) on kombu's SQLAlchemy transport, the real library on SQLite and on the test PostgreSQL server: kombu
makes its tables, tasks are sent through Celery's API, Celery's own worker takes them. The task's name is inside
each message's JSON (`headers.task`): queuetop reads it there, on both databases with one preset, and its depth
per task equals the table and, summed per queue, kombu's own count. A worker marks a message invisible as it takes
it and nothing at its end, so in flight, done and failed are null with their reason; arrivals count by id."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from queuetop.db import Database, parse_target
from queuetop.watch.snapshot import Snapshot
from tests.libraries import Placed, placed, wait_for

QUEUE_OF = {"tasks.fast": "celery", "tasks.hold": "celery", "tasks.doomed": "celery", "tasks.orphan": "nobody"}


def visible(db: Database, broker: Placed) -> Counter:
    """Per task, the visible messages, read from the table and decoded here (json.loads of each payload)."""
    rows = db.fetchall(f"SELECT payload, visible FROM {broker.table('kombu_message')}")
    return Counter(json.loads(payload)["headers"]["task"] for payload, visible in rows
                   if str(visible) in ("1", "True"))  # psqlODBC hands a boolean over as '1' / '0'


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def broker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Placed]:
    with placed("celery_sqlalchemy", request.param, tmp_path) as place:
        yield place


def depths(snapshot: Snapshot) -> dict[str, int]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: t.depth for t in snapshot.types if t.depth}


def test_queuetop_reads_the_task_name_from_each_message_and_counts_what_kombu_counts(broker: Placed) -> None:
    broker.app.run("defer", "fast=3", "hold=1", "doomed=1", "later=2", "orphan=1")
    with Database.open(parse_target(broker.target), purpose="monitor") as db:
        collector = broker.collector(db, "celery_sqlalchemy")
        before, table_before = depths(collector.poll()), visible(db, broker)
        kombu_before = broker.app.json("counts")
        with broker.app.worker():
            wait_for(lambda: visible(db, broker) == {"tasks.orphan": 1}, "Celery's worker to take every message")
            after, table_after = depths(collector.poll()), visible(db, broker)
            kombu_after = broker.app.json("counts")
    assert before == table_before == {"tasks.fast": 5, "tasks.hold": 1, "tasks.doomed": 1, "tasks.orphan": 1}
    assert after == table_after == {"tasks.orphan": 1}
    for shown, kombu in ((before, kombu_before), (after, kombu_after)):
        per_queue = Counter()
        for task, depth in shown.items():
            per_queue[QUEUE_OF[task]] += depth
        assert {q: per_queue[q] for q in kombu} == kombu


def test_arrivals_count_by_id_and_what_it_cannot_know_says_why(broker: Placed) -> None:
    with Database.open(parse_target(broker.target), purpose="monitor") as db:
        collector = broker.collector(db, "celery_sqlalchemy")
        collector.poll()
        broker.app.run("defer", "orphan=12")
        snapshot = collector.poll()
    (orphan,) = snapshot.types
    assert (orphan.depth, orphan.arrivals_total) == (12, 12)
    assert (orphan.claimed, orphan.completions_total, orphan.oldest_age_s, orphan.dead) == (None, None, None, None)
    why = snapshot.to_json()["cannot_know"]
    assert "invisible" in why["claimed"] and "memory" in why["scheduled"] and "result backend" in why["dead"]
