#!/usr/bin/env python3
"""What the history file costs: `.venv/bin/python bench/history_bench.py` prints the figures.

1. size: a simulated week at 1 Hz with 50 job types, written through the real store (raw rows, the 10 s and 1 min
   roll-ups, the retention cut) with synthetic snapshots carrying their own timestamps, so a week takes minutes.
   `busy`: every figure of every type moves at every poll (the worst case for the file); `mixed`: 10 busy types,
   40 that are idle most of the time (zeros and unknown percentiles, as most types of a real queue are).
   Also the cost of one poll's write (51 rows, one transaction, in the writer thread). Goal: ≤ 50 MB.
2. poll-to-screen: the real dashboard on a real SQLite queue (50 types), from the start of a poll to the frame
   painted with its figures, with the history writer on and off, alternating blocks in one run. Goal: ≤ 5 %
   apart.
3. how long the charts' reads of a week-old file take for the long windows (1 h … 7 d), on the UI thread, and
   the time cursor's read of one moment.

Figures vary with the machine and its load; run it on a quiet one. `--days 1` shortens part 1 (the file keeps
growing until the 7th day), `--skip-size` / `--skip-screen` run one part.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from queuetop.store.chunks import decode_chunk
from queuetop.store.history_store import HistoryStore
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats

START = datetime(2026, 11, 1)
GOAL_MB = 50.0
BATCH = 600  # polls per transaction while simulating (the size does not depend on it)
POOL = 3989  # distinct synthetic polls (a prime: about 66 minutes)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def synthetic_rows(second: int, types: int, busy: int, rng: random.Random) -> tuple[TypeStats, ...]:
    """One poll's rows: smooth load curves with noise; types past `busy` mostly idle."""
    rows = []
    for i in range(types):
        phase = i * 0.7
        idle = i >= busy and math.sin(second / 5400 + phase) < 0.8  # an idle type wakes up now and then
        if idle:
            rows.append(TypeStats(f"type-{i:02d}", depth=0, claimed=0, timed_out=0, dead=2,
                                  arrivals_10s_per_s=0.0, completions_10s_per_s=0.0))  # fmt: skip
            continue
        depth = max(0, round(1000 + 800 * math.sin(second / 3600 + phase) + rng.gauss(0, 30)))
        rate = 50 + 10 * math.sin(second / 1800 + phase)
        rows.append(TypeStats(
            f"type-{i:02d}", depth=depth, oldest_age_s=30 + 20 * math.sin(second / 7200 + phase) + rng.random(),
            claimed=rng.randint(5, 20), timed_out=rng.choice((0, 0, 0, 1)), dead=3 + second // 100_000,
            arrivals_10s_per_s=rate + rng.gauss(0, 0.8), completions_10s_per_s=rate + rng.gauss(0, 0.8),
            wait_p50_s=0.4 + rng.gauss(0, 0.04), wait_p95_s=2 + rng.gauss(0, 0.2), wait_p99_s=3 + rng.gauss(0, 0.3),
            processing_p50_s=0.04 + rng.gauss(0, 0.004), processing_p95_s=0.12 + rng.gauss(0, 0.012),
            processing_p99_s=0.2 + rng.gauss(0, 0.02)))  # fmt: skip
    return tuple(rows)


def bench_size(days: float, types: int, busy: int, folder: Path) -> None:
    path = folder / f"week-{busy}-of-{types}.sqlite3"
    for old in folder.glob(path.name + "*"):
        old.unlink()
    store = HistoryStore(path, target="bench", layout="native:WorkQueue")
    rng = random.Random(7)
    polls = int(days * 86400)
    started = time.perf_counter()
    # A pool of polls reused in turn, with fresh timestamps: making 50 TypeStats per simulated second would take
    # longer than writing them. The pool's length is prime, so its repeats line up with no bucket or chunk.
    pool = []
    for second in range(POOL):
        rows = synthetic_rows(second, types, busy, rng)
        pool.append((rows, TypeStats(TOTAL, depth=sum(r.depth for r in rows))))
    batch: list = []
    for second in range(polls):
        rows, totals = pool[second % POOL]
        batch.append((Snapshot(taken_at=START + timedelta(seconds=second), target="bench", dialect="sqlite",
                               poll_ms=1.0, window_s=60.0, types=rows, totals=totals), None))  # fmt: skip
        if len(batch) == BATCH:
            store.write_many(batch)
            batch.clear()
        if second and second % 86400 == 0:
            print(f"   … day {second // 86400}: {store.size_bytes() / 1e6:.1f} MB "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip
    if batch:
        store.write_many(batch)
    store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    levels = {0: store._db.execute("SELECT count(*) FROM polls").fetchone()[0]}
    for level, data in store._db.execute("SELECT level, data FROM buckets"):
        levels[level] = levels.get(level, 0) + len(decode_chunk(data))
    size_mb = store.size_bytes() / 1e6
    rows_kept = sum(levels.values())
    per_poll_ms = store.cost.seconds / max(1, store.cost.snapshots) * 1000
    store.close()
    label = "busy (every type, every figure moving)" if busy == types else f"mixed ({busy} busy, {types - busy} idle)"
    print(f"   {label}: {days:g} days at 1 Hz, {types} types → {size_mb:.1f} MB "
          f"({size_mb / GOAL_MB:.2f} of the {GOAL_MB:.0f} MB goal: {'met' if size_mb <= GOAL_MB else 'NOT met'}); "
          f"rows kept: raw {levels.get(0, 0):,}, 10 s {levels.get(1, 0):,}, 1 min {levels.get(2, 0):,} "
          f"= {size_mb * 1e6 / max(1, rows_kept):.0f} B per row; simulated in {time.perf_counter() - started:.0f} s "
          f"({per_poll_ms:.2f} ms of store time per poll, batched)")  # fmt: skip


def bench_write_cost(types: int, polls: int, folder: Path) -> None:
    """One transaction per poll, as the writer thread does at 1 Hz."""
    path = folder / "write-cost.sqlite3"
    for old in folder.glob(path.name + "*"):
        old.unlink()
    store = HistoryStore(path, target="bench", layout="native:WorkQueue")
    rng = random.Random(3)
    for second in range(polls):
        rows = synthetic_rows(second, types, types, rng)
        store.write(Snapshot(taken_at=START + timedelta(seconds=second), target="bench", dialect="sqlite", poll_ms=1.0,
                             window_s=60.0, types=rows, totals=TypeStats(TOTAL, depth=1)))  # fmt: skip
    costs = [c * 1000 for c in store.cost.per_write_s]
    store.close()
    print(f"   one poll's write ({types + 1} rows, its own transaction, writer thread): "
          f"p50 {statistics.median(costs):.2f} ms, p95 {percentile(costs, 95):.2f} ms, max {max(costs):.1f} ms "
          f"over {polls} polls "
          f"(roll-ups every 10 s and 60 s, the retention cut every 60 s included)")  # fmt: skip


# -- 2. poll-to-screen ------------------------------------------------------------------------------------------
def bench_screen(types: int, blocks: int, polls_per_block: int, folder: Path) -> None:
    """The real app on a real SQLite queue, polled every 0.2 s while a thread keeps enqueuing; blocks of polls
    alternate between the history writer on and off, so a drift of the machine's load hits both alike."""
    import asyncio
    import threading

    from textual.screen import Screen

    from queuetop.act.actions import Actions
    from queuetop.act.queue import Queue
    from queuetop.db import Database, parse_target
    from queuetop.layouts import NATIVE
    from queuetop.layouts.schema import init_schema
    from queuetop.store.model import history_path
    from queuetop.store.series import Series
    from queuetop.store.threads import open_history
    from queuetop.tui.app import QueuetopApp
    from queuetop.watch.monitor import Monitor

    target = parse_target(str(folder / "screen.db"))
    with Database.open(target, create=True) as db:
        init_schema(db)
        queue = Queue(db)
        for i in range(types):
            queue.enqueue_many(f"type-{i:02d}", 20)
    stop = threading.Event()

    def keep_enqueuing() -> None:  # the figures move at every poll, as during a load test
        with Database.open(target) as db:
            queue, n = Queue(db), 0
            while not stop.wait(0.05):
                queue.enqueue_many(f"type-{n % types:02d}", 3)
                n += 1

    writer, reader = open_history(history_path(target, NATIVE, folder), target, NATIVE)
    series = Series(store=reader)
    started: dict[int, float] = {}
    timings: dict[bool, list[float]] = {True: [], False: []}

    class TimedMonitor(Monitor):
        def poll(self):  # type: ignore[no-untyped-def]
            begun = time.perf_counter()
            outcome = super().poll()
            started[id(outcome)] = begun
            return outcome

    class TimedApp(QueuetopApp):
        waiting: float | None = None

        def apply(self, outcome) -> None:  # type: ignore[no-untyped-def]
            self.waiting = started.pop(id(outcome), None)
            super().apply(outcome)

    monitor, actions = TimedMonitor(target), Actions(target)
    app = TimedApp(monitor, actions, interval=0.2, series=series, recorder=writer)
    paint = Screen._compositor_refresh

    def timed_paint(screen: Screen) -> None:
        paint(screen)
        if app.waiting is not None:
            timings[app.recorder is not None].append((time.perf_counter() - app.waiting) * 1000)
            app.waiting = None

    Screen._compositor_refresh = timed_paint  # type: ignore[method-assign]

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await asyncio.sleep(2.0)
        for block in range(blocks):
            app.recorder = writer if block % 2 == 0 else None
            target_count = len(timings[app.recorder is not None]) + polls_per_block
            while len(timings[app.recorder is not None]) < target_count:
                await asyncio.sleep(0.05)
        app.exit()

    feeder = threading.Thread(target=keep_enqueuing, daemon=True)
    feeder.start()
    try:
        app.run(headless=True, size=(160, 50), auto_pilot=run)
    finally:
        Screen._compositor_refresh = paint  # type: ignore[method-assign]
        stop.set()
        feeder.join()
        monitor.close()
        actions.close()
        writer.close()
        reader.close()
    on, off = statistics.median(timings[True]), statistics.median(timings[False])
    print(f"\n2. poll-to-screen, {types} types on SQLite, a poll every 0.2 s while jobs arrive, {blocks} alternating "
          f"blocks of {polls_per_block} polls (ms):")  # fmt: skip
    for label, values in (("history on ", timings[True]), ("history off", timings[False])):
        print(f"   {label}: p50 {statistics.median(values):6.2f}   p95 {percentile(values, 95):6.2f}   "
              f"[{len(values)} polls]")  # fmt: skip
    print(f"   on/off at p50 = {on / off:.3f} (goal ≤ 1.05: {'met' if on / off <= 1.05 else 'NOT met'}); the writer "
          f"kept {writer.store.cost.snapshots if writer.store else 0} polls, {writer.dropped} dropped")  # fmt: skip


def bench_chart_reads(path: Path) -> None:
    """What the charts' reads of a week-old file cost on the UI thread (once per completed chart bucket)."""
    from queuetop.store.series import Series

    HistoryStore(path).close()  # a file of an earlier version gets this version's indexes
    store = HistoryStore(path, create=False)
    latest = store.latest() or 0.0
    print(f"\n3. chart reads of {path.name} ({store.size_bytes() / 1e6:.1f} MB), one line of 110 buckets, on the UI "
          f"thread (ms):")  # fmt: skip
    for window in (3600.0, 21600.0, 86400.0, 604800.0):
        series = Series(store=store)
        series.latest = latest
        times = []
        for _ in range(5):
            series._points.clear()
            begun = time.perf_counter()
            series.points(TOTAL, "depth", window, 110)
            times.append((time.perf_counter() - begun) * 1000)
        begun = time.perf_counter()
        store.deepest(latest - window, store.level_for(window, window / 100), 3)
        rank_ms = (time.perf_counter() - begun) * 1000
        level = store.retention.levels[store.level_for(window, window / 110)].name
        print(f"   window {window / 3600:>5g} h: level {level:>3}, first read {times[0]:6.1f}, again (a bucket "
              f"later) {statistics.median(times[1:]):6.1f}; the 3 deepest types {rank_ms:6.1f}")  # fmt: skip
    begun = time.perf_counter()
    store.at(latest - 3 * 86400)
    print(f"   the time cursor 3 days back (every type at one moment): {(time.perf_counter() - begun) * 1000:.1f} ms")
    store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description="queuetop history file: size after a week, write cost, "
                                                 "poll-to-screen with history on and off")  # fmt: skip
    parser.add_argument("--days", type=float, default=7.0, help="simulated days (default 7: the file is full)")
    parser.add_argument("--types", type=int, default=50, help="job types (default 50)")
    parser.add_argument("--skip-size", action="store_true", help="skip part 1")
    parser.add_argument("--skip-screen", action="store_true", help="skip part 2")
    parser.add_argument("--busy-only", action="store_true", help="part 1: only the busy profile")
    parser.add_argument("--blocks", type=int, default=8, help="part 2: alternating on/off blocks (default 8)")
    parser.add_argument("--polls", type=int, default=50, help="part 2: polls per block (default 50)")
    parser.add_argument("--read-file", metavar="PATH", help="part 3: a history file to time the charts' reads on "
                        "(default: the busy week of part 1)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="queuetop-history-bench-"))
    print(f"queuetop history bench — Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}; files in {folder}")  # fmt: skip
    if not args.skip_size:
        print(f"\n1. the history file after {args.days:g} simulated days (retention: raw 1 h, 10 s for 24 h, 1 min "
              f"for 7 d):")  # fmt: skip
        bench_write_cost(args.types, 600, folder)
        bench_size(args.days, args.types, args.types, folder)
        if not args.busy_only:
            bench_size(args.days, args.types, min(10, args.types), folder)
    if not args.skip_screen:
        bench_screen(args.types, args.blocks, args.polls, folder)
    week = folder / f"week-{args.types}-of-{args.types}.sqlite3"
    if args.read_file or week.exists():
        bench_chart_reads(Path(args.read_file) if args.read_file else week)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
