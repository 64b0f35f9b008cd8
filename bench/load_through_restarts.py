"""`queuetop load` on PostgreSQL while every one of its backends is terminated every few seconds.

The command runs as a user runs it (`python -m queuetop load --json`); every `--every` seconds this script ends
each backend serving it (`pg_terminate_backend`, as an administrator or a server restart does). The load must
reconnect, go on and end with its report: printed are the completions, lost, duplicated, the reconnects, how
long the database was away and what became of the claims in flight. Measure of success: 0 lost, 0 duplicated,
exit 0.

    .venv/bin/python bench/load_through_restarts.py     # --duration 60 --every 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from common import bench_layout, load_average, pg_target, recreate_pg_schema

from queuetop.db import Database


def client_ports(pid: int) -> set[int]:
    """The local ports of process `pid`'s TCP connections to port 5432 (Linux: /proc)."""
    try:
        owned = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        lines = []
        for table in ("tcp", "tcp6"):
            with open(f"/proc/{pid}/net/{table}") as text:
                lines += text.read().splitlines()[1:]
    except OSError:
        return set()
    ports = set()
    for line in lines:
        fields = line.split()
        if int(fields[2].rsplit(":", 1)[1], 16) == 5432 and f"socket:[{fields[9]}]" in owned:
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=60, help="the load's --duration (default 60 s)")
    parser.add_argument("--every", type=float, default=3.0, help="terminate its backends this often (default 3 s)")
    args = parser.parse_args()
    target, layout = pg_target(), bench_layout("bench_restarts")
    with Database.open(target, purpose="bulk") as db:
        recreate_pg_schema(db, layout)
    command = [sys.executable, "-m", "queuetop", "load", "--db", target.value, "--layout", "native", "--table",
               f"{layout.schema}.WorkQueue", "--duration", str(args.duration), "--rate", "500", "--producers", "2",
               "--consumers", "4", "--batch", "5", "--work", "fixed:5", "--json"]
    print(f"load {args.duration} s, backends terminated every {args.every:g} s; {load_average()}")
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "QUEUETOP_DB": ""})  # fmt: skip
    terminated = rounds = 0
    with Database.open(target, purpose="monitor") as admin:
        while process.poll() is None and time.monotonic() - started < args.duration:
            time.sleep(args.every)
            ports = client_ports(process.pid)
            for port in ports:
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port = ?", (port,))
            terminated += len(ports)
            rounds += 1
    out, err = process.communicate(timeout=120)
    took = time.monotonic() - started
    if process.returncode != 0 or not out.strip():
        raise SystemExit(f"load exited {process.returncode}: {err.strip()[-2000:]}")
    report = json.loads(out)
    outages = report["outages"]
    print(f"exit {process.returncode} after {took:.1f} s; {rounds} rounds, {terminated} backends terminated")
    print(f"enqueued {report['enqueued']:,}, completed {report['completed']:,}, pending {report['pending']:,}, "
          f"claimed {report['claimed']:,}, lost {report['lost']}, "
          f"duplicated {report['duplicates'] + report['found_twice']}")
    print(f"connections lost {outages['lost']}, reconnects {outages['reconnects']}, database away "
          f"{outages['away_s']:.1f} s; in hand on a lost connection: {outages['released']} handed back, "
          f"{outages['left_to_lease']} left to their lease; {outages['claims_cut']} claim statements cut short")
    print(f"verdict: {'OK' if report['ok'] else 'FAILED'}; last error: {outages['last_error']}")
    with Database.open(target, purpose="bulk") as db:
        db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(layout.schema)} CASCADE")
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
