"""pg-boss 12 (12.38, on the Node.js 22 it needs, both from npm), the real library on the test PostgreSQL server: its
own schema (boss.start), jobs sent through its API, its own workers. What queuetop shows per queue equals the table
read with pg-boss's own predicates (fetchNextJob's, failJobsByTimeout's) and its own counts (getQueues after a
supervise pass); the claim queuetop calls timed out is the one pg-boss's supervisor then fails for its timeout; a
burst that arrives and ends between two polls is counted whole, with its wait and processing times. pg-boss 10's
tables (expire_in, no heartbeat) are the `pgboss` preset's (test_pgboss.py); each version finds its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from queuetop.db import Database, parse_target
from queuetop.watch.snapshot import Snapshot
from tests.conftest import PG_TARGET
from tests.libraries import LibraryApp, assert_advice_fixes_the_scans, detected, made_by, wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def pgboss() -> Iterator[LibraryApp]:
    with made_by("pgboss12") as app:
        yield app


def table_truth(db: Database, schema: str) -> dict[str, tuple[int, int, int, int, int]]:
    """Per queue, from pgboss.job as pg-boss 12's fetchNextJob, failJobsByTimeout and failJobsByHeartbeat read it:
    (before 'active', not blocked and due; the same ahead; active within its expiry and heartbeat; active past
    either; failed)."""
    lost = ("(started_on + expire_seconds * interval '1s' < now() OR (heartbeat_seconds IS NOT NULL"
            " AND heartbeat_on + heartbeat_seconds * interval '1s' < now()))")
    rows = db.fetchall(
        "SELECT name, count(*) FILTER (WHERE state < 'active' AND NOT blocked AND start_after <= now()),"
        " count(*) FILTER (WHERE state < 'active' AND NOT blocked AND start_after > now()),"
        f" count(*) FILTER (WHERE state = 'active' AND NOT {lost}),"
        f" count(*) FILTER (WHERE state = 'active' AND {lost}),"
        f" count(*) FILTER (WHERE state = 'failed') FROM {schema}.job GROUP BY name")
    return {name: tuple(int(n) for n in counts) for name, *counts in rows}  # type: ignore[misc]


def shown(snapshot: Snapshot) -> dict[str, tuple[int | None, ...]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.scheduled, t.claimed, t.timed_out, t.dead) for t in snapshot.types}


def taken_the_mix(db: Database, schema: str) -> bool:
    rows = dict(db.fetchall(f"SELECT name || ':' || state, count(*) FROM {schema}.job GROUP BY 1"))
    return rows == {"fast:completed": 3, "fast:created": 2, "hold:active": 1, "stuck:active": 1, "beat:active": 1,
                    "flaky:retry": 1, "doomed:failed": 1, "orphan:created": 1}  # fmt: skip


def test_queuetop_finds_pgboss12_and_shows_what_its_table_and_its_own_counts_say(pgboss: LibraryApp) -> None:
    pgboss.run("defer", "fast=3", "hold=1", "stuck=1", "beat=1", "flaky=1", "doomed=1", "later=2", "orphan=1")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        with pgboss.worker():  # killed with SIGKILL as the block ends, holding hold, stuck and beat
            wait_for(lambda: taken_the_mix(db, pgboss.schema), "pg-boss's workers to take the mix")
            wait_for(lambda: table_truth(db, pgboss.schema)["beat"][2] == 1, "beat's job claimed and beating")
        wait_for(lambda: table_truth(db, pgboss.schema)["stuck"][3] == 1, "the stuck job's 5 s expiry to pass")
        wait_for(lambda: table_truth(db, pgboss.schema)["beat"][3] == 1, "beat's 10 s heartbeat to lapse")
        collector = detected(db, pgboss, "pgboss12")
        figures = shown(collector.poll())
        truth = table_truth(db, pgboss.schema)
        library = pgboss.json("counts")  # its supervise pass fails the claim past its expiry, as pg-boss does
        after = shown(collector.poll())
    assert figures == truth
    assert figures == {"fast": (0, 2, 0, 0, 0), "hold": (0, 0, 1, 0, 0), "stuck": (0, 0, 0, 1, 0),
                       "beat": (0, 0, 0, 1, 0), "flaky": (0, 1, 0, 0, 0), "doomed": (0, 0, 0, 0, 1),
                       "orphan": (1, 0, 0, 0, 0)}  # fmt: skip
    for queue, (depth, scheduled, claimed, timed_out, dead) in figures.items():  # its counts are cached first
        own = library[queue]
        assert (depth, scheduled, claimed + timed_out, dead) == (own["ready"], own["deferred"], own["active"],
                                                                 own["failed"]), queue  # fmt: skip
    # the claims queuetop called timed out (past the expiry; past the heartbeat) are the ones pg-boss's own supervise
    # pass then failed for their timeout, and put back to run again (retry_limit 2 by default, no delay): due
    assert after == {**figures, "stuck": (1, 0, 0, 0, 0), "beat": (1, 0, 0, 0, 0)}


def test_a_burst_is_counted_whole_with_its_wait_and_processing(pgboss: LibraryApp) -> None:
    with pgboss.worker(), Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = detected(db, pgboss, "pgboss12")
        collector.poll()
        pgboss.run("defer", "fast=300")
        wait_for(lambda: not db.fetchone(f"SELECT count(*) FROM {pgboss.schema}.job WHERE state < 'completed'")[0],
                 "the workers to finish the burst")
        fast = {t.job_type: t for t in collector.poll().types}["fast"]
    assert (fast.arrivals_total, fast.completions_total, fast.depth) == (300, 300, 0)
    assert fast.wait_p50_s is not None and fast.processing_p50_s is not None and fast.latency_sample


def test_doctor_names_the_indexes_pgboss12_lacks_and_with_them_no_read_scans(pgboss: LibraryApp) -> None:
    """pg-boss 12 indexes the times the poll reads by after the queue's name: a read across every queue by time
    walks the whole index (its Index Cond names created_on, not name: an index scan, not a seek), and no index
    lists a queue's waiting jobs in the drill-down's order; the preset's [[advice]] fixes both."""
    pgboss.run("defer", "fast=2", "orphan=1")
    assert_advice_fixes_the_scans(PG_TARGET, pgboss.schema, {"plan: poll: arrivals past the watermark",
                                                             "plan: drill-down: pending rows"})
