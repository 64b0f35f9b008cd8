"""Scale past one screen (issue 24): what a warm poll costs with 100 … 10,000 job types, and how much of it is
Python around the statements.

A native queue with 10 pending jobs of each of N types (N = --types), on SQLite and PostgreSQL (a database of its
own: `queuetop_bench_types_<N>`), all arrived within the last minute so that every type has rates to compute. A
collector polls it once, waits for its full count, then `--polls` warm polls; each statement is timed where the
collector sends it, so the table prints the poll, its statements and the Python around them (poll ÷ statements:
goal ≤ 1.5), per N, side by side. Before each poll `--moving` types (100; the next ones in turn) get a job each
(outside the poll's time): a poll reads the types that moved as well as those that stand still. `--max-types`
measures the dashboard's fold too (the busiest N named, the rest one `(other)` row): 0 is every type.
`--tree PATH` imports queuetop from another checkout (a `git worktree` of an older commit), for the figures
before a change: run both and compare (`--max-types 0` for a tree older than the fold).

    .venv/bin/python bench/many_types.py                       # --types 100,1000,10000 --db sqlite,postgresql
    .venv/bin/python bench/many_types.py --tree /tmp/before --max-types 0   # an older tree's collector
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--types", default="100,1000,10000", help="numbers of job types (default 100,1000,10000)")
parser.add_argument("--db", default="sqlite,postgresql", help="sqlite, postgresql or both (default)")
parser.add_argument("--polls", type=int, default=10, help="warm polls per size (default 10)")
parser.add_argument("--moving", type=int, default=100,
                    help="types that get a new job before each poll (default 100; the rest stay as they are)")
parser.add_argument("--max-types", default="0,1000",
                    help="the dashboards' --max-types to measure, side by side (default 0,1000; 0: every type)")
parser.add_argument("--tree", help="import queuetop from this checkout instead of this one")
ARGS = parser.parse_args()
if ARGS.tree:  # before `common` imports queuetop: the editable install's finder would pick this checkout
    sys.meta_path = [finder for finder in sys.meta_path if "editable" not in repr(finder).lower()]
    sys.path.insert(0, ARGS.tree)
    import queuetop

from common import BENCH_DIR, load_average, ms, pg_database, print_table, ratio  # noqa: E402

import queuetop  # noqa: E402
from queuetop.db import Database, parse_target  # noqa: E402
from queuetop.layouts import NATIVE  # noqa: E402
from queuetop.layouts.schema import init_schema  # noqa: E402
from queuetop.watch.collector import collector_for  # noqa: E402


def prepare(db_kind: str, types: int) -> str:
    """A target whose queue holds 10 pending jobs of each of `types` types, made just now."""
    if db_kind == "sqlite":
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        text = str(BENCH_DIR / f"many_types_{types}.db")
    else:
        text = pg_database(f"queuetop_bench_types_{types}")
    with Database.open(parse_target(text), create=True) as db:
        init_schema(db, NATIVE)
        queue = db.dialect.qualify(NATIVE.schema, "WorkQueue")
        # PostgreSQL: no dead rows of an earlier run, and the planner's statistics of this one (a table filled just
        # now is not analyzed yet: its plans would scan what an index serves once autovacuum has been by)
        db.execute(f"{'DELETE FROM' if db_kind == 'sqlite' else 'TRUNCATE'} {queue}")
        db.execute(f"""WITH RECURSIVE qt_n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM qt_n WHERE i < {types * 10})
                       INSERT INTO {queue} ("JobType", "JobInfo")
                       SELECT 'type' || CAST(i % {types} AS varchar(8)), 'bench' FROM qt_n""")
        db.execute("ANALYZE")
    return text


def measure(text: str, types: int, polls: int, moving: int, max_types: int) -> tuple[float, float, int]:
    """p50 ms of a warm poll and of its statements, and the types it showed; before each poll, `moving` types
    (the next ones in turn) get a job each, so the poll reads what moved as well as what stands still."""
    with Database.open(parse_target(text)) as producer, Database.open(parse_target(text), purpose="monitor") as db:
        queue = producer.dialect.qualify(NATIVE.schema, "WorkQueue")
        insert = f'INSERT INTO {queue} ("JobType", "JobInfo") VALUES ({producer.dialect.placeholders(2)})'
        turn = 0
        collector = collector_for(db, NATIVE, **({"max_types": max_types} if max_types else {}))
        collector.poll()
        collector.settle()
        fetchall, spent = db.fetchall, [0.0]

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fetchall(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - started

        db.fetchall = timed  # type: ignore[method-assign]
        polls_ms, statements_ms, shown = [], [], 0
        for _ in range(polls):
            for _ in range(min(moving, types)):
                producer.execute(insert, (f"type{turn % types}", "bench"))
                turn += 1
            spent[0] = 0.0
            started = time.perf_counter()
            snapshot = collector.poll()
            polls_ms.append((time.perf_counter() - started) * 1000)
            statements_ms.append(spent[0] * 1000)
            shown = len(snapshot.types)
        return statistics.median(polls_ms), statistics.median(statements_ms), shown


def main() -> None:
    print(f"many types, queuetop from {queuetop.__file__}: {load_average()}")
    rows = []
    for db_kind in ARGS.db.split(","):
        for types in (int(float(n)) for n in ARGS.types.split(",")):
            for max_types in (int(n) for n in ARGS.max_types.split(",")):
                if max_types and max_types >= types:
                    continue  # nothing to fold: the same as every type
                poll, statements, shown = measure(prepare(db_kind, types), types, ARGS.polls, ARGS.moving, max_types)
                rows.append([db_kind, f"{types:,}", f"{shown:,}", ms(poll), ms(statements), ms(poll - statements),
                             ratio(poll, statements)])
    print_table(["database", "types", "named", "poll p50", "statements", "Python", "poll ÷ statements"], rows,
                f"warm poll, ms (p50 of {ARGS.polls}, {ARGS.moving} types moving before each; goal: poll < 100 ms "
                "at 10,000 types, poll ÷ statements ≤ 1.5)")
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
