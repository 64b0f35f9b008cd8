"""A poll's cost is bounded whatever the throughput (issue 10), on real databases: a burst of completions between
two polls is read as counts and a capped sample (the collector counts the rows it fetches), the sampled
percentiles stay within 5 % of the exact ones computed from the table, a sample is weighted by how many
completions it stands for, the depth is exact again once a load comes to rest, and an identity jump of 10⁹
costs nothing (issue 9, defect 8). The statements behind it parse as T-SQL for every layout."""

from __future__ import annotations

import threading
import time
import tracemalloc
from datetime import timedelta

import pytest
import sqlglot

from queuetop.act.queue import Queue
from queuetop.core.history import percentiles
from queuetop.db.dialects import MSSQLDialect
from queuetop.layouts import STATES, load_layout, preset_names, with_tables
from queuetop.layouts.sql import Statements
from queuetop.watch import tracking
from queuetop.watch.collector import collector_for
from queuetop.watch.snapshot import TypeStats
from queuetop.watch.watermarks import SAMPLE_CAP, SAMPLE_PER_S

from .helpers import BASE, layout_sql
from .seedshapes import local_now_sql, push
from .test_shapes import backend_name, job_queue, requests  # noqa: F401 - the seed fixtures
from .tsql_check import _linter

COLUMNS = "{c_id}, {c_type}, {c_created}, {c_claimed_at}, {c_completed}, {c_claimed_by}, {c_attempts}, {c_outcome}"
CHUNK = 400


def insert_completions(db, layout, first_id: int, jobs: list[tuple[float, float, float]], job_type: str = "burst"):
    """Finished jobs written straight into the completed table: (completed s from now, wait ms, processing ms)."""
    now = db.now()
    dialect = db.dialect
    for start in range(0, len(jobs), CHUNK):
        part = jobs[start:start + CHUNK]
        sql = Statements(dialect, layout).sql(f"INSERT INTO {{completed}} ({COLUMNS}) VALUES "
                                  + ", ".join(["(?, ?, ?, ?, ?, 'w', 1, 'succeeded')"] * len(part)))  # fmt: skip
        params = []
        for n, (at_s, wait_ms, work_ms) in enumerate(part, start=first_id + start):
            completed = now + timedelta(seconds=at_s)
            claimed = completed - timedelta(milliseconds=work_ms)
            created = claimed - timedelta(milliseconds=wait_ms)
            params += [n, job_type, *(dialect.encode_time(t) for t in (created, claimed, completed))]
        with db.transaction():
            db.execute(sql, params)


def exact_latencies(db, layout) -> tuple[tuple, tuple]:
    """Nearest-rank percentiles of every succeeded job in the table, computed here, row by row."""
    sql = layout_sql(db, layout, "SELECT {c_created}, {c_claimed_at}, {c_completed} FROM {completed} "
                                 "WHERE {c_outcome} <> 'dead'")  # fmt: skip
    decode = db.dialect.decode_time
    rows = [tuple(decode(v) for v in row) for row in db.fetchall(sql)]
    waits = [(claimed - created).total_seconds() for created, claimed, _ in rows]
    work = [(completed - claimed).total_seconds() for _, claimed, completed in rows]
    return percentiles(waits), percentiles(work)


def assert_close(estimated, exact):
    """Within ±5 % (relative) or 1 ms of the exact figure, each percentile."""
    for est, ex in zip(estimated, exact, strict=True):
        assert est is not None and abs(est - ex) <= max(0.05 * ex, 0.001), (estimated, exact)


def test_a_burst_between_polls_is_read_as_counts_and_a_capped_sample(backend):
    with backend.open() as db, backend.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        # 20,000 completions over the last 2 s; the wait grows with the completion time, so a sample that kept the
        # first rows it met (or the last) would be far off; processing times are spread at random.
        n = 20_000
        time.sleep(1.0)  # a second's worth of sample, as a dashboard polling every second takes
        insert_completions(db, backend.layout, 1, [(-2.0 + 2.0 * i / n, 1 + i * 1000 // n, 1 + (i * 7919) % 400)
                                                   for i in range(n)])  # fmt: skip
        snapshot = collector.poll()
        row = snapshot.type_named("burst")
        assert round(row.completions_60s_per_s * 60) == n  # every completion counted, none fetched one by one
        assert collector.reads.most_rows <= SAMPLE_CAP  # no statement fetched more than the cap
        assert collector.reads.rows <= SAMPLE_CAP + 20  # the sample, and a few rows of counts
        assert row.latency_is_sample and 0.5 * SAMPLE_PER_S <= row.latency_sample <= SAMPLE_CAP
        waits, work = exact_latencies(db, backend.layout)
        assert_close((row.wait_p50_s, row.wait_p95_s, row.wait_p99_s), waits)
        assert_close((row.processing_p50_s, row.processing_p95_s, row.processing_p99_s), work)
        assert snapshot.to_json()["types"][0]["latency_sample"] == row.latency_sample


def test_a_sample_weighs_as_many_completions_as_it_stands_for(backend):
    with backend.open() as db, backend.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        insert_completions(db, backend.layout, 1, [(-2.0 + i / 400, 10, 5) for i in range(400)])
        time.sleep(1.0)  # a second's worth of sample (500) is more than enough for these
        quiet = collector.poll().type_named("burst")
        assert (quiet.latency_sample, quiet.latency_is_sample) == (400, False)  # every one read
        assert quiet.wait_p99_s == pytest.approx(0.01, rel=0.01)  # read back within 1 %
        time.sleep(1.0)
        n = 10_000  # then a busy second, of which only a sample is read: each of its samples counts for ~20
        insert_completions(db, backend.layout, 1000, [(-1.0 + i / n, 500 + (i * 7919) % 500, 5) for i in range(n)])
        row = collector.poll().type_named("burst")
        assert row.latency_is_sample and row.latency_sample <= 400 + SAMPLE_CAP
        waits, _ = exact_latencies(db, backend.layout)  # p50 ≈ 0.74 s; unweighted, the sample would say ≈ 0.53 s
        assert_close((row.wait_p50_s, row.wait_p95_s, row.wait_p99_s), waits)
        assert row.wait_p50_s > 0.7


def test_the_depth_is_exact_again_when_a_load_comes_to_rest(backend, monkeypatch):
    monkeypatch.setattr(tracking, "DEPTH_EXACT_UP_TO", 5)
    with backend.open() as db, backend.open("monitor") as monitor_db:
        Queue(db, backend.layout).enqueue_many("bulk", 5000)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        stop = threading.Event()

        def work() -> None:
            with backend.open() as worker_db:
                queue = Queue(worker_db, backend.layout)
                while not stop.wait(0.01):  # paced: the polls need a queue that moves, not every cycle
                    queue.enqueue_many("bulk", 3)
                    for job in queue.claim("w", job_types=["bulk"], batch=4):
                        queue.complete(job.id, job.token)

        worker = threading.Thread(target=work)
        worker.start()
        for _ in range(8):
            collector.poll()
            time.sleep(0.1)
        stop.set()
        worker.join()
        table = db.fetchone(layout_sql(db, backend.layout, "SELECT COUNT(*) FROM {queue} WHERE {claimed_at} IS NULL"))
        resting = []
        # The first poll may still see the last moves; then, at rest, a full count starts off the poll (as soon as
        # the last one's 1 % share of the time allows: on a loaded machine a 80 ms count waits 8 s), and the poll
        # after it takes it.
        for _ in range(80):
            resting.append(collector.poll().type_named("bulk"))
            collector.settle()
            if not resting[-1].depth_is_estimate:
                break
            time.sleep(0.25)
        assert table[0] > 5 and resting[-1].depth == table[0] and not resting[-1].depth_is_estimate
        assert not collector._recount.running  # nothing moves: no count runs again
        collector.poll()
        assert not collector._recount.running


def test_a_loaded_native_poll_reads_in_two_statements(backend):
    """Under a load every statement waits for a slice of a busy server, whatever it reads: a native poll sends its
    counts, claims and pending heads as one statement, and the latency sample as a second one."""
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        for job_type, jobs in (("deep", 600), ("shallow", 20), ("idle", 3)):
            queue.enqueue_many(job_type, jobs)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()  # the first poll counts everything, in statements of its own
        stop = threading.Event()

        def work() -> None:
            with backend.open() as worker_db:
                worker = Queue(worker_db, backend.layout)
                while not stop.wait(0.01):  # paced: a steady load, not every cycle of the machine
                    worker.enqueue_many("deep", 3)
                    worker.enqueue_many("shallow", 1)
                    for types in (["deep"], ["shallow"]):
                        for job in worker.claim("w", job_types=types, batch=2 if types == ["deep"] else 1):
                            worker.complete(job.id, job.token)

        thread = threading.Thread(target=work)
        thread.start()
        try:
            polls = []
            for _ in range(5):
                time.sleep(0.3)
                snapshot = collector.poll()
                polls.append((collector.reads.statements, snapshot.type_named("deep").completions_total or 0))
        finally:
            stop.set()
            thread.join()
        assert polls[-1][1] > 0  # it was loaded: completions were counted
        assert max(statements for statements, _ in polls) <= 2, polls
        snapshot = collector.poll()  # at rest: the shallow type is counted exactly, in the same statement
        table = db.fetchone(layout_sql(db, backend.layout, "SELECT COUNT(*) FROM {queue} WHERE {claimed_at} IS NULL "
                                                           "AND {type} = 'shallow'"))  # fmt: skip
        shallow = snapshot.type_named("shallow")
        assert collector.reads.statements <= 2 and snapshot.type_named("idle").depth == 3
        assert (shallow.depth, shallow.depth_is_estimate) == (table[0], False)


@pytest.mark.parametrize("jump", [10**9])
def test_an_identity_jump_of_a_billion_costs_nothing(backend, jump):
    with backend.open() as db, backend.open("monitor") as monitor_db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("email", 3)
        collector = collector_for(monitor_db, backend.layout)
        collector.poll()
        highest = max(queue.enqueue_many("email", 2))
        if backend.name == "sqlite":  # an explicit id far above: SQLite's AUTOINCREMENT carries on from it
            sql = layout_sql(db, backend.layout, "INSERT INTO {queue} ({id}, {type}, {created}, {available}) "
                                                 "VALUES (?, 'email', ?, ?)")  # fmt: skip
            now = db.dialect.encode_time(db.now())
            db.execute(sql, (highest + jump, now, now))
        else:  # a reseed of the identity, as after a failed bulk load
            db.execute(layout_sql(db, backend.layout, f"ALTER TABLE {{queue}} ALTER COLUMN {{id}} "
                                                      f"RESTART WITH {highest + jump}"))  # fmt: skip
            queue.enqueue("email")
        tracemalloc.start()
        try:
            jumped = collector.poll()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 2_000_000  # bytes: nothing is built per missing id (a set of 10⁹ ids would be tens of GB)
        assert len(collector._identities.open) <= 4  # what is tracked: counts per type and second, not ids
        later = max(queue.enqueue_many("email", 4))
        assert later > jump
        after = collector.poll()
        assert round(jumped.totals.arrivals_60s_per_s * 60) == 6 and jumped.totals.depth == 6
        assert round(after.totals.arrivals_60s_per_s * 60) == 10 and after.totals.depth == 10


# -- the statements, as SQL Server would get them --------------------------------------------------------------
def bounded_statements():
    layouts = [(name, load_layout(name)) for name in preset_names("mssql")]  # native among them: one engine
    out = []
    for name, layout in layouts:
        if layout.table_required:
            layout = with_tables(layout, "dbo.work_items")
        s = Statements(MSSQLDialect(), layout)
        if layout.arrivals == "identity":
            out.append((name, "arrival_counts", s.arrival_counts(10, 20)))
        if layout.has("created"):
            ids = (10, 20) if layout.arrivals == "identity" else None
            out.append((name, "arrival_counts_since", s.arrival_counts_since(BASE, ids)))
        if layout.completions is not None:
            low = 5 if s.ranged else None
            out.append((name, "completion_counts", s.completion_counts(BASE, None, low)))
            out.append((name, "completion_sample", s.completion_sample(BASE, BASE, 0.25, 500, None, low)))
        states = [state for state in STATES if state in layout.states]
        low = 5 if s.ranged else None
        identity = (10, 20) if layout.arrivals == "identity" else None
        created = BASE if layout.arrivals == "created" else None
        completed = (BASE, low) if layout.completions is not None else None
        out.append((name, "shape_poll", s.shape_poll(states, None, low, identity, created, completed)))
        if layout.depth_tracked:
            others = [state for state in states if state != "pending"]
            types = ["A6A3C1E0-0000-4000-8000-000000000001", "B"] if layout.has_job_type else [None]
            finished = (3, 5) if layout.done is not None else None
            out.append((name, "shape_poll tracked", s.shape_poll(others, None, low, identity, created, completed,
                                                                 (types, 201), finished)))  # fmt: skip
            out.append((name, "shape_heads", s.shape_heads(types, 201, low)))
            out.append((name, "shape_recount", s.shape_recount(
                states, None, 10 if identity else None, created, BASE if layout.completions else None,
                3 if finished else None)))
        if layout.done is not None:
            out.append((name, "state_counts finished", s.state_counts(states, finished=True)))
    return out


@pytest.mark.parametrize("name, label, statement", bounded_statements(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_bounded_reads_are_tsql_in_two_grammars(name, label, statement):
    sql, params = statement
    sqlglot.parse_one(sql, read="tsql")
    assert sql.count("?") == len(params), f"{name} {label}"
    assert sql.startswith("/* queuetop */ ") and sql.count("WITH (NOLOCK)") == sql.count(" FROM [")
    parsed = _linter().parse_string(sql.replace("?", "@p"))
    assert not parsed.violations, f"{name} {label}: {parsed.violations[0]}"
    assert " LIMIT " not in sql


def test_the_dashboard_marks_sampled_percentiles_as_it_marks_estimated_depths():
    from queuetop.tui.table import COLUMNS, EST

    wait = next(column for column in COLUMNS if column.key == "wait")
    sampled = TypeStats("email", wait_p95_s=1.5, latency_sample=900, latency_is_sample=True)
    assert wait.cell(sampled).startswith("≈") and wait.style(sampled) == EST
    every_one = TypeStats("email", wait_p95_s=1.5, latency_sample=40)
    assert not wait.cell(every_one).startswith("≈") and wait.style(every_one) == ""
    assert wait.cell(TypeStats("email", latency_is_sample=True)) == "—"  # nothing to mark


def test_a_seed_shape_reads_a_burst_of_completions_as_counts_and_a_capped_sample(job_queue):  # noqa: F811
    s = job_queue
    with s.open() as db:
        for _ in range(1500):
            push(db, s.tables, payload="p")
    with s.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, s.layout)
        collector.poll()
        with s.open() as db:  # every job claimed and finished, as usp_API_Get_Job and its caller would
            now = local_now_sql(db)
            db.execute(f'UPDATE {s.q(s.tables.queue)} SET "Attempts" = 1, "Last_Attempt_Start_Date" = {now}, '
                       f'"Last_Attempt_End_Date" = {now}')  # fmt: skip
        time.sleep(1.0)
        row = collector.poll().totals
        assert round(row.completions_60s_per_s * 60) == 1500
        assert collector.reads.most_rows <= SAMPLE_CAP and collector.reads.rows <= SAMPLE_CAP + 20
        assert row.latency_is_sample and row.latency_sample < 1500
        assert collector.reads.statements == 2  # states, arrivals and completion counts at once; then the sample


def test_a_seed_poll_reads_states_arrivals_and_completions_in_one_statement(requests):  # noqa: F811
    """Seed 001 (GUID ids: arrivals by a time watermark; completions moved to another table)."""
    s = requests
    with s.open() as db:
        for _ in range(30):
            push(db, s.tables, payload="p")
    with s.open("monitor") as monitor_db:
        collector = collector_for(monitor_db, s.layout)
        assert collector.poll().totals.depth == 30
        with s.open() as db:
            for _ in range(20):
                push(db, s.tables, payload="p")
        time.sleep(1.1)
        snapshot = collector.poll()
        assert collector.reads.statements == 1  # nothing completed: no sample to read
        assert (snapshot.totals.depth, snapshot.totals.arrivals_total) == (50, 50)


def test_the_status_line_turns_amber_with_the_age_when_data_is_older_than_two_intervals():
    from queuetop.tui.widgets import StatusView, status_lines
    from queuetop.watch.monitor import CONNECTED

    def polled(since_s: float):
        view = StatusView(target="q.db", dialect="sqlite", state=CONNECTED, error=None, retry_in_s=None,
                          since_success_s=since_s, poll_ms=12.0, interval_s=1.0, window_s=900, paused=False,
                          read_only=False)  # fmt: skip
        second = status_lines(view)[1]
        span = next(s for s in second.spans if second.plain[s.start:s.end].startswith("polled"))
        return second.plain[span.start:span.end], str(span.style)

    assert polled(2.5) == ("polled 2.5s ago", "bold yellow")  # a slow poll never passes for a live one
    text = status_lines(StatusView(target="q.db", dialect="sqlite", state=CONNECTED, error=None, retry_in_s=None,
                                   since_success_s=1.5, poll_ms=12.0, interval_s=1.0, window_s=900, paused=False,
                                   read_only=False))[1]  # fmt: skip
    assert text.plain.startswith("polled 1.5s ago") and not any(str(s.style) for s in text.spans
                                                                  if s.start == 0)  # fmt: skip
