"""Claim + complete throughput on PostgreSQL (issue 2): queuetop's queue operations against pgbench.

N threads, each with its own connection, loop on `queuetop.act.queue.Queue.claim` (one job of one type) and
`Queue.complete`, as a worker would; pgbench runs the very same two statements at the same concurrency. The
pgbench side is `driver_vs_pgbench`'s (issue 4, benchmark 2): its script is generated from the dialect's own
`claim` and `move_to_completed` SQL, each `?` turned into a pgbench expression (server clock, a random token,
the id the claim returned via `\\gset`), run with the extended protocol as psqlODBC does; both benchmarks share
it rather than keep two copies. Every measurement starts from a fresh backlog (autovacuum may be off, and a
used queue carries dead index entries at its head); the two sides alternate, each measured `--reps` times,
and the ratio is queue / pgbench of the medians.

    .venv/bin/python bench/claim_throughput.py                          # 1, 4 and 8 threads, ~2.5 minutes
    .venv/bin/python bench/claim_throughput.py --clients 4 --seconds 15 --reps 3

Data: the PostgreSQL schema `bench_claim`, made afresh before each measurement and dropped at the end.
"""

from __future__ import annotations

import statistics
import threading
import time

from common import bench_layout, load_average, pg_target, print_table, ratio, throughput_options
from driver_vs_pgbench import JOB_TYPE, pgbench_script, prepare, run_pgbench

from queuetop.act.queue import Queue
from queuetop.db import Database
from queuetop.layouts import Layout

WARMUP_S = 1.0


def run_queue_threads(layout: Layout, clients: int, seconds: float) -> float:
    """Jobs claimed and completed per second by `clients` threads through `Queue`, after a warm-up."""
    stop = threading.Event()
    done = [0] * clients  # one slot per thread: no lock needed
    failures: list[BaseException] = []

    def work(slot: int) -> None:
        try:
            with Database.open(pg_target()) as db:
                queue = Queue(db, layout)
                while not stop.is_set():
                    jobs = queue.claim(f"bench-{slot}", job_types=[JOB_TYPE])
                    if not jobs:
                        raise RuntimeError("the backlog ran out: raise --backlog")
                    queue.complete(jobs[0].id, jobs[0].token)
                    done[slot] += 1
        except BaseException as exc:  # reported by the main thread, which stops the others
            failures.append(exc)
            stop.set()

    threads = [threading.Thread(target=work, args=(slot,), daemon=True) for slot in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(WARMUP_S)
    before, started = sum(done), time.monotonic()
    stop.wait(seconds)
    after, ended = sum(done), time.monotonic()
    stop.set()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit(f"the queue threads failed: {failures[0]}")
    return (after - before) / (ended - started)


def main() -> None:
    options = throughput_options(__doc__.split("\n\n")[0], seconds=8.0, backlog=100_000)
    layout = bench_layout("bench_claim")
    with Database.open(pg_target()) as db:
        script = pgbench_script(db.dialect, layout)
    print("pgbench script (the dialect's own statements):\n  " + script.strip().replace("\n", "\n  "))
    print(load_average())
    rows = []
    for clients in [int(c) for c in options.clients.split(",")]:
        queue_rates, pgbench_rates = [], []
        for _ in range(options.reps):
            prepare(layout, options.backlog)
            queue_rates.append(run_queue_threads(layout, clients, options.seconds))
            prepare(layout, options.backlog)
            pgbench_rates.append(run_pgbench(script, layout, clients, options.seconds))
            print(f"  {clients} clients: queue {queue_rates[-1]:,.0f}/s, pgbench {pgbench_rates[-1]:,.0f}/s "
                  f"({load_average()})", flush=True)  # fmt: skip
        q, p = statistics.median(queue_rates), statistics.median(pgbench_rates)
        rows.append((clients, f"{q:,.0f}", f"{p:,.0f}", ratio(q, p),
                     f"{min(queue_rates):,.0f}–{max(queue_rates):,.0f}",
                     f"{min(pgbench_rates):,.0f}–{max(pgbench_rates):,.0f}"))  # fmt: skip
    with Database.open(pg_target()) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(layout.schema)} CASCADE")
    print_table(("clients", "queue jobs/s", "pgbench jobs/s", "queue/pgbench", "queue range", "pgbench range"), rows,
                "Claim + complete on PostgreSQL, threads through queuetop.act.queue.Queue vs pgbench (medians)")
    print(load_average())


if __name__ == "__main__":
    main()
