"""Poll cost vs size (issue 4, benchmark 3; issue 2's poll latency): does one poll stay cheap as the tables grow?

For each size (total rows in the queue and completed tables together) and each database, the script builds a
queue once (INSERT ... SELECT from generate_series / a recursive CTE, then the native indexes, then VACUUM
ANALYZE on PostgreSQL) and keeps it for later runs. Then it measures, on a monitor connection:

- the first poll (the bootstrap: highest id, a window of arrivals and completions, the counts), once, after
  a minute of finished jobs is written at the activity's rate (bench SQL), so that the first poll reads a full
  window and every later one carries it, as a monitor does once it has run for a minute;
- `--polls` warm polls, one per `--interval` (1 s, the dashboard's pace), each after a round of activity on
  a second connection (300 arrivals and 250 claims + completions of priority-0 jobs, so the watermark reads
  have something to read and the prebuilt rows are never touched), reported as p50 and p95, with the p50 of
  each statement inside the poll;
- a naive monitor: `SELECT JobType, COUNT(*)` over both tables, grouped, as a dashboard that counts would.

The mix, at N rows: 500 claims in flight (a fleet's worth, whatever the history: 100 of them timed out,
not yet released), a pending backlog of 10 % of N (5 % of it delayed for a retry), and the rest completed
(0.1 % dead, 1 % failed). 50 job types with a skewed share (type-00 ≈ 14 %, type-49 ≈ 1 %). Goals (issue 4):
p50 ≤ 20 ms at 10^7 rows and p50(10^7) / p50(10^4) ≤ 2.

    .venv/bin/python bench/poll_cost.py                      # 10^4 .. 10^7, PostgreSQL and SQLite
    .venv/bin/python bench/poll_cost.py --no-1e7 --db sqlite # quicker
    .venv/bin/python bench/poll_cost.py --explain 1e6,1e7    # plans of every poll statement at those sizes
    .venv/bin/python bench/poll_cost.py --profile --sizes 1e4 --db sqlite  # the warm polls' Python by function
    .venv/bin/python bench/poll_cost.py --rebuild            # build the data again
    .venv/bin/python bench/poll_cost.py --tag _b             # a second copy of the data (another index set)
    .venv/bin/python bench/poll_cost.py --layout job_queue   # a seed's own table (bench/shape_poll_cost.py)

It prints, per database and size: the first poll, p50 and p95 of the warm polls, the naive query and its
ratio to the poll, how many depths the last poll marked as estimates (≈) and how far the depths shown were
from a count made right after (they should be 0); then each statement's p50, the first poll's statements,
and the goals with the ratio p50(10^7)/p50(10^4). The load average is printed throughout: the machine may be
shared, so repeat a run whose load was high.

Data: PostgreSQL schemas `bench_poll_1e4` ... (env QUEUETOP_BENCH_PG names the server), SQLite files
/tmp/queuetop-bench/poll-1e4.db ... (env QUEUETOP_BENCH_DIR). Built once (about 3 minutes for 10^7 on both),
reused while the mix is the same; each run first removes what the last one added. If the code defines the
native indexes differently from the build, they are remade, so the same rows serve a before and an after.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import pstats
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from common import (
    bench_layout,
    load_average,
    ms,
    p50_p95,
    pg_target,
    print_table,
    ratio,
    sqlite_target,
)

from queuetop.act.queue import Queue
from queuetop.db import Database, Target
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.schema import init_schema
from queuetop.layouts.sql import Statements
from queuetop.watch.collector import WINDOW_S, ShapeCollector, collector_for

SIZES = {"1e4": 10**4, "1e5": 10**5, "1e6": 10**6, "1e7": 10**7}
TYPES = 50
CLAIMED = 500  # claims in flight: bounded by the fleet, not by the history
TIMED_OUT_EVERY = 5  # one claim in five is past its timeout
PENDING_SHARE = 0.10
COMPLETION_RATE = 200.0  # completed rows are spread back in time at this many per second
HISTORY_ENDS_S = 600.0  # the prebuilt history ends 10 minutes before the build, out of any rate window
BACKLOG_SPAN_S = 3600.0  # the pending backlog built up over the last hour
ACTIVITY_PRIORITY = 0  # activity jobs are claimed before any prebuilt row (priorities 64, 128, 200)
GOAL_P50_MS = 20.0
GOAL_RATIO = 2.0

# The statements of a poll, by what they are (`statement_name`), in the order the tables show them.
READS = ("poll", "sample", "new types' heads", "counts", "highest id", "other")


# -- the data ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mix:
    rows: int
    pending: int
    claimed: int
    completed: int

    @classmethod
    def for_rows(cls, rows: int) -> Mix:
        claimed = min(CLAIMED, rows // 10)
        pending = int(rows * PENDING_SHARE)
        return cls(rows, pending, claimed, rows - pending - claimed)

    @property
    def signature(self) -> str:
        """Changes whenever the generator would make different data: a stored build is reused only if equal."""
        return (f"v2 rows={self.rows} pending={self.pending} claimed={self.claimed} types={TYPES} "
                f"rate={COMPLETION_RATE} span={BACKLOG_SPAN_S} ends={HISTORY_ENDS_S}")  # fmt: skip


# Multiplicative hashes of the row number: the same pseudo-random data in both databases, no RNG state.
_HASHES = ((2654435761, 0), (2246822519, 374761393), (3266489917, 668265263), (2028178513, 1013904223))


class Fill:
    """The SQL pieces that differ between PostgreSQL and SQLite when generating rows."""

    def series(self, first: int, last: int) -> tuple[str, str]:
        """(prefix, FROM source) producing column i = first..last."""
        raise NotImplementedError

    def real(self, integer_sql: str) -> str:
        raise NotImplementedError

    def at(self, seconds_before: str) -> str:
        """The timestamp `seconds_before` seconds before the build's t0 (negative: after)."""
        raise NotImplementedError

    def type_name(self, u: str) -> str:
        raise NotImplementedError

    def token(self) -> str:
        raise NotImplementedError

    def u(self, k: int) -> str:
        multiplier, offset = _HASHES[k]
        return self.real(f"((i * {multiplier} + {offset}) % 4294967296)") + " / 4294967296"


class PostgresFill(Fill):
    def __init__(self, t0: datetime) -> None:
        self.t0 = t0.isoformat(sep=" ", timespec="milliseconds")

    def series(self, first: int, last: int) -> tuple[str, str]:
        return "", f"generate_series(CAST({first} AS bigint), CAST({last} AS bigint)) AS g(i)"

    def real(self, integer_sql: str) -> str:
        return f"CAST({integer_sql} AS float8)"

    def at(self, seconds_before: str) -> str:
        return f"CAST(TIMESTAMP '{self.t0}' - ({seconds_before}) * INTERVAL '1 second' AS timestamp(3))"

    def type_name(self, u: str) -> str:
        return f"'type-' || lpad(CAST(CAST(floor({TYPES} * {u} * {u}) AS int) AS text), 2, '0')"

    def token(self) -> str:
        return "CAST(md5(CAST(i AS text)) AS uuid)"


class SQLiteFill(Fill):
    def __init__(self, t0: datetime) -> None:
        self.epoch = (t0 - datetime(1970, 1, 1)).total_seconds()

    def series(self, first: int, last: int) -> tuple[str, str]:
        return f"WITH RECURSIVE g(i) AS (SELECT {first} UNION ALL SELECT i + 1 FROM g WHERE i < {last}) ", "g"

    def real(self, integer_sql: str) -> str:
        return f"({integer_sql} * 1.0)"

    def at(self, seconds_before: str) -> str:
        return f"strftime('%Y-%m-%d %H:%M:%f', {self.epoch} - ({seconds_before}), 'unixepoch')"

    def type_name(self, u: str) -> str:
        return f"printf('type-%02d', CAST({TYPES} * {u} * {u} AS INTEGER))"

    def token(self) -> str:
        return "printf('%08x-0000-4000-8000-%012x', i, i)"


def fill_statements(fill: Fill, n: dict[str, str], mix: Mix) -> list[str]:
    """INSERT ... SELECT statements making the completed history, the pending backlog and the claims."""
    c, p = mix.completed, mix.pending
    prefix, source = fill.series(1, c)
    completed = f"""{prefix}INSERT INTO {n['completed']} ({n['c_id']}, {n['c_type']}, {n['c_created']},
            {n['c_claimed_at']}, {n['c_completed']}, {n['c_claimed_by']}, {n['c_attempts']}, {n['c_outcome']})
        SELECT i, {fill.type_name('ua')}, {fill.at('done + work + wait')}, {fill.at('done + work')}, {fill.at('done')},
               'worker-' || (i % 64), CASE WHEN i % 1000 = 7 THEN 3 ELSE 1 END,
               CASE WHEN i % 1000 = 7 THEN 'dead' WHEN i % 100 = 3 THEN 'failed' ELSE 'succeeded' END
        FROM (SELECT i, {fill.u(0)} AS ua, {fill.u(1)} * 2.0 AS work, {fill.u(2)} * 30.0 AS wait,
                     {fill.real(f'({c} - i)')} / {COMPLETION_RATE} + {HISTORY_ENDS_S} AS done FROM {source}) AS s"""
    prefix, source = fill.series(c + 1, c + p)
    pending = f"""{prefix}INSERT INTO {n['queue']} ({n['id']}, {n['type']}, {n['info']}, {n['priority']},
            {n['created']}, {n['available']}, {n['created_by']}, {n['attempts']})
        SELECT i, {fill.type_name('ua')}, '{{"order": ' || i || '}}',
               CASE WHEN ub < 0.05 THEN 64 WHEN ub < 0.10 THEN 200 ELSE 128 END,
               {fill.at('age')}, CASE WHEN uc < 0.05 THEN {fill.at('-600.0')} ELSE {fill.at('age')} END,
               'bench', CASE WHEN uc < 0.05 THEN 1 ELSE 0 END
        FROM (SELECT i, {fill.u(0)} AS ua, {fill.u(1)} AS ub, {fill.u(2)} AS uc,
                     {fill.real(f'({c + p} - i)')} * {BACKLOG_SPAN_S / max(p, 1)} AS age FROM {source}) AS s"""
    prefix, source = fill.series(c + p + 1, c + p + mix.claimed)
    claimed = f"""{prefix}INSERT INTO {n['queue']} ({n['id']}, {n['type']}, {n['info']}, {n['priority']},
            {n['created']}, {n['available']}, {n['created_by']}, {n['claimed_at']}, {n['claimed_by']},
            {n['token']}, {n['timeout']}, {n['attempts']})
        SELECT i, {fill.type_name('ua')}, '{{"order": ' || i || '}}', 128, {fill.at('held + wait')},
               {fill.at('held + wait')}, 'bench', {fill.at('held')}, 'worker-' || (i % 64), {fill.token()},
               CASE WHEN late THEN {fill.at('held - 30.0')} ELSE {fill.at('-86400.0')} END,
               CASE WHEN late THEN 1 + i % 3 ELSE 1 END
        FROM (SELECT i, ua, wait, late, CASE WHEN late THEN 30.0 + ub * 600.0 ELSE ub * 20.0 END AS held
              FROM (SELECT i, {fill.u(0)} AS ua, {fill.u(1)} AS ub, {fill.u(2)} * 30.0 AS wait,
                           i % {TIMED_OUT_EVERY} = 0 AS late FROM {source}) AS r) AS s"""
    return [completed, pending, claimed]


@dataclass
class Dataset:
    kind: str  # postgres | sqlite
    label: str
    target: Target
    layout: Layout
    mix: Mix
    base_max_id: int = 0
    built_s: float | None = None  # None: reused
    note: str = "reused"


def dataset_for(kind: str, label: str, tag: str = "") -> Dataset:
    mix = Mix.for_rows(SIZES[label])
    if kind == "postgres":
        return Dataset(kind, label, pg_target(), bench_layout(f"bench_poll_{label}{tag}"), mix)
    return Dataset(kind, label, sqlite_target(f"poll-{label}{tag}.db"), NATIVE, mix)


def meta_table(data: Dataset, name: str = "bench_meta") -> str:
    return f'"{data.layout.schema}".{name}' if data.kind == "postgres" else name


def prepare(data: Dataset, rebuild: bool) -> None:
    """Reuse the stored build if it matches the mix (putting back what a past run added, and remaking the
    indexes if the code defines them differently from the build), else build it."""
    if not rebuild:
        stored = _stored_build(data)
        if stored is not None:
            data.base_max_id = stored
            with Database.open(data.target) as db:
                restore(db, data)
                if refresh_indexes(db, data):
                    data.note = "reused, indexes remade"
            return
    started = time.perf_counter()
    build(data)
    data.built_s = time.perf_counter() - started
    data.note = f"built in {data.built_s:.0f} s"


def index_signature(db: Database, layout: Layout) -> str:
    return hashlib.sha1(repr(Statements(db.dialect, layout).index_definitions()).encode()).hexdigest()[:12]


def refresh_indexes(db: Database, data: Dataset) -> bool:
    """Drop and remake the native indexes if the code's definitions changed since they were made (so the same
    rows serve a before and an after); True if it did."""
    signature = index_signature(db, data.layout)
    try:
        stored = db.fetchone(f"SELECT signature FROM {meta_table(data, 'bench_indexes')}")
    except Exception:  # a build from before the table existed
        stored = ()
    if stored and stored[0] == signature:
        return False
    print(f"  remaking the indexes of {data.kind} {data.label} (their definitions changed) ...", flush=True)
    if data.kind == "postgres":
        db.execute("SET statement_timeout = 0")
        db.execute("SET maintenance_work_mem = '512MB'")
        names = [row[0] for row in db.fetchall("SELECT indexname FROM pg_indexes WHERE schemaname = ? "
                                               "AND indexname LIKE 'IX%'", (data.layout.schema,))]  # fmt: skip
    else:
        names = [row[0] for row in db.fetchall("SELECT name FROM sqlite_master WHERE type = 'index' "
                                               "AND name LIKE 'IX%'")]  # fmt: skip
    for name in names:
        db.execute(f"DROP INDEX {db.dialect.qualify(data.layout.schema, name)}")
    init_schema(db, data.layout)
    if data.kind == "postgres":
        table_names = Statements(db.dialect, data.layout).names()
        db.execute(f"ANALYZE {table_names['queue']}")
        db.execute(f"ANALYZE {table_names['completed']}")
    _store_index_signature(db, data, signature)
    return True


def _store_index_signature(db: Database, data: Dataset, signature: str) -> None:
    table = meta_table(data, "bench_indexes")
    db.execute(f"CREATE TABLE IF NOT EXISTS {table} (signature text)")
    db.execute(f"DELETE FROM {table}")
    db.execute(f"INSERT INTO {table} VALUES (?)", (signature,))


def _stored_build(data: Dataset) -> int | None:
    if data.kind == "sqlite" and not Path(data.target.value).exists():
        return None
    try:
        with Database.open(data.target) as db:
            row = db.fetchone(f"SELECT base_max_id, signature FROM {meta_table(data)}")
    except Exception:  # no schema, no file, no meta table: build afresh
        return None
    return int(row[0]) if row and row[1] == data.mix.signature else None


def build(data: Dataset) -> None:
    print(f"  building {data.label} rows on {data.kind} ...", flush=True)
    if data.kind == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(data.target.value + suffix).unlink(missing_ok=True)
    with Database.open(data.target, create=True) as db:
        t0 = db.now()
        if data.kind == "postgres":
            db.execute("SET statement_timeout = 0")
            db.execute("SET maintenance_work_mem = '512MB'")
            db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(data.layout.schema)} CASCADE")
            fill: Fill = PostgresFill(t0)
        else:
            db.execute("PRAGMA synchronous = OFF")
            db.execute("PRAGMA cache_size = -262144")
            fill = SQLiteFill(t0)
        init_schema(db, data.layout)
        # Indexes after the rows: building them once is far faster than maintaining them row by row.
        for index in Statements(db.dialect, data.layout).index_definitions():
            db.execute(f"DROP INDEX {db.dialect.qualify(data.layout.schema, index.name)}")
        names = Statements(db.dialect, data.layout).names()
        with db.transaction():
            for statement in fill_statements(fill, names, data.mix):
                db.execute("/* queuetop bench */ " + statement)
        init_schema(db, data.layout)
        data.base_max_id = data.mix.rows
        if data.kind == "postgres":
            _set_identity(db, data, data.base_max_id)
            db.execute(f"VACUUM ANALYZE {names['queue']}")  # autovacuum may be off: do its work once, as it would
            db.execute(f"VACUUM ANALYZE {names['completed']}")
        else:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute(f"CREATE TABLE {meta_table(data)} (base_max_id bigint, signature text, built_at text)")
        db.execute(f"INSERT INTO {meta_table(data)} VALUES (?, ?, ?)",
                   (data.base_max_id, data.mix.signature, t0.isoformat()))  # fmt: skip
        _store_index_signature(db, data, index_signature(db, data.layout))


def prefill_window(db: Database, data: Dataset, per_s: float) -> None:
    """One window (60 s) of finished jobs at the activity's rate, as if the activity had been running for a
    while: the first poll reads them and every later poll carries a full window, as a monitor does after a
    minute. Ids above everything so far (the restore removes them); the identity moves past them."""
    names = Statements(db.dialect, data.layout).names()
    count = int(per_s * WINDOW_S)
    highest = db.fetchone(*Statements(db.dialect, data.layout).max_job_id())
    first = 1 + max(int(highest[0] or 0), int(highest[1] or 0), _identity_value(db, data))
    t0 = db.now()
    fill: Fill = PostgresFill(t0) if data.kind == "postgres" else SQLiteFill(t0)
    prefix, source = fill.series(first, first + count - 1)
    db.execute(f"""/* queuetop bench */ {prefix}INSERT INTO {names['completed']} ({names['c_id']}, {names['c_type']},
            {names['c_created']}, {names['c_claimed_at']}, {names['c_completed']}, {names['c_claimed_by']},
            {names['c_attempts']}, {names['c_outcome']})
        SELECT i, {fill.type_name('ua')}, {fill.at('done + work + wait')}, {fill.at('done + work')}, {fill.at('done')},
               'bench-activity', 1, 'succeeded'
        FROM (SELECT i, {fill.u(0)} AS ua, {fill.u(1)} * 0.05 AS work, {fill.u(2)} * 0.5 AS wait,
                     {fill.real(f'({first + count} - i)')} * {WINDOW_S / count} AS done FROM {source}) AS s""")
    _set_identity(db, data, first + count - 1)


def _identity_value(db: Database, data: Dataset) -> int:
    if data.kind == "postgres":
        return int(db.fetchone(f"SELECT last_value FROM {_sequence(db, data)}")[0])
    row = db.fetchone("SELECT seq FROM sqlite_sequence WHERE name = ?", (data.layout.queue_table,))
    return int(row[0]) if row else 0


def _set_identity(db: Database, data: Dataset, value: int) -> None:
    if data.kind == "postgres":
        db.execute(f"SELECT setval('{_sequence(db, data)}', {int(value)})")
    else:
        db.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = ?", (value, data.layout.queue_table))


def _sequence(db: Database, data: Dataset) -> str:
    return db.fetchone("SELECT pg_get_serial_sequence(?, ?)", (db.dialect.qualify(data.layout.schema,
                       data.layout.queue_table), data.layout.columns["id"]))[0]  # fmt: skip


def restore(db: Database, data: Dataset) -> None:
    """Remove what activity added (ids above the build's), so every run starts from the same rows."""
    names = Statements(db.dialect, data.layout).names()
    queue_removed = db.execute(f"DELETE FROM {names['queue']} WHERE {names['id']} > ?", (data.base_max_id,))
    completed_removed = db.execute(f"DELETE FROM {names['completed']} WHERE {names['c_id']} > ?", (data.base_max_id,))
    if data.kind == "postgres" and queue_removed + completed_removed:
        db.execute(f"VACUUM {names['queue']}")
        db.execute(f"VACUUM {names['completed']}")


# -- timing the collector's statements ------------------------------------------------------------------------
def statement_name(sql: str) -> str:
    """What a poll's statement is, from its text."""
    if "'now' AS qt_part" in sql:
        return "poll"
    if "'heads'" in sql:
        return "new types' heads"
    if "GROUP BY" in sql:
        return "counts"
    if " LIMIT " in sql or "TOP (" in sql:
        return "sample"
    return "highest id" if "MAX(" in sql else "other"


class TimedDatabase:
    """Stands in for the collector's Database: times each statement by what it is (`statement_name`) and keeps
    its last SQL and parameters. A count the collector hands to a thread opens its own connection (`open`), off
    the poll and so untimed."""

    open = staticmethod(Database.open)

    def __init__(self, db: Database) -> None:
        self._db = db
        self.times: dict[str, float] = defaultdict(float)
        self.statements: dict[str, tuple[str, tuple[Any, ...]]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def fetchall(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        name = statement_name(sql)
        self.statements[name] = (sql, tuple(params))
        started = time.perf_counter()
        try:
            return self._db.fetchall(sql, params)
        finally:
            self.times[name] += (time.perf_counter() - started) * 1000

    def fetchone(self, sql: str, params: Any = ()) -> tuple[Any, ...]:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else ()

    def take_times(self) -> dict[str, float]:
        taken = dict(self.times)
        self.times.clear()
        return taken


# -- activity between polls -----------------------------------------------------------------------------------
class Activity:
    """Arrivals and completions between polls, through the real queue operations, on their own connection."""

    def __init__(self, db: Database, layout: Layout, per_round: int) -> None:
        self.queue = Queue(db, layout)
        self.per_round = per_round
        self.backlog = 0  # activity jobs pending: claims never reach the prebuilt rows
        self.round = 0

    def run_round(self) -> None:
        types = [f"type-{(self.round * 7 + k) % TYPES:02d}" for k in range(10)]
        self.round += 1
        for job_type in types:
            self.queue.enqueue_many(job_type, self.per_round // 10, priority=ACTIVITY_PRIORITY, created_by="bench")
        self.backlog += self.per_round // 10 * 10
        to_finish = min(self.backlog, self.per_round * 5 // 6)  # a sixth stays behind: depth moves too
        while to_finish:
            jobs = self.queue.claim("bench-activity", batch=min(100, to_finish), lease=60)
            for job in jobs:
                self.queue.complete(job.id, job.token)
            self.backlog -= len(jobs)
            to_finish -= len(jobs)


# -- measuring ------------------------------------------------------------------------------------------------
@dataclass
class Result:
    data: Dataset
    first_ms: float
    first_parts: dict[str, float]
    polls_ms: list[float]
    parts_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    naive_ms: list[float] = field(default_factory=list)
    depth_total: int = 0
    estimated_types: int = 0  # types whose depth the last poll marked as an estimate
    depth_error: int = 0  # Σ |depth shown − depth counted afterwards| over the types of the last poll
    statements: dict[str, tuple[str, tuple[Any, ...]]] = field(default_factory=dict)


def measure(data: Dataset, polls: int, interval_s: float, per_round: int, naive_runs: int,
            explain_plans: bool = False, profile: bool = False) -> Result:
    worker = Database.open(data.target)
    monitor = TimedDatabase(Database.open(data.target, purpose="monitor"))
    try:
        prefill_window(worker, data, per_round * 5 // 6 / interval_s)  # the monitor starts in a steady state
        activity = Activity(worker, data.layout, per_round)
        collector = collector_for(monitor, data.layout)  # type: ignore[arg-type]  # the timing stand-in
        started = time.perf_counter()
        collector.poll()
        result = Result(data, (time.perf_counter() - started) * 1000, monitor.take_times(), [])
        first_statements = dict(monitor.statements)
        monitor.statements.clear()
        next_poll = time.monotonic()
        profiler = cProfile.Profile() if profile else None
        for _ in range(polls):
            next_poll += interval_s
            activity.run_round()
            time.sleep(max(0.0, next_poll - time.monotonic()))  # the dashboard's pace: overlaps re-read as live
            started = time.perf_counter()
            if profiler is not None:
                profiler.enable()
            snapshot = collector.poll()
            result.polls_ms.append((time.perf_counter() - started) * 1000)
            if profiler is not None:
                profiler.disable()
            for name, spent in monitor.take_times().items():
                result.parts_ms[name].append(spent)
        if profiler is not None:
            print_profile(profiler, data, polls)
        result.depth_total = snapshot.totals.depth
        result.estimated_types = sum(row.depth_is_estimate for row in snapshot.types)
        truth = pending_now(worker, collector)
        result.depth_error = sum(abs(row.depth - int(truth.get(row.job_type, 0))) for row in snapshot.types)
        result.statements = {**{f"first:{k}": v for k, v in first_statements.items()}, **monitor.statements}
        if explain_plans:  # before the restore: the plans see the rows the polls saw
            explain(worker, data, result)
        result.naive_ms = naive(worker, data.layout, naive_runs)
        return result
    finally:
        monitor.close()
        worker.close()
        with Database.open(data.target) as db:
            restore(db, data)


def print_profile(profiler: cProfile.Profile, data: Dataset, polls: int) -> None:
    """The Python of the warm polls by function, own time first (cProfile: its own cost inflates each call, so
    read the ranking, not the sum; the statements are the driver's `execute` and `fetchall`)."""
    print(f"\n=== profile of {polls} warm polls: {data.kind}, {data.label} rows (ms per poll, cProfile) ===")
    stats = pstats.Stats(profiler)
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])  # type: ignore[attr-defined]
    print(f"  {'own':>7} {'with callees':>12} {'calls':>8}  function")
    for (path, line, name), (_, calls, own, cumulative, _) in rows[:PROFILE_LINES]:
        where = f"{Path(path).parent.name}/{Path(path).name}:{line}" if line else path
        print(f"  {own / polls * 1000:7.3f} {cumulative / polls * 1000:12.3f} {calls // polls:8}  {name} ({where})")


PROFILE_LINES = 25


def pending_now(db: Database, collector: ShapeCollector) -> dict[str, int]:
    """The depth per type counted right after the last poll, by the layout's pending state (jobs scheduled for
    later are not in it)."""
    layout = collector.layout
    rows = db.fetchall(*Statements(db.dialect, layout).state_counts(["pending"], dict(layout.settings), None))
    return {job_type: int(count) for part, job_type, _, count, *_ in rows if part == "queue" and count}


def naive_sql(db: Database, layout: Layout) -> str:
    n = Statements(db.dialect, layout).names()
    return (f"/* naive monitor */ SELECT t.{n['type']}, COUNT(*) FROM (SELECT {n['type']} FROM {n['queue']} "
            f"UNION ALL SELECT {n['c_type']} FROM {n['completed']}) AS t GROUP BY t.{n['type']}")  # fmt: skip


def naive(db: Database, layout: Layout, runs: int) -> list[float]:
    sql = naive_sql(db, layout)
    if db.dialect.name == "postgresql":
        db.execute("SET statement_timeout = 0")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        db.fetchall(sql)
        times.append((time.perf_counter() - started) * 1000)
    return times


# -- plans -----------------------------------------------------------------------------------------------------
def explain(db: Database, data: Dataset, result: Result) -> None:
    """The plan of each statement of the first and the last poll, with the parameters they ran with."""
    print(f"\n=== plans: {data.kind}, {data.label} rows ({load_average()}) ===")
    for name, (sql, params) in result.statements.items():
        print(f"\n--- {name}: {sql.strip()}\n    params: {_short(params)}")
        if data.kind == "postgres":
            rows = db.fetchall("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        else:
            rows = [(" | ".join(str(c) for c in row),) for row in db.fetchall("EXPLAIN QUERY PLAN " + sql, params)]
            started = time.perf_counter()
            count = len(db.fetchall(sql, params))
            rows.append((f"({count} rows in {(time.perf_counter() - started) * 1000:.2f} ms)",))
        for row in rows:
            print("    " + str(row[0]))


def _short(params: tuple[Any, ...]) -> str:
    text = ", ".join(str(p) for p in params[:6])
    return text + (f", … ({len(params)} in all)" if len(params) > 6 else "")


# -- reporting -------------------------------------------------------------------------------------------------
def report(results: list[Result]) -> None:
    rows = []
    for r in results:
        p50, p95 = p50_p95(r.polls_ms)
        naive_p50 = p50_p95(r.naive_ms)[0]
        rows.append([r.data.kind, r.data.label, f"{r.data.mix.pending:,}", ms(r.first_ms), ms(p50), ms(p95),
                     ms(naive_p50), ratio(naive_p50, p50), r.estimated_types, r.depth_error])  # fmt: skip
    print_table(["database", "rows", "pending", "first poll ms", "p50 ms", "p95 ms", "naive ms", "naive/p50",
                 "≈ types", "depth error"], rows,
                "Poll cost (warm polls after a round of activity each; the first poll is the bootstrap; ≈ types: "
                "depths marked as estimates; depth error: Σ|shown − counted| at the end)")  # fmt: skip
    parts = []
    for r in results:
        steady = {name: p50_p95(values)[0] for name, values in r.parts_ms.items()}
        p50 = p50_p95(r.polls_ms)[0] or 0.0
        other = p50 - sum(v or 0.0 for v in steady.values())
        parts.append([r.data.kind, r.data.label] + [ms(steady.get(name), 2) for name in READS] + [ms(other, 2)])
    print_table(["database", "rows", *READS, "python"], parts,
                "Warm poll, p50 per statement (ms; python = the rest of the poll: history, snapshot)")
    firsts = [[r.data.kind, r.data.label] + [ms(r.first_parts.get(name), 2) for name in READS] for r in results]
    print_table(["database", "rows", *READS], firsts, "First poll (bootstrap), per statement (ms)")
    verdicts = []
    for kind in sorted({r.data.kind for r in results}):
        by_label = {r.data.label: p50_p95(r.polls_ms)[0] for r in results if r.data.kind == kind}
        small, big = by_label.get("1e4"), by_label.get("1e7")
        top = max(by_label, key=lambda label: SIZES[label])
        verdicts.append([kind, ms(by_label[top]) + f" @ {top}",
                         "—" if big is None else ("yes" if big <= GOAL_P50_MS else "NO"),
                         ratio(big, small), "—" if big is None or small is None else
                         ("yes" if big / small <= GOAL_RATIO else "NO")])  # fmt: skip
    print_table(["database", "p50 at largest", f"p50(1e7) ≤ {GOAL_P50_MS:g} ms", "p50(1e7)/p50(1e4)",
                 f"ratio ≤ {GOAL_RATIO:g}"], verdicts, "Goals (issue 4)")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    chosen = argparse.ArgumentParser(add_help=False)
    chosen.add_argument("--layout", default="native")
    known, _ = chosen.parse_known_args(argv)
    if known.layout != "native":  # a seed's own table: its own script, the same question
        import shape_poll_cost

        shape_poll_cost.main(argv)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layout", default="native", help="native (this script) or a seed preset "
                        "(bench/shape_poll_cost.py runs it: queuesample, requests, work_queue, processed, job_queue)")
    parser.add_argument("--sizes", default=",".join(SIZES), help="comma-separated, from 1e4,1e5,1e6,1e7")
    parser.add_argument("--no-1e7", action="store_true", help="leave out 10^7 rows (the slowest to build)")
    parser.add_argument("--db", default="postgres,sqlite", help="postgres, sqlite or both (comma-separated)")
    parser.add_argument("--polls", type=int, default=20, help="warm polls per size (default 20)")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between polls (default 1, as watch)")
    parser.add_argument("--activity", type=int, default=300, help="arrivals per interval (default 300; 5/6 of "
                        "that many completions)")
    parser.add_argument("--naive-runs", type=int, default=0, help="naive GROUP BY runs (default 5, 3 at 1e7)")
    parser.add_argument("--rebuild", action="store_true", help="build the data again even if a build is stored")
    parser.add_argument("--profile", action="store_true", help="print where the warm polls' Python goes, by "
                        "function (cProfile; the poll figures are then inflated by it)")
    parser.add_argument("--explain", default="", help="sizes whose poll statements get their plans printed")
    parser.add_argument("--tag", default="", help="a suffix for the data's schema and file names, to keep a second "
                        "copy (e.g. one per index set when comparing code before and after a change)")
    args = parser.parse_args(argv)
    labels = [s.strip() for s in args.sizes.split(",") if s.strip() and not (args.no_1e7 and s.strip() == "1e7")]
    kinds = [k.strip() for k in args.db.split(",") if k.strip()]
    for label in labels:
        if label not in SIZES:
            parser.error(f"unknown size {label!r}: use {', '.join(SIZES)}")
    for kind in kinds:
        if kind not in ("postgres", "sqlite"):
            parser.error(f"unknown database {kind!r}: use postgres or sqlite")
    explain_labels = {s.strip() for s in args.explain.split(",") if s.strip()}

    print(f"poll cost vs size — {load_average()}")
    results = []
    for kind in kinds:
        for label in labels:
            data = dataset_for(kind, label, args.tag)
            prepare(data, args.rebuild)
            runs = args.naive_runs or (3 if SIZES[label] >= 10**7 else 5)
            result = measure(data, args.polls, args.interval, args.activity, runs, label in explain_labels,
                             args.profile)
            results.append(result)
            print(f"  {kind} {label}: {data.note}; p50 {ms(p50_p95(result.polls_ms)[0])} ms, depth seen "
                  f"{result.depth_total:,}; {load_average()}", flush=True)
    report(results)
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
