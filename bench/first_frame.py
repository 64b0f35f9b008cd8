"""The first frame (issue 24): how long from launching the dashboard to a screen with the queue's figures on it?

The user's first look is a process start, imports (Textual the largest), a connection, the first poll and the
first paint. Per database (PostgreSQL, SQLite) and size, the native queue of `first_look.py` (that many pending
jobs of 20 types, built once and kept), `queuetop --db TARGET` is launched on a pseudo-terminal (140×40) and
timed until a job type's name appears in what it draws (a row of the table: the first poll's figures are on the
screen), then ended; p50 of `--runs`. `--tree PATH` launches an older checkout's dashboard too (a `git worktree`,
its bytecode compiled first), alternating with this one, for before and after in one run; `queuetop --version`
is the floor (start-up and the command line alone).

    .venv/bin/python bench/first_frame.py                                # 10^3 and 10^6 on both databases
    .venv/bin/python bench/first_frame.py --tree /tmp/before --sizes 1e6 # before and after a change
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import load_average, ms, print_table, process_ms, ratio
from first_look import prepare

HERE = Path(__file__).resolve().parent.parent
SHOWN = re.compile(rb"\btype\d+\b")  # a job type's row (first_look.py names them type0 … type19)
ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[a-zA-Z]")
GIVE_UP_S = 20.0


def first_frame_ms(tree: Path, target: str) -> float | None:
    """Launch `queuetop --db target` from `tree` on a pseudo-terminal; ms until a job type is drawn (None: never
    within GIVE_UP_S)."""
    main, side = pty.openpty()
    subprocess.run(["stty", "-F", os.ttyname(side), "rows", "40", "cols", "140"], check=True)
    env = dict(os.environ, TERM="xterm-256color", PYTHONPATH=str(tree))
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "queuetop", "--db", target], cwd=tree, env=env,
                               stdin=side, stdout=side, stderr=side)  # fmt: skip
    drawn, seen = b"", None
    try:
        while time.perf_counter() - started < GIVE_UP_S:
            if select.select([main], [], [], 0.01)[0]:
                try:
                    drawn += os.read(main, 65536)
                except OSError:  # it ended
                    break
                if SHOWN.search(ESCAPES.sub(b"", drawn)):
                    seen = (time.perf_counter() - started) * 1000
                    break
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
        os.close(main)
        os.close(side)
    time.sleep(0.3)  # its background count (the process gone) is not the next launch's load
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1e3,1e6", help="pending jobs, comma-separated (default 1e3,1e6)")
    parser.add_argument("--db", default="postgresql,sqlite", help="postgresql, sqlite or both (default)")
    parser.add_argument("--runs", type=int, default=7, help="launches of each (default 7)")
    parser.add_argument("--tree", type=Path, help="an older checkout to launch too, alternating (before)")
    args = parser.parse_args()
    trees = {"this": HERE} if args.tree is None else {"before": args.tree.resolve(), "after": HERE}
    for tree in trees.values():  # a worktree's bytecode, or every launch of it compiles every module
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "queuetop")], check=True)
    print(f"first frame — {load_average()}")
    version = statistics.median(process_ms([sys.executable, "-m", "queuetop", "--version"], args.runs))
    rows = []
    for kind in [k.strip() for k in args.db.split(",") if k.strip()]:
        for label in [s.strip() for s in args.sizes.split(",") if s.strip()]:
            target = prepare(kind, int(float(label)))
            for tree in trees.values():
                first_frame_ms(tree, target)  # warms the page cache and the database's buffers
            times: dict[str, list[float]] = {name: [] for name in trees}
            missed = 0
            for _ in range(args.runs):
                for name, tree in trees.items():
                    seen = first_frame_ms(tree, target)
                    if seen is None:
                        missed += 1
                    else:
                        times[name].append(seen)
            p50 = {name: statistics.median(values) if values else None for name, values in times.items()}
            row = [kind, label, *(ms(p50[name]) for name in trees)]
            if args.tree is not None:
                row.append(ratio(p50["after"], p50["before"]))
            rows.append([*row, missed])
            print(f"  {kind} {label}: {', '.join(f'{n} {ms(v)}' for n, v in p50.items())} ms; {load_average()}",
                  flush=True)  # fmt: skip
    print_table(["database", "pending", *(f"{name} ms" for name in trees),
                 *(["after ÷ before"] if args.tree is not None else []), "missed"], rows,
                f"Launch to the first frame with figures, p50 of {args.runs} (`queuetop --version`: {ms(version)} ms)")
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
