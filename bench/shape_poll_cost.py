"""Poll cost vs size for the seeds' own tables: what does one poll of each layout preset cost at 10^4 … 10^7 rows?

For each preset (`--layout`, default all five seed shapes), database and size, the script creates the seed's table
with the seed's own DDL (tests/seedshapes.py), fills it in bulk with a realistic mix, and measures the warm poll of
queuetop's collector for that shape (`ShapeCollector.poll`), `--polls` times, each after a round of activity
through the seed's own enqueue / dequeue / completion on a second connection. It prints the first poll,
`queuetop stats` on the table as a whole process, p50 and p95 per size, the ratio p50(10^7)/p50(10^4) (or of the
largest size run), and the depth error against a count made right after. Then, for the shapes whose seed has no
index that makes the poll cheap, the same with the index that fixes it (`--with-index`), so the cost of going
without is a figure, not a guess.

The mix, at N rows, as a FIFO queue has it: the newest 10 % waiting, the rest finished, spread over the last
hour; job_queue also has 500 claims in flight just before the backlog (100 past their timeout), dead jobs
(0.1 % of the newest fifth) and 1 % scheduled for later; requests 1 % lost; queuesample 20 GUID job types.

    .venv/bin/python bench/shape_poll_cost.py                         # every seed shape, 1e4..1e6, both dbs
    .venv/bin/python bench/shape_poll_cost.py --layout job_queue --sizes 1e4,1e7 --db postgres
    .venv/bin/python bench/shape_poll_cost.py --with-index            # also with the index each seed lacks
    .venv/bin/python bench/shape_poll_cost.py --advised               # also with the indexes doctor advises

Data: PostgreSQL schemas `bench_shape_<preset>_<size>` and SQLite files /tmp/queuetop-bench/shape-*.db, built
afresh each run (a build of 10^7 rows takes a minute or two per shape and database).
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from common import (
    BENCH_DIR,
    FIXING_INDEX,
    PG_TARGET_TEXT,
    QUEUETOP,
    create_advised_indexes,
    create_fixing_index,
    load_average,
    ms,
    p50_p95,
    print_table,
    process_ms,
    ratio,
)

from queuetop.db import Database, QueuetopError, parse_target
from queuetop.layouts import Layout, load_layout, with_tables
from queuetop.watch.collector import ShapeCollector
from tests.seedshapes import SeedTables, create_seed, drop_seed, finish, pop, push

SHAPES = ("queuesample", "requests", "work_queue", "processed", "job_queue")
SIZES = {"1e3": 10**3, "1e4": 10**4, "1e5": 10**5, "1e6": 10**6, "1e7": 10**7}
GUIDS = [f"{i:08X}-0000-4000-8000-000000000000" for i in range(20)]
WAITING = 0.10
GOAL_P50_MS, GOAL_RATIO = 20.0, 2.0


OWN, FIXING, ADVISED = "seed's own", "+ bench's", "+ doctor's"  # the indexes a run has


@dataclass
class Result:
    shape: str
    db: str
    size: str
    indexes: str  # "seed's own", "+ bench's" (FIXING_INDEX) or "+ doctor's" (the preset's [[advice]])
    polls_ms: list[float]
    depth_error: int
    first_ms: float  # the first poll: its full count (or first look), a dashboard's (its wait for no state included)
    stats_ms: float  # `queuetop stats` on the table as a whole process (start, imports, connection, poll), p50 of 3


def fill_sql(kind: str, shape: str, tables: SeedTables, q: dict[str, str], n: int) -> list[str]:
    """Bulk INSERT ... SELECT statements making the mix for `shape` at n rows."""
    series = (f"generate_series(1, {n}) AS g(i)" if kind == "postgres" else
              f"(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {n}) SELECT i FROM s) AS g")
    ago = ((lambda secs: f"(LOCALTIMESTAMP - ({secs}) * INTERVAL '1 second')") if kind == "postgres" else
           (lambda secs: f"strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime', printf('%+.3f seconds', -({secs})))"))
    waiting = f"(g.i > {round(n * (1 - WAITING))})"  # a FIFO queue: the backlog is the newest rows
    t = q["queue"]
    if shape == "queuesample":
        guid = ("CAST(lpad(to_hex(g.i % 20), 8, '0') || '-0000-4000-8000-000000000000' AS uuid)" if kind == "postgres"
                else "printf('%08X-0000-4000-8000-000000000000', g.i % 20)")
        return [f'INSERT INTO {t} ("JobType", "JobInfo", "CreatedDate", "RetrievedDate") SELECT {guid}, '
                f"{'CAST(' if kind == 'postgres' else ''}'<info/>'{' AS xml)' if kind == 'postgres' else ''}, "
                f"{ago('3600 - g.i * 3600.0 / ' + str(n))}, CASE WHEN {waiting} THEN NULL ELSE "
                f"{ago('3600 - g.i * 3600.0 / ' + str(n) + ' - 0.5')} END FROM {series}"]
    if shape == "requests":
        guid = "gen_random_uuid()" if kind == "postgres" else "upper(hex(randomblob(16)))"
        c = q["completed"]
        return [
            f'INSERT INTO {t} ("id", "request", "InsertedDate") SELECT {guid}, \'r\', {ago("g.i * 0.01")} '
            f"FROM {series} WHERE {waiting}",
            f'INSERT INTO {c} ("id", "request", "InsertedDate", "RemovedDate", "CompletedDate") SELECT {guid}, \'r\', '
            f"{ago('3600 - g.i * 3600.0 / ' + str(n))}, {ago('3599 - g.i * 3600.0 / ' + str(n))}, "
            f"CASE WHEN g.i % 100 = 1 THEN NULL ELSE {ago('3598 - g.i * 3600.0 / ' + str(n))} END "
            f"FROM {series} WHERE NOT {waiting}",
        ]
    if shape in ("work_queue", "processed"):
        name, flag = ('"name"', '"processed_flag"') if shape == "work_queue" else ('"COMMAND"', '"PROCESSED"')
        value = (f"CASE WHEN {waiting} THEN false ELSE true END" if kind == "postgres" else
                 f"CASE WHEN {waiting} THEN 0 ELSE 1 END")
        return [f"INSERT INTO {t} ({name}, {flag}) SELECT 'x', {value} FROM {series}"]
    # job_queue: waiting, claimed (500, 100 of them timed out), dead (0.1 %), scheduled (1 %), the rest done
    start = ago("3600 - g.i * 3600.0 / " + str(n))
    mark = "gen_random_uuid()" if kind == "postgres" else "hex(randomblob(16))"
    dead = f"(g.i % 1000 = 1 AND g.i > {round(n * 0.8)})"  # recent: old dead jobs would widen every poll's range
    return [
        f'INSERT INTO {t} ("Priority", "Available_Date", "Attempts", "Last_Attempt_Start_Date", '
        f'"Last_Attempt_End_Date", "Timeout_Date", "Processing_Mark", "Payload") SELECT g.i % 3 * 50, {start}, '
        f"CASE WHEN {waiting} THEN 0 WHEN {dead} THEN 3 ELSE 1 END, "
        f"CASE WHEN {waiting} THEN NULL ELSE {start} END, "
        f"CASE WHEN {waiting} OR {dead} THEN NULL ELSE {start} END, "
        f"CASE WHEN {waiting} THEN NULL ELSE {start} END, "
        f"CASE WHEN {waiting} THEN NULL ELSE {mark} END, "
        f"'p' FROM {series}",
        f'UPDATE {t} SET "Available_Date" = {ago("-600")} WHERE "ID" % 100 = 0',  # 1 %: scheduled for later
        f'UPDATE {t} SET "Processing_Mark" = {mark}, '
        f'"Attempts" = 1, "Last_Attempt_Start_Date" = {ago("1")}, "Timeout_Date" = '
        f'CASE WHEN "ID" % 5 = 0 THEN {ago("1")} ELSE {ago("-900")} END, "Last_Attempt_End_Date" = NULL '
        f'WHERE "ID" IN (SELECT "ID" FROM {t} WHERE "Attempts" = 1 ORDER BY "ID" DESC LIMIT 500)',
    ]


def build(kind: str, shape: str, size: str, indexes: str) -> tuple[Database, SeedTables, Layout]:
    tag = f"{shape}_{size}{'' if indexes == OWN else '_ix'}"
    if kind == "postgres":
        target = parse_target(PG_TARGET_TEXT)
        db = Database.open(target, purpose="bulk")  # a build of 10^7 rows outlasts any statement timeout
        db.execute(f'DROP SCHEMA IF EXISTS "bench_shape_{tag}" CASCADE')
        tables = create_seed(db, shape, schema=f"bench_shape_{tag}")
    else:
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        path = BENCH_DIR / f"shape-{tag}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        db = Database.open(parse_target(f"sqlite:{path}"), create=True, purpose="bulk")
        tables = create_seed(db, shape)
    q = {"queue": db.dialect.qualify(tables.schema, tables.queue)}
    if tables.completed:
        q["completed"] = db.dialect.qualify(tables.schema, tables.completed)
    for statement in fill_sql(kind, shape, tables, q, SIZES[size]):
        db.execute(statement)
    queue = f"{tables.schema}.{tables.queue}" if tables.schema else tables.queue
    layout = with_tables(load_layout(shape), queue, tables.completed)
    if indexes == FIXING:
        create_fixing_index(db, shape, tables.schema)
    elif indexes == ADVISED:
        create_advised_indexes(db, layout)
    if kind == "postgres":  # what autovacuum has done by the time anyone watches a table: its visibility map set
        # (just after the bulk load an index-only scan reads every row's heap page: requests at 10^7 with doctor's
        # indexes, ~170 ms a poll counting its 100,000 lost claims, 17-33 ms after a VACUUM)
        for table in filter(None, (tables.queue, tables.completed)):
            db.execute(f"VACUUM (ANALYZE) {db.dialect.qualify(tables.schema, table)}")
    else:
        db.execute("ANALYZE")
    return db, tables, layout


def activity(db: Database, tables: SeedTables, shape: str, per_round: int) -> None:
    """One interval's worth of the seed's own work: arrivals, claims and completions."""
    for i in range(per_round):
        push(db, tables, job_type=GUIDS[i % len(GUIDS)] if shape == "queuesample" else None, payload="<info/>")
    for i in range(per_round):
        for job in pop(db, tables, "bench", job_type=GUIDS[i % len(GUIDS)] if shape == "queuesample" else None):
            finish(db, tables, job)


def measure(kind: str, shape: str, size: str, polls: int, interval: float, per_round: int, indexes: str) -> Result:
    db, tables, layout = build(kind, shape, size, indexes)
    try:
        target = db.target
        with Database.open(target, purpose="monitor") as monitor:
            collector = ShapeCollector(monitor, layout)
            started = time.perf_counter()
            collector.poll()  # the first poll looks back one window
            first_ms = (time.perf_counter() - started) * 1000
            times = []
            for _ in range(polls):
                activity(db, tables, shape, per_round)
                time.sleep(interval)
                started = time.perf_counter()
                snapshot = collector.poll()
                times.append((time.perf_counter() - started) * 1000)
            recount = ShapeCollector(monitor, layout).poll()
        error = abs(snapshot.totals.depth - recount.totals.depth)
        text = PG_TARGET_TEXT if kind == "postgres" else f"sqlite:{target.value}"
        tables_args = ["--table", f"{tables.schema}.{tables.queue}" if tables.schema else tables.queue,
                       *(["--completed-table", tables.completed] if tables.completed else [])]
        stats = statistics.median(process_ms([QUEUETOP, "stats", "--db", text, "--layout", shape, *tables_args], 3))
        return Result(shape, kind, size, indexes, times, error, first_ms, stats)
    finally:
        drop_seed(db, tables)
        db.close()


def report(results: list[Result]) -> None:
    rows = []
    for r in results:
        p50, p95 = p50_p95(r.polls_ms)
        rows.append([r.shape, r.db, r.size, r.indexes, ms(r.first_ms), ms(r.stats_ms), ms(p50), ms(p95),
                     ms(statistics.mean(r.polls_ms)), r.depth_error])
    print_table(["layout", "db", "rows", "indexes", "first poll", "stats (process)", "p50 ms", "p95 ms", "mean ms",
                 "depth error"], rows, f"Poll cost per shape ({load_average()})")  # fmt: skip
    goal_rows = []
    for shape in dict.fromkeys(r.shape for r in results):
        for kind in dict.fromkeys(r.db for r in results):
            for indexes in (OWN, FIXING, ADVISED):
                runs = [r for r in results if (r.shape, r.db, r.indexes) == (shape, kind, indexes)]
                if len(runs) < 2:
                    continue
                small, big = runs[0], runs[-1]
                p_small, p_big = p50_p95(small.polls_ms)[0], p50_p95(big.polls_ms)[0]
                met = "yes" if p_big is not None and p_big <= GOAL_P50_MS and p_small and \
                    p_big / p_small <= GOAL_RATIO else "no"
                goal_rows.append([shape, kind, indexes, f"{big.size}/{small.size}",
                                  ms(p_big), ratio(p_big, p_small), met])
    print_table(["layout", "db", "indexes", "sizes", "p50 at largest", "ratio", "goal met"], goal_rows,
                f"Goals: p50 ≤ {GOAL_P50_MS:g} ms at the largest size, ratio ≤ {GOAL_RATIO:g}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layout", default=",".join(SHAPES), help="presets, comma-separated (default: all seeds)")
    parser.add_argument("--sizes", default="1e4,1e5,1e6", help="from 1e3,1e4,1e5,1e6,1e7 (default 1e4,1e5,1e6)")
    parser.add_argument("--db", default="postgres,sqlite", help="postgres, sqlite or both")
    parser.add_argument("--polls", type=int, default=10, help="warm polls per size (default 10)")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between polls (default 0.2)")
    parser.add_argument("--activity", type=int, default=50, help="jobs enqueued and processed per interval")
    parser.add_argument("--with-index", action="store_true", help="also run with the index each seed lacks")
    parser.add_argument("--advised", action="store_true",
                        help="also run with the indexes `queuetop doctor` advises (the preset's [[advice]])")
    parser.add_argument("--only-advised", action="store_true",
                        help="only with the indexes doctor advises (a 10^7 build takes minutes: skip the other)")
    args = parser.parse_args(argv)
    results = []
    for shape in args.layout.split(","):
        for kind in args.db.split(","):
            variants = [OWN, *([FIXING] if args.with_index and any(FIXING_INDEX[shape]) else []),
                        *([ADVISED] if (args.advised or args.only_advised) and load_layout(shape).advice else [])]
            if args.only_advised:
                variants = [ADVISED] if load_layout(shape).advice else []
            for indexes in variants:
                for size in args.sizes.split(","):
                    started = time.perf_counter()
                    try:
                        result = measure(kind, shape, size, args.polls, args.interval, args.activity, indexes)
                    except QueuetopError as exc:  # a poll over the statement timeout: the figure is the timeout
                        print(f"{shape} {kind} {size} ({indexes}): {exc}", flush=True)
                        continue
                    results.append(result)
                    print(f"{shape} {kind} {size} ({indexes}): p50 "
                          f"{ms(p50_p95(result.polls_ms)[0])} ms ({time.perf_counter() - started:.0f} s)", flush=True)
    report(results)


if __name__ == "__main__":
    main()
