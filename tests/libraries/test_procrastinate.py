"""procrastinate (3.10), the real library on the test PostgreSQL server: its own schema, jobs deferred through its
API, its own worker. queuetop finds its table without being told, and what it shows per task equals the table read
directly and procrastinate's own count (`JobManager.list_tasks`); a burst that arrives and finishes between two polls
is counted whole; jobs enqueued by queuetop go through procrastinate's own defer function and its worker runs them;
every other write is refused before any SQL is sent, the table unchanged."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from queuetop.act.actions import Actions
from queuetop.db import Database, parse_target
from queuetop.layouts import load_layout, with_tables
from queuetop.layouts.detect import detect
from queuetop.watch.collector import ShapeCollector
from queuetop.watch.snapshot import Snapshot
from tests.conftest import PG_TARGET
from tests.libraries import (
    LibraryApp,
    assert_advice_fixes_the_scans,
    assert_refused,
    detected,
    made_by,
    queuetop_cli,
    read_rows,
    wait_for,
)
from tests.seedshapes import PG_TZ, PG_TZ_TARGET

pytestmark = pytest.mark.postgres

MIX = ("fast=5", "hold=2", "flaky=2", "doomed=1", "later=3", "orphan=2")


@pytest.fixture
def procrastinate() -> Iterator[LibraryApp]:
    with made_by("procrastinate", schema_first=True) as app:
        yield app


def table_truth(db: Database, schema: str) -> dict[str, tuple[int, int, int, int]]:
    """Per task, from procrastinate_jobs as procrastinate's schema.sql defines its states: (waiting and due,
    scheduled ahead, doing, failed)."""
    rows = db.fetchall(
        "SELECT task_name, count(*) FILTER (WHERE status = 'todo' AND (scheduled_at IS NULL OR scheduled_at <= now())),"
        " count(*) FILTER (WHERE status = 'todo' AND scheduled_at > now()), count(*) FILTER (WHERE status = 'doing'),"
        f" count(*) FILTER (WHERE status = 'failed') FROM {schema}.procrastinate_jobs GROUP BY task_name")
    return {name: tuple(int(n) for n in counts) for name, *counts in rows}  # type: ignore[misc]


def shown(snapshot: Snapshot) -> dict[str, tuple[int | None, ...]]:
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.scheduled, t.claimed, t.dead) for t in snapshot.types}


def settled(app: LibraryApp) -> bool:
    """The worker has taken every job it will: fast done, hold in flight, doomed failed, flaky waiting to retry."""
    counts = {row["name"]: row for row in app.json("counts")}
    return (counts["fast"]["succeeded"] == 5 and counts["hold"]["doing"] == 2 and counts["doomed"]["failed"] == 1
            and counts["flaky"]["todo"] == 2 and counts["flaky"]["doing"] == 0)


def collector_for(db: Database, app: LibraryApp) -> ShapeCollector:
    return detected(db, app, "procrastinate")


def test_queuetop_finds_procrastinate_and_shows_what_its_tables_and_its_own_count_say(
        procrastinate: LibraryApp) -> None:  # fmt: skip
    procrastinate.run("defer", *MIX)
    with procrastinate.worker():
        wait_for(lambda: settled(procrastinate), "procrastinate's worker to take the mix")
        with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
            collector = collector_for(db, procrastinate)
            collector.poll()
            collector.settle()  # the count of the rows in no state
            snapshot = collector.poll()
            figures = shown(snapshot)
            truth = table_truth(db, procrastinate.schema)
        library = {row["name"]: row for row in procrastinate.json("counts")}
    assert figures == truth
    # a job that succeeded stays in procrastinate_jobs, in no state but accounted for (ended): no row is in no state
    assert {t.job_type: t.in_no_state for t in snapshot.types} == dict.fromkeys(figures, 0)
    assert figures == {"fast": (0, 3, 0, 0), "hold": (0, 0, 2, 0), "flaky": (0, 2, 0, 0), "doomed": (0, 0, 0, 1),
                       "orphan": (2, 0, 0, 0)}  # fmt: skip
    for task, (depth, scheduled, claimed, dead) in figures.items():
        assert (depth + scheduled, claimed, dead) == (library[task]["todo"], library[task]["doing"],
                                                      library[task]["failed"]), task  # fmt: skip


def test_a_burst_that_arrives_and_finishes_between_two_polls_is_counted_whole(procrastinate: LibraryApp) -> None:
    with procrastinate.worker(), Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = collector_for(db, procrastinate)
        collector.poll()
        procrastinate.run("defer", "fast=300")
        wait_for(lambda: {r["name"]: r for r in procrastinate.json("counts")}["fast"]["succeeded"] == 300,
                 "the worker to finish the burst")  # fmt: skip
        fast = {t.job_type: t for t in collector.poll().types}["fast"]
        # each job's wait and processing, as its lines in procrastinate_events tell them: deferred, started, succeeded
        times = ", ".join(f"max(at) FILTER (WHERE type = '{line}') AS {line}" for line in ("deferred", "started",
                                                                                          "succeeded"))  # fmt: skip
        ranks = ", ".join(f"percentile_disc({p}) WITHIN GROUP (ORDER BY extract(epoch FROM {span}))"
                          for span in ("started - deferred", "succeeded - started") for p in (0.5, 0.95))  # fmt: skip
        ranked = [float(value) for value in db.fetchone(
            f"SELECT {ranks} FROM (SELECT {times} FROM {procrastinate.schema}.procrastinate_events GROUP BY job_id)"
            " AS job")]  # fmt: skip
    assert (fast.arrivals_total, fast.completions_total, fast.depth) == (300, 300, 0)
    assert fast.latency_sample == 300 and not fast.latency_is_sample
    # the window keeps latencies in buckets 2 % wide, each read back within 1 % of its values
    assert (fast.wait_p50_s, fast.wait_p95_s, fast.processing_p50_s, fast.processing_p95_s) == pytest.approx(
        ranked, rel=0.02, abs=0.002)


def test_a_first_look_counts_the_jobs_that_ended_in_its_window_from_the_events_line_before_it(
        procrastinate: LibraryApp) -> None:  # fmt: skip
    """The lines of procrastinate_events are read past a line of the log, not by their time; a first poll has no
    earlier poll's line, so it finds the line before its window: the jobs that ended in the minute before it are
    its completions, with their wait and processing (the drill-down's recent ones too)."""
    with procrastinate.worker():
        procrastinate.run("defer", "fast=20")
        wait_for(lambda: {r["name"]: r for r in procrastinate.json("counts")}["fast"]["succeeded"] == 20,
                 "the worker to run them")  # fmt: skip
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        (fast,) = collector_for(db, procrastinate).poll().types
    assert (fast.completions_total, fast.latency_sample) == (20, 20)
    assert fast.wait_p50_s is not None and fast.processing_p50_s is not None
    actions = Actions(parse_target(PG_TARGET), with_tables(load_layout("procrastinate"),
                                                           f"{procrastinate.schema}.procrastinate_jobs"))  # fmt: skip
    try:  # each with how it ended, in procrastinate's word
        assert [job.outcome for job in actions.type_detail("fast").completions] == ["succeeded"] * 20
    finally:
        actions.close()


def test_the_oldest_age_is_read_from_the_jobs_deferred_event(procrastinate: LibraryApp) -> None:
    """procrastinate_jobs keeps no creation time: its insert trigger writes the job's 'deferred' line in
    procrastinate_events, and queuetop ages the oldest waiting job from it, on the first poll and the next ones (the
    capped read of each task's first jobs)."""
    procrastinate.run("defer", "orphan=2")
    time.sleep(1.0)
    procrastinate.run("defer", "orphan=1")
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = collector_for(db, procrastinate)
        first = collector.poll()
        (age,) = db.fetchone(f"SELECT extract(epoch FROM now() - min(e.at)) FROM {procrastinate.schema}."
                             f"procrastinate_events AS e WHERE e.type = 'deferred'")  # fmt: skip
        warm = collector.poll()
    for snapshot in (first, warm):
        (orphan,) = snapshot.types
        assert orphan.depth == 3 and orphan.oldest_age_s == pytest.approx(float(age), abs=0.5)
    assert float(age) >= 1.0  # the oldest of the three, not the newest
    assert warm.to_json()["cannot_know"] == {"lost": "procrastinate has no lost state"}


def test_the_jobs_of_a_worker_that_stopped_beating_are_stalled_as_procrastinate_says(
        procrastinate: LibraryApp, tmp_path: Path) -> None:  # fmt: skip
    """procrastinate's own worker, its heartbeat every half second, holds two jobs: claimed, none stalled. Killed
    with SIGKILL, its heartbeat ages: past 1.5 s both are timed out, the very jobs procrastinate's get_stalled_jobs
    names, in the CLI too (a layout file setting stalled_worker_timeout). A new worker then prunes the dead one's
    row, which sets the jobs' worker_id NULL: still stalled, as procrastinate still says."""
    procrastinate.run("defer", "hold=2", "orphan=1")
    jobs = f"{procrastinate.schema}.procrastinate_jobs"
    layout = tmp_path / "procrastinate.toml"
    layout.write_text(f'preset = "procrastinate"\n[tables]\nschema = "{procrastinate.schema}"\n'
                      "[settings]\nstalled_worker_timeout = 1.5\n")

    def hold() -> tuple[int | None, int | None]:
        figures = {t.job_type: t for t in collector.poll().types}["hold"]
        return figures.claimed, figures.timed_out

    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        collector = detected(db, procrastinate, "procrastinate", settings={"stalled_worker_timeout": 1.5})
        held = [int(i) for (i,) in db.fetchall(f"SELECT id FROM {jobs} WHERE task_name = 'hold' ORDER BY id")]
        with procrastinate.worker("0.5") as worker:
            wait_for(lambda: procrastinate.json("counts")[0]["doing"] == 2, "the worker to take both hold jobs")
            time.sleep(2)  # longer than the stall timeout: a live worker beating every half second stays claimed
            assert (hold(), procrastinate.json("stalled", "1.5")) == ((2, 0), [])
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
        assert wait_for(lambda: procrastinate.json("stalled", "1.5"), "procrastinate to call them stalled") == held
        assert hold() == (0, 2)
        stats = queuetop_cli("stats", "--json", "--layout", str(layout))
        assert stats.returncode == 0, stats.stderr
        assert {t["job_type"]: t["timed_out"] for t in json.loads(stats.stdout)["types"]} == {"hold": 2, "orphan": 0}
        with procrastinate.worker("0.5"):
            wait_for(lambda: db.fetchone(f"SELECT count(*) FROM {jobs} WHERE worker_id IS NULL AND status = 'doing'"
                                         )[0] == 2, "the new worker to prune the dead one")  # fmt: skip
            assert (hold(), procrastinate.json("stalled", "1.5")) == ((0, 2), held)


def test_a_session_in_another_time_zone_shows_the_same_figures_at_the_same_utc_time(
        procrastinate: LibraryApp) -> None:  # fmt: skip
    procrastinate.run("defer", "later=2", "orphan=1")
    with Database.open(parse_target(PG_TZ_TARGET), purpose="monitor") as db:
        assert db.fetchone("SHOW TimeZone")[0] == PG_TZ  # psqlODBC ran the ConnSettings
        snapshot = collector_for(db, procrastinate).poll()
    assert shown(snapshot) == {"fast": (0, 2, 0, 0), "orphan": (1, 0, 0, 0)}
    assert snapshot.clock == "utc"  # timestamptz read in UTC: a "Z" time in --json is one
    assert abs((snapshot.taken_at - datetime.now(UTC).replace(tzinfo=None)).total_seconds()) < 60


@pytest.mark.parametrize(("command", "section"), [
    (("release",), "[release]"),
    (("dead", "retry", "--yes"), "[dead_retry]"),
    (("dead", "delete", "--yes"), "[dead_retry]"),
])  # fmt: skip
def test_every_write_is_refused_naming_the_section_and_the_table_is_unchanged(
        procrastinate: LibraryApp, command: tuple[str, ...], section: str) -> None:  # fmt: skip
    procrastinate.run("defer", "orphan=2", "later=1")
    query = f"SELECT id, status, attempts, scheduled_at FROM {procrastinate.schema}.procrastinate_jobs ORDER BY id"
    with Database.open(parse_target(PG_TARGET)) as db:
        before = db.fetchall(query)
    done = queuetop_cli(*command, "--table", f"{procrastinate.schema}.procrastinate_jobs")
    assert done.returncode == 2, done.stderr
    error = done.stderr.splitlines()[-1]
    assert error.startswith("queuetop: error: layout procrastinate") and f"declares no {section} section" in error
    with Database.open(parse_target(PG_TARGET)) as db:
        assert db.fetchall(query) == before


def test_the_sentence_names_the_library_and_its_table(procrastinate: LibraryApp) -> None:
    with Database.open(parse_target(PG_TARGET)) as db:
        (found,) = [c for c in detect(db) if c.table.schema == procrastinate.schema]
        assert found.sentence == f"found procrastinate 3.x ({procrastinate.schema}.procrastinate_jobs): layout " \
                                 "procrastinate"  # fmt: skip


def test_a_job_in_a_status_the_preset_does_not_name_is_shown_in_no_state_never_dropped(
        procrastinate: LibraryApp) -> None:  # fmt: skip
    """procrastinate's enum still has 'aborting', which versions before 3.0 wrote and 3.x never does: a job an old
    worker left so (set here as it would have) is in none of the preset's states. queuetop counts it apart, in
    the JSON, the table and its note; a task whose only job it is still has its row."""
    procrastinate.run("defer", "orphan=2", "hold=1")
    with Database.open(parse_target(PG_TARGET)) as db:
        db.execute(f"SET search_path TO {procrastinate.schema}")  # procrastinate's triggers name their types so
        db.execute(f"UPDATE {procrastinate.schema}.procrastinate_jobs SET status = 'aborting' WHERE id IN ("
                   f"SELECT min(id) FROM {procrastinate.schema}.procrastinate_jobs GROUP BY task_name)")
    table = f"{procrastinate.schema}.procrastinate_jobs"
    stats = queuetop_cli("stats", "--json", "--table", table, "--layout", "procrastinate")
    assert stats.returncode == 0, stats.stderr
    rows = {t["job_type"]: (t["depth"], t["in_no_state"]) for t in json.loads(stats.stdout)["types"]}
    assert rows == {"orphan": (1, 1), "hold": (0, 1)}
    text = queuetop_cli("stats", "--table", table, "--layout", "procrastinate").stdout
    assert "NO STATE" in text.splitlines()[1] and "2 rows in none of layout procrastinate's states" in text


def test_enqueue_goes_through_procrastinates_defer_and_its_own_worker_runs_the_jobs(
        procrastinate: LibraryApp) -> None:  # fmt: skip
    """The one write the preset declares: `queuetop enqueue` calls procrastinate_defer_jobs_v1 as procrastinate's
    own defer does (queue "default", the task's arguments from --info, priority, --delay as scheduled_at); its
    worker then runs them. A payload that is not JSON, and the writes the preset does not declare, are refused
    before any SQL is sent."""
    procrastinate.run("defer", "orphan=1")
    table = f"{procrastinate.schema}.procrastinate_jobs"

    def rows() -> list[tuple]:
        return read_rows(f"SELECT id, queue_name, task_name, args::text, priority, status::text, (scheduled_at IS "
                         f"NOT NULL AND scheduled_at > now() + interval '5 minutes')::int FROM {table} ORDER BY id")

    before = rows()
    fast = queuetop_cli("enqueue", "--type", "fast", "-n", "2", "--table", table)
    echo = queuetop_cli("enqueue", "--type", "echo", "--info", '{"from": "queuetop"}', "--priority", "4",
                        "--table", table)  # fmt: skip
    later = queuetop_cli("enqueue", "--type", "fast", "--delay", "3600", "--table", table)
    for done in (fast, echo, later):
        assert done.returncode == 0 and "enqueued" in done.stdout, done.stdout + done.stderr
    made = rows()[len(before):]
    assert [r[1:] for r in made] == [("default", "fast", "{}", 0, "todo", 0)] * 2 + [
        ("default", "echo", '{"from": "queuetop"}', 4, "todo", 0), ("default", "fast", "{}", 0, "todo", 1)]
    assert_refused(table, "echo")
    assert rows() == before + made  # nothing written by the refusals
    with procrastinate.worker():
        wait_for(lambda: [r[5] for r in rows()[len(before):]] == ["succeeded"] * 3 + ["todo"],
                 "procrastinate's worker to run the three jobs due now")


def test_doctor_names_the_indexes_procrastinate_lacks_and_with_them_no_poll_read_scans(
        procrastinate: LibraryApp) -> None:  # fmt: skip
    """procrastinate indexes its todo jobs by priority: doctor says which reads scan and prints the indexes the
    preset advises (a task's todo jobs by id, the scheduled ones, the statuses, the ended ones by id); made, those
    reads are index reads (bench: a poll at 10^6 jobs 64 -> 22 ms)."""
    procrastinate.run("defer", "fast=2", "later=1")
    assert_advice_fixes_the_scans(PG_TARGET, procrastinate.schema, {
        "plan: poll: states (full pass)", "plan: drill-down: pending rows"})

