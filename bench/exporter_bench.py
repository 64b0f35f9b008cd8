"""How long a Prometheus scrape of `queuetop serve` takes with 200 job types.

A real queue (a SQLite file, and the PostgreSQL server unless `--db sqlite`) with N job types, each with jobs
waiting, claimed and completed (so every series is there: gauges, counters, wait and processing quantiles);
the exporter on 127.0.0.1 (a free port) polling it every `--interval` seconds on its own thread; then scrapes
over HTTP, one after another, with the OpenMetrics Accept header, in two kinds:

- "new": a new snapshot was published since the last scrape (Prometheus every 15 s against a 1 s poll: every
  scrape), so the exposition is built for it. The bench publishes a fresh copy of the state before each scrape;
- "repeat": nothing new since the last scrape (a Prometheus HA pair, curl): the kept answer.

Printed: p50/p95/max of each, the exposition's size and series count, and the poll time beside it, for 1 type
and for N — N with every type by name, and again with `serve`'s default cap (`--max-types` 100: the busiest by
name, the rest as "(other)") — with the load average. A scrape never waits for a poll, so it grows with the
number of series, not with the database's speed. Measure of success: p95 of "new" at 200 types against
Prometheus' default scrape timeout (10 s), and against the poll it reports on.

    .venv/bin/python bench/exporter_bench.py            # --types 200 --scrapes 300 --db sqlite|postgres|both
"""

from __future__ import annotations

import argparse
import dataclasses
import time
import urllib.request

from common import (
    BENCH_DIR,
    bench_layout,
    load_average,
    ms,
    p50_p95,
    pg_target,
    print_table,
    recreate_pg_schema,
    sqlite_target,
)

from queuetop.act.queue import Queue
from queuetop.db import Database
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.schema import init_schema
from queuetop.serve.exporter import Exporter, TargetPoller
from queuetop.serve.typecap import DEFAULT_MAX_TYPES
from queuetop.watch.monitor import Monitor

ACCEPT = "application/openmetrics-text; version=1.0.0; charset=utf-8"
SCRAPE_TIMEOUT_MS = 10_000.0  # Prometheus' default


def build(db: Database, layout: Layout, types: int) -> None:
    queue = Queue(db, layout)
    for n in range(types):
        job_type = f"Acme.Billing.Jobs.Stage{n:03d}"
        queue.enqueue_many(job_type, 6)
        jobs = queue.claim("bench", [job_type], batch=3, lease=300)
        for job in jobs[:2]:
            queue.complete(job.id, job.token)


def measure(target, layout: Layout, scrapes: int, interval: float, max_types: int) -> dict[str, float]:
    poller = TargetPoller("bench", Monitor(target, layout), interval, max_types=max_types)
    exporter = Exporter([poller], "127.0.0.1", 0)
    exporter.start()
    try:
        deadline = time.monotonic() + 60
        while poller.state.snapshot is None:
            if time.monotonic() > deadline:
                raise SystemExit(f"no poll of {target.display} within 60 s: {poller.state.outcome}")
            time.sleep(0.05)
        poller.interval_s = 3600.0  # no more polls: the bench decides when a state is new
        time.sleep(0.2)
        request = urllib.request.Request(exporter.url, headers={"Accept": ACCEPT})
        figures: dict[str, float] = {}
        for kind in ("new", "repeat"):
            latencies, body = [], b""
            for _ in range(scrapes):
                if kind == "new":
                    poller.state = dataclasses.replace(poller.state)  # as a poll publishes a new state
                started = time.perf_counter()
                with urllib.request.urlopen(request, timeout=10) as response:
                    body = response.read()
                latencies.append((time.perf_counter() - started) * 1000)
            p50, p95 = p50_p95(latencies)
            figures |= {f"{kind} p50": p50, f"{kind} p95": p95, f"{kind} max": max(latencies)}
        figures["bytes"] = len(body)
        figures["series"] = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
        snapshot = poller.state.snapshot
        assert snapshot is not None
        figures["poll"] = snapshot.poll_ms
        return figures
    finally:
        exporter.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--types", type=int, default=200, help="job types (default 200)")
    parser.add_argument("--scrapes", type=int, default=300, help="scrapes per case (default 300)")
    parser.add_argument("--interval", type=float, default=1.0, help="the exporter's poll interval (default 1 s)")
    parser.add_argument("--db", choices=("sqlite", "postgres", "both"), default="both")
    args = parser.parse_args()
    print(f"exporter scrape latency, {args.scrapes} scrapes per case; {load_average()}")
    rows = []
    for kind in ("sqlite", "postgres") if args.db == "both" else (args.db,):
        for types in (1, args.types):
            if kind == "sqlite":
                target = sqlite_target(f"exporter-{types}.db")
                path = BENCH_DIR / f"exporter-{types}.db"
                for suffix in ("", "-wal", "-shm"):
                    path.with_name(path.name + suffix).unlink(missing_ok=True)
                layout = NATIVE
                with Database.open(target, create=True) as db:
                    init_schema(db, layout)
                    build(db, layout, types)
            else:
                target, layout = pg_target(), bench_layout(f"bench_exporter_{types}")
                with Database.open(target, purpose="bulk") as db:
                    recreate_pg_schema(db, layout)
                    build(db, layout, types)
            # every type by name, then the cap `serve` applies by default (the same run, side by side)
            for cap in dict.fromkeys((types, min(types, DEFAULT_MAX_TYPES))):
                figures = measure(target, layout, args.scrapes, args.interval, cap)
                rows.append([kind, types, "all" if cap == types else cap, figures["series"], f"{figures['bytes']:,}",
                             ms(figures["new p50"]), ms(figures["new p95"]), ms(figures["new max"]),
                             ms(figures["repeat p50"]), ms(figures["repeat p95"]), ms(figures["poll"]),
                             f"{figures['new p95'] / SCRAPE_TIMEOUT_MS:.3f}"])  # fmt: skip
            if kind == "postgres":
                with Database.open(target, purpose="bulk") as db:
                    db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(layout.schema)} CASCADE")
    print_table(["db", "types", "named", "series", "bytes", "new p50 ms", "new p95", "new max", "repeat p50",
                 "repeat p95", "poll ms", "new p95 / 10 s"], rows)  # fmt: skip
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
