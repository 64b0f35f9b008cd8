#!/usr/bin/env python3
"""What the history file costs: `.venv/bin/python bench/history_bench.py` prints the figures.

1. size: a simulated week at 1 Hz with 50 job types, written through the real store (raw rows, the 10 s and 1 min
   roll-ups, the retention cut) with synthetic snapshots carrying their own timestamps, so a week takes minutes.
   `busy`: every figure of every type moves at every poll (the worst case for the file); `mixed`: 10 busy types,
   40 that are idle most of the time (zeros and unknown percentiles, as most types of a real queue are).
   Also the cost of one poll's write (51 rows, one transaction, in the writer thread). Goal: ≤ 50 MB.
2. poll-to-screen: the real dashboard on a real SQLite queue (50 types), from the start of a poll to the frame
   painted with its figures, with the history writer on and off, alternating blocks in one run. Goal: ≤ 5 %
   apart. Also how long the charts' reads of the file take for the long windows (1 h … 7 d), on the UI thread.

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

from queuetop.history_store import HistoryStore, decode_chunk  # noqa: E402
from queuetop.snapshot import TOTAL, Snapshot, TypeStats  # noqa: E402

START = datetime(2026, 11, 1)
GOAL_MB = 50.0
BATCH = 600  # polls per transaction while simulating (the size does not depend on it)


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
    batch: list = []
    for second in range(polls):
        rows = synthetic_rows(second, types, busy, rng)
        totals = TypeStats(TOTAL, depth=sum(r.depth for r in rows))
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
    print(f"   one poll's write ({types + 1} rows, its own transaction, writer thread): p50 {statistics.median(costs):.2f} ms"
          f", p95 {percentile(costs, 95):.2f} ms, max {max(costs):.1f} ms over {polls} polls "
          f"(roll-ups every 10 s and 60 s, the retention cut every 60 s included)")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description="queuetop history file: size after a week, write cost, "
                                                 "poll-to-screen with history on and off")  # fmt: skip
    parser.add_argument("--days", type=float, default=7.0, help="simulated days (default 7: the file is full)")
    parser.add_argument("--types", type=int, default=50, help="job types (default 50)")
    parser.add_argument("--skip-size", action="store_true", help="skip part 1")
    parser.add_argument("--skip-screen", action="store_true", help="skip part 2")
    parser.add_argument("--mixed-only", action="store_true", help="part 1: only the mixed profile")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="queuetop-history-bench-"))
    print(f"queuetop history bench — Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}; files in {folder}")  # fmt: skip
    if not args.skip_size:
        print(f"\n1. the history file after {args.days:g} simulated days (retention: raw 1 h, 10 s for 24 h, 1 min "
              f"for 7 d):")  # fmt: skip
        bench_write_cost(args.types, 600, folder)
        if not args.mixed_only:
            bench_size(args.days, args.types, args.types, folder)
        bench_size(args.days, args.types, min(10, args.types), folder)
    if not args.skip_screen:
        from bench.history_screen import bench_screen

        bench_screen(args.types)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
