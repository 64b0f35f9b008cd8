"""pgqueuer (1.6), the real library on the test PostgreSQL server: its own schema (`Queries.install`), jobs
enqueued through its API, its own worker. pgqueuer deletes a job's row when it ends and logs each step of a job in
pgqueuer_log (queued, picked, then the line that ends it): queuetop counts a burst that arrives and ends between two
polls whole, per entrypoint (arrivals by id in both tables, completions by their line), and takes wait and
processing from the job's lines, as pgqueuer's own percentiles do. A picked job whose worker died is known by its
heartbeat, which stops: older than the worker's heartbeat_timeout, pgqueuer's own dequeue takes it again, and
queuetop shows it timed out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from queuetop.db import Database, parse_target
from queuetop.watch import tracking
from queuetop.watch.collector import ShapeCollector
from queuetop.watch.snapshot import Snapshot
from tests.conftest import PG_TARGET
from tests.libraries import LibraryApp, assert_advice_fixes_the_scans, burst_between_polls, detected, made_by, wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def pgqueuer() -> Iterator[LibraryApp]:
    with made_by("pgqueuer") as app:
        yield app


def table_truth(db: Database, schema: str, heartbeat_timeout_s: int = 30) -> dict[str, tuple[int, ...]]:
    """Per entrypoint, from the pgqueuer table as pgqueuer's dequeue reads it: (queued and due, queued ahead,
    picked with a live heartbeat, picked with a stale one, failed and held)."""
    rows = db.fetchall(
        "SELECT entrypoint, count(*) FILTER (WHERE status = 'queued' AND execute_after <= now()),"
        " count(*) FILTER (WHERE status = 'queued' AND execute_after > now()),"
        " count(*) FILTER (WHERE status = 'picked' AND heartbeat >= now() - make_interval(secs => ?)),"
        " count(*) FILTER (WHERE status = 'picked' AND heartbeat < now() - make_interval(secs => ?)),"
        f" count(*) FILTER (WHERE status = 'failed') FROM {schema}.pgqueuer GROUP BY entrypoint",
        (heartbeat_timeout_s, heartbeat_timeout_s))  # fmt: skip
    return {name: tuple(int(n) for n in counts) for name, *counts in rows}


def shown(snapshot: Snapshot) -> dict[str, tuple[int | None, ...]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.scheduled, t.claimed, t.timed_out, t.dead) for t in snapshot.types}


def library_count(app: LibraryApp) -> dict[str, Counter]:
    """pgqueuer's own count (Queries.queue_size): per entrypoint, jobs per status."""
    counts: dict[str, Counter] = {}
    for row in app.json("counts"):
        counts.setdefault(row["entrypoint"], Counter())[row["status"]] += row["count"]
    return counts


def settled(app: LibraryApp) -> bool:
    """The worker has taken every job it will: fast done, hold picked, doomed held as failed, flaky queued again."""
    counts = library_count(app)
    return ("fast" in counts and counts["fast"]["queued"] == 3 and counts["hold"]["picked"] == 2
            and counts["doomed"]["failed"] == 1 and counts["flaky"]["queued"] == 1 and not counts["flaky"]["picked"])


def collector_for(db: Database, app: LibraryApp, settings: dict | None = None) -> ShapeCollector:
    return detected(db, app, "pgqueuer", settings)


def test_queuetop_finds_pgqueuer_and_shows_what_its_table_and_its_own_count_say(pgqueuer: LibraryApp) -> None:
    pgqueuer.run("defer", "fast=5", "hold=2", "flaky=1", "doomed=1", "later=3", "orphan=1")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        with pgqueuer.worker():
            wait_for(lambda: settled(pgqueuer), "pgqueuer's worker to take the mix")
            figures = shown(collector_for(db, pgqueuer).poll())  # the worker alive: its heartbeats are fresh
            truth = table_truth(db, pgqueuer.schema)
            library = library_count(pgqueuer)
        shortened = collector_for(db, pgqueuer, {"heartbeat_timeout": 1})  # killed: the heartbeats stop

        def hold() -> tuple[int | None, ...]:
            return shown(shortened.poll())["hold"]

        wait_for(lambda: hold() == (0, 0, 0, 2, 0), "the dead worker's heartbeats to be older than a second")
        after_the_kill = table_truth(db, pgqueuer.schema, heartbeat_timeout_s=1)["hold"]
    assert figures == truth
    assert figures == {"fast": (0, 3, 0, 0, 0), "hold": (0, 0, 2, 0, 0), "flaky": (0, 1, 0, 0, 0),
                       "doomed": (0, 0, 0, 0, 1), "orphan": (1, 0, 0, 0, 0)}  # fmt: skip
    for entrypoint, (depth, scheduled, claimed, timed_out, dead) in figures.items():
        assert (depth + scheduled, claimed + timed_out, dead) == (
            library[entrypoint]["queued"], library[entrypoint]["picked"], library[entrypoint]["failed"]), entrypoint
    assert after_the_kill == (0, 0, 0, 2, 0)


def test_a_burst_that_arrives_and_is_deleted_between_two_polls_is_counted_whole(pgqueuer: LibraryApp) -> None:
    with pgqueuer.worker(), Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        snapshot = burst_between_polls(pgqueuer, db, collector_for(db, pgqueuer), f"{pgqueuer.schema}.pgqueuer")
        logged = db.fetchone(f"SELECT count(*) FROM {pgqueuer.schema}.pgqueuer_log WHERE status = 'successful'")[0]
    assert logged == 300  # pgqueuer's own record: every one of them ran
    (fast,) = snapshot.types  # each job's entrypoint, from its line in pgqueuer_log: not only in the totals
    assert (fast.job_type, fast.arrivals_total, fast.completions_total, fast.depth) == ("fast", 300, 300, 0)
    assert (snapshot.totals.arrivals_total, snapshot.totals.completions_total) == (300, 300)


def test_wait_and_processing_are_read_from_the_jobs_lines_in_pgqueuer_log(pgqueuer: LibraryApp) -> None:
    with pgqueuer.worker(), Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        (fast,) = burst_between_polls(pgqueuer, db, collector_for(db, pgqueuer), f"{pgqueuer.schema}.pgqueuer",
                                      jobs=200).types  # fmt: skip
        # each ended job's wait, as pgqueuer pairs a job's lines (by job_id, in order): queued, picked, successful
        (wait_p50, wait_p95) = db.fetchone(
            "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY w), percentile_disc(0.95) WITHIN GROUP (ORDER BY w)"
            " FROM (SELECT extract(epoch FROM lag(created) OVER j - lag(created, 2) OVER j) AS w, status"
            f" FROM {pgqueuer.schema}.pgqueuer_log WINDOW j AS (PARTITION BY job_id ORDER BY created, id)) AS lines"
            " WHERE status = 'successful'")
    (own,) = [row for row in pgqueuer.json("durations") if row["entrypoint"] == "fast"]
    assert own["completed"] == 200
    assert fast.latency_sample == 200 and not fast.latency_is_sample
    # pgqueuer interpolates its percentiles (percentile_cont); queuetop's are values that occurred (nearest rank)
    assert fast.processing_p50_s == pytest.approx(own["p50_seconds"], abs=0.01)
    assert fast.processing_p95_s == pytest.approx(own["p95_seconds"], abs=0.02)
    # the window keeps latencies in buckets 2 % wide, each read back within 1 % of its values
    assert (fast.wait_p50_s, fast.wait_p95_s) == pytest.approx((float(wait_p50), float(wait_p95)), rel=0.02)
    assert fast.wait_p95_s > 0 and fast.processing_p95_s is not None and fast.processing_p95_s >= 0


def test_a_deep_queue_is_tracked_from_arrivals_and_the_logged_ends(pgqueuer: LibraryApp,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """pgqueuer's depth is tracked as the native schema's is: each poll reads an entrypoint's waiting rows only up
    to a cap (here 5) and follows it from the jobs that arrived and the lines that ended them."""
    monkeypatch.setattr(tracking, "DEPTH_EXACT_UP_TO", 5)
    pgqueuer.run("defer", "orphan=12")
    with pgqueuer.worker(), Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = collector_for(db, pgqueuer)
        collector.poll()
        pgqueuer.run("defer", "orphan=3", "fast=40")
        wait_for(lambda: library_count(pgqueuer).get("fast", Counter())["queued"] == 0, "the worker to run them")
        collector.poll()
        figures = {t.job_type: t for t in collector.poll().types}
        waiting = table_truth(db, pgqueuer.schema)["orphan"][0]
    assert waiting == 15
    assert (figures["orphan"].depth, figures["orphan"].depth_is_estimate) == (15, True)
    assert (figures["fast"].depth, figures["fast"].completions_total) == (0, 40)


def test_the_oldest_waiting_job_is_aged_from_its_creation(pgqueuer: LibraryApp) -> None:
    pgqueuer.run("defer", "orphan=2")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        (age,) = db.fetchone(f"SELECT extract(epoch FROM now() - min(created)) FROM {pgqueuer.schema}.pgqueuer")
        snapshot = collector_for(db, pgqueuer).poll()
    (orphan,) = snapshot.types
    assert orphan.depth == 2 and orphan.oldest_age_s is not None
    assert abs(orphan.oldest_age_s - float(age)) < 1.0
    assert set(snapshot.to_json()["cannot_know"]) == {"lost"}


def test_doctor_prints_the_indexes_a_poll_needs_and_with_them_it_reads_no_table_whole(pgqueuer: LibraryApp) -> None:
    """pgqueuer indexes no entrypoint's queued jobs by creation time, nor its failed ones: doctor says which of the
    poll's reads scan and prints the index each needs (the preset's [[advice]]); made, those reads are index reads
    (bench: a poll at 10^6 waiting jobs 436 -> 6 ms)."""
    assert_advice_fixes_the_scans(PG_TARGET, pgqueuer.schema, {"plan: poll: states (full pass)"})
