"""A seed's depth at a cost that does not grow with its backlog (issue 10), on real SQLite files and a real
PostgreSQL server, for every seed: the pending rows are read up to a cap per type, deeper ones are tracked from
arrivals and completions (and marked as an estimate), a full count on a connection and a thread of its own
corrects what bypassed them, a capped count above a tracked figure that said shallow starts that count at once,
and the depth is exact again once a load comes to rest. Seeds 002 and 003 have no times: their completions are
the rows their claim flagged, counted from a base id that follows the live end of the table (`FinishedWatch`),
not the change in a counted depth."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from queuetop.db.dialects import SQLiteDialect
from queuetop.layouts import PRESET_NAMES, load_layout
from queuetop.layouts.sql import Statements
from queuetop.watch import recount, tracking
from queuetop.watch.collector import collector_for
from queuetop.watch.recount import DEPTH_EXACT_UP_TO
from queuetop.watch.watermarks import FinishedWatch, TimeWatch

from .helpers import full_count_now
from .seedshapes import bit_sql, drop_seed, finish, pop, push
from .test_shapes import Seeded, backend_name, make_seeded  # noqa: F401 - the backend fixture

CAP = 20
KIND = "5E0B4F5C-7C8B-4F3B-9E2A-0000000000A1"  # seed 000's JobType is a GUID
OTHER = "5E0B4F5C-7C8B-4F3B-9E2A-0000000000B2"
TRACKED = ["queuesample", "requests", "job_queue", "work_queue", "processed"]
UNTIMED = {"work_queue": "processed_flag", "processed": "PROCESSED"}  # seed → its flag


def _seeded(preset: str, backend: str, tmp_path) -> Iterator[Seeded]:
    made = make_seeded(preset, backend, tmp_path)
    yield made
    with made.open() as db:
        drop_seed(db, made.tables)


@pytest.fixture(params=TRACKED)
def seeded(request, backend_name, tmp_path):  # noqa: F811
    yield from _seeded(request.param, backend_name, tmp_path)


@pytest.fixture(params=[seed for seed in TRACKED if seed not in UNTIMED])
def timed(request, backend_name, tmp_path):  # noqa: F811
    yield from _seeded(request.param, backend_name, tmp_path)


@pytest.fixture(params=list(UNTIMED))
def untimed(request, backend_name, tmp_path):  # noqa: F811
    yield from _seeded(request.param, backend_name, tmp_path)


@pytest.fixture
def small_cap(monkeypatch):
    monkeypatch.setattr(tracking, "DEPTH_EXACT_UP_TO", CAP)


def enqueue(s: Seeded, n: int, job_type: str = KIND, **extra) -> None:
    with s.open() as db:
        for _ in range(n):
            push(db, s.tables, job_type=job_type, payload="<job/>" if s.tables.seed == "queuesample" else "p",
                 **extra)  # fmt: skip


def work_off(s: Seeded, n: int, job_type: str = KIND) -> None:
    """The seed's own dequeue, then its completion, `n` times."""
    with s.open() as db:
        for _ in range(n):
            for job in pop(db, s.tables, "w", job_type=job_type):
                finish(db, s.tables, job)


def pending_in_table(s: Seeded) -> int:
    with s.open() as db:
        return int(db.fetchone(*Statements(db.dialect, s.layout).count_state("pending", None, s.layout.settings))[0])


def delete_pending(s: Seeded, n: int) -> None:
    """A DELETE by hand: no arrival, no completion, nothing the tracking reads."""
    with s.open() as db:
        statements = Statements(db.dialect, s.layout)
        ids = [row[0] for row in db.fetchall(*statements.ids_in_state("pending", None, n, s.layout.settings))]
        param = db.dialect.param(s.layout.type_of("id"))
        id_col = db.dialect.quote(s.layout.columns["id"])
        for job_id in ids:
            db.execute(f"DELETE FROM {statements.table('queue')} WHERE {id_col} = {param}", (job_id,))


def undo_completions(s: Seeded) -> None:
    """Every finished job made pending again by hand, as if never taken: a change the tracking cannot see."""
    q = s.q(s.tables.queue)
    with s.open() as db:
        if s.tables.seed == "queuesample":
            db.execute(f'UPDATE {q} SET "RetrievedDate" = NULL, "RetrievedBy" = NULL WHERE "RetrievedDate" IS NOT NULL')
        elif s.tables.seed in UNTIMED:
            flag = UNTIMED[s.tables.seed]
            db.execute(f'UPDATE {q} SET "{flag}" = {bit_sql(db, 0)} WHERE "{flag}" = {bit_sql(db, 1)}')
        elif s.tables.seed == "job_queue":
            db.execute(f'UPDATE {q} SET "Attempts" = 0, "Processing_Mark" = NULL, "Last_Attempt_End_Date" = NULL, '
                       '"Last_Attempt_Start_Date" = NULL WHERE "Last_Attempt_End_Date" IS NOT NULL')  # fmt: skip
        else:
            done = s.q(s.tables.completed)
            with db.transaction():
                db.execute(f'INSERT INTO {q} ("id", "request", "InsertedDate") '
                           f'SELECT "id", "request", "InsertedDate" FROM {done}')  # fmt: skip
                db.execute(f"DELETE FROM {done}")


def test_every_seed_has_its_depth_tracked():
    # native too, read by the engine (test_engine_parity); its own collector tracks its depth its own way
    # and the libraries with a way to count arrivals and completions per type: rows that stay, or (pgqueuer) a log
    # of the line that ends each job; graphile-worker's vanish with nothing kept
    tracked = {name for name in PRESET_NAMES if load_layout(name).depth_tracked}
    assert tracked == {*TRACKED, "native", "procrastinate", "pgboss", "pgboss11", "pgboss12_12", "pgboss12",
                       "django_tasks", "pgqueuer"}  # fmt: skip


def test_a_deep_backlog_is_tracked_not_counted_and_a_full_count_corrects_it(seeded, small_cap):
    s = seeded
    enqueue(s, 100)
    with s.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, s.layout)
        first = collector.poll().totals
        assert (first.depth, first.depth_is_estimate) == (100, False)  # the first poll counts everything
        work_off(s, 30)
        enqueue(s, 10)
        time.sleep(1.1)
        moved = collector.poll()
        assert (moved.totals.depth, moved.totals.depth_is_estimate) == (80, True)  # 100 + 10 arrived − 30 done
        looked_back = 100 if s.layout.has("created") else 0  # the first poll's look back needs creation times
        assert moved.totals.arrivals_total == 10 + looked_back and moved.totals.completions_total == 30
        assert collector.reads.statements <= 2 and collector.reads.most_rows <= 40  # counts, never the rows
        assert json.loads(json.dumps(moved.to_json()))["totals"]["depth_is_estimate"] is True
        delete_pending(s, 5)  # bypasses what the tracking reads: the depth is not counted, so it cannot see it
        assert collector.poll().totals.depth == 80
        full_count_now(collector)
        collector.poll()  # starts the full count, off the poll
        collector.settle()
        corrected = collector.poll().totals  # and the next poll takes it
        assert (corrected.depth, corrected.depth_is_estimate) == (75, False) == (pending_in_table(s), False)


def test_a_shallow_type_is_counted_exactly_on_every_poll(seeded, small_cap):
    s = seeded
    enqueue(s, 50)
    with s.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, s.layout)
        collector.poll()
        work_off(s, 40)
        time.sleep(1.1)
        row = collector.poll().totals
        assert (row.depth, row.depth_is_estimate) == (10, False)
        delete_pending(s, 3)  # within the cap, the count sees even what bypassed the tracking
        row = collector.poll().totals
        assert (row.depth, row.depth_is_estimate) == (7, False)
        if s.layout.has("created"):  # seeds 002 and 003 have no times: no age
            assert row.oldest_age_s is not None and row.oldest_age_s >= 0
        else:
            assert row.oldest_age_s is None


def test_a_capped_count_above_a_shallow_tracked_figure_starts_a_full_count_at_once(timed, small_cap):
    s = timed
    ranged = Statements(SQLiteDialect(), s.layout).ranged  # rows that stay, read from the lowest live id
    if ranged:  # a job that stays at the low end, so the jobs made pending again lie inside the range read
        enqueue(s, 1, job_type=OTHER, **({"available_in_s": 3600} if s.tables.seed == "job_queue" else {}))
    enqueue(s, 32)
    with s.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, s.layout)
        collector.poll()
        work_off(s, 30)
        time.sleep(1.1)
        other_type = int(s.tables.seed == "queuesample")  # job_queue's low-end job is scheduled, not pending
        assert collector.poll().totals.depth == 2 + other_type
        undo_completions(s)  # 30 more pending with no arrival: the tracking says 2, the capped read says > CAP
        enqueue(s, 1)  # and the queue moves, so the count that starts is drift's, not the one a queue at rest gets
        drifted = collector.poll()
        assert drifted.totals.depth_is_estimate and collector._recount.running  # counted at once, off the poll
        collector.settle()
        row = collector.poll().totals
        assert (row.depth, row.depth_is_estimate) == (pending_in_table(s), False)
        assert row.depth == 33 + other_type


def flag_by_hand(s: Seeded, value: int, above_id: int) -> None:
    """Seeds 002 and 003: the flag of every row with an id above `above_id` set by hand."""
    q, flag, id_col = s.q(s.tables.queue), UNTIMED[s.tables.seed], s.layout.columns["id"]
    with s.open() as db:
        db.execute(f'UPDATE {q} SET "{flag}" = {bit_sql(db, value)} WHERE "{id_col}" > ?', (above_id,))


def lowest_pending_id(s: Seeded) -> int:
    with s.open() as db:
        statements = Statements(db.dialect, s.layout)
        return int(db.fetchall(*statements.ids_in_state("pending", None, 1, s.layout.settings))[0][0])


def test_rows_made_pending_again_above_the_lowest_live_one_start_a_full_count_at_once(untimed, small_cap):
    """Seeds 002 and 003 have no type and no other state that could keep a job at the low end of the range read:
    the rows made pending again by hand must lie above the lowest live one, so they were flagged done by hand
    first, which the finished count sees as completions."""
    s = untimed
    enqueue(s, 32)
    with s.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, s.layout)
        collector.poll()
        flag_by_hand(s, 1, lowest_pending_id(s) + 1)  # all but the two lowest done
        row = collector.poll().totals
        assert (row.depth, row.completions_total) == (2, 30)
        undo_completions(s)  # 30 more pending, which nothing the tracking reads saw
        enqueue(s, 1)
        drifted = collector.poll()
        assert drifted.totals.depth_is_estimate and collector._recount.running  # counted at once, off the poll
        assert drifted.totals.completions_total == 30  # a count that fell finished nothing
        collector.settle()
        row = collector.poll().totals
        assert (row.depth, row.depth_is_estimate) == (33, False) == (pending_in_table(s), False)


def test_a_full_count_taken_while_the_queue_moves_counts_each_move_once(seeded, small_cap, monkeypatch):
    """Jobs that arrive and finish after the count's marks were set but before its snapshot are in the count and
    in the next poll's reads: the count says how many moved past its marks, so each is counted once (seed 001's
    arrivals wherever they are by then: some have moved to RequestsCompleted)."""
    s = seeded

    class MovingCount(recount.BackgroundCount):
        def run(self) -> None:
            enqueue(s, 40)
            work_off(s, 10)
            super().run()

    with s.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, s.layout)
        collector.poll()
        monkeypatch.setattr(recount, "BackgroundCount", MovingCount)
        full_count_now(collector)
        collector.poll()  # starts the count, which moves the queue before it counts
        collector.settle()
        time.sleep(1.1)
        row = collector.poll().totals  # takes the count, then reads the 40 arrivals and 10 completions
        assert row.arrivals_total == 40 and row.completions_total == 10
        assert row.depth == 30 == pending_in_table(s)


def test_the_depth_is_exact_again_when_a_load_comes_to_rest(seeded, small_cap):
    s = seeded
    enqueue(s, 300)
    with s.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, s.layout)
        # A full count waits for its 1 % share of the time after the first poll's (an 80-ms first poll on a loaded
        # machine: 8 s, past the resting polls below); the spacing is not what this test is about.
        collector._recount.schedule.max_share = 1.0
        collector.poll()
        stop = threading.Event()
        errors: list[BaseException] = []

        def load() -> None:
            try:
                while not stop.wait(0.02):  # as much in as out: the backlog stays deep (paced: the polls need a
                    enqueue(s, 4)            # queue that moves between them, not the machine's every cycle)
                    work_off(s, 4)
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        worker = threading.Thread(target=load)
        worker.start()
        try:
            for _ in range(6):
                time.sleep(0.3)
                assert collector.poll().totals.depth_is_estimate  # deep and moving: tracked
        finally:
            stop.set()
            worker.join()
        assert not errors, errors
        resting = []
        for _ in range(20):  # at rest, a full count starts off the poll, and the poll after it takes it
            resting.append(collector.poll().totals)
            collector.settle()
            if not resting[-1].depth_is_estimate:
                break
            time.sleep(0.25)
        assert (resting[-1].depth, resting[-1].depth_is_estimate) == (pending_in_table(s), False)
        assert resting[-1].depth > CAP
        collector.poll()
        assert not collector._recount.running  # nothing moves: no count runs again


def test_a_new_type_is_read_in_the_poll_that_first_sees_it(backend_name, tmp_path, small_cap):  # noqa: F811
    s = make_seeded("queuesample", backend_name, tmp_path)
    try:
        enqueue(s, 5)
        with s.open("monitor") as monitor_db:
            collector = collector_for(monitor_db, s.layout)
            collector.poll()
            enqueue(s, 7, job_type=OTHER)
            time.sleep(1.1)
            snapshot = collector.poll()
            assert snapshot.type_named(OTHER).depth == 7 and not snapshot.type_named(OTHER).depth_is_estimate
            assert snapshot.type_named(OTHER).oldest_age_s is not None
            assert collector.reads.statements == 2  # the poll, then the new type's heads
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)


def test_a_type_kept_as_last_read_still_holds_the_range_down(backend_name, tmp_path, small_cap,  # noqa: F811
                                                                monkeypatch):  # fmt: skip
    """Past HEADS_PER_STATEMENT types (here 2) a type that does not move is kept as last read (tracking.py); on a
    shape whose reads start at the lowest live id, that type's oldest waiting job must still hold the range down
    while the other types' jobs finish above it, or its next turn reads from above its own jobs."""
    monkeypatch.setattr(tracking, "HEADS_PER_STATEMENT", 2)
    others = [KIND[:-2] + f"C{n}" for n in range(4)]
    s = make_seeded("queuesample", backend_name, tmp_path)
    try:
        enqueue(s, 3)  # the oldest jobs, never touched
        for kind in others:
            enqueue(s, 2, job_type=kind)
        with s.open("monitor") as monitor_db:
            collector = collector_for(monitor_db, s.layout)
            collector._identities.overlap_s = 0.0  # ids settle at once: the range may rise as far as it can
            collector.poll()
            for _ in range(5):  # more than a turn of 5 types, 2 a poll
                for kind in others:
                    enqueue(s, 1, job_type=kind)
                    work_off(s, 1, job_type=kind)
                snapshot = collector.poll()
                assert snapshot.type_named(KIND).depth == 3, [(row.job_type, row.depth) for row in snapshot.types]
            assert collector._low_id is not None and collector._low_id <= 3
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)


def test_old_dead_jobs_do_not_hold_the_live_read_down_and_one_retried_by_hand_is_seen(
        backend_name, tmp_path, small_cap):  # noqa: F811  # fmt: skip
    """Seed 004's dead jobs (out of attempts) stay in its table for good. Read from the lowest id in any state, the
    oldest of them held every poll's read down to its id; now dead jobs, a family of their own, are read from
    theirs and the other states from the live end. A dead job retried by hand (its attempts cleared: waiting again,
    below the live end) leaves the dead count one short, which reads the whole table again at once."""
    s = make_seeded("job_queue", backend_name, tmp_path)
    try:
        enqueue(s, 3)
        q, mark = s.q(s.tables.queue), '"Processing_Mark"'
        with s.open() as db:  # the three oldest run out of attempts
            db.execute(f'UPDATE {q} SET "Attempts" = 3, {mark} = NULL')
        enqueue(s, 10)
        with s.open("monitor") as monitor_db:
            collector = collector_for(monitor_db, s.layout)
            collector._identities.overlap_s = 0.0  # ids settle at once: the live end may rise as far as it can
            collector.poll()
            for _ in range(3):
                work_off(s, 2)
                enqueue(s, 2)
                snapshot = collector.poll()
                assert (snapshot.totals.dead, snapshot.totals.depth) == (3, 10), snapshot.totals
            assert collector._dead_low == 1 and collector._low_id > 3  # the live read starts past the dead jobs
            with s.open() as db:
                db.execute(f'UPDATE {q} SET "Attempts" = 0 WHERE "ID" = 2')  # retried by hand
            assert collector.poll().totals.dead == 2
            collector.settle()
            resting = collector.poll().totals
            assert (resting.dead, resting.depth) == (2, 11), resting
            assert collector._low_id <= 2
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)


def test_the_pending_read_is_bounded_whatever_the_backlog(tmp_path):
    """PostgreSQL's own account of the rows a poll's pending read touches (EXPLAIN ANALYZE): at most the cap per
    type, for a backlog of 3,000 as for one of 300, where the full count reads every one of them."""
    s = make_seeded("queuesample", "postgres", tmp_path)
    try:
        touched = {}
        for backlog in (300, 3000):
            with s.open() as db:
                table = s.q(s.tables.queue)
                db.execute(f'INSERT INTO {table} ("JobType", "JobInfo") SELECT CAST(? AS uuid), '
                           f"CAST('<job/>' AS xml) FROM generate_series(1, ?)",
                           (KIND, backlog - pending_in_table(s)))  # fmt: skip
                db.execute(f"ANALYZE {table}")
                statements = Statements(db.dialect, s.layout)
                heads = statements.shape_heads([KIND], DEPTH_EXACT_UP_TO + 1, 1)
                full = statements.state_counts(["pending"], None, 1)
                touched[backlog] = (rows_touched(db, heads), rows_touched(db, full))
        assert touched[300][1] >= 300 and touched[3000][1] >= 3000  # the measure sees a full read
        assert touched[300][0] <= DEPTH_EXACT_UP_TO + 1 and touched[3000][0] <= DEPTH_EXACT_UP_TO + 1, touched
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)


def rows_touched(db, statement) -> int:
    """Rows the plan's scans returned or filtered out, over every loop (EXPLAIN ANALYZE, JSON)."""
    sql, params = statement
    plan = json.loads(db.fetchone("EXPLAIN (ANALYZE, FORMAT JSON) " + sql.removeprefix("/* queuetop */ "), params)[0])

    def walk(node: dict) -> int:
        own = 0
        if "Scan" in node["Node Type"]:
            own = (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node["Actual Loops"]
        return own + sum(walk(child) for child in node.get("Plans", []))

    return walk(plan[0]["Plan"])


def test_an_untimed_seed_counts_each_completion_once_as_its_base_moves(untimed, small_cap):
    """Seeds 002 and 003: every flagged row counted once as a completion while the base of the count follows the
    lowest live id up, in the poll's one statement; the depth is tracked from them, not counted."""
    s = untimed
    enqueue(s, 100)
    with s.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, s.layout)
        assert collector.tracks_depth
        first = collector.poll().totals
        assert first.completions_60s_per_s is None  # no times: no look back, so no rate yet (never a fake 0)
        bases = []
        for step in range(1, 6):
            work_off(s, 10)
            enqueue(s, 5)
            row = collector.poll().totals
            assert (row.completions_total, row.arrivals_total) == (10 * step, 5 * step)
            assert collector.reads.statements == 1
            bases.append(collector._finished.base)
        assert bases == sorted(bases) and bases[-1] > bases[0]  # the counted range follows the live end
        assert (row.depth, row.depth_is_estimate) == (75, True) and pending_in_table(s) == 75
        assert row.completions_60s_per_s is not None and row.completions_60s_per_s > 0


def test_the_finished_count_reads_what_finished_since_its_base_not_the_history(tmp_path):
    """Seed 003 on PostgreSQL, its (PROCESSED, ID) index: EXPLAIN ANALYZE of the poll's count of finished rows
    touches the rows since its base — the 50 finished (through that index) or the 100 ids from the base (through
    the primary key: the planner takes either, the costs are that close) — with 3,000 rows of history as with
    30,000; the same count from the first id touches every one of them."""
    s = make_seeded("processed", "postgres", tmp_path)
    try:
        touched = {}
        for history in (3_000, 30_000):
            with s.open() as db:
                table, done, waiting = s.q(s.tables.queue), bit_sql(db, 1), bit_sql(db, 0)
                db.execute(f"DELETE FROM {table}")
                db.execute(f'INSERT INTO {table} ("COMMAND", "PROCESSED") SELECT \'c\', {done} '
                           "FROM generate_series(1, ?)", (history,))
                db.execute(f'INSERT INTO {table} ("COMMAND", "PROCESSED") SELECT \'c\', {waiting} '
                           "FROM generate_series(1, 100)")
                base = lowest_pending_id(s)
                # 50 finished since the base (the lowest id then pending), the history below it
                db.execute(f'UPDATE {table} SET "PROCESSED" = {done} WHERE "ID" < ? AND "ID" >= ?', (base + 50, base))
                db.execute(f"VACUUM ANALYZE {table}")
                statements = Statements(db.dialect, s.layout)
                since_base = statements.shape_poll([], None, base, None, None, None, None, (base, base))
                from_first = statements.shape_poll([], None, base, None, None, None, None, (1, 1))
                rows = db.fetchall(*since_base)
                assert [r[4:6] for r in rows if r[0].strip() == "finished"] == [(50, 50)]
                touched[history] = (rows_touched(db, since_base), rows_touched(db, from_first))
        assert touched[3_000][1] >= 3_050 and touched[30_000][1] >= 30_050, touched  # the measure sees a full read
        assert touched[3_000][0] <= 101 and touched[30_000][0] <= 101, touched  # the live range, never the history
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)


def test_the_finished_watch_counts_growth_from_one_base_and_rebases():
    watch = FinishedWatch()
    counted: list[tuple[str, int]] = []

    def take(*rows: tuple[str, int, int]) -> None:
        watch.take(rows, 0.0, str, lambda name, _at, jobs, _dead: counted.append((name, jobs)))

    watch.start([("a", 5)], 100, str)
    assert watch.bounds(120) == (100, 120)
    take(("a", 12, 3))  # 7 finished since the last poll; 3 of all of them lie at or above the new base
    assert watch.bounds(130) == (120, 130)
    take(("a", 2, 0), ("b", 4, 4))  # a's count fell (undone by hand): nothing finished; b is new
    assert watch.bounds(90) == (130, 90)  # a full count found a live row lower down: the base goes back
    take(("b", 6, 40))
    assert counted == [("a", 7), ("b", 4), ("b", 2)]
    assert (watch.base, watch.seen) == (90, {"b": 40})


def test_a_second_split_over_two_tables_is_counted_whole():
    """Seed 001's arrivals are counted in RequestsQueue and RequestsCompleted, a row per table for the same
    second: the second's count is their sum (before, each table's count was compared with the other's, and a
    second half moved on was never counted again)."""
    watch = TimeWatch(60.0)
    now = datetime(2026, 11, 24, 12, 0, 0)
    watch.start(now)
    second, latest = now - timedelta(seconds=1), now - timedelta(seconds=0.5)
    counted: list[int] = []

    def take(*per_table: int) -> None:
        watch.take([(None, second, n, 0, latest) for n in per_table], now, lambda v: v, str,
                   lambda _type, _at, jobs, _dead: counted.append(jobs))  # fmt: skip

    take(70, 30)  # 100 arrived in that second: 70 still queued, 30 already moved to the completed table
    take(60, 50)  # 10 more, and 20 of the others moved on
    assert counted == [100, 10]
