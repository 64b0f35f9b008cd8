"""pg-boss (10.4), the real library from npm on the test PostgreSQL server: its own schema (boss.start), jobs sent
through its API, its own workers. Its jobs keep their times, so queuetop shows everything: what it shows per queue
equals the table read directly and pg-boss's own getQueueSize; a claim past its own expire_in is timed out; a
burst that arrives and ends between two polls is counted whole, with its wait and processing times."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from queuetop.db import Database, parse_target
from queuetop.watch.collector import ShapeCollector
from queuetop.watch.snapshot import Snapshot
from tests import forked_cli
from tests.conftest import PG_TARGET
from tests.libraries import LibraryApp, assert_advice_fixes_the_scans, detected, made_by, wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def pgboss() -> Iterator[LibraryApp]:
    with made_by("pgboss") as app:
        yield app


def table_truth(db: Database, schema: str) -> dict[str, tuple[int, int, int, int, int]]:
    """Per queue, from pgboss.job as pg-boss's fetchNextJob and failJobsByTimeout read it: (before 'active' and
    due, before 'active' and ahead, active within its expire_in, active past it, failed)."""
    rows = db.fetchall(
        "SELECT name, count(*) FILTER (WHERE state < 'active' AND start_after <= now()),"
        " count(*) FILTER (WHERE state < 'active' AND start_after > now()),"
        " count(*) FILTER (WHERE state = 'active' AND started_on + expire_in >= now()),"
        " count(*) FILTER (WHERE state = 'active' AND started_on + expire_in < now()),"
        f" count(*) FILTER (WHERE state = 'failed') FROM {schema}.job GROUP BY name")
    return {name: tuple(int(n) for n in counts) for name, *counts in rows}  # type: ignore[misc]


def shown(snapshot: Snapshot) -> dict[str, tuple[int | None, ...]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.scheduled, t.claimed, t.timed_out, t.dead) for t in snapshot.types}


def collector_for(db: Database, app: LibraryApp) -> ShapeCollector:
    return detected(db, app, "pgboss")


def taken_the_mix(db: Database, schema: str) -> bool:
    rows = dict(db.fetchall(f"SELECT name || ':' || state, count(*) FROM {schema}.job GROUP BY 1"))
    return rows == {"fast:completed": 3, "fast:created": 2, "hold:active": 1, "stuck:active": 1, "flaky:retry": 1,
                    "doomed:failed": 1, "orphan:created": 1}  # fmt: skip


def test_queuetop_finds_pgboss_and_shows_what_its_table_and_its_own_count_say(pgboss: LibraryApp) -> None:
    pgboss.run("defer", "fast=3", "hold=1", "stuck=1", "flaky=1", "doomed=1", "later=2", "orphan=1")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        with pgboss.worker():  # killed with SIGKILL as the block ends, holding hold and stuck
            wait_for(lambda: taken_the_mix(db, pgboss.schema), "pg-boss's workers to take the mix")
        wait_for(lambda: table_truth(db, pgboss.schema)["stuck"][3] == 1, "the stuck job's 5 s expiry to pass")
        figures = shown(collector_for(db, pgboss).poll())
        truth = table_truth(db, pgboss.schema)
        library = pgboss.json("sizes")
    assert figures == truth
    assert figures == {"fast": (0, 2, 0, 0, 0), "hold": (0, 0, 1, 0, 0), "stuck": (0, 0, 0, 1, 0),
                       "flaky": (0, 1, 0, 0, 0), "doomed": (0, 0, 0, 0, 1), "orphan": (1, 0, 0, 0, 0)}  # fmt: skip
    for queue, (depth, scheduled, *_) in figures.items():
        assert depth + scheduled == library[queue], queue  # getQueueSize: the jobs before 'active'


def test_a_burst_is_counted_whole_with_its_wait_and_processing(pgboss: LibraryApp) -> None:
    with pgboss.worker(), Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = collector_for(db, pgboss)
        collector.poll()
        pgboss.run("defer", "fast=300")
        wait_for(lambda: pgboss.json("sizes")["fast"] == 0 and not db.fetchone(
            f"SELECT count(*) FROM {pgboss.schema}.job WHERE state = 'active'")[0], "the workers to finish the burst")
        fast = {t.job_type: t for t in collector.poll().types}["fast"]
    assert (fast.arrivals_total, fast.completions_total, fast.depth) == (300, 300, 0)
    assert fast.wait_p50_s is not None and fast.processing_p50_s is not None and fast.latency_sample


def test_the_doctor_prints_no_delete_for_a_librarys_table(pgboss: LibraryApp) -> None:
    env = {**os.environ, "QUEUETOP_DB": "", "QUEUETOP_LAYOUT": ""}
    done = forked_cli.run(["doctor", "--db", PG_TARGET, "--table", f"{pgboss.schema}.job"], env=env, timeout=120)
    assert "ok    retention: job: pg-boss keeps and removes its own rows" in done.stdout, done.stdout + done.stderr
    assert "DELETE" not in done.stdout


def test_doctor_names_the_indexes_pgboss_lacks_and_with_them_no_poll_read_scans(pgboss: LibraryApp) -> None:
    """pg-boss indexes a queue's waiting jobs by start_after and its keys: doctor says which of the poll's reads
    scan its partitions and prints the index each needs (the preset's [[advice]], made on every partition); made,
    those reads are index reads (bench: a poll at 10^6 jobs 394 -> 14 ms)."""
    assert_advice_fixes_the_scans(PG_TARGET, pgboss.schema, {
        "plan: poll: states (full pass)", "plan: poll: arrivals past the watermark",
        "plan: poll: completions past the watermark"})

