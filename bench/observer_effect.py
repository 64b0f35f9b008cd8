"""Observer effect (issues 4 and 10): does watching a queue slow it down, and does the watching stay live?

A saturated load runs through the load driver (4 job types, no work time, a backlog always waiting, and one
producer adding 50 jobs/s so arrivals move too) while, in another process, the dashboard's collector polls once
a second, as `queuetop` in a second terminal would, or does not. Phases alternate in the same run, ABBA (off,
on, on, off, ...), so drift (a shrinking backlog, a neighbour's load) falls on both sides alike; every phase
begins with a settling second and is then measured. A dashboard opens at the first "on" phase of each block: its
first poll (the whole backlog counted once, one window of history looked back) is done, and timed apart, before
that settling second, so the watched phases measure a dashboard watching. The ratio is completions/s watched
over unwatched; the ratio with the run's drift taken out, with its 95 % interval, and two unwatched phases of a
block against each other (the machine's own noise) are printed beside it.

Every layout (`--layout NAME` or `all`): the native schema (a consumer per type) or a seed's shape as
`queuetop demo --layout` makes it (the demo's DDL: no index beyond the primary key, as the seeds have; 4
consumers through the seed's own dequeue, its backlog inserted in one statement), watched by the collector
`queuetop --layout NAME` would use. What a shape cannot know is left out (no latencies: no percentile error).

Printed per database and layout:
- the ratio, and per block of four phases (how noisy the machine was). Goal: ≥ 0.99, every block ≥ 0.97;
- poll p50 / p95 / max of the polls after the first of each phase (goal: p95 ≤ 100 ms), and the first polls'
  p50 (a dashboard opening mid-test: it counts the whole backlog once, exactly);
- rows fetched per poll (p95 and max) and the most rows any one statement fetched (the bound: the sample cap);
- the percentiles' error: after a last watched phase (`--last`), the last poll's wait and processing p50/p95/
  p99, per type and in total, against the exact ones computed from the table over the same 60 s (goal: within
  ±5 % or 1 ms; judged with the default 65 s, one window of polls: `--layout all`'s 15 s leave most of the
  window to the first poll's look-back sample of 2,000 rows, coarser at the p99);
- the depth at rest: after the load stops, the collector of the last phase polls on until its depth is no
  longer an estimate (at most 20 polls) and is compared with a count of the table (goal: exact).

Defaults: 4 blocks of 6 s phases (one layout, ~3.5 min per database); with `--layout all`, 3 blocks of 4 s
and a last phase of 15 s (12 runs of ~85 s: ~18 min). On this 2-core machine a phase's rate wanders ±10 %
even when quiet, mostly with what else the cores run (a neighbour's burst lasts seconds): ABBA cancels the
drift within a block, and what is left shrinks with the time measured per side more than with how it is cut,
so a single block below 0.97 says little unless the others agree.

    .venv/bin/python bench/observer_effect.py                      # PostgreSQL and SQLite, native layout
    .venv/bin/python bench/observer_effect.py --layout all         # every layout, both databases, ≤ 20 min
    .venv/bin/python bench/observer_effect.py --db sqlite --layout requests --phase 8 --blocks 4
    .venv/bin/python bench/observer_effect.py --profile            # also: runs, time and rows of each statement

Data: the PostgreSQL schema `bench_observer` (dropped at the end) and /tmp/queuetop-bench/observer-LAYOUT.db,
made afresh each run.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import statistics
import sys
import threading
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

from common import (
    bench_layout,
    create_fixing_index,
    insert_backlog,
    load_average,
    ms,
    pg_target,
    print_table,
    recreate_pg_schema,
    sqlite_target,
)

from queuetop.act.queue import Queue
from queuetop.core.history import percentiles
from queuetop.db import Database, Target, Timeout
from queuetop.layouts import NATIVE, PRESET_NAMES, Layout, load_layout, with_tables
from queuetop.layouts.schema import init_schema
from queuetop.layouts.sql import Statements
from queuetop.load.command import load_types
from queuetop.load.config import ConsumerPool, LoadConfig, WorkTime
from queuetop.load.driver import LoadRun
from queuetop.watch.collector import collector_for
from queuetop.watch.snapshot import TOTAL

TYPES = tuple(f"obs-{i}" for i in range(4))
SCHEMA = "bench_observer"
SEED_CHUNK = 5_000  # rows per INSERT of a seed's backlog
CHUNK = 50  # jobs per enqueue: jobs enqueued together share AvailableDate, a tie the claim's sort must break
PRODUCER_RATE = 50.0
SETTLE_S = 1.0
POLL_EVERY_S = 1.0
HEADROOM = 1.5  # backlog prepared for this many times the jobs the run is expected to take
REST_POLLS = 20  # a full count waits until the last one's 1 % share of the time allows it
FIGURES = ("wait_p50_s", "wait_p95_s", "wait_p99_s", "processing_p50_s", "processing_p95_s", "processing_p99_s")


def count_statements(stats: dict, poll: dict) -> None:
    """Time and count every statement the polling thread sends: per statement kind into `stats` (while
    `poll["profile"]`), and per poll into `poll` (rows, most rows in one statement). Counted here rather than by
    the collector, so the queuetop of before this change can be measured the same way; the background count's
    thread is left out (it is not on the poll's time)."""
    plain, polling = Database.fetchall, threading.get_ident()

    def fetchall(self, sql, params=()):
        started = time.perf_counter()
        rows = plain(self, sql, params)
        if threading.get_ident() != polling:
            return rows
        poll["rows"] += len(rows)
        poll["most"] = max(poll["most"], len(rows))
        if poll["profile"]:
            entry = stats[" ".join(sql.replace("/* queuetop */", "").split()[:6])[:60]]
            entry[0] += 1
            entry[1] += time.perf_counter() - started
            entry[2] += len(rows)
        return rows

    Database.fetchall = fetchall


def observer(target: Target, name: str, watching, opened, resting, quitting, results, profile: bool) -> None:
    """The dashboard's poll loop, in a process of its own: a fresh collector for each watched phase (`opened` is set
    once its first poll is done)."""
    layout = shape(target, name)  # a Layout's mapping does not pickle; its name does
    statements: dict = defaultdict(lambda: [0, 0.0, 0])
    poll = {"rows": 0, "most": 0, "profile": False}  # the steady polls only are profiled: first ones apart
    count_statements(statements, poll)
    db = Database.open(target, purpose="monitor")
    polls: list[tuple[bool, float, int, int]] = []  # (first of its phase, ms, rows fetched, most rows in one)
    collector, last, was_watching = None, None, False
    next_poll = time.monotonic()
    while not quitting.is_set():
        if watching.is_set():
            if not was_watching:
                collector = collector_for(db, layout)
            poll.update(rows=0, most=0, profile=profile and was_watching)
            started = time.perf_counter()
            last = collector.poll()
            polls.append((not was_watching, (time.perf_counter() - started) * 1000, poll["rows"], poll["most"]))
            opened.set()
        was_watching = watching.is_set()
        if resting.is_set():
            break
        next_poll += POLL_EVERY_S
        time.sleep(max(0.0, next_poll - time.monotonic()))
    at_rest = None
    if resting.is_set() and collector is not None:
        poll["profile"] = False  # the polls under load only: these would add to their statements' runs
        for _ in range(REST_POLLS):  # the load has stopped: poll on, as a dashboard left open would
            at_rest = collector.poll()
            if not at_rest.totals.depth_is_estimate:
                break
            getattr(collector, "settle", lambda: None)()
            time.sleep(POLL_EVERY_S)
    db.close()
    results.put({"polls": polls, "last": last.to_json() if last else None,
                 "rest_depth": at_rest.totals.depth if at_rest else None,
                 "rest_estimate": at_rest.totals.depth_is_estimate if at_rest else None,
                 "statements": dict(statements)})  # fmt: skip


def shape(target: Target, name: str) -> Layout:
    """The layout under test: native in the benchmark's schema (PostgreSQL) or file (SQLite); a seed's shape as
    `queuetop demo --layout` makes it (the demo's DDL: no index beyond the primary key, as the seeds have)."""
    if name == "native":
        return bench_layout(SCHEMA) if target.kind != "sqlite" else NATIVE
    layout = load_layout(name)
    table = layout.queue_table if not layout.table_required else "bench_items"
    return with_tables(layout, f"{SCHEMA}.{table}")


def prepare(backend: str, name: str) -> tuple[Target, Layout]:
    if backend == "postgresql":
        target = pg_target()
        layout = shape(target, name)
        with Database.open(target) as db:
            if layout.made_by_init:
                recreate_pg_schema(db, layout)
            else:
                db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(SCHEMA)} CASCADE")
                db.execute(f"CREATE SCHEMA {db.dialect.quote(SCHEMA)}")
                for sql in Statements(db.dialect, layout).create_tables():
                    db.execute(sql)
        return target, layout
    target = sqlite_target(f"observer-{name}.db")
    for suffix in ("", "-wal", "-shm"):
        Path(target.value + suffix).unlink(missing_ok=True)
    layout = shape(target, name)
    with Database.open(target, create=True) as db:
        if layout.made_by_init:
            init_schema(db, NATIVE)
        else:
            for sql in Statements(db.dialect, layout).create_tables():
                db.execute(sql)
    return target, layout


def settle_tables(target: Target, layout: Layout) -> None:
    """Before the measured phases: what the backlog's insert left for later is done now, so it does not land in one
    phase (a checkpoint or an autovacuum of the queue moved a PostgreSQL phase by ±20 % here; the monitor causes
    neither). PostgreSQL: VACUUM ANALYZE both tables, their autovacuum off for the run (the schema is dropped after
    it), a CHECKPOINT; SQLite: a passive WAL checkpoint (a stronger one blocks the load's writers while it
    waits for their readers, past their busy timeout)."""
    with Database.open(target) as db:
        if db.dialect.name != "postgresql":
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")  # FULL and above block new writers while they wait
            return
        statements = Statements(db.dialect, layout)
        for which in ("queue", "completed") if layout.completed_table else ("queue",):
            db.execute(f"VACUUM ANALYZE {statements.table(which)}")
            db.execute(f"ALTER TABLE {statements.table(which)} SET (autovacuum_enabled = false)")
        db.execute("CHECKPOINT")


def job_types(layout: Layout) -> tuple[str, ...]:
    """Four job types as the shape stores them (GUIDs on seed 000), or the one nameless stream of a shape
    without a job type column."""
    if layout.made_by_init:
        return TYPES
    return tuple(name for name, _ in load_types("4" if layout.has_job_type else None, layout))


def top_up(target: Target, layout: Layout, jobs: int) -> None:
    for attempt in range(5):  # SQLite: a seed's claim that scans its table may hold the write lock past the busy
        try:  # timeout
            return _top_up(target, layout, jobs)
        except Timeout:
            if attempt == 4:
                raise


def _top_up(target: Target, layout: Layout, jobs: int) -> None:
    with Database.open(target) as db:
        if layout.made_by_init:
            queue = Queue(db, layout)
            for i in range(0, jobs, CHUNK):
                queue.enqueue_many(TYPES[i // CHUNK % len(TYPES)], min(CHUNK, jobs - i))
        else:  # in chunks: one long INSERT holds SQLite's write lock past the load's busy timeout
            for i in range(0, jobs, SEED_CHUNK):
                insert_backlog(db, layout, min(SEED_CHUNK, jobs - i), job_types(layout))
        if db.dialect.name == "postgresql":  # plans for the claim as autovacuum would leave them
            db.execute(f"ANALYZE {db.dialect.qualify(layout.schema, layout.queue_table)}")


def processed(run: LoadRun) -> int:
    counters = run.counters()
    return counters.succeeded + counters.foreign + counters.dead


def exact_figures(db: Database, layout: Layout, taken_at: datetime, window_s: float) -> dict[str, dict[str, float]]:
    """Per type and in total: the wait and processing percentiles of every job finished in the window that ended
    at `taken_at`, read row by row from the table (the figures the collector's sample stands for)."""
    dialect = db.dialect
    since = taken_at - timedelta(seconds=window_s)
    if layout.made_by_init:
        statements = Statements(dialect, layout)
        sql = statements.sql("SELECT {c_type}, {c_created}, {c_claimed_at}, {c_claimed_at}, {c_completed} "
                             "FROM {completed} WHERE {c_completed} > ? AND {c_completed} <= ? "
                             "AND {c_outcome} <> 'dead'")  # fmt: skip
        rows = db.fetchall(sql, (dialect.encode_time(since), dialect.encode_time(taken_at)))
    elif layout.completions is not None and (layout.completions.wait or layout.completions.processing):
        statements = Statements(dialect, layout)
        at_type = layout.type_of(layout.completions.at)
        rows = [(job_type, *times) for _, job_type, at, *times in
                db.fetchall(*statements.completions_after(dialect.encode_value(at_type, since)))
                if dialect.decode_time(at) <= taken_at]  # fmt: skip
    else:
        return {}
    guid = layout.type_of("type") == "guid"
    waits: dict[str, list[float]] = defaultdict(list)
    work: dict[str, list[float]] = defaultdict(list)
    for job_type, *times in rows:
        wait_from, wait_to, work_from, work_to = (dialect.decode_time(t) for t in times)
        name = layout.queue_table if job_type is None else str(job_type).upper() if guid else str(job_type)
        for key in (name, TOTAL):
            if wait_from is not None and wait_to is not None:
                waits[key].append((wait_to - wait_from).total_seconds())
            if work_from is not None and work_to is not None:
                work[key].append((work_to - work_from).total_seconds())
    out = {}
    for name in set(waits) | set(work):
        values = (*_percentiles(waits[name]), *_percentiles(work[name]))
        out[name] = dict(zip(FIGURES, values, strict=True))
    return out


def _percentiles(values: list[float]) -> tuple:
    return percentiles(values) if values else (None, None, None)


def pending_in_table(db: Database, layout: Layout) -> int:
    if "pending" not in layout.states:
        return 0
    return int(db.fetchall(*Statements(db.dialect, layout).count_state("pending"))[0][0])


def percentile_error(last: dict, exact: dict[str, dict[str, float]]) -> tuple[float, int, int, str]:
    """The largest error beyond 1 ms, relative to the exact figure; how many figures; how many off by > 5 %; the
    worst one, shown and exact."""
    worst, compared, off, which = 0.0, 0, 0, "—"
    for row in [*last["types"], last["totals"]]:
        truth = exact.get(row["job_type"])
        if not truth:
            continue
        for figure in FIGURES:
            shown, real = row[figure], truth[figure]
            if shown is None or real is None:
                continue
            compared += 1
            error = abs(shown - real)
            relative = error / real if real else 0.0
            if error > 0.001 + 1e-9:  # SQLite's times have milliseconds: 1 ms apart is within the goal
                if relative > worst:
                    worst, which = relative, f"{row['job_type']} {figure} {shown:.4f} vs {real:.4f}"
                off += relative > 0.05
    return worst, compared, off, which


def measure(backend: str, name: str, phase_s: float, blocks: int, profile: bool, last_phase_s: float,
            with_index: bool = False) -> dict:  # fmt: skip
    target, layout = prepare(backend, name)
    if with_index:
        with Database.open(target) as db:
            with_index = create_fixing_index(db, name, layout.schema)  # False where the seed lacks none
    top_up(target, layout, 20_000)
    context = mp.get_context("spawn")  # no fork of a process with threads and open connections
    watching, opened, resting, quitting = context.Event(), context.Event(), context.Event(), context.Event()
    results = context.Queue()
    watcher = context.Process(target=observer, args=(target, name, watching, opened, resting, quitting, results,
                                                     profile),
                              daemon=True)  # fmt: skip
    watcher.start()
    types = job_types(layout)
    # A consumer per type on the native schema (as issue 4 measured it); on a seed's shape as many consumers as
    # types, each through the seed's own dequeue, which may not take a type at all.
    pools = tuple(ConsumerPool(1, (t,)) for t in types) if layout.made_by_init else (ConsumerPool(len(TYPES)),)
    config = LoadConfig(types=tuple((t, 1.0) for t in types), producers=1, rate=PRODUCER_RATE, pools=pools,
                        default_work=WorkTime("fixed", 0))  # fmt: skip
    run = LoadRun(target, config, layout).start()
    try:
        time.sleep(3.0)  # warm up, and learn the pace to size the backlog
        pace = processed(run) / 3.0
        phases = blocks * 4
        top_up(target, layout, int(pace * (phases * (phase_s + SETTLE_S) + last_phase_s) * HEADROOM))
        settle_tables(target, layout)
        rates: dict[bool, list[float]] = {False: [], True: []}
        phases: list[tuple[bool, float, float]] = []  # (watched, the phase's middle in s, completions/s)
        order = [on for _ in range(blocks) for on in (False, True, True, False)] + [True]  # the last one: rest
        for n, on in enumerate(order):
            if on and not watching.is_set():  # a dashboard opened: its first poll (the whole backlog counted, one
                opened.clear()  # window looked back) is timed apart, and the phase measures it watching
                watching.set()
                opened.wait(30)
            elif not on:
                watching.clear()
            time.sleep(SETTLE_S)
            before, started = processed(run), time.monotonic()
            if n == len(order) - 1:  # a last watched phase, not measured: a dashboard that has watched one
                time.sleep(last_phase_s)  # whole window, whose percentiles are then compared with the table
                break
            time.sleep(phase_s)
            rates[on].append((processed(run) - before) / (time.monotonic() - started))
            phases.append((on, (started + time.monotonic()) / 2, rates[on][-1]))
            print(f"  {backend} {name}: {'watched  ' if on else 'unwatched'} {rates[on][-1]:8,.0f}/s")
            sys.stdout.flush()
    finally:
        run.shutdown()
        resting.set()
    got = results.get(timeout=60)
    quitting.set()
    watcher.join(10)
    if run.error is not None:
        raise RuntimeError(f"the load failed on {backend} {name}: {run.error}")
    with Database.open(target) as db:
        left = pending_in_table(db, layout)
        last = got["last"]
        taken_at = datetime.fromisoformat(last["taken_at"].rstrip("Z"))
        error = percentile_error(last, exact_figures(db, layout, taken_at, last["window_s"]))
        if backend == "postgresql":
            db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(SCHEMA)} CASCADE")
    blocks_ratio = [(rates[True][2 * b] + rates[True][2 * b + 1]) / (rates[False][2 * b] + rates[False][2 * b + 1])
                    for b in range(blocks)]  # fmt: skip
    label = name + (" +index" if with_index else "")
    return {"backend": backend, "layout": label, "off": rates[False], "on": rates[True],
            "blocks": blocks_ratio, "adjusted": trend_adjusted_ratio(phases), "polls": got["polls"],
            "backlog_left": left, "error": error,
            "rest": (got["rest_depth"], got["rest_estimate"], left), "statements": got["statements"]}  # fmt: skip


T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086)  # Student's t, two-sided 95 %, by degrees of freedom 1 … 20


def trend_adjusted_ratio(phases: list[tuple[bool, float, float]]) -> tuple[float, float, float]:
    """Watched against unwatched with the run's own drift taken out: least squares of log(rate) on a quadratic in
    time plus a watched term, so a throughput that falls as the run goes on (a seed's claim that scans its growing
    history, a table that bloats) is not read as the monitor's cost. ABBA blocks cancel a straight-line drift
    only; a curved one biases them. Returns (ratio, its 95 % interval's low and high end)."""
    t0 = phases[0][1]
    rows = [(1.0, t - t0, (t - t0) ** 2, float(on)) for on, t, _ in phases]
    ys = [math.log(rate) for _, _, rate in phases]
    k = len(rows[0])
    xtx = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    xty = [sum(r[i] * y for r, y in zip(rows, ys, strict=True)) for i in range(k)]
    inverse = _inverse(xtx)
    beta = [sum(inverse[i][j] * xty[j] for j in range(k)) for i in range(k)]
    residual = sum((y - sum(b * x for b, x in zip(beta, r, strict=True))) ** 2 for r, y in zip(rows, ys, strict=True))
    free = len(rows) - k
    spread = T_975[min(free, len(T_975)) - 1] * math.sqrt(residual / free * inverse[3][3]) if free > 0 else math.inf
    return math.exp(beta[3]), math.exp(beta[3] - spread), math.exp(beta[3] + spread)


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss–Jordan with partial pivoting (a 4 × 4 normal matrix: no numpy for that)."""
    n = len(matrix)
    work = [[*row, *(1.0 if i == j else 0.0 for j in range(n))] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(work[r][col]))
        work[col], work[pivot] = work[pivot], work[col]
        lead = work[col][col]
        work[col] = [v / lead for v in work[col]]
        for r in range(n):
            if r != col and work[r][col]:
                factor = work[r][col]
                work[r] = [v - factor * w for v, w in zip(work[r], work[col], strict=True)]
    return [row[n:] for row in work]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("both", "postgresql", "sqlite"), default="both")
    parser.add_argument("--layout", choices=(*PRESET_NAMES, "all"), default="native",
                        help="the shape to load and watch: native (default), a seed's preset, or all of them")
    parser.add_argument("--phase", type=float, help="measured seconds per phase (default 6; --layout all: 4)")
    parser.add_argument("--blocks", type=int, help="blocks of four phases, ABBA (default 4; --layout all: 3)")
    parser.add_argument("--with-index", action="store_true",
                        help="a seed's table with the index it lacks for the monitor's reads (as shape_poll_cost.py)")
    parser.add_argument("--profile", action="store_true", help="print the time and rows of each poll statement")
    parser.add_argument("--last", type=float, help="seconds of the last watched phase, whose percentiles are "
                        "compared with the table (default 65: one window and a little; --layout all: 15)")
    options = parser.parse_args()
    every = options.layout == "all"  # 12 runs: shorter, to finish in 20 minutes
    options.phase = options.phase or (4.0 if every else 6.0)
    options.blocks = options.blocks or (3 if every else 4)
    options.last = options.last or (15.0 if every else 65.0)
    backends = ("postgresql", "sqlite") if options.db == "both" else (options.db,)
    print(load_average())
    names = PRESET_NAMES if options.layout == "all" else (options.layout,)
    results, failed = [], []
    for name in names:
        for backend in backends:
            started = time.monotonic()
            try:
                results.append(measure(backend, name, options.phase, options.blocks, options.profile, options.last,
                                       options.with_index))  # fmt: skip
            except Exception as exc:  # one shape's failure must not lose the others' figures
                failed.append((backend, name, f"{type(exc).__name__}: {exc}"))
            print(f"  {backend} {name}: {time.monotonic() - started:.0f} s; {load_average()}")
    rows, reads, quality = [], [], []
    for r in results:
        off, on = statistics.mean(r["off"]), statistics.mean(r["on"])
        steady = [p for p in r["polls"] if not p[0]]
        first = [p[1] for p in r["polls"] if p[0]]
        p50, p95 = percentiles([p[1] for p in steady], (50, 95))
        # What a block's ratio would be if watching did nothing: its two unwatched phases, one against the other.
        same = [r["off"][2 * b + 1] / r["off"][2 * b] for b in range(len(r["blocks"]))]
        adjusted, low, high = r["adjusted"]
        rows.append((r["backend"], r["layout"], f"{off:,.0f}", f"{on:,.0f}", f"{on / off:.3f}",
                     f"{adjusted:.3f} ({low:.3f}–{high:.3f})",
                     " ".join(f"{b:.3f}" for b in r["blocks"]), f"{min(r['blocks']):.3f}",
                     f"{min(same):.3f}–{max(same):.3f}", len(steady), ms(p50), ms(p95),
                     ms(max(p[1] for p in steady)), ms(statistics.median(first))))  # fmt: skip
        rows_p95 = percentiles([p[2] for p in r["polls"]], (95,))[0]
        reads.append((r["backend"], r["layout"], f"{rows_p95:,}", f"{max(p[2] for p in r['polls']):,}",
                      f"{max(p[3] for p in r['polls']):,}", f"{max(p[2] for p in steady):,}"))  # fmt: skip
        worst, compared, off_by, which = r["error"]
        depth, estimate, table = r["rest"]
        quality.append((r["backend"], r["layout"], f"{100 * worst:.1f} %", which, f"{off_by} of {compared}",
                        f"{depth:,}{' ≈' if estimate else ''}", f"{table:,}",
                        "exact" if depth == table else f"off by {depth - table:+,}"))  # fmt: skip
    print_table(("database", "layout", "unwatched/s", "watched/s", "ratio", "drift taken out (95 %)", "per block",
                 "min block",
                 "unwatched vs unwatched", "polls", "p50 ms", "p95 ms", "max ms", "first poll p50 ms"), rows,
                title="completions per second, unwatched vs polled every second (goal: ratio ≥ 0.99, every block "
                      "≥ 0.97; poll p95 ≤ 100 ms). 'unwatched vs unwatched': a block's two unwatched phases, one "
                      "against the other: the machine's own noise, what a block shows when watching costs "
                      "nothing. 'drift taken out': the ratio of a fit of log(rate) to a quadratic in time plus "
                      "watched, with its 95 % interval")  # fmt: skip
    print_table(("database", "layout", "rows/poll p95", "rows/poll max", "most rows in one statement",
                 "rows/poll max (not first)"), reads, title="rows fetched per poll")  # fmt: skip
    print_table(("database", "layout", "worst percentile error", "(s, shown vs exact)", "off by > 5 %", "depth at rest",
                 "in the table", "depth"), quality,
                title="the last watched poll's percentiles against the table (goal: ±5 % or 1 ms); depth at rest")
    if options.profile:
        for r in results:
            polls = len([p for p in r["polls"] if not p[0]])
            table = sorted(r["statements"].items(), key=lambda kv: -kv[1][1])
            print_table(("statement", "runs per poll", "ms per poll", "rows per poll"),
                        [(name, f"{runs / polls:.2f}", f"{1000 * spent / polls:.2f}", f"{n_rows / polls:,.0f}")
                         for name, (runs, spent, n_rows) in table],
                        title=f"{r['backend']}: time and rows of each statement per poll ({polls} polls, first ones "
                              "left out)")  # fmt: skip
    if failed:
        print_table(("database", "layout", "failed"), failed, title="runs that failed")
    print(load_average())


if __name__ == "__main__":
    main()
