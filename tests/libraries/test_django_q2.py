"""django-q2 (1.11 on Django 5.2) with its ORM broker, the real library on SQLite and on the test PostgreSQL server:
Django's own migrations, tasks enqueued through `async_task`, django-q2's own cluster (`qcluster`). The same preset
serves both databases. Per queue (the cluster's name, the key of its rows), what queuetop shows equals the tables
and the broker's own `queue_size()` and `lock_size()`, the failures django-q2's Failure rows; a burst of tasks
that arrive and end between two polls counts whole (its arrivals from the queue rows' identity, its completions
from the results); what django-q2 does not keep is null with its reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from queuetop.act.jobs import read_job, read_jobs
from queuetop.db import Database, parse_target
from queuetop.watch import firstlook
from queuetop.watch.snapshot import Snapshot
from tests.libraries import Placed, assert_advice_fixes_the_scans, placed, wait_for

PRESET = "django_q2"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def django_q2(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Placed]:
    with placed("django_q2", request.param, tmp_path) as place:
        yield place


def results(db: Database, place: Placed) -> Counter:
    """The results django-q2 saved, per (function, success)."""
    rows = db.fetchall(f"SELECT func, success, count(*) FROM {place.table('django_q_task')} GROUP BY func, success")
    return Counter({(func, bool(int(success))): int(n) for func, success, n in rows})  # psqlODBC: '1' or '0'


def locked(db: Database, place: Placed) -> int:
    """Queue rows a cluster holds now (their lock ahead), read as the broker's lock_size() reads them."""
    return len([row for row in db.fetchall(f"SELECT lock FROM {place.table('django_q_ormq')}")
                if db.dialect.decode_time(row[0]) > db.dialect.decode_time(db.fetchone(
                    db.dialect.server_now_sql())[0])])  # fmt: skip


def shown(snapshot: Snapshot) -> dict[str, tuple[int | None, ...]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.claimed, t.dead) for t in snapshot.types}


def test_queuetop_finds_django_q2_and_shows_what_its_tables_and_its_broker_say(django_q2: Placed) -> None:
    django_q2.app.run("defer", "doomed=1", "fast=5", "hold=1", "orphan=2")  # one worker: hold blocks it last
    with Database.open(parse_target(django_q2.target), purpose="monitor") as db, django_q2.app.worker():
        wait_for(lambda: results(db, django_q2) == {("tasks.fast", True): 5, ("tasks.doomed", False): 1}
                 and locked(db, django_q2) == 1, "the cluster at hold")  # fmt: skip
        collector = django_q2.collector(db, PRESET)
        snapshot = collector.poll()
        library = django_q2.app.json("counts")
        (dead,) = read_jobs(db, collector.layout, "dead").jobs  # down to the job: its own uuid, its function
        (held,) = read_jobs(db, collector.layout, "claimed").jobs
        by_uuid, by_row = read_job(db, collector.layout, dead["id"]), read_job(db, collector.layout, str(held["id"]))
    assert (dead["func"], dead["attempts"], dead["type"]) == ("tasks.doomed", 1, "site")
    assert by_uuid is not None and (by_uuid.state, by_uuid.table) == ("dead", "django_q_task")
    assert by_row is not None and (by_row.state, by_row.table) == ("claimed", "django_q_ormq")
    assert shown(snapshot) == {"nobody": (2, 0, 0), "site": (0, 1, 1)}
    for queue, (depth, claimed, _) in shown(snapshot).items():
        assert (depth, claimed) == (library["queued"][queue], library["locked"][queue]), queue
    assert library["failure"] == {"tasks.doomed": 1} and library["success"] == {"tasks.fast": 5}
    site = next(t for t in snapshot.types if t.job_type == "site")
    assert site.completions_total == 6  # five successes and a failure, saved within the first poll's window
    assert (site.oldest_age_s, site.wait_p50_s, site.processing_p50_s, site.timed_out) == (None, None, None, None)
    assert "not when a cluster took it" in snapshot.cannot_know["wait"]


def test_a_burst_that_arrives_and_ends_between_two_polls_counts_whole(django_q2: Placed) -> None:
    with django_q2.app.worker(), Database.open(parse_target(django_q2.target), purpose="monitor") as db:
        collector = django_q2.collector(db, PRESET)
        collector.poll()
        django_q2.app.run("defer", "fast=300")
        queued = f"SELECT count(*) FROM {django_q2.table('django_q_ormq')}"
        wait_for(lambda: results(db, django_q2)[("tasks.fast", True)] == 300 and db.fetchone(queued)[0] == 0,
                 "the cluster to run the burst", 90)  # a task's row is deleted just after its result is saved
        collector.poll()
        snapshot = collector.poll()  # the sequence is read a poll behind
    (site,) = snapshot.types
    assert (site.completions_total, site.depth) == (300, 0)
    assert snapshot.totals.arrivals_total == 300 == snapshot.totals.completions_total


def test_doctor_names_the_indexes_django_q2_lacks_and_with_them_no_poll_read_scans(django_q2: Placed) -> None:
    django_q2.app.run("defer", "fast=2", "orphan=1")
    assert_advice_fixes_the_scans(django_q2.target, django_q2.schema, {
        "plan: poll: states (full pass)", "plan: poll: completions past the watermark"})


def test_a_deep_queues_first_look_samples_its_depth_and_the_next_poll_counts_every_state(
        django_q2: Placed, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """django-q2's depth cannot be tracked (its results are numbered apart from its tasks), and its states are
    counted in one pass: where the queue rows' ids span more than EXACT_UP_TO (here 400) the first poll estimates
    each queue's waiting tasks from a sample of the ids (here 200 in 10 windows; ≈) and counts no other state (None,
    never a 0 it did not count); the next poll counts every row."""
    monkeypatch.setattr(firstlook, "EXACT_UP_TO", 400)
    monkeypatch.setattr(firstlook, "SAMPLE_ROWS", 200)
    monkeypatch.setattr(firstlook, "SAMPLE_WINDOWS", 10)
    django_q2.app.run("defer", "orphan=600")
    with Database.open(parse_target(django_q2.target), purpose="monitor") as db:
        collector = django_q2.collector(db, PRESET)
        (nobody,) = collector.poll().types
        assert (nobody.job_type, nobody.depth_is_estimate, nobody.claimed, nobody.dead) == ("nobody", True, None, None)
        assert abs(nobody.depth - 600) <= 30
        counted = collector.poll()
        assert shown(counted) == {"nobody": (600, 0, 0)} and not counted.totals.depth_is_estimate
