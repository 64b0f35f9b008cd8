"""The first look at a deep queue (issue 24): does the first poll, and `queuetop stats` as a whole process, cost
the same at 10⁶ pending jobs as at 10³?

Per database (PostgreSQL, SQLite) and size, a native queue of that many pending jobs of 20 types, created over
the last hour (a backlog that built up, as a sick queue's does), in a database of its own (PostgreSQL:
`queuetop_bench_first_<size>`; SQLite: a file under the bench directory), kept for later runs. Then, side by side
in one run:

- the first poll of a fresh collector on a fresh connection, with the first look (a sample where the queue is
  deep, `watch/firstlook.py`) and told to count every row (`first_look=False`, what `check` and `stats --exact`
  do; before the first look, every first poll did this), p50 of `--runs`;
- `queuetop stats` and `queuetop stats --exact` as whole processes (start-up, imports, connection, poll,
  printing), p50 wall time of `--runs`, beside `queuetop --version`;
- the ratios: each figure at the largest size ÷ at the smallest (goal: the first poll ≤ 100 ms at 10⁶, `stats`
  within 1.5× of itself at 10³), and how far the estimate was from the exact depth.
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import BENCH_DIR, QUEUETOP, load_average, ms, pg_database, print_table, process_ms, ratio

from queuetop.db import Database, parse_target
from queuetop.layouts import NATIVE
from queuetop.layouts.schema import init_schema
from queuetop.watch.collector import collector_for

TYPES = 20


def prepare(db_kind: str, size: int) -> str:
    """The target holding `size` pending jobs, built unless it already does."""
    if db_kind == "postgresql":
        text = pg_database(f"queuetop_bench_first_{size}")
    else:
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        text = str(BENCH_DIR / f"first_look_{size}.db")
    with Database.open(parse_target(text), create=True) as db:
        init_schema(db, NATIVE)
        queue = db.dialect.qualify(NATIVE.schema, "WorkQueue")
        (have,) = db.fetchone(f"SELECT COUNT(*) FROM {queue}")
        if have == size:
            return text
        db.execute(f"DELETE FROM {queue}")
        # created over the last hour, the oldest first (PostgreSQL's clock and SQLite's text, both UTC)
        ago = f"3600.0 * (1.0 - i / {size}.0)"
        created = (f"strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || ({ago}) || ' seconds')" if db_kind == "sqlite"
                   else f"(now() AT TIME ZONE 'UTC') - make_interval(secs => {ago})")
        print(f"  building {size:,} pending jobs on {db_kind} …", flush=True)
        db.execute(f"""WITH RECURSIVE qt_n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM qt_n WHERE i < {size})
                       INSERT INTO {queue} ("JobType", "JobInfo", "CreatedDate", "AvailableDate")
                       SELECT 'type' || CAST(i % {TYPES} AS varchar(8)), 'bench', {created}, {created} FROM qt_n""")
        db.execute("VACUUM ANALYZE" if db_kind == "postgresql" else "ANALYZE")
    return text


def first_polls(text: str, runs: int, first_look: bool) -> tuple[list[float], int, bool]:
    """Wall ms of the first poll of a fresh collector on a fresh connection; the last one's depth and whether it
    was an estimate."""
    times, depth, estimate = [], 0, False
    for _ in range(runs):
        with Database.open(parse_target(text), purpose="monitor") as db:
            collector = collector_for(db, NATIVE, first_look=first_look)
            started = time.perf_counter()
            snapshot = collector.poll()
            times.append((time.perf_counter() - started) * 1000)
            depth, estimate = snapshot.totals.depth, snapshot.totals.depth_is_estimate
            collector.settle()  # its background counts end before the next run begins
    return times, depth, estimate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1e3,1e6", help="pending jobs, comma-separated (default 1e3,1e6)")
    parser.add_argument("--db", default="postgresql,sqlite", help="postgresql, sqlite or both (default)")
    parser.add_argument("--runs", type=int, default=7, help="runs of each measurement (default 7)")
    args = parser.parse_args()
    sizes = [int(float(size)) for size in args.sizes.split(",")]
    print(f"first look: {load_average()}")
    version = statistics.median(process_ms([QUEUETOP, "--version"], args.runs))
    rows, by = [], {}
    for db_kind in args.db.split(","):
        for size in sizes:
            text = prepare(db_kind, size)
            look, depth, estimate = first_polls(text, args.runs, True)
            exact, true_depth, _ = first_polls(text, args.runs, False)
            stats = process_ms([QUEUETOP, "stats", "--db", text], args.runs)
            stats_exact = process_ms([QUEUETOP, "stats", "--exact", "--db", text], args.runs)
            figures = [statistics.median(v) for v in (look, exact, stats, stats_exact)]
            by[db_kind, size] = figures
            error = f"{100 * (depth - true_depth) / true_depth:+.1f} %" if estimate else "exact"
            rows.append([db_kind, f"{size:,}", *(ms(v) for v in figures), ratio(figures[1], figures[0]), error])
    print_table(["database", "pending", "first poll", "first poll, every row", "stats", "stats --exact",
                 "every row ÷ first look", "estimate vs exact"], rows,
                f"p50 ms of {args.runs} runs (queuetop --version: {version:.0f} ms)")
    ratios = []
    for db_kind in args.db.split(","):
        small, large = by[db_kind, sizes[0]], by[db_kind, sizes[-1]]
        ratios.append([db_kind, *(ratio(b, a) for a, b in zip(small, large, strict=True))])
    print_table(["database", "first poll", "first poll, every row", "stats", "stats --exact"], ratios,
                f"{sizes[-1]:,} ÷ {sizes[0]:,} pending (goal: stats ≤ 1.5)")
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
