"""Shared pieces of the benchmarks: where the databases are, a bench schema of its own, figures and tables.

Benchmarks print figures; they are not tests. Each one runs against the real PostgreSQL server (through
pyodbc and psqlODBC, as queuetop does) and/or a SQLite file under /tmp, in a schema or file of its own so a
run never touches anyone's queue. The machine is shared: every script prints the load average beside its
figures, so a noisy run can be told apart and repeated.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python bench/x.py` from a checkout
    sys.path.insert(0, str(ROOT))

from queuetop.core.history import percentiles  # noqa: E402
from queuetop.db import Database, Target, parse_target  # noqa: E402
from queuetop.layouts import NATIVE, Layout  # noqa: E402
from queuetop.layouts.schema import init_schema  # noqa: E402
from queuetop.layouts.sql import Statements  # noqa: E402

PG_DEFAULT = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=5432;DATABASE=queuetop_test;UID=postgres"
PG_TARGET_TEXT = os.environ.get("QUEUETOP_BENCH_PG") or os.environ.get("QUEUETOP_TEST_PG") or PG_DEFAULT
BENCH_DIR = Path(os.environ.get("QUEUETOP_BENCH_DIR", "/tmp/queuetop-bench"))


def pg_target() -> Target:
    return parse_target(PG_TARGET_TEXT)


def sqlite_target(name: str) -> Target:
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    return parse_target(f"sqlite:{BENCH_DIR / name}")


def pg_database(name: str) -> str:
    """The connection string of a database of the benchmark's own on the bench server, created if missing (a
    database, not a schema, where the command line must find the native schema in its default place)."""
    with Database.open(pg_target()) as admin:
        if not admin.fetchall("SELECT 1 FROM pg_database WHERE datname = ?", (name,)):
            admin.execute(f"CREATE DATABASE {admin.dialect.quote(name)}")
    return re.sub(r"(?i)DATABASE=[^;]*", f"DATABASE={name}", PG_TARGET_TEXT)


def bench_layout(schema: str) -> Layout:
    """The native layout in a PostgreSQL schema of the benchmark's own."""
    return dataclasses.replace(NATIVE, schema=schema)


def recreate_pg_schema(db: Database, layout: Layout) -> None:
    """Drop the bench schema with everything in it and create the native schema afresh."""
    db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(layout.schema)} CASCADE")
    init_schema(db, layout)


def insert_backlog(db: Database, layout: Layout, jobs: int, type_names: Sequence[str]) -> None:
    """`jobs` pending rows of a seed's shape in one statement, `type_names` in turn (where the shape has a type
    column): what its enqueue would write (the columns the defaults do not fill). PostgreSQL and SQLite."""
    statements, dialect = Statements(db.dialect, layout), db.dialect
    columns, values = [], []
    for field_name, role in layout.enqueue_fields.items():
        if field_name == "info":
            columns.append(statements.col(role))
            values.append("'bench'")
        elif field_name == "type":
            sql_type = dialect.sql_type(layout.type_of(role) or "varchar(128)")
            names = type_names
            # SQLite's CAST to a type name of numeric affinity would turn a GUID's text into a number
            typed = "'{}'" if dialect.name == "sqlite" else f"CAST('{{}}' AS {sql_type})"
            cases = " ".join(f"WHEN {n} THEN {typed.format(name)}" for n, name in enumerate(names))
            columns.append(statements.col(role))
            values.append(f"CASE qt_n.i % {len(names)} {cases} END")
    for role, value in layout.enqueue_constants.items():
        columns.append(statements.col(role))
        values.append(dialect.bit_literal(value) if layout.type_of(role) == "bit" else str(value))
    select = ", ".join(values) if values else "1"
    db.execute(f"WITH RECURSIVE qt_n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM qt_n WHERE i < {int(jobs)}) "
               f"INSERT INTO {statements.table('queue')} ({', '.join(columns)}) SELECT {select} FROM qt_n")


# The index each seed lacks for the monitor's reads (the README names them too): (name, table, keys, keys of a
# second index for the completions), by preset.
FIXING_INDEX = {
    "queuesample": ("IX_bench_pending", "WorkQueue", '("JobType", "CreatedDate") WHERE "RetrievedDate" IS NULL',
                    '("RetrievedDate")'),
    "requests": (None, "RequestsCompleted", None, '("CompletedDate")'),
    "work_queue": ("IX_bench_flag", "work_queue", '("processed_flag", "work_queue_id")', None),
    "processed": (None, None, None, None),  # the seed's own (PROCESSED, ID) index is the fix
    "job_queue": ("IX_bench_unfinished", "Job_Queue",
                  '("Processing_Mark", "Attempts", "Available_Date") WHERE "Last_Attempt_End_Date" IS NULL',
                  '("Last_Attempt_End_Date")'),
}  # fmt: skip


def create_fixing_index(db: Database, shape: str, schema: str | None) -> bool:
    """The index a seed's table lacks for the monitor's reads (FIXING_INDEX); False if the seed has it already."""
    name, table, keys, completion_keys = FIXING_INDEX.get(shape, (None, None, None, None))
    if table is None:
        return False
    on = db.dialect.qualify(schema, table)
    if name and keys:
        db.execute(f"CREATE INDEX {db.dialect.quote(name)} ON {on} {keys}")
    if completion_keys:
        db.execute(f"CREATE INDEX {db.dialect.quote('IX_bench_done')} ON {on} {completion_keys}")
    return True


def create_advised_indexes(db: Database, layout: Layout) -> int:
    """The indexes `queuetop doctor` advises for the layout's tables (its preset's [[advice]]), made as doctor prints
    them; how many."""
    from types import SimpleNamespace

    from queuetop.serve.doctor import Doctor

    doctor = Doctor(SimpleNamespace(dialect=db.dialect), layout)  # type: ignore[arg-type]
    made = [advice for advice in layout.advice if layout.indexable(advice)]
    for advice in made:
        db.execute(doctor.advice_sql(advice).rstrip(";"))
    return len(made)


def pg_connection_parts(target_text: str = PG_TARGET_TEXT) -> dict[str, str]:
    """host, port, dbname, user (and password) of an ODBC connection string, for command-line tools."""
    fields = {}
    for part in target_text.split(";"):
        if "=" in part:
            key, value = part.split("=", 1)
            fields[key.strip().upper()] = value.strip().strip("{}")
    return {
        "host": fields.get("SERVER", "127.0.0.1"),
        "port": fields.get("PORT", "5432"),
        "dbname": fields.get("DATABASE", "postgres"),
        "user": fields.get("UID", fields.get("USER", "postgres")),
        "password": fields.get("PWD", fields.get("PASSWORD", "")),
    }


def throughput_options(description: str, seconds: float, backlog: int, shapes: bool = False) -> argparse.Namespace:
    """The options of the claim + complete benchmarks (queue threads or load driver, against pgbench)."""
    parser = argparse.ArgumentParser(description=description)
    if shapes:
        parser.add_argument("--layout", help="a seed's preset (or `all`): its own dequeue instead of native")
        parser.add_argument("--claim-form", help="one of the preset's claim forms (default: each but unlocked)")
        parser.add_argument("--processes", type=int, default=1,
                            help="also run the driver's consumers split over this many processes (default 1: not)")
    parser.add_argument("--clients", default="1,4,8", help="concurrency levels, comma-separated (default 1,4,8)")
    parser.add_argument("--seconds", type=float, default=seconds, help=f"seconds per run (default {seconds:g})")
    parser.add_argument("--reps", type=int, default=2, help="runs per side and level (default 2)")
    parser.add_argument("--backlog", type=int, default=backlog, help="jobs waiting at the start of each run")
    return parser.parse_args()


QUEUETOP = str(Path(sys.executable).with_name("queuetop"))  # the console script beside the interpreter


def process_ms(argv: list[str], runs: int) -> list[float]:
    """Wall ms of `argv` as a whole process, `runs` times, after one run that warms the page cache and bytecode."""
    times = []
    subprocess.run(argv, capture_output=True, check=True)
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(0.3)  # a run's background count (its process gone) is not the next run's load
    return times


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def p50_p95(values: Sequence[float]) -> tuple[float | None, float | None]:
    p50, p95 = percentiles(values, (50, 95))
    return p50, p95


def ms(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def ratio(numerator: float | None, denominator: float | None) -> str:
    if numerator is None or not denominator:
        return "—"
    return f"{numerator / denominator:.2f}"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]], title: str | None = None) -> None:
    """A plain, aligned text table: text columns left, figures right."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(_looks_numeric(row[i]) for row in cells[1:]) for i in range(len(headers))]
    if title:
        print(f"\n{title}")
    for n, row in enumerate(cells):
        aligned = (c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        print("  ".join(aligned))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    sys.stdout.flush()


def _looks_numeric(text: str) -> bool:
    stripped = text.replace(",", "").replace(".", "").replace("×", "").replace("%", "").lstrip("≈~<>=-")
    return stripped.isdigit() or text == "—"
