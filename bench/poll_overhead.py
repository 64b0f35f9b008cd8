"""A poll's fixed cost, this tree against another checkout, side by side in one run: did a change slow the poll?

`poll_cost.py` measures a warm poll after a round of activity, 20 polls a size at the dashboard's pace: right for
how a poll grows with the queue, too few and too noisy (its p50 at 10^4 on PostgreSQL jumps between 11 and 17 ms
from run to run) to see a few percent. This one polls the same prebuilt queues (poll_cost.py's data: run it once
first) back to back, 300 polls per round, nothing changing in between, so what is left is the cost every poll
pays: the statements' round trips, the driver, the Python around them. Rounds alternate between the two trees
so that a machine that gets busier treats both alike.

    .venv/bin/python bench/poll_overhead.py --before /path/to/an/older/checkout     # e.g. a `git worktree`
    .venv/bin/python bench/poll_overhead.py --before ../old --sizes 1e4 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
POLLS = 300

ONE_ROUND = """
import json, statistics, sys, time
sys.path.insert(0, {bench!r})
from common import bench_layout, pg_target, sqlite_target
try:
    from queuetop.watch.collector import collector_for
except ImportError:  # a tree from before the one engine (its collector_for is in queuetop.collector)
    from queuetop.collector import collector_for
from queuetop.db import Database
out = {{}}
for name, target, layout in (("postgres", pg_target(), bench_layout("bench_poll_{size}")),
                             ("sqlite", sqlite_target("poll-{size}.db"), bench_layout(None))):
    with Database.open(target, purpose="monitor") as db:
        collector = collector_for(db, layout)
        collector.poll()
        times = []
        for _ in range({polls}):
            started = time.perf_counter()
            collector.poll()
            times.append((time.perf_counter() - started) * 1000)
    out[name] = times
print(json.dumps(out))
"""


def one_round(tree: Path, size: str) -> dict[str, list[float]]:
    """POLLS polls of each database's queue of `size`, by the queuetop of `tree` (its own bench/common.py too)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = ONE_ROUND.format(bench=str(tree / "bench"), size=size, polls=POLLS)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tree)
    if result.returncode != 0:
        raise SystemExit(f"a round on {tree} failed (has poll_cost.py built its data?):\n{result.stderr}")
    return json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, type=Path, help="the other checkout (the code before a change)")
    parser.add_argument("--sizes", default="1e4,1e6", help="poll_cost.py's sizes to poll (default 1e4,1e6)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per tree, alternating (default 3)")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": HERE.parent}
    print(f"{POLLS} back-to-back polls a round, {args.rounds} rounds a tree, alternating; p50 / p95 in ms")
    print(f"{'database':<9} {'size':<5} {'before p50':>10} {'p95':>6} {'after p50':>10} {'p95':>6} "
          f"{'after/before':>13}")
    for size in args.sizes.split(","):
        times: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
        for _ in range(args.rounds):
            for label, tree in trees.items():
                for database, polls in one_round(tree, size).items():
                    times[label].setdefault(database, []).extend(polls)
        for database in times["after"]:
            b, a = sorted(times["before"][database]), sorted(times["after"][database])
            b50, a50 = statistics.median(b), statistics.median(a)
            b95, a95 = b[int(len(b) * 0.95)], a[int(len(a) * 0.95)]
            print(f"{database:<9} {size:<5} {b50:>10.2f} {b95:>6.2f} {a50:>10.2f} {a95:>6.2f} {a50 / b50:>13.3f}")


if __name__ == "__main__":
    main()
