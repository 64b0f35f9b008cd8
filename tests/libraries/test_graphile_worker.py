"""graphile-worker (0.17, and 0.18), the real library from npm on the test PostgreSQL server: its own migrations,
jobs added through its API, its own worker. graphile-worker deletes a job's row when it succeeds and keeps no
completion time: queuetop reads its `jobs` view, and counts a burst that arrives and ends between two polls whole
(arrivals by id, completions as what arrived less what the rows grew by). A worker killed with SIGKILL holds its
jobs until their lock is 4 hours old; with the setting shortened, they show as timed out."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from queuetop.cli import main
from queuetop.db import Database, parse_target
from queuetop.layouts.detect import detect
from queuetop.serve.exporter import TargetState, exposition
from queuetop.watch import firstlook, recount
from queuetop.watch.collector import ShapeCollector
from queuetop.watch.monitor import CONNECTED, PollOutcome
from queuetop.watch.snapshot import Snapshot
from tests.conftest import PG_TARGET
from tests.libraries import (
    LibraryApp,
    assert_refused,
    burst_between_polls,
    detected,
    made_by,
    queuetop_cli,
    read_rows,
    wait_for,
)

pytestmark = pytest.mark.postgres


@pytest.fixture(params=["graphile_worker", "graphile_worker18"])
def graphile(request: pytest.FixtureRequest) -> Iterator[LibraryApp]:
    """graphile-worker 0.17 on Node.js 20, and 0.18 on the Node.js 22 it needs (the same application)."""
    with made_by(request.param) as app:
        yield app


def table_truth(db: Database, schema: str) -> dict[str, tuple[int, int, int, int]]:
    """Per task, from graphile-worker's `jobs` view as its getJobs and failJobs read it: (unlocked with attempts
    left and due, the same but run_at ahead, locked, attempts used up)."""
    rows = db.fetchall(
        "SELECT task_identifier,"
        " count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at <= now()),"
        " count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at > now()),"
        " count(*) FILTER (WHERE locked_at IS NOT NULL),"
        f" count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts) FROM {schema}.jobs"
        " GROUP BY task_identifier")
    return {name: tuple(int(n) for n in counts) for name, *counts in rows}  # type: ignore[misc]


def shown(snapshot: Snapshot) -> dict[str, tuple[int | None, ...]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.scheduled, (t.claimed or 0) + (t.timed_out or 0), t.dead) for t in snapshot.types}


def collector_for(db: Database, app: LibraryApp, settings: dict | None = None) -> ShapeCollector:
    return detected(db, app, "graphile_worker", settings)  # on its view


def taken_the_mix(db: Database, schema: str) -> bool:
    """fast done (deleted), hold locked, doomed failed for good, flaky failed once and waiting for its retry."""
    rows = dict(db.fetchall(
        "SELECT task_identifier || ':' || (locked_at IS NOT NULL)::text || ':' || attempts, count(*)"
        f" FROM {schema}.jobs WHERE run_at <= now() + interval '10 minutes' GROUP BY 1"))  # fmt: skip
    return rows == {"hold:true:1": 2, "doomed:false:1": 1, "flaky:false:1": 1, "orphan:false:0": 1}


def test_queuetop_finds_graphile_worker_and_shows_what_its_view_says_after_a_worker_is_killed(
        graphile: LibraryApp) -> None:  # fmt: skip
    graphile.run("defer", "fast=5", "hold=2", "flaky=1", "doomed=1", "later=3", "orphan=1")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        with graphile.worker():  # killed with SIGKILL as the block ends, holding the hold jobs
            wait_for(lambda: taken_the_mix(db, graphile.schema), "graphile-worker's worker to take the mix")
        assert [c.table.is_view for c in detect(db) if c.table.schema == graphile.schema] == [True]  # its view
        figures = shown(collector_for(db, graphile).poll())
        truth = table_truth(db, graphile.schema)
        shortened = collector_for(db, graphile, {"lock_timeout": 1})

        def held() -> tuple[int | None, int | None]:
            (hold,) = [t for t in shortened.poll().types if t.job_type == "hold"]
            return hold.claimed, hold.timed_out

        wait_for(lambda: held() == (0, 2), "the dead worker's locks to be older than the shortened lock timeout")
    assert figures == truth
    assert figures == {"fast": (0, 3, 0, 0), "hold": (0, 0, 2, 0), "flaky": (0, 1, 0, 0), "doomed": (0, 0, 0, 1),
                       "orphan": (1, 0, 0, 0)}  # fmt: skip


def test_a_burst_that_arrives_and_is_deleted_between_two_polls_is_counted_whole(graphile: LibraryApp) -> None:
    with graphile.worker(), Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        snapshot = burst_between_polls(graphile, db, collector_for(db, graphile), f"{graphile.schema}.jobs")
    totals = snapshot.totals
    assert (totals.arrivals_total, totals.completions_total, totals.depth) == (300, 300, 0)
    seen = {t.job_type: (t.arrivals_total, t.completions_total) for t in snapshot.types}
    assert seen in ({}, {"fast": seen.get("fast")}) and all(a == c <= 300 for a, c in seen.values())  # rows seen


def test_enqueue_goes_through_add_job_and_graphile_workers_own_worker_runs_the_jobs(graphile: LibraryApp) -> None:
    """The one write the preset declares: `queuetop enqueue` calls graphile_worker.add_job() (the library's way to
    add a job from SQL); its own worker then takes and finishes them. A payload that is not JSON, and every other
    action, is refused before any SQL is sent."""
    graphile.run("defer", "orphan=1")
    jobs = f"{graphile.schema}.jobs"

    def rows() -> list[tuple]:
        return read_rows(f"SELECT j.id, j.task_identifier, p.payload::text, j.priority, (j.run_at > now() + "
                         f"interval '5 minutes')::int FROM {jobs} j JOIN {graphile.schema}._private_jobs p "
                         f"ON p.id = j.id ORDER BY j.id")

    before = rows()
    added = queuetop_cli("enqueue", "--type", "fast", "-n", "3", "--info", '{"from": "queuetop"}', "--priority", "4",
                         "--table", jobs)  # fmt: skip
    assert added.returncode == 0 and "enqueued 3 jobs" in added.stdout, added.stdout + added.stderr
    later = queuetop_cli("enqueue", "--type", "fast", "--delay", "3600", "--table", jobs)
    assert later.returncode == 0, later.stderr
    made = rows()[len(before):]
    ids = [r[0] for r in made]
    assert [r[1:] for r in made] == [("fast", '{"from": "queuetop"}', 4, 0)] * 3 + [
        ("fast", '{"test": "queuetop test job"}', 0, 1)]  # fmt: skip
    assert ", ".join(str(i) for i in ids[:3]) in added.stdout or f"{ids[0]}..{ids[2]}" in added.stdout, added.stdout
    assert_refused(jobs, "fast")
    assert rows() == before + made  # nothing written by the refusals
    with graphile.worker():
        wait_for(lambda: [r[0] for r in rows()] == [before[0][0], ids[3]], "graphile-worker to run the three jobs")


def test_a_deep_queues_count_is_spaced_its_figures_kept_as_estimates_its_arrivals_and_completions_exact(
        graphile: LibraryApp, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """graphile-worker's depth cannot be tracked, so a poll counts every row; past SPACED_PAST_JOBS (here 10) the
    count is spaced by its cost (here: never due again by itself). The polls between keep its figures, the depth
    marked ≈, and still read the arrivals by id; a fresh poll (after the user's action) counts at once, and the
    jobs that finished meanwhile are its completions, each once."""
    monkeypatch.setattr(recount, "SPACED_PAST_JOBS", 10)
    monkeypatch.setattr(recount, "SPACED_MAX_SHARE", 1e-9)
    graphile.run("defer", "orphan=12")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = collector_for(db, graphile)
        first = collector.poll()
        assert shown(first) == {"orphan": (12, 0, 0, 0)} and not first.totals.depth_is_estimate
        graphile.run("defer", "orphan=3", "fast=2")
        kept = collector.poll()
        assert shown(kept) == {"orphan": (12, 0, 0, 0), "fast": (0, 0, 0, 0)}  # as counted, though 17 wait now
        assert [(t.job_type, t.depth_is_estimate) for t in kept.types] == [("fast", True), ("orphan", True)]
        assert kept.totals.depth_is_estimate and first.counted_s_ago is None
        assert 0 < kept.counted_s_ago < 30 and kept.to_json()["counted_s_ago"] == round(kept.counted_s_ago, 3)
        assert f"queuetop_states_counted_age_seconds{{target=\"g\"}} {kept.counted_s_ago}" in exposition(
            [TargetState("g", PollOutcome(CONNECTED, kept))])  # fmt: skip
        assert (first.totals.arrivals_total, kept.totals.arrivals_total) == (12, 17)  # the arrivals, read by id
        with graphile.worker():  # the 2 fast jobs run and are deleted; the orphans have no task: they wait
            wait_for(lambda: not db.fetchall(f"SELECT 1 FROM {graphile.schema}.jobs WHERE task_identifier = "
                                             "'fast'"), "the worker to finish the fast jobs")  # fmt: skip
        assert collector.poll().totals.completions_total == 0  # not known until the next count
        counted = collector.poll(fresh=True)
        assert shown(counted) == {"orphan": (15, 0, 0, 0), "fast": (0, 0, 0, 0)}  # fast: its arrivals' window
        assert not any(t.depth_is_estimate for t in (*counted.types, counted.totals))
        assert counted.counted_s_ago is None and counted.to_json()["counted_s_ago"] is None
        assert "queuetop_states_counted_age_seconds{" not in exposition([TargetState("g", PollOutcome(CONNECTED,
                                                                                                      counted))])
        assert (counted.totals.arrivals_total, counted.totals.completions_total) == (17, 2)
        assert collector.poll(fresh=True).totals.completions_total == 2  # each once


def test_a_deep_queues_first_look_samples_its_depth_and_leaves_the_other_states_to_the_next_poll(
        graphile: LibraryApp, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    """graphile-worker's states are counted in one pass over its rows, so where its ids span more than EXACT_UP_TO
    (here 400) the first poll counts none of them: each task's waiting jobs are estimated from a sample of the ids
    (here 200 in 10 windows; ≈) and every other state is unknown (None: "—", absent from the exporter, never a 0
    it did not count) until the next poll counts every row. `stats` looks once: it counts every row at once."""
    monkeypatch.setattr(firstlook, "EXACT_UP_TO", 400)
    monkeypatch.setattr(firstlook, "SAMPLE_ROWS", 200)
    monkeypatch.setattr(firstlook, "SAMPLE_WINDOWS", 10)
    graphile.run("defer", "orphan=600", "later=30")  # ids 1..600 waiting, then 30 'fast' ones an hour ahead
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = collector_for(db, graphile)
        first = collector.poll()
        orphan, fast = first.type_named("orphan"), first.type_named("fast")  # fast: seen arriving (the look back)
        # the windows read only orphans, scaled by the span of all 630 ids: ≈ 630, an estimate within 10 %
        assert orphan.depth_is_estimate and first.totals.depth_is_estimate and 600 <= orphan.depth <= 660
        assert (fast.depth, fast.depth_is_estimate) == (0, True)  # none in the sample: an estimate too
        assert (orphan.scheduled, orphan.claimed, orphan.timed_out, orphan.dead) == (None, None, None, None)
        assert first.totals.scheduled is None and first.to_json()["totals"]["dead"] is None
        exported = exposition([TargetState("g", PollOutcome(CONNECTED, first))])
        assert "queuetop_depth{" in exported and "queuetop_scheduled{" not in exported
        assert "queuetop_dead{" not in exported and "queuetop_claimed{" not in exported
        counted = collector.poll()
        assert shown(counted) == {"orphan": (600, 0, 0, 0), "fast": (0, 30, 0, 0)}
        assert not any(t.depth_is_estimate for t in (*counted.types, counted.totals))
        graphile.run("defer", "orphan=5")
        assert shown(collector.poll(fresh=True)) == {"orphan": (605, 0, 0, 0), "fast": (0, 30, 0, 0)}  # live end
    assert main(["stats", "--json", "--db", PG_TARGET, "--layout", "graphile_worker", "--table",
                 f"{graphile.schema}.jobs"]) == 0  # fmt: skip
    rows = {row["job_type"]: row for row in json.loads(capsys.readouterr().out)["types"]}
    assert {name: (row["depth"], row["scheduled"], row["depth_is_estimate"]) for name, row in rows.items()} == {
        "orphan": (605, 0, False), "fast": (0, 30, False)}


def test_a_shallow_queue_is_counted_on_every_poll(graphile: LibraryApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to SPACED_PAST_JOBS jobs (every queue in the tests) a poll counts every state, as before, however
    costly its count (here: its cost would space the next one for ever)."""
    monkeypatch.setattr(recount, "SPACED_MAX_SHARE", 1e-9)
    graphile.run("defer", "orphan=2")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = collector_for(db, graphile)
        collector.poll()
        graphile.run("defer", "orphan=1")
        snapshot = collector.poll()
    assert shown(snapshot) == {"orphan": (3, 0, 0, 0)} and not snapshot.totals.depth_is_estimate
