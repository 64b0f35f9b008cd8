"""`queuetop jobs` (and the job lists) page by key, never by OFFSET: a page deep into a big queue costs what the
first one does. This measures it on poll_cost.py's native queues (10^4 … 10^7 rows, built once and kept):

- the first page of 50 of a state, and a deep page of 50 — after walking `--walk` pages of 10,000 from the start
  with `read_jobs`' own `after` (the walk itself is timed too: each step is a keyset page);
- the same deep page read the way a tool without keys would, with OFFSET (the rows before it counted off on
  every read), side by side;
- per state: pending of the busiest type (oldest first: `CreatedDate, WorkQueueID`) and dead of that type and
  of every type (longest dead first: `CompletedDate, WorkQueueID` of the completed table).

    .venv/bin/python bench/jobs_paging.py                        # 10^4 and 10^6, PostgreSQL and SQLite
    .venv/bin/python bench/jobs_paging.py --sizes 1e4,1e7        # the 10^7 build takes ~3 min a database

It prints p50 / p95 over `--runs` reads of each page and the ratios: deep ÷ first (1.0: keyset) and the size's
÷ 10^4's (1.0: the table's size does not matter), with the load average.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from common import load_average, ms, p50_p95, print_table, ratio
from poll_cost import SIZES, dataset_for, prepare

from queuetop.act.jobs import read_jobs
from queuetop.db import Database
from queuetop.layouts import Layout
from queuetop.layouts.sql import statements_on

PAGE = 50
STEP = 10_000  # the walk's page: each one a keyset page too
BUSIEST = "type-00"  # poll_cost's mix gives it ≈ 14 % of the rows
CASES = (("pending", BUSIEST), ("dead", BUSIEST), ("dead", None))


def timed(call: Callable[[], Any], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def offset_page(db: Database, layout: Layout, state: str, job_type: str | None, skip: int) -> Statement:
    """The same page as read_jobs' deep one, by OFFSET: the statement read_jobs would send for the first page,
    with the rows before it skipped by the server (what a list without keys does)."""
    prefix = "c_" if layout.states[state].table == "completed" else ""
    roles = [role for role in layout.columns if role.startswith("c_") == bool(prefix)]
    order = [role for role in ("created",) if state == "pending"] or ["c_completed"]
    sql, params = statements_on(db, layout).rows_in_states([state], job_type, roles, [*order, prefix + "id"],
                                                           PAGE, {})  # fmt: skip
    return f"{sql} OFFSET {int(skip)}", params  # after its LIMIT ? (the last parameter): both databases take it


Statement = tuple[str, Sequence[Any]]


def measure(kind: str, label: str, walk: int, runs: int, rebuild: bool) -> list[list[object]]:
    data = dataset_for(kind, label)
    prepare(data, rebuild)
    rows = []
    with Database.open(data.target, purpose="monitor") as db:
        for state, job_type in CASES:
            first = timed(lambda s=state, t=job_type: read_jobs(db, data.layout, s, t, None, PAGE), runs)
            after, skipped, walked = None, 0, []
            for _ in range(walk):
                started = time.perf_counter()
                page = read_jobs(db, data.layout, state, job_type, after, STEP)
                walked.append((time.perf_counter() - started) * 1000)
                if page.after is None:
                    break
                after, skipped = page.after, skipped + STEP
            deep = timed(lambda s=state, t=job_type, a=after: read_jobs(db, data.layout, s, t, a, PAGE), runs)
            sql, params = offset_page(db, data.layout, state, job_type, skipped)
            by_offset = timed(lambda q=sql, p=params: db.fetchall(q, p), runs)
            (f50, f95), (d50, d95), (o50, o95) = p50_p95(first), p50_p95(deep), p50_p95(by_offset)
            rows.append([kind, label, state + (f" {job_type}" if job_type else ""), f"{skipped:,}",
                         f"{ms(f50)} / {ms(f95)}", f"{ms(d50)} / {ms(d95)}", ratio(d50, f50),
                         f"{ms(o50)} / {ms(o95)}", ratio(o50, d50), ms(p50_p95(walked)[0]) if walked else "—",
                         f50, d50])  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1e4,1e6", help="comma-separated, from 1e4,1e5,1e6,1e7 (default 1e4,1e6)")
    parser.add_argument("--db", default="postgres,sqlite", help="postgres, sqlite or both (comma-separated)")
    parser.add_argument("--walk", type=int, default=5, help=f"pages of {STEP:,} walked before the deep page")
    parser.add_argument("--runs", type=int, default=20, help="reads of each page timed (default 20)")
    parser.add_argument("--rebuild", action="store_true", help="build the data again even if a build is stored")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    labels = [s.strip() for s in args.sizes.split(",") if s.strip()]
    for label in labels:
        if label not in SIZES:
            parser.error(f"unknown size {label!r}: use {', '.join(SIZES)}")
    print(f"keyset pages vs size — {load_average()}")
    rows: list[list[object]] = []
    for kind in [k.strip() for k in args.db.split(",") if k.strip()]:
        for label in labels:
            rows += measure(kind, label, args.walk, args.runs, args.rebuild)
    base = {(row[0], row[2]): row for row in rows if row[1] == labels[0]}
    table = [[*row[:10], ratio(row[10], base[(row[0], row[2])][10]), ratio(row[11], base[(row[0], row[2])][11])]
             for row in rows]  # fmt: skip
    print_table(["db", "rows", "state", "deep at", "first p50/p95 ms", "deep p50/p95 ms", "deep÷first",
                 "OFFSET p50/p95 ms", "OFFSET÷keyset", f"walk p50 ms/{STEP:,}", f"first÷{labels[0]}",
                 f"deep÷{labels[0]}"], table)  # fmt: skip
    print(load_average())


if __name__ == "__main__":
    main()
