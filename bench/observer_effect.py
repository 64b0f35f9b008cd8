"""Observer effect (issue 4, benchmark 1): does watching a queue slow it down?

A saturated load runs through the load driver (4 job types with a consumer each, no work time, a backlog
always waiting, and one producer adding 50 jobs/s so arrivals move too) while, in another process, the dashboard's
Collector polls once a second, as `queuetop` in a second terminal would, or does not. Phases alternate in
the same run, ABBA (off, on, on, off, ...), so drift (a shrinking backlog, a neighbour's load) falls on both
sides alike; every phase begins with a settling second (the first poll of an "on" phase is a dashboard's
bootstrap, one window of history) and is then measured. The ratio is completions/s watched over unwatched.
Goal: ≥ 0.99. Printed per block of four phases too, which shows how noisy the machine was.

    .venv/bin/python bench/observer_effect.py                      # PostgreSQL and SQLite
    .venv/bin/python bench/observer_effect.py --db sqlite --phase 8 --blocks 4

Data: the PostgreSQL schema `bench_observer` (dropped at the end) and /tmp/queuetop-bench/observer.db, made
afresh each run.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path

from common import bench_layout, load_average, ms, pg_target, print_table, recreate_pg_schema, sqlite_target

from queuetop.collector import Collector
from queuetop.db import Database, Target
from queuetop.history import percentiles
from queuetop.layouts import NATIVE, Layout
from queuetop.load.config import ConsumerPool, LoadConfig, WorkTime
from queuetop.load.driver import LoadRun
from queuetop.queue import Queue
from queuetop.schema import init_schema

TYPES = tuple(f"obs-{i}" for i in range(4))
CHUNK = 50  # jobs per enqueue: jobs enqueued together share AvailableDate, a tie the claim's sort must break
PRODUCER_RATE = 50.0
SETTLE_S = 1.0
POLL_EVERY_S = 1.0
HEADROOM = 1.5  # backlog prepared for this many times the jobs the run is expected to take


def observer(target: Target, schema: str | None, watching, quitting, results) -> None:
    """The dashboard's poll loop, in a process of its own: a fresh Collector for each watched phase."""
    layout = bench_layout(schema) if schema else NATIVE  # a Layout's mapping does not pickle; its schema does
    db = Database.open(target, purpose="monitor")
    poll_ms: list[float] = []
    collector = None
    next_poll = time.monotonic()
    while not quitting.is_set():
        if watching.is_set():
            collector = collector or Collector(db, layout)
            started = time.perf_counter()
            collector.poll()
            poll_ms.append((time.perf_counter() - started) * 1000)
        else:
            collector = None
        next_poll += POLL_EVERY_S
        time.sleep(max(0.0, next_poll - time.monotonic()))
    db.close()
    results.put(poll_ms)


def prepare(backend: str) -> tuple[Target, Layout]:
    if backend == "postgresql":
        target, layout = pg_target(), bench_layout("bench_observer")
        with Database.open(target) as db:
            recreate_pg_schema(db, layout)
        return target, layout
    target = sqlite_target("observer.db")
    for suffix in ("", "-wal", "-shm"):
        Path(target.value + suffix).unlink(missing_ok=True)
    with Database.open(target, create=True) as db:
        init_schema(db, NATIVE)
    return target, NATIVE


def top_up(target: Target, layout: Layout, jobs: int) -> None:
    with Database.open(target) as db:
        queue = Queue(db, layout)
        for i in range(0, jobs, CHUNK):
            queue.enqueue_many(TYPES[i // CHUNK % len(TYPES)], min(CHUNK, jobs - i))
        if db.dialect.name == "postgresql":  # plans for the claim as autovacuum would leave them
            db.execute(f"ANALYZE {db.dialect.qualify(layout.schema, layout.queue_table)}")


def processed(run: LoadRun) -> int:
    counters = run.counters()
    return counters.succeeded + counters.foreign + counters.dead


def measure(backend: str, phase_s: float, blocks: int) -> dict:
    target, layout = prepare(backend)
    top_up(target, layout, 20_000)
    context = mp.get_context("spawn")  # no fork of a process with threads and open connections
    watching, quitting, results = context.Event(), context.Event(), context.Queue()
    watcher = context.Process(target=observer, args=(target, layout.schema, watching, quitting, results), daemon=True)
    watcher.start()
    config = LoadConfig(types=tuple((t, 1.0) for t in TYPES), producers=1, rate=PRODUCER_RATE,
                        pools=tuple(ConsumerPool(1, (t,)) for t in TYPES),
                        default_work=WorkTime("fixed", 0))  # fmt: skip
    run = LoadRun(target, config, layout).start()
    try:
        time.sleep(3.0)  # warm up, and learn the pace to size the backlog
        pace = processed(run) / 3.0
        phases = blocks * 4
        top_up(target, layout, int(pace * phases * (phase_s + SETTLE_S) * HEADROOM))
        rates: dict[bool, list[float]] = {False: [], True: []}
        order = [on for _ in range(blocks) for on in (False, True, True, False)]
        for on in order:
            (watching.set if on else watching.clear)()
            time.sleep(SETTLE_S)
            before, started = processed(run), time.monotonic()
            time.sleep(phase_s)
            rates[on].append((processed(run) - before) / (time.monotonic() - started))
            print(f"  {backend}: {'watched  ' if on else 'unwatched'} {rates[on][-1]:8,.0f}/s")
            sys.stdout.flush()
        watching.clear()
    finally:
        run.shutdown()
        quitting.set()
    poll_ms = results.get(timeout=30)
    watcher.join(10)
    if run.error is not None:
        raise SystemExit(f"the load failed on {backend}: {run.error}")
    with Database.open(target) as db:
        left = sum(int(row[1]) for row in db.dialect.pending_by_type(db, layout))
        if backend == "postgresql":
            db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(layout.schema)} CASCADE")
    blocks_ratio = [(rates[True][2 * b] + rates[True][2 * b + 1]) / (rates[False][2 * b] + rates[False][2 * b + 1])
                    for b in range(blocks)]  # fmt: skip
    return {"backend": backend, "off": rates[False], "on": rates[True], "blocks": blocks_ratio,
            "poll_ms": poll_ms, "backlog_left": left}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("both", "postgresql", "sqlite"), default="both")
    parser.add_argument("--phase", type=float, default=6.0, help="measured seconds per phase (default 6)")
    parser.add_argument("--blocks", type=int, default=3, help="blocks of four phases, ABBA (default 3)")
    options = parser.parse_args()
    backends = ("postgresql", "sqlite") if options.db == "both" else (options.db,)
    print(load_average())
    results = [measure(backend, options.phase, options.blocks) for backend in backends]
    rows = []
    for r in results:
        off, on = statistics.mean(r["off"]), statistics.mean(r["on"])
        p50, p95 = percentiles(r["poll_ms"], (50, 95))
        rows.append((r["backend"], f"{off:,.0f}", f"{on:,.0f}", f"{on / off:.3f}",
                     " ".join(f"{b:.3f}" for b in r["blocks"]), f"{min(r['blocks']):.3f}–{max(r['blocks']):.3f}",
                     len(r["poll_ms"]), ms(p50), ms(p95), f"{r['backlog_left']:,}"))  # fmt: skip
    print_table(("database", "unwatched/s", "watched/s", "ratio", "per block", "range", "polls", "poll p50 ms",
                 "poll p95 ms", "backlog left"), rows,
                title="completions per second, unwatched vs polled every second (goal: ratio ≥ 0.99)")  # fmt: skip
    print(load_average())


if __name__ == "__main__":
    main()
