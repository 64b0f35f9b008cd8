"""Driver vs pgbench (issue 4, benchmark 2): how close does `queuetop load` come to the database's own speed?

Claim + complete throughput on PostgreSQL of the load driver's consumers (threads in one Python process, each
with its own pyodbc connection, through `queuetop.act.queue.Queue`) against pgbench running the very same two
statements at the same concurrency. The statements are not retyped: the dialect's own `claim` and
`move_to_completed` are called on a stand-in connection that records their SQL, and each `?` becomes a pgbench
expression (a random claim token, the id the claim returned; the times are the server's own, in the
statements). Both sides work off a fresh
backlog of one job type, batch 1, no work time, autocommit; pgbench uses the extended protocol, as psqlODBC
does. Sides alternate, each measured `--reps` times; the ratio is driver / pgbench of the medians.
Goal: ≥ 0.5.

With `--layout NAME` (a preset, or `all`), the same for a seed's own table: the driver runs the seed's own
dequeue and completion (`queuetop load --layout`), pgbench the very statements `shape_worker.ShapeWorker` sends,
recorded the same way with its transactions (BEGIN/COMMIT where the worker opens one), the id, the claim mark
and the carried values passed from statement to statement with pgbench's gset. The tables are an empty copy of the
shape (`Statements.create_tables`, the demo's DDL: no index beyond the key, as the seeds have) with a backlog
inserted in one statement. The last table ranks the shapes' dequeues by the driver's throughput.

    .venv/bin/python bench/driver_vs_pgbench.py                     # concurrency 1, 4 and 8
    .venv/bin/python bench/driver_vs_pgbench.py --clients 4 --seconds 20 --reps 3
    .venv/bin/python bench/driver_vs_pgbench.py --layout all --clients 1,4,8 --reps 1
    .venv/bin/python bench/driver_vs_pgbench.py --layout work_queue --claim-form update_top

Data: the PostgreSQL schema `bench_driver` (dropped and made again before each measurement).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from typing import Any

from common import (
    bench_layout,
    insert_backlog,
    load_average,
    pg_connection_parts,
    pg_target,
    print_table,
    ratio,
    recreate_pg_schema,
    throughput_options,
)

from queuetop.act.queue import Queue
from queuetop.act.shape_worker import ShapeWorker
from queuetop.db import Database
from queuetop.db.recording import StatementRecorder
from queuetop.layouts import PRESET_NAMES, Layout, load_layout, with_tables
from queuetop.layouts.sql import Statements
from queuetop.load.command import load_types
from queuetop.load.config import ConsumerPool, LoadConfig, WorkTime
from queuetop.load.driver import LoadRun

JOB_TYPE = "bench"
WARMUP_S = 1.0
TOKEN_MARK = "7b1f3c9e-0000-4000-8000-00000000c1a1"
ID_MARK = -424242
WORKER = "pgbench"
PGBENCH_TOKEN = "lpad(to_hex(CAST(:k AS bigint)), 32, '0')"


def pgbench_script(dialect: Any, layout: Layout) -> str:
    """The native queue's claim and complete statements (the one engine's, as `Queue` sends them), as a pgbench
    script."""
    statements = Statements(dialect, layout)
    values = {"__worker": WORKER, "__token": TOKEN_MARK, "__lease": 30.0, "__batch": 1}
    claim_sql, claim_params = statements.claim_batch([JOB_TYPE], values)
    (complete_sql, complete_params), = statements.move_finished(ID_MARK, TOKEN_MARK, "succeeded")
    id_column = layout.columns["id"]
    lines = ["\\set k random(1, 1000000000000)",
             _fill(claim_sql, claim_params, id_column) + " \\gset c_",
             _fill(complete_sql, complete_params, id_column) + ";"]  # fmt: skip
    return "\n".join(lines) + "\n"


def _fill(sql: str, params: tuple[Any, ...], id_column: str) -> str:
    """Each `?` becomes the pgbench expression standing for its value; the statement goes on one line."""
    values = iter(params)

    def expression(_: re.Match) -> str:
        value = next(values)
        if value == TOKEN_MARK:
            return PGBENCH_TOKEN
        if value == ID_MARK:
            return f":c_{id_column}"
        if isinstance(value, Carried):
            return repr(value)
        if isinstance(value, int):
            return str(value)
        return "'" + str(value).replace("'", "''") + "'"

    filled = re.sub(r"\?", expression, sql)
    if next(values, None) is not None:
        raise RuntimeError("more parameters than placeholders: the statement changed shape")
    return " ".join(filled.split())


# -- a seed's shape -------------------------------------------------------------------------------------------
SHAPE_SCHEMA = "bench_shape"
LEASE_S = 900.0


class Carried:
    """A value a claim returned, standing for the pgbench variable `\\gset` stored it in."""

    def __init__(self, column: str) -> None:
        self.column = column

    def __repr__(self) -> str:
        return f":c_{self.column}"


def bench_types(layout: Layout) -> tuple[tuple[str, float], ...]:
    """One job type, as the shape stores it (a GUID on seed 000), or none where it has no type column."""
    return load_types("1", layout) if layout.has_job_type else ((layout.queue_table, 1.0),)


def shape_layout(name: str) -> Layout:
    layout = load_layout(name)
    table = f"{SHAPE_SCHEMA}.{layout.queue_table if not layout.table_required else 'bench_items'}"
    return with_tables(layout, table)


def shape_script(dialect: Any, layout: Layout, form: str | None) -> str:
    """The statements one claim and completion of a ShapeWorker send, as a pgbench script."""
    # its reads answer one claimed row whose values stand for the pgbench variables `\gset` stores them in
    columns = layout.columns
    row = (Carried(columns["id"]), None, None, None,
           *(Carried(columns[role]) for role in Statements(dialect, layout).moved_roles()))  # fmt: skip
    recorder = StatementRecorder(dialect, rows=[row], one=row, transactions=True)
    worker = ShapeWorker(recorder, layout, form, {})  # type: ignore[arg-type]
    worker.new_token = lambda: TOKEN_MARK  # type: ignore[method-assign]
    [job] = worker.claim(WORKER, [t for t, _ in bench_types(layout)], 1, LEASE_S)
    worker.complete(job)
    lines = ["\\set k random(1, 1000000000000)"]
    for sql, params in recorder.statements:
        if sql in ("BEGIN", "COMMIT"):
            lines.append(sql + ";")
            continue
        filled = _fill(sql, params, layout.columns["id"])
        reads = sql.removeprefix("/* queuetop */ ").startswith("SELECT") or " RETURNING " in sql
        lines.append(filled + (" \\gset c_" if reads else ";"))
    return "\n".join(lines) + "\n"


def prepare_shape(layout: Layout, backlog: int) -> None:
    """An empty copy of the shape in its own schema, and `backlog` jobs in it, inserted in one statement."""
    with Database.open(pg_target()) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(SHAPE_SCHEMA)} CASCADE")
        db.execute(f"CREATE SCHEMA {db.dialect.quote(SHAPE_SCHEMA)}")
        statements = Statements(db.dialect, layout)
        for sql in statements.create_tables():
            db.execute(sql)
        insert_backlog(db, layout, backlog, [bench_types(layout)[0][0]])
        db.execute(f"ANALYZE {statements.table('queue')}")


def shape_done_count(layout: Layout, backlog: int) -> int:
    """Jobs taken and (where the shape completes them) completed since prepare_shape."""
    with Database.open(pg_target()) as db:
        statements = Statements(db.dialect, layout)
        states = db.fetchall(*statements.row_states("queue", {}, 0, None)) if layout.arrivals == "identity" else []
        if layout.claim is not None and layout.claim.finish:
            table = layout.claim.finish_table
            states = db.fetchall(*statements.row_states(table, {}, None, 3600.0)) if table == "completed" else states
            return sum(1 for _, state in states if state == "done")
        return backlog - sum(1 for _, state in states if state == "pending")


def run_shape_driver(layout: Layout, form: str | None, clients: int, seconds: float) -> float:
    """Completions per second of the load driver's consumers through the seed's own dequeue, after a warm-up."""
    return run_driver(layout, clients, seconds, types=bench_types(layout), form=form)


def run_split_driver(layout: Layout, form: str | None, clients: int, seconds: float, processes: int) -> float:
    """The same consumers split over `processes` forked drivers (a GIL each), their completions per second summed:
    is the driver held back by its threads sharing one interpreter?"""
    context = multiprocessing.get_context("fork")
    rates: Any = context.Queue()
    shares = [clients // processes + (n < clients % processes) for n in range(processes)]
    children = [context.Process(target=lambda share=share: rates.put(run_shape_driver(layout, form, share, seconds)))
                for share in shares if share]  # fmt: skip
    for child in children:
        child.start()
    total = sum(rates.get(timeout=seconds + 120) for _ in children)
    for child in children:
        child.join()
    return total


def prepare(layout: Layout, backlog: int) -> None:
    with Database.open(pg_target()) as db:
        recreate_pg_schema(db, layout)
        queue = Queue(db, layout)
        left = backlog
        while left:
            left -= len(queue.enqueue_many(JOB_TYPE, min(5000, left)))
        db.execute(f"ANALYZE {db.dialect.qualify(layout.schema, layout.queue_table)}")


def run_driver(layout: Layout, clients: int, seconds: float, types: tuple[tuple[str, float], ...] = ((JOB_TYPE, 1.0),),
               form: str | None = None) -> float:
    """Completions per second of the load driver's consumers, after a warm-up."""
    config = LoadConfig(types=types, producers=0, pools=(ConsumerPool(clients),), rate=None,
                        default_work=WorkTime("fixed", 0), lease_s=LEASE_S)  # fmt: skip
    run = LoadRun(pg_target(), config, layout, claim_form=form).start()
    try:
        time.sleep(WARMUP_S)
        before, started, cpu_before = _processed(run), time.monotonic(), _cpu_s()
        time.sleep(seconds)
        after, ended, cpu_after = _processed(run), time.monotonic(), _cpu_s()
    finally:
        run.shutdown()
    if run.error is not None:
        raise SystemExit(f"the driver failed: {run.error}")
    CPU_PER_JOB_US.append((cpu_after - cpu_before) / max(1, after - before) * 1e6)
    return (after - before) / (ended - started)


CPU_PER_JOB_US: list[float] = []  # the driver process's own CPU (every thread, user and system) per job, per run


def _cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def _processed(run: LoadRun) -> int:
    counters = run.counters()
    return counters.succeeded + counters.foreign  # the backlog was there before the run: "foreign" to it


def run_pgbench(script: str, layout: Layout, clients: int, seconds: float, moved: Any = None) -> float:
    parts = pg_connection_parts()
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
    env = {**os.environ, **({"PGPASSWORD": parts["password"]} if parts["password"] else {})}
    command = ["pgbench", "-n", "-h", parts["host"], "-p", parts["port"], "-U", parts["user"], "-f", f.name,
               "-M", "extended", "-c", str(clients), "-j", str(min(clients, 4)), "-T", str(int(seconds + WARMUP_S)),
               parts["dbname"]]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=seconds + 60)
    finally:
        os.unlink(f.name)
    found = re.search(r"tps = ([\d.]+) \(without initial connection time\)", done.stdout)
    processed = re.search(r"number of transactions actually processed: (\d+)", done.stdout)
    if done.returncode != 0 or not found or not processed or "aborted" in done.stdout + done.stderr:
        raise SystemExit(f"pgbench failed ({done.returncode}):\n{done.stdout}\n{done.stderr}\nscript:\n{script}")
    moved = completed_count(layout) if moved is None else moved()
    if moved != int(processed.group(1)):  # each transaction must really have moved one job
        raise SystemExit(f"pgbench ran {processed.group(1)} transactions but {moved} jobs were completed")
    return float(found.group(1))


def completed_count(layout: Layout) -> int:
    with Database.open(pg_target()) as db:
        return len(db.fetchall(*Statements(db.dialect, layout).completions_since(datetime(1970, 1, 1))))


def main() -> None:
    options = throughput_options(__doc__.split("\n\n")[0], seconds=10.0, backlog=120_000, shapes=True)
    if options.layout:
        return shapes_main(options)
    layout = bench_layout("bench_driver")
    with Database.open(pg_target()) as db:
        script = pgbench_script(db.dialect, layout)
    print("pgbench script (the dialect's own statements):")
    print("  " + script.strip().replace("\n", "\n  "))
    print(load_average())
    rows = []
    for clients in [int(c) for c in options.clients.split(",")]:
        driver, pgbench = [], []
        for _ in range(options.reps):
            prepare(layout, options.backlog)
            driver.append(run_driver(layout, clients, options.seconds))
            prepare(layout, options.backlog)
            pgbench.append(run_pgbench(script, layout, clients, options.seconds))
            print(f"  clients {clients}: driver {driver[-1]:,.0f}/s, pgbench {pgbench[-1]:,.0f}/s ({load_average()})")
            sys.stdout.flush()
        d, p = statistics.median(driver), statistics.median(pgbench)
        spread = max(_spread(driver), _spread(pgbench))
        rows.append((clients, f"{d:,.0f}", f"{p:,.0f}", ratio(d, p), f"±{spread:.0%}"))
    with Database.open(pg_target()) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(layout.schema)} CASCADE")
    print_table(("clients", "driver/s", "pgbench/s", "ratio", "spread"), rows,
                title="claim + complete per second on PostgreSQL (medians; goal: ratio ≥ 0.5)")  # fmt: skip
    print(load_average())


def shapes_main(options: Any) -> None:
    names = [n for n in PRESET_NAMES if n != "native"] if options.layout == "all" else [options.layout]
    summary = []
    print(load_average())
    for name in names:
        layout = shape_layout(name)
        forms = [options.claim_form] if options.claim_form else [f for f in layout.claim.forms if f != "unlocked"]
        for form in forms:
            with Database.open(pg_target()) as db:
                script = shape_script(db.dialect, layout, form)
            print(f"\n{name} ({form}): pgbench script (ShapeWorker's own statements):")
            print("  " + script.strip().replace("\n", "\n  "))
            rows = []
            split = options.processes > 1
            for clients in [int(c) for c in options.clients.split(",")]:
                driver, pgbench, apart = [], [], []
                CPU_PER_JOB_US.clear()
                for _ in range(options.reps):
                    prepare_shape(layout, options.backlog)
                    driver.append(run_shape_driver(layout, form, clients, options.seconds))
                    if split:
                        prepare_shape(layout, options.backlog)
                        apart.append(run_split_driver(layout, form, clients, options.seconds, options.processes))
                    prepare_shape(layout, options.backlog)
                    pgbench.append(run_pgbench(script, layout, clients, options.seconds,
                                               lambda lay=layout: shape_done_count(lay, options.backlog)))
                    print(f"  clients {clients}: driver {driver[-1]:,.0f}/s ({CPU_PER_JOB_US[-1]:,.0f} µs of its CPU a "
                          "job)" + (f", in {options.processes} processes {apart[-1]:,.0f}/s" if split else "")
                          + f", pgbench {pgbench[-1]:,.0f}/s ({load_average()})")  # fmt: skip
                    sys.stdout.flush()
                d, p = statistics.median(driver), statistics.median(pgbench)
                row = [clients, f"{d:,.0f}", f"{statistics.median(CPU_PER_JOB_US):,.0f}", f"{p:,.0f}", ratio(d, p)]
                if split:
                    row += [f"{statistics.median(apart):,.0f}", ratio(statistics.median(apart), p)]
                rows.append((*row, f"±{max(_spread(driver), _spread(pgbench)):.0%}"))
                summary.append((f"{name} ({form})", clients, d, p))
            heads = ["clients", "driver/s", "its CPU µs a job", "pgbench/s", "ratio"]
            heads += [f"driver in {options.processes} processes/s", "their ratio"] if split else []
            print_table([*heads, "spread"], rows,
                        title=f"{name} ({form}): claim + complete per second on PostgreSQL (goal: ratio ≥ 0.8)")
    with Database.open(pg_target()) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(SHAPE_SCHEMA)} CASCADE")
    top = max(int(c) for c in options.clients.split(","))
    ranked = sorted((row for row in summary if row[1] == top), key=lambda row: -row[2])
    print_table(("shape (form)", "clients", "driver/s", "pgbench/s", "ratio"),
                [(n, c, f"{d:,.0f}", f"{p:,.0f}", ratio(d, p)) for n, c, d, p in ranked],
                title=f"the seeds' dequeues ranked by the driver's throughput at {top} clients")  # fmt: skip
    print(load_average())


def _spread(values: list[float]) -> float:
    """Half the range, relative to the median: how much repeated runs disagreed."""
    return (max(values) - min(values)) / 2 / statistics.median(values) if len(values) > 1 else 0.0


if __name__ == "__main__":
    main()
