"""Dear polls come further apart (issue 24, `watch/pace.py`): what watching a table without the index its reads need
costs the database, with the pace off (the interval alone, as before) and on, side by side in one run.

Per size, seed 001's `requests` is built with its own DDL (no index on RequestsCompleted's times, by which a poll
reads the claims in flight and the completions: each poll reads that table whole) as shape_poll_cost.py builds it
(vacuumed, as autovacuum would have by the time anyone watches it);
then an exporter's poller (`TargetPoller`: a Monitor, `--interval` 1 s as `serve` and the dashboard default)
watches it for `--seconds` while the seed's own statements work it (`--activity` jobs in and out a second), first
with the pace off, then on; then again with the indexes `queuetop doctor` advises, where the polls are cheap and
the pace changes nothing. Per run: the polls made, a warm poll's p50, the seconds spent polling and their share of
the time watched — what the monitor takes of a database core — and the longest wait between two polls.

    .venv/bin/python bench/paced_watch.py                        # 10^6 and 10^7 rows, 60 s a run
    .venv/bin/python bench/paced_watch.py --sizes 1e6 --seconds 20

Data: PostgreSQL schemas `bench_shape_requests_<size>[_ix]`, built afresh and dropped after (a build of 10^7 rows
takes a few minutes).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from common import load_average, ms, print_table, ratio
from shape_poll_cost import ADVISED, OWN, activity, build

from queuetop.serve.exporter import TargetPoller, TargetState
from queuetop.watch.monitor import Monitor
from queuetop.watch.pace import Pace
from tests.seedshapes import drop_seed

SHAPE = "requests"


class Unpaced(Pace):
    """The interval alone, whatever a poll costs: before pace.py."""

    def wait_s(self, interval_s: float) -> float:
        return interval_s


def watch(db, tables, layout, seconds: float, interval_s: float, per_round: int, paced: bool
          ) -> tuple[int, float | None, float, float, float]:  # fmt: skip
    """Watch for `seconds` as `serve` does, the seed's own work going on: the polls made, a warm poll's p50 ms,
    the seconds spent polling, their share of the time watched, the longest wait between two polls."""
    states: list[TargetState] = []
    poller = TargetPoller("bench", Monitor(db.target, layout), interval_s)
    if not paced:
        poller.pace = Unpaced()
    poller.on_state = states.append
    working = threading.Event()

    def work() -> None:
        while not working.wait(1.0):
            activity(db, tables, SHAPE, per_round)

    worker = threading.Thread(target=work, daemon=True)
    started = time.monotonic()
    poller.start()
    worker.start()
    time.sleep(seconds)
    working.set()
    poller.stop(wait_s=60.0)
    worker.join()
    watched = time.monotonic() - started
    polls = [state.outcome.poll_s for state in states if state.outcome is not None and state.outcome.poll_s]
    waits = [state.paced_s or interval_s for state in states]
    p50 = statistics.median(polls[1:]) * 1000 if len(polls) > 1 else None
    return len(polls), p50, sum(polls), sum(polls) / watched, max(waits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1e6,1e7", help="rows, from 1e4,1e5,1e6,1e7 (default 1e6,1e7)")
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds watched a run (default 60)")
    parser.add_argument("--interval", type=float, default=1.0, help="the watcher's interval (default 1 s)")
    parser.add_argument("--activity", type=int, default=50, help="jobs in and out a second (default 50)")
    args = parser.parse_args()
    print(load_average())
    rows = []
    for size in args.sizes.split(","):
        for indexes in (OWN, ADVISED):
            db, tables, layout = build("postgres", SHAPE, size, indexes)
            try:
                runs = [(False, watch(db, tables, layout, args.seconds, args.interval, args.activity, paced=False))]
                runs.append((True, watch(db, tables, layout, args.seconds, args.interval, args.activity, paced=True)))
            finally:
                drop_seed(db, tables)
                db.close()
            for paced, (polls, p50, busy, share, longest) in runs:
                rows.append([size, indexes, "on" if paced else "off (before)", polls, ms(p50), f"{busy:.1f} s",
                             f"{share:.1%}", f"{longest:.3g} s", ratio(share, runs[0][1][3]) if paced else ""])
            print(f"{size} ({indexes}) done: {load_average()}", flush=True)
    print_table(["rows", "indexes", "pace", "polls", "poll p50 ms", "polling", "share of the time", "longest wait",
                 "share, on ÷ off"], rows,
                title=f"watching {SHAPE} for {args.seconds:g} s at --interval {args.interval:g} (goal: a cost bounded "
                      "as the table grows)")  # fmt: skip
    print(load_average())


if __name__ == "__main__":
    main()
