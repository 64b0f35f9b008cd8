"""How long `queuetop serve` takes to answer 20 Prometheus scrapes that arrive at the same moment.

Several Prometheus servers (an HA pair, federation, a few people with curl, a blackbox probe) may scrape at the
same instant. The standard library's server listens with a backlog of 5: past it the kernel drops the SYNs and
every scraper left out retries a second later, so the tail is a second whatever the exposition costs. The bench
runs the exporter over a SQLite queue with a few job types, then rounds of N scrapes released together by a
barrier, each on its own thread and connection, with the backlog queuetop uses and with the old default of 5.

Printed: p50/p95/max of a scrape at N at a time. Measure of success: p95 under 0.5 s at 20 at a time.

    .venv/bin/python bench/exporter_concurrency.py      # --scrapers 20 --rounds 30
"""

from __future__ import annotations

import argparse
import threading
import time
import urllib.request

from common import BENCH_DIR, load_average, ms, p50_p95, print_table, sqlite_target

from queuetop.act.queue import Queue
from queuetop.db import Database
from queuetop.layouts import NATIVE
from queuetop.layouts.schema import init_schema
from queuetop.serve import exporter as exporter_module
from queuetop.serve.exporter import Exporter, TargetPoller
from queuetop.watch.monitor import Monitor


def measure(backlog: int, scrapers: int, rounds: int) -> list[float]:
    target = sqlite_target("exporter-concurrency.db")
    path = BENCH_DIR / "exporter-concurrency.db"
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    with Database.open(target, create=True) as db:
        init_schema(db, NATIVE)
        queue = Queue(db, NATIVE)
        for n in range(10):
            queue.enqueue_many(f"type{n}", 5)
    exporter_module.LISTEN_BACKLOG = backlog
    poller = TargetPoller("bench", Monitor(target, NATIVE), 1.0)
    exporter = Exporter([poller], "127.0.0.1", 0)
    exporter.start()
    latencies: list[float] = []
    lock = threading.Lock()
    try:
        while poller.state.snapshot is None:
            time.sleep(0.05)
        for _ in range(rounds):
            barrier = threading.Barrier(scrapers)

            def scrape(barrier: threading.Barrier = barrier) -> None:
                barrier.wait()
                started = time.perf_counter()
                with urllib.request.urlopen(exporter.url, timeout=10) as response:
                    response.read()
                with lock:
                    latencies.append((time.perf_counter() - started) * 1000)

            threads = [threading.Thread(target=scrape) for _ in range(scrapers)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            time.sleep(0.05)
    finally:
        exporter.stop()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scrapers", type=int, default=20, help="scrapes at the same moment (default 20)")
    parser.add_argument("--rounds", type=int, default=30, help="rounds of simultaneous scrapes (default 30)")
    args = parser.parse_args()
    print(f"{args.scrapers} simultaneous scrapes, {args.rounds} rounds; {load_average()}")
    rows = []
    for backlog in (5, exporter_module.LISTEN_BACKLOG):
        latencies = measure(backlog, args.scrapers, args.rounds)
        p50, p95 = p50_p95(latencies)
        rows.append([backlog, len(latencies), ms(p50), ms(p95), ms(max(latencies)),
                     "yes" if p95 is not None and p95 < 500 else "no"])  # fmt: skip
    print_table(["backlog", "scrapes", "p50 ms", "p95 ms", "max ms", "p95 < 0.5 s"], rows)
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
