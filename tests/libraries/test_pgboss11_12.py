"""pg-boss 11 and 12 (11.1, 12.18, 12.38 on the Node.js 22 they need, all from npm), the real library on the test
PostgreSQL server: its own schema (boss.start), jobs sent through its API, its own workers. Each version's tables
are found by their own preset (11 to 12.11 `pgboss11`; 12.12 to 12.18, heartbeats, `pgboss12_12`; 12.19 on, flows,
`pgboss12`). What queuetop shows per queue equals the table read with pg-boss's own predicates (fetchNextJob's,
failJobsByTimeout's, failJobsByHeartbeat's) and its own counts (getQueues after a supervise pass); the claim
queuetop calls timed out is the one pg-boss's supervisor then fails for its timeout; a burst that arrives and ends
between two polls is counted whole, with its wait and processing times. pg-boss 10's tables (expire_in, no
heartbeat) are the `pgboss` preset's (test_pgboss.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from queuetop.db import Database, parse_target
from queuetop.watch.snapshot import Snapshot
from tests.conftest import PG_TARGET
from tests.libraries import LibraryApp, assert_advice_fixes_the_scans, detected, made_by, wait_for

pytestmark = pytest.mark.postgres


@dataclass(frozen=True)
class Version:
    """One pg-boss version's test application (its folder here) and what its tables hold."""

    app: str  # the folder: its package.json pins the version, its app.js is pgboss12's
    preset: str  # the preset detection must pick
    heartbeats: bool  # 12.12 on: heartbeat_on, heartbeat_seconds, failJobsByHeartbeat
    flows: bool  # 12.19 on: blocked (a flow's child waiting on its parents)
    scans: frozenset[str]  # the reads doctor finds scanning with pg-boss's own indexes alone


ALL_FOUR = frozenset({"plan: poll: states (full pass)", "plan: poll: arrivals past the watermark",
                      "plan: poll: completions past the watermark", "plan: drill-down: pending rows"})  # fmt: skip
VERSIONS = [
    Version("pgboss11", "pgboss11", heartbeats=False, flows=False, scans=ALL_FOUR),
    Version("pgboss12_12", "pgboss12_12", heartbeats=True, flows=False, scans=ALL_FOUR),
    Version("pgboss12", "pgboss12", heartbeats=True, flows=True, scans=frozenset({
        "plan: poll: arrivals past the watermark", "plan: drill-down: pending rows"})),
]


@pytest.fixture(params=VERSIONS, ids=[version.app for version in VERSIONS])
def version(request: pytest.FixtureRequest) -> Version:
    return request.param


@pytest.fixture
def pgboss(version: Version) -> Iterator[LibraryApp]:
    with made_by(version.app) as app:
        yield app


def table_truth(db: Database, schema: str, version: Version) -> dict[str, tuple[int, int, int, int, int]]:
    """Per queue, from pgboss.job as this version's fetchNextJob, failJobsByTimeout (and failJobsByHeartbeat) read
    it: (before 'active', not blocked and due; the same ahead; active within its expiry and heartbeat; active past
    either; failed)."""
    lost = "started_on + expire_seconds * interval '1s' < now()"
    if version.heartbeats:
        beat_lapsed = "heartbeat_on + heartbeat_seconds * interval '1s' < now()"
        lost = f"({lost} OR (heartbeat_seconds IS NOT NULL AND {beat_lapsed}))"
    waiting = "state < 'active' AND NOT blocked" if version.flows else "state < 'active'"
    rows = db.fetchall(
        f"SELECT name, count(*) FILTER (WHERE {waiting} AND start_after <= now()),"
        f" count(*) FILTER (WHERE {waiting} AND start_after > now()),"
        f" count(*) FILTER (WHERE state = 'active' AND NOT {lost}),"
        f" count(*) FILTER (WHERE state = 'active' AND {lost}),"
        f" count(*) FILTER (WHERE state = 'failed') FROM {schema}.job GROUP BY name")
    return {name: tuple(int(n) for n in counts) for name, *counts in rows}  # type: ignore[misc]


def shown(snapshot: Snapshot) -> dict[str, tuple[int | None, ...]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.scheduled, t.claimed, t.timed_out, t.dead) for t in snapshot.types}


def taken_the_mix(db: Database, schema: str, version: Version) -> bool:
    rows = dict(db.fetchall(f"SELECT name || ':' || state, count(*) FROM {schema}.job GROUP BY 1"))
    return rows == {"fast:completed": 3, "fast:created": 2, "hold:active": 1, "stuck:active": 1,
                    "flaky:retry": 1, "doomed:failed": 1, "orphan:created": 1,
                    **({"beat:active": 1} if version.heartbeats else {})}  # fmt: skip


def test_queuetop_finds_each_version_and_shows_what_its_table_and_its_own_counts_say(
        pgboss: LibraryApp, version: Version) -> None:  # fmt: skip
    beat = ("beat=1",) if version.heartbeats else ()  # 11 has no heartbeats
    pgboss.run("defer", "fast=3", "hold=1", "stuck=1", *beat, "flaky=1", "doomed=1", "later=2", "orphan=1")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        with pgboss.worker():  # killed with SIGKILL as the block ends, holding hold, stuck and beat
            wait_for(lambda: taken_the_mix(db, pgboss.schema, version), "pg-boss's workers to take the mix")
            if beat:
                wait_for(lambda: table_truth(db, pgboss.schema, version)["beat"][2] == 1,
                         "beat's job claimed and beating")  # fmt: skip
        wait_for(lambda: table_truth(db, pgboss.schema, version)["stuck"][3] == 1,
                 "the stuck job's 5 s expiry to pass")  # fmt: skip
        if beat:
            wait_for(lambda: table_truth(db, pgboss.schema, version)["beat"][3] == 1, "beat's 10 s heartbeat to lapse")
        collector = detected(db, pgboss, version.preset)
        figures = shown(collector.poll())
        truth = table_truth(db, pgboss.schema, version)
        library = pgboss.json("counts")  # its supervise pass fails the claim past its expiry, as pg-boss does
        after = shown(collector.poll())
    assert figures == truth
    assert figures == {"fast": (0, 2, 0, 0, 0), "hold": (0, 0, 1, 0, 0), "stuck": (0, 0, 0, 1, 0),
                       "flaky": (0, 1, 0, 0, 0), "doomed": (0, 0, 0, 0, 1), "orphan": (1, 0, 0, 0, 0),
                       **({"beat": (0, 0, 0, 1, 0)} if beat else {})}  # fmt: skip
    for queue, (depth, scheduled, claimed, timed_out, dead) in figures.items():  # its counts are cached first
        own = library[queue]
        assert (depth, scheduled, claimed + timed_out) == (own["ready"], own["deferred"], own["active"]), queue
        assert dead == own.get("failed", dead), queue  # 12.19 on counts failed jobs; before, the table says it
    # the claims queuetop called timed out (past the expiry; past the heartbeat) are the ones pg-boss's own supervise
    # pass then failed for their timeout, and put back to run again (retry_limit 2 by default, no delay): due
    assert after == {**figures, "stuck": (1, 0, 0, 0, 0), **({"beat": (1, 0, 0, 0, 0)} if beat else {})}


@pytest.mark.parametrize("version", [v for v in VERSIONS if v.app != "pgboss12_12"], indirect=True,
                         ids=lambda v: v.app)  # 12.12's table is 11's for what a burst reads
def test_a_burst_is_counted_whole_with_its_wait_and_processing(pgboss: LibraryApp, version: Version) -> None:
    with pgboss.worker(), Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = detected(db, pgboss, version.preset)
        collector.poll()
        pgboss.run("defer", "fast=300")
        wait_for(lambda: not db.fetchone(f"SELECT count(*) FROM {pgboss.schema}.job WHERE state < 'completed'")[0],
                 "the workers to finish the burst")
        fast = {t.job_type: t for t in collector.poll().types}["fast"]
    assert (fast.arrivals_total, fast.completions_total, fast.depth) == (300, 300, 0)
    assert fast.wait_p50_s is not None and fast.processing_p50_s is not None and fast.latency_sample


def test_doctor_names_the_indexes_each_version_lacks_and_with_them_no_read_scans(
        pgboss: LibraryApp, version: Version) -> None:  # fmt: skip
    """pg-boss 11 (and 12 before 12.38) indexes a queue's waiting jobs by start_after and nothing else the poll
    reads by: its counts, arrivals and completions each pass over the table. 12.38 indexes the times by after the
    queue's name: a read across every queue by time walks the whole index (its Index Cond names created_on, not
    name: an index scan, not a seek). No version lists a queue's waiting jobs in the drill-down's order. The
    preset's [[advice]] fixes each."""
    pgboss.run("defer", "fast=2", "orphan=1")
    assert_advice_fixes_the_scans(PG_TARGET, pgboss.schema, set(version.scans))
