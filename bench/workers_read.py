"""What one read of the workers panel costs (issue 11), and whether it stays flat as the history grows.

For each size N (rows in the completed table) and each database, the script builds a native queue in a schema or
file of its own: N finished jobs a day old, 1,000 finished in the last minute by 50 workers, and 500 claims in
flight (10 per worker, 100 of them past their timeout). It then times `read_workers` (the panel's read: the
claims in flight grouped by claimer, and the last minute of completions) `--reads` times on a monitor
connection and prints p50 and p95. The read touches only claimed rows and one minute of the completion index,
so its cost should not grow with N.

    .venv/bin/python bench/workers_read.py                      # 10^4 and 10^6, PostgreSQL and SQLite
    .venv/bin/python bench/workers_read.py --sizes 1e4 --db sqlite

Data: PostgreSQL schemas `bench_workers_1e4` ..., SQLite files /tmp/queuetop-bench/workers-1e4.db ...; built
afresh on every run (a few seconds at 10^6). The load average is printed beside the figures: the machine may be
shared, so repeat a run whose load was high.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from common import bench_layout, load_average, pg_target, recreate_pg_schema, sqlite_target

from queuetop.act.workers import read_workers
from queuetop.core.history import percentiles
from queuetop.db import Database
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.schema import init_schema
from queuetop.layouts.sql import Statements

WORKERS, IN_FLIGHT, TIMED_OUT, RECENT = 50, 500, 100, 1_000


def build(db: Database, layout: Layout, size: int) -> None:
    """N day-old completions, RECENT in the last minute, IN_FLIGHT claims (TIMED_OUT of them past their timeout)."""
    d, pg = db.dialect, db.dialect.name == "postgresql"
    n = Statements(d, layout).names()

    def ago(seconds: str) -> str:  # a time `seconds` (an SQL expression) before now, in the native UTC clock
        if pg:
            return f"((clock_timestamp() AT TIME ZONE 'UTC') - ({seconds}) * INTERVAL '1 second')"
        return f"strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || ({seconds}) || ' seconds')"

    def series(count: int, body: str) -> str:
        if pg:
            return f"SELECT {body} FROM generate_series(1, {count}) AS s(i)"
        return f"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {count}) SELECT {body} FROM s"

    columns = (f"{n['c_id']}, {n['c_type']}, {n['c_created']}, {n['c_claimed_at']}, {n['c_completed']}, "
               f"{n['c_claimed_by']}, {n['c_attempts']}, {n['c_outcome']}")
    worker = f"'w-' || (i % {WORKERS})"
    with db.transaction():
        db.execute(f"INSERT INTO {n['completed']} ({columns}) " + series(
            size, f"i, 'type-' || (i % 20), {ago('86400 + 2')}, {ago('86400 + 1')}, {ago('86400')}, {worker}, 1, "
                  "'succeeded'"))
        db.execute(f"INSERT INTO {n['completed']} ({columns}) " + series(
            RECENT, f"{size} + i, 'type-' || (i % 20), {ago('i % 60 + 2')}, {ago('i % 60 + 0.2')}, {ago('i % 60')}, "
                    f"{worker}, 1, CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'succeeded' END"))
        db.execute(f"INSERT INTO {n['queue']} ({n['type']}, {n['created']}, {n['available']}, {n['claimed_at']}, "
                   f"{n['claimed_by']}, {n['timeout']}, {n['attempts']}) " + series(
                       IN_FLIGHT, f"'type-' || (i % 20), {ago('20')}, {ago('20')}, {ago('10')}, {worker}, "
                                  f"CASE WHEN i <= {TIMED_OUT} THEN {ago('1')} ELSE {ago('-600')} END, 1"))
    if pg:
        db.execute(f"ANALYZE {n['completed']}")
        db.execute(f"ANALYZE {n['queue']}")


def measure(db: Database, layout: Layout, reads: int) -> tuple[float | None, float | None, int]:
    times, seen = [], 0
    for _ in range(reads):
        started = time.perf_counter()
        view = read_workers(db, layout)
        times.append((time.perf_counter() - started) * 1000)
        seen = len(view.workers)
        time.sleep(0.05)
    p50, p95 = percentiles(times, (50, 95))
    return p50, p95, seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e6", help="completed rows, comma-separated (default 1e4,1e6)")
    parser.add_argument("--db", choices=("both", "sqlite", "postgres"), default="both")
    parser.add_argument("--reads", type=int, default=30, help="reads timed per size (default 30)")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    print(f"workers panel read ({WORKERS} workers, {IN_FLIGHT} claims in flight, {RECENT} completions in the last "
          f"minute); {load_average()}")
    print(f"{'database':10} {'completed rows':>15} {'p50 ms':>8} {'p95 ms':>8} {'workers':>8}")
    for name in ("postgres", "sqlite"):
        if args.db not in ("both", name):
            continue
        for size in sizes:
            tag = f"{size:.0e}".replace("+0", "").replace("+", "")
            if name == "postgres":
                target, layout = pg_target(), bench_layout(f"bench_workers_{tag}")
                with Database.open(target) as db:
                    recreate_pg_schema(db, layout)
                    build(db, layout, size)
            else:
                target, layout = sqlite_target(f"workers-{tag}.db"), NATIVE
                Path(target.value).unlink(missing_ok=True)
                with Database.open(target, create=True) as db:
                    init_schema(db, layout)
                    build(db, layout, size)
            with Database.open(target, purpose="monitor") as db:
                p50, p95, seen = measure(db, layout, args.reads)
            print(f"{name:10} {size:>15,} {p50:>8.1f} {p95:>8.1f} {seen:>8}")
    print(load_average())


if __name__ == "__main__":
    main()
