"""The `queuetop` command: argument parsing, and one small function per subcommand.

Every failure a user can cause or meet (a bad argument, an unreachable server, a missing schema) ends as one
line on stderr naming the cause and the fix, with exit code 2; `--debug` adds the traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from queuetop import __version__
from queuetop import format as fmt
from queuetop.db import Database, QueuetopError, UsageError, parse_target
from queuetop.db.target import ENV_VAR, Target, default_database_path
from queuetop.load.command import add_load_arguments
from queuetop.snapshot import Snapshot, TypeStats

if TYPE_CHECKING:
    from queuetop.load.driver import LoadRun

EXIT_USAGE = 2
COMMANDS = ("init", "stats", "enqueue", "release", "watch", "load", "demo")


def log_path() -> Path:
    """Where the dashboard logs unexpected errors."""
    from platformdirs import user_log_path

    return user_log_path("queuetop", appauthor=False) / "queuetop.log"


LOG_PATH = log_path()

TARGET_HELP = f"""\
targets (--db, or ${ENV_VAR}):
  an ODBC connection string (anything with '='), opened with pyodbc:
    "DRIVER={{ODBC Driver 18 for SQL Server}};SERVER=db1;DATABASE=jobs;UID=ops;PWD=...;Encrypt=yes"
    "DRIVER={{PostgreSQL Unicode}};SERVER=127.0.0.1;PORT=5432;DATABASE=jobs;UID=ops"
  a SQLite file: queue.db, queue.sqlite, or sqlite:/any/path
  nothing: the embedded default, {default_database_path()}
"""


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", metavar="TARGET", help=f"database to watch (default: ${ENV_VAR}, else the embedded "
                                                       "SQLite file)")  # fmt: skip
    common.add_argument("--debug", action="store_true", help="show tracebacks of errors")

    parser = argparse.ArgumentParser(
        prog="queuetop",
        description="htop for job queues that live in SQL tables (SQL Server, PostgreSQL, SQLite).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
        epilog=TARGET_HELP + """
examples:
  queuetop init                          create the queue schema in the embedded database
  queuetop enqueue --type email -n 100   add 100 test jobs
  queuetop stats                         per-type depth, age, rates and latencies
  queuetop stats --json | jq '.totals'   the same for scripts
  queuetop release --dry-run             how many claims are past their timeout
""",
    )
    parser.add_argument("--version", action="version", version=f"queuetop {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, summary: str, examples: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], help=summary, description=summary,
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog="examples:\n" + examples + "\n" + TARGET_HELP)  # fmt: skip

    init = command("init", "create the queue schema (tables, view, indexes); safe to run again", """\
  queuetop init
  queuetop init --db "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;DATABASE=jobs;UID=ops"
""")
    init.set_defaults(run=cmd_init)

    stats = command("stats", "print per-type queue statistics once (a table, or --json)", """\
  queuetop stats
  queuetop stats --type email --type report
  queuetop stats --json | jq '.types[] | {job_type, depth, oldest_age_s}'
""")
    stats.add_argument("--json", action="store_true", help="print JSON (shape documented in the README)")
    stats.add_argument("--type", dest="types", action="append", default=[], metavar="T",
                       help="only this job type (repeatable)")  # fmt: skip
    stats.set_defaults(run=cmd_stats)

    enqueue = command("enqueue", "add test jobs to the queue", """\
  queuetop enqueue --type email
  queuetop enqueue --type report --count 500 --info '{"size": 3}' --priority 10
  queuetop enqueue --type cleanup --delay 60        available in a minute
""")
    enqueue.add_argument("--type", "-t", dest="job_type", required=True, metavar="T", help="job type (required)")
    enqueue.add_argument("--count", "-n", type=int, default=1, metavar="N", help="how many jobs (default 1)")
    enqueue.add_argument("--info", metavar="TEXT", help="payload stored in JobInfo")
    enqueue.add_argument("--priority", "-p", type=int, default=128, metavar="P",
                         help="0 (most urgent) to 255 (least); default 128")  # fmt: skip
    enqueue.add_argument("--delay", type=float, default=0.0, metavar="S", help="seconds before the jobs are available")
    enqueue.set_defaults(run=cmd_enqueue)

    release = command("release", "release claims past their timeout (out of attempts: dead)", """\
  queuetop release --dry-run           count them, change nothing
  queuetop release --type email        release timed-out claims of one type
""")
    release.add_argument("--type", "-t", dest="job_type", metavar="T", help="only this job type")
    release.add_argument("--dry-run", action="store_true", help="only count what would be released")
    release.add_argument("--max-attempts", type=int, default=3, metavar="N",
                         help="claims that used N attempts become dead instead (default 3)")  # fmt: skip
    release.set_defaults(run=cmd_release)

    watch = command("watch", "the live dashboard (the default command)", f"""\
  queuetop                                  watch the embedded database
  queuetop watch --interval 0.5 --type email
  queuetop watch --read-only --db "DRIVER={{PostgreSQL Unicode}};SERVER=db1;DATABASE=jobs;UID=ops"
  queuetop watch --with-load --consumers 8  drive a load test and watch it in one window

keys: ? lists them all in the app. Errors are logged to {LOG_PATH}
""")
    add_watch_arguments(watch)
    watch.add_argument("--with-load", action="store_true", help="also run a load test (options below) while watching")
    add_load_arguments(watch)
    watch.set_defaults(run=cmd_watch)

    load = command("load", "run a load test: producers and consumers through the real queue operations", """\
  queuetop load --duration 30
  queuetop load --producers 2 --consumers 8 --rate unlimited --jobs 50000 --batch 10
  queuetop load --types email:5,report:1 --work email=fixed:5,report=exp:200 --fail 0.05 --crash 0.01 \\
                --lease 5 --release-every 2 --json
exit code: 0 when every job was processed exactly once, 1 if any was lost or duplicated, 2 on errors
""")
    add_load_arguments(load)
    load.add_argument("--json", action="store_true", help="print the end report as JSON")
    load.set_defaults(run=cmd_load)

    demo = command("demo", "a fresh queue, a background load and the dashboard on top: the guided tour", """\
  queuetop demo                   in a temporary SQLite file
  queuetop demo --db demo.db      keep the demo queue in demo.db
""")
    add_watch_arguments(demo)
    demo.set_defaults(run=cmd_demo)
    return parser


def add_watch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between polls (default 1)")
    parser.add_argument("--read-only", action="store_true", help="disable enqueue and release")
    parser.add_argument("--type", dest="types", action="append", default=[], metavar="T",
                        help="only show this job type (repeatable)")  # fmt: skip


# -- opening the target ----------------------------------------------------------------------------------
def open_target(args: argparse.Namespace, purpose: str = "worker", create: bool = False) -> Database:
    """Open --db. The embedded default is created, schema and all, on first use."""
    from queuetop.schema import init_schema, schema_present

    target = parse_target(args.db)
    embedded = _is_embedded_default(args, target)
    db = Database.open(target, purpose=purpose, create=create or embedded)
    if embedded and not schema_present(db):
        init_schema(db)
    return db


def _is_embedded_default(args: argparse.Namespace, target: Target) -> bool:
    return args.db is None and not os.environ.get(ENV_VAR) and target.kind == "sqlite"


# -- commands --------------------------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace) -> int:
    from queuetop.schema import init_schema

    with open_target(args, create=True) as db:
        steps = init_schema(db)
        print(f"{db.target.display} ({db.dialect.name})")
        for step in steps:
            print(f"  {'created' if step.created else 'exists '}  {step.kind:<6} {step.name}")
        made = sum(step.created for step in steps)
        print("schema ready: " + (f"{made} object(s) created" if made else "nothing to do, everything was there"))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from queuetop.collector import Collector

    with open_target(args, purpose="monitor") as db:
        snapshot = Collector(db, job_types=args.types).poll()
    if args.json:
        print(json.dumps(snapshot.to_json(), indent=2))
    else:
        print(render_table(snapshot))
    return 0


def cmd_enqueue(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from queuetop.queue import Queue

    if args.delay < 0:
        raise UsageError(f"--delay must be zero or more seconds, not {args.delay}")
    with open_target(args) as db:
        queue = Queue(db)
        available = db.now() + timedelta(seconds=args.delay) if args.delay else None
        ids = queue.enqueue_many(args.job_type, args.count, info=args.info, priority=args.priority,
                                 available_at=available, created_by="queuetop-cli")  # fmt: skip
    noun = "job" if len(ids) == 1 else "jobs"
    listed = ", ".join(map(str, ids)) if len(ids) <= 10 else f"{ids[0]}..{ids[-1]}"
    print(f"enqueued {len(ids):,} {noun} of type {args.job_type!r}: id{'s' if len(ids) > 1 else ''} {listed}")
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from queuetop.queue import Queue

    with open_target(args) as db:
        result = Queue(db, max_attempts=args.max_attempts).release_timed_out(args.job_type, dry_run=args.dry_run)
    scope = f" of type {args.job_type!r}" if args.job_type else ""
    if result.timed_out == 0:
        print(f"no timed-out claims{scope}: nothing to release")
    elif result.dry_run:
        print(f"{result.timed_out:,} claim(s){scope} past their timeout would be released (dry run: nothing changed)")
    else:
        print(f"released {result.released:,} timed-out claim(s){scope} back to pending; "
              f"{result.dead:,} out of attempts moved to dead")  # fmt: skip
    return 0


def _check_interval(args: argparse.Namespace) -> None:
    if not 0.1 <= args.interval <= 3600:
        raise UsageError(f"--interval must be from 0.1 to 3600 seconds, not {args.interval}")


def cmd_watch(args: argparse.Namespace) -> int:
    _check_interval(args)
    target = parse_target(args.db)
    background = None
    if args.with_load:
        from queuetop.load.command import config_from_args, start_background_load

        config = config_from_args(args)
        if _is_embedded_default(args, target):
            open_target(args).close()  # the load's workers need the schema before the dashboard makes it
        background = start_background_load(target, config)
    return _dashboard(args, target, background, auto_init=_is_embedded_default(args, target))


def cmd_load(args: argparse.Namespace) -> int:
    from queuetop.load.command import run_load_command

    return run_load_command(args)


def cmd_demo(args: argparse.Namespace) -> int:
    import tempfile

    from queuetop.load.command import demo_config, start_background_load
    from queuetop.schema import init_schema

    _check_interval(args)
    where = args.db or str(Path(tempfile.mkdtemp(prefix="queuetop-demo-")) / "demo.db")
    target = parse_target(where)
    with Database.open(target, create=True) as db:
        init_schema(db)
    background = start_background_load(target, demo_config())
    status = _dashboard(args, target, background, auto_init=False)
    print(f"demo stopped; the demo queue is in {target.display}")
    print(f"  look again with: queuetop --db {where}")
    return status


def _dashboard(args: argparse.Namespace, target: Target, background: LoadRun | None, auto_init: bool) -> int:
    from queuetop.tui import run_dashboard

    try:
        return run_dashboard(target, interval=args.interval, read_only=args.read_only, job_types=args.types,
                             auto_init=auto_init, background=background, log_path=LOG_PATH)  # fmt: skip
    finally:
        if background is not None:
            summary = background.stop()
            if summary:
                print(summary)


# -- the stats table -------------------------------------------------------------------------------------
COLUMNS: list[tuple[str, Callable[[TypeStats], str]]] = [
    ("TYPE", lambda r: r.job_type),
    ("DEPTH", lambda r: fmt.count(r.depth, r.depth_is_estimate)),
    ("OLDEST", lambda r: fmt.duration(r.oldest_age_s)),
    ("CLAIMED", lambda r: fmt.count(r.claimed)),
    ("TIMED-OUT", lambda r: fmt.count(r.timed_out)),
    ("DEAD", lambda r: fmt.count(r.dead)),
    ("IN/s 10s", lambda r: fmt.rate(r.arrivals_10s_per_s)),
    ("OUT/s 10s", lambda r: fmt.rate(r.completions_10s_per_s)),
    ("IN/s 60s", lambda r: fmt.rate(r.arrivals_60s_per_s)),
    ("OUT/s 60s", lambda r: fmt.rate(r.completions_60s_per_s)),
    ("WAIT p50/p95/p99", lambda r: "/".join(fmt.duration(v) for v in (r.wait_p50_s, r.wait_p95_s, r.wait_p99_s))),
    ("PROC p50/p95/p99", lambda r: "/".join(
        fmt.duration(v) for v in (r.processing_p50_s, r.processing_p95_s, r.processing_p99_s))),
    ("DRAIN", lambda r: fmt.drain(r.drain, r.drain_eta_s)),
]  # fmt: skip


def render_table(snapshot: Snapshot) -> str:
    rows = [[cell(row) for _, cell in COLUMNS] for row in (*snapshot.types, snapshot.totals)]
    header = [name for name, _ in COLUMNS]
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = (c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded)

    out = [f"{snapshot.target} ({snapshot.dialect}) at {snapshot.taken_at:%Y-%m-%d %H:%M:%S} UTC, "
           f"poll {snapshot.poll_ms:.1f} ms, rates and latencies over the last {snapshot.window_s:.0f} s"]  # fmt: skip
    out.append(line(header))
    if not snapshot.types:
        out.append("(the queue is empty: add jobs with `queuetop enqueue --type T`)")
    out += [line(r) for r in rows[:-1]]
    out.append(line(rows[-1]))
    return "\n".join(out)


# -- entry point -----------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not any(a in COMMANDS for a in argv) and not {"-h", "--help", "--version"} & set(argv):
        argv.insert(0, "watch")  # `queuetop` alone is the dashboard
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except QueuetopError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"queuetop: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("queuetop: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so in one line unless asked for the traceback
        if args.debug:
            raise
        print(f"queuetop: unexpected error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
              file=sys.stderr)  # fmt: skip
        return 1
