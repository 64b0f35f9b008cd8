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
from queuetop.layouts import NATIVE, PRESET_NAMES, Layout
from queuetop.load.command import add_load_arguments
from queuetop.snapshot import Snapshot, TypeStats

if TYPE_CHECKING:
    from queuetop.history_store import Retention
    from queuetop.load.driver import LoadRun

EXIT_USAGE = 2
COMMANDS = ("init", "stats", "enqueue", "release", "dead", "watch", "load", "demo", "layouts", "detect", "history")
LAYOUT_ENV_VAR = "QUEUETOP_LAYOUT"


def log_path() -> Path:
    """Where the dashboard logs unexpected errors."""
    from platformdirs import user_log_path

    return user_log_path("queuetop", appauthor=False) / "queuetop.log"


LOG_PATH = log_path()

LAYOUT_HELP = f"""
layouts (--layout, or ${LAYOUT_ENV_VAR}; `queuetop layouts` lists them):
  native       the schema `queuetop init` makes          queuesample  seed 000: QueueSample.WorkQueue
  requests     seed 001: RequestsQueue + Completed       work_queue   seed 002: dbo.work_queue, processed_flag
  processed    seed 003: your table (--table) + PROCESSED job_queue   seed 004: dbo.Job_Queue, Processing_Mark
  Without --layout: the native schema if it is there, else the one queue table found in the catalog.
"""

TARGET_HELP = f"""\
targets (--db, or ${ENV_VAR}):
  an ODBC connection string (anything with '='), opened with pyodbc:
    "DRIVER={{ODBC Driver 18 for SQL Server}};SERVER=db1;DATABASE=jobs;UID=ops;PWD=...;Encrypt=yes"
    "DRIVER={{PostgreSQL Unicode}};SERVER=127.0.0.1;PORT=5432;DATABASE=jobs;UID=ops"
  a SQLite file: queue.db, queue.sqlite, or sqlite:/any/path
  nothing: the embedded default, {default_database_path()}
"""


def _parser() -> argparse.ArgumentParser:
    # The options every command shares are accepted before and after the subcommand. The subcommand's copy
    # defaults to "not given" (SUPPRESS), so it never overwrites a value given before it.
    common = _common_options(argparse.ArgumentParser(add_help=False), suppress=False)
    common_after = _common_options(argparse.ArgumentParser(add_help=False), suppress=True)

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
  queuetop --layout job_queue --db "DRIVER=...;DATABASE=ops"    watch seed 004's dbo.Job_Queue
  queuetop layouts                       the queue shapes queuetop knows, with their tables and columns
  queuetop history --since 2h            what the dashboard kept of the last 2 hours (watch --help: where)
""" + LAYOUT_HELP,
    )
    parser.add_argument("--version", action="version", version=f"queuetop {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, summary: str, examples: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common_after], help=summary, description=summary,
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
  queuetop enqueue --layout job_queue --info 'resize 42' --priority 10
  queuetop enqueue --layout queuesample --type AC351A46-49E4-4F0C-BF8C-F45255012150 --info '<info><key>4</key></info>'
""")
    enqueue.add_argument("--type", "-t", dest="job_type", metavar="T",
                         help="job type (required where the shape has one; seed 000: a GUID)")
    enqueue.add_argument("--count", "-n", type=int, default=1, metavar="N", help="how many jobs (default 1)")
    enqueue.add_argument("--info", metavar="TEXT", help="payload stored in JobInfo")
    enqueue.add_argument("--priority", "-p", type=int, default=None, metavar="P",
                         help="0 (most urgent) to 255 (least); default: the table's (native 128, job_queue 255)")
    enqueue.add_argument("--delay", type=float, default=0.0, metavar="S", help="seconds before the jobs are available")
    enqueue.set_defaults(run=cmd_enqueue)

    release = command("release", "release claims past their timeout (out of attempts: dead)", """\
  queuetop release --dry-run           count them, change nothing
  queuetop release --type email        release timed-out claims of one type
  queuetop release --layout job_queue  clear timed-out Processing_Marks (compare-and-set on the mark)
  queuetop release --layout requests   put lost requests back into RequestsQueue
""")
    release.add_argument("--type", "-t", dest="job_type", metavar="T", help="only this job type")
    release.add_argument("--dry-run", action="store_true", help="only count what would be released")
    release.add_argument("--max-attempts", type=int, default=3, metavar="N",
                         help="claims that used N attempts become dead instead (default 3)")  # fmt: skip
    release.set_defaults(run=cmd_release)

    dead = command("dead", "count, retry or delete dead jobs (out of attempts): native and job_queue", """\
  queuetop dead count                  how many, per type
  queuetop dead retry --type email     back to pending, as if never tried (asks first; --yes to skip)
  queuetop dead delete --yes           remove them for good
""")
    dead.add_argument("action", choices=("count", "retry", "delete"), help="what to do with them")
    dead.add_argument("--type", "-t", dest="job_type", metavar="T", help="only this job type")
    dead.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    dead.set_defaults(run=cmd_dead)

    layouts = command("layouts", "list the queue shapes (presets) with the tables and columns each expects", """\
  queuetop layouts
  queuetop layouts --show job_queue > my_queue.toml      a preset's file, to copy and edit
""")
    layouts.add_argument("--show", metavar="NAME", help="print one preset's TOML file")
    layouts.set_defaults(run=cmd_layouts)

    detect = command("detect", "print the layout (TOML) queuetop would use for the target, ready to edit", """\
  queuetop detect --db "DRIVER={PostgreSQL Unicode};SERVER=db1;DATABASE=jobs;UID=ops" > ops.toml
  queuetop --layout ops.toml --db "..."
""")
    detect.set_defaults(run=cmd_detect)

    watch = command("watch", "the live dashboard (the default command)", f"""\
  queuetop                                  watch the embedded database
  queuetop watch --interval 0.5 --type email
  queuetop watch --read-only --db "DRIVER={{PostgreSQL Unicode}};SERVER=db1;DATABASE=jobs;UID=ops"
  queuetop watch --with-load --consumers 8  drive a load test and watch it in one window
  queuetop watch --history-keep raw:2h,10s:48h,1m:30d   keep more history

keys: ? lists them all in the app. Errors are logged to {LOG_PATH}
{HISTORY_HELP}""")
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
  queuetop demo                   in a temporary SQLite file (no history file: the queue is thrown away)
  queuetop demo --db demo.db      keep the demo queue in demo.db, and its history
""")
    add_watch_arguments(demo)
    demo.set_defaults(run=cmd_demo)

    history = command("history", "print the history the dashboard kept: per poll or per bucket, CSV, JSON or "
                                 "Markdown", f"""\
  queuetop history                                  the last hour, every poll, all types, as CSV
  queuetop history --since 2h --type email --format markdown >> incident.md
  queuetop history --since 7d --format json | jq '.rows[] | select(.job_type == "(all)") | .depth'
  queuetop history --layout job_queue --db "DRIVER=...;DATABASE=ops"    the history of that queue
The level read is the finest that covers --since (raw polls up to 1 h, 10 s means up to 24 h, then 1 min);
--since counts back from the newest poll kept. The totals are the type "(all)".
{HISTORY_HELP}""")
    history.add_argument("--type", dest="types", action="append", default=[], metavar="T",
                         help='only this job type (repeatable; "(all)" is the totals)')
    history.add_argument("--since", default="1h", metavar="DURATION",
                         help="how far back from the newest poll kept: 90s, 15m, 2h, 7d (default 1h)")
    history.add_argument("--format", choices=("csv", "json", "markdown"), default="csv",
                         help="csv (default), json, or a markdown table")
    history.add_argument("--level", default="auto", metavar="NAME",
                         help="raw, 10s or 1m (the file's levels): default the finest that covers --since")
    history.set_defaults(run=cmd_history)
    return parser


def _common_options(parser: argparse.ArgumentParser, suppress: bool) -> argparse.ArgumentParser:
    def default(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument("--db", metavar="TARGET", default=default(None),
                        help=f"database to watch (default: ${ENV_VAR}, else the embedded SQLite file)")
    parser.add_argument("--layout", metavar="NAME|FILE", default=default(None),
                        help=f"the queue's shape: a preset ({', '.join(PRESET_NAMES)}) or a .toml file "
                             f"(default: ${LAYOUT_ENV_VAR}, else the native schema, else the queue table found)")
    parser.add_argument("--table", metavar="[SCHEMA.]NAME", default=default(None),
                        help="the queue table, if not the layout's own")
    parser.add_argument("--completed-table", metavar="NAME", default=default(None),
                        help="the completed table, if not the layout's own")
    parser.add_argument("--lost-after", type=float, default=default(60.0), metavar="S",
                        help="a request taken but not completed after S seconds is lost (layout requests; default 60)")
    parser.add_argument("--debug", action="store_true", default=default(False), help="show tracebacks of errors")
    return parser


def add_watch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between polls (default 1)")
    parser.add_argument("--read-only", action="store_true", help="disable enqueue and release")
    parser.add_argument("--type", dest="types", action="append", default=[], metavar="T",
                        help="only show this job type (repeatable)")  # fmt: skip
    parser.add_argument("--no-history", action="store_true",
                        help=f"keep no history file (default: every poll is kept in {history_dir_text()})")
    parser.add_argument("--history-keep", metavar="LEVELS", default=None,
                        help=f"what the history keeps, finest first (default {DEFAULT_KEEP})")


DEFAULT_KEEP = "raw:1h,10s:24h,1m:7d"


def history_dir_text() -> str:
    from queuetop.history_store import history_dir

    return str(history_dir())


HISTORY_HELP = f"""
history: every poll is kept (unless --no-history) in a SQLite file per target and layout in
  {history_dir_text()}  ($QUEUETOP_HISTORY_DIR to change; never in the watched database):
  raw polls for 1 h, 10 s means for 24 h, 1 min means for 7 d (--history-keep); the charts start full,
  `w` shows up to 7 days, `[` `]` scrub back in time; `queuetop history` prints it.
"""


# -- opening the target ----------------------------------------------------------------------------------
def open_target(args: argparse.Namespace, purpose: str = "worker", create: bool = False) -> Database:
    """Open --db. The embedded default is created, schema and all, on first use."""
    from queuetop.schema import init_schema, schema_present

    target = parse_target(args.db)
    embedded = _is_embedded_default(args, target) and _layout_name(args) in (None, "native")
    db = Database.open(target, purpose=purpose, create=create or embedded)
    if embedded and not schema_present(db):
        init_schema(db)
    return db


def _layout_name(args: argparse.Namespace) -> str | None:
    return getattr(args, "layout", None) or os.environ.get(LAYOUT_ENV_VAR) or None


def settings_from(args: argparse.Namespace) -> dict[str, float]:
    lost_after = getattr(args, "lost_after", 60.0)
    if not 0 < lost_after < 10**7:
        raise UsageError(f"--lost-after must be a positive number of seconds, not {lost_after}")
    return {"lost_after": lost_after}


def resolve_layout(args: argparse.Namespace, db: Database) -> tuple[Layout, str | None]:
    """The layout to use and, when it was found rather than given, the sentence that says so: --layout (or
    $QUEUETOP_LAYOUT) checked against the catalog; else the native schema if it is there; else the one queue
    table the catalog holds."""
    from queuetop.detect import Catalog, check_layout, choose, detect
    from queuetop.layouts import load_layout, require_table, with_tables
    from queuetop.schema import schema_present

    name = _layout_name(args)
    table, completed = getattr(args, "table", None), getattr(args, "completed_table", None)
    if name:
        layout = require_table(with_tables(load_layout(name), table, completed))
        return check_layout(db, layout), None
    if not table and schema_present(db, NATIVE):
        return NATIVE, None
    catalog = Catalog(db)
    if table:  # a table without a layout: the preset that fits it
        wanted = with_tables(NATIVE, table).queue_table.lower()
        fits = [c for c in detect(db, catalog) if c.table.name.lower() == wanted]
        if not fits:
            raise UsageError(f"no preset fits the table {table}", "name its shape with --layout, or write a layout "
                             "file (`queuetop layouts --show NAME` prints one to start from)")
        return fits[0].layout, f"{table}: layout {fits[0].preset}"
    return choose(db, catalog)


def _announce(note: str | None) -> None:
    if note:
        print(f"queuetop: {note}", file=sys.stderr)


def _is_embedded_default(args: argparse.Namespace, target: Target) -> bool:
    return args.db is None and not os.environ.get(ENV_VAR) and target.kind == "sqlite"


# -- commands --------------------------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace) -> int:
    from queuetop.schema import init_schema

    name = _layout_name(args)
    if name not in (None, "native"):
        raise UsageError(f"`queuetop init` creates the native schema only, not layout {name}",
                         "a seed's tables are yours: watch them as they are with --layout")
    with open_target(args, create=True) as db:
        steps = init_schema(db)
        print(f"{db.target.display} ({db.dialect.name})")
        for step in steps:
            print(f"  {'created' if step.created else 'exists '}  {step.kind:<6} {step.name}")
        made = sum(step.created for step in steps)
        print("schema ready: " + (f"{made} object(s) created" if made else "nothing to do, everything was there"))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from queuetop.collector import collector_for

    settings = settings_from(args)
    with open_target(args, purpose="monitor") as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        if args.types and not layout.has_job_type:
            raise UsageError(f"layout {layout.name} has no job type column, so --type cannot choose", "drop --type")
        snapshot = collector_for(db, layout, job_types=args.types, settings=settings, note=note).poll()
    if args.json:
        print(json.dumps(snapshot.to_json(), indent=2))
    else:
        print(render_table(snapshot))
    return 0


def cmd_enqueue(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from queuetop.queue import DEFAULT_PRIORITY, Queue
    from queuetop.shape_queue import ShapeQueue

    if args.delay < 0:
        raise UsageError(f"--delay must be zero or more seconds, not {args.delay}")
    with open_target(args) as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        if layout.native:
            if args.job_type is None:
                raise UsageError("the job type is missing", "name it with --type T")
            available = db.now() + timedelta(seconds=args.delay) if args.delay else None
            priority = DEFAULT_PRIORITY if args.priority is None else args.priority
            ids = Queue(db, layout).enqueue_many(args.job_type, args.count, info=args.info, priority=priority,
                                                 available_at=available, created_by="queuetop-cli")  # fmt: skip
        else:
            ids = ShapeQueue(db, layout).enqueue_many(args.job_type, args.count, info=args.info,
                                                      priority=args.priority, delay_s=args.delay)  # fmt: skip
    noun = "job" if len(ids) == 1 else "jobs"
    listed = ", ".join(map(str, ids)) if len(ids) <= 10 else f"{ids[0]}..{ids[-1]}"
    kind = f" of type {args.job_type!r}" if args.job_type is not None else f" into {layout.queue_table}"
    print(f"enqueued {len(ids):,} {noun}{kind}: id{'s' if len(ids) > 1 else ''} {listed}")
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from queuetop.queue import Queue
    from queuetop.shape_queue import ShapeQueue

    with open_target(args) as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        scope = f" of type {args.job_type!r}" if args.job_type else ""
        if layout.native:
            result = Queue(db, layout, max_attempts=args.max_attempts).release_timed_out(args.job_type,
                                                                                          dry_run=args.dry_run)
        else:
            settings = {**settings_from(args), "max_attempts": args.max_attempts}
            result = ShapeQueue(db, layout, settings).release(args.job_type, dry_run=args.dry_run)
            what = layout.release.what if layout.release else "claims"
            if result.timed_out == 0:
                print(f"no {what}{scope}: nothing to release")
            elif result.dry_run:
                print(f"{result.timed_out:,} {what}{scope} would be released (dry run: nothing changed)")
            else:
                dead = f"; {result.dead:,} out of attempts counted as dead" if "dead" in layout.states else ""
                back = "back into the queue" if layout.release and layout.release.action == "requeue" else \
                    "back to pending"
                print(f"released {result.released:,} of {result.timed_out:,} {what}{scope} {back}{dead}")
            return 0
    if result.timed_out == 0:
        print(f"no timed-out claims{scope}: nothing to release")
    elif result.dry_run:
        print(f"{result.timed_out:,} claim(s){scope} past their timeout would be released (dry run: nothing changed)")
    else:
        print(f"released {result.released:,} timed-out claim(s){scope} back to pending; "
              f"{result.dead:,} out of attempts moved to dead")  # fmt: skip
    return 0


def cmd_dead(args: argparse.Namespace) -> int:
    from queuetop.shape_queue import ShapeQueue

    with open_target(args) as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        queue = ShapeQueue(db, layout, settings_from(args))
        scope = f" of type {args.job_type!r}" if args.job_type else ""
        found = queue.dead("count", args.job_type)
        if args.action == "count" or found == 0:
            print(f"{found:,} dead job(s){scope}" + ("" if found else ": nothing to do"))
            return 0
        verb = "retry" if args.action == "retry" else "delete"
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageError(f"{found:,} dead job(s){scope} would be {'retried' if verb == 'retry' else 'deleted'}"
                                 ", but there is no terminal to confirm it", "add --yes to do it")
            answer = input(f"{verb} {found:,} dead job(s){scope}? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print("nothing changed")
                return 0
        changed = queue.dead(args.action, args.job_type)
        done = "back to pending" if args.action == "retry" else "deleted"
        print(f"{changed:,} dead job(s){scope} {done}")
    return 0


def cmd_layouts(args: argparse.Namespace) -> int:
    from queuetop.layouts import load_layout, preset_text

    if args.show:
        load_layout(args.show)  # a clear error for an unknown name
        print(preset_text(args.show), end="")
        return 0
    for name in PRESET_NAMES:
        layout = load_layout(name)
        tables = ", ".join(layout.table_names()) if not layout.table_required else "(your table: --table)"
        print(f"{name:<12} {layout.description}")
        print(f"{'':<12} tables:  {tables}   clock: {layout.clock}")
        queue = [c for r, c in layout.columns.items() if not r.startswith("c_")]
        print(f"{'':<12} columns: {', '.join(dict.fromkeys(queue))}")
        completed = [c for r, c in layout.columns.items() if r.startswith("c_")]
        if completed:
            print(f"{'':<12} completed table: {', '.join(dict.fromkeys(completed))}")
        missing = [f for f, ok in layout.provides.items() if not ok]
        if missing:
            print(f"{'':<12} cannot know: {', '.join(missing)}")
    print("\nwatch one: queuetop --layout NAME [--table SCHEMA.NAME] --db TARGET;  "
          "its file: queuetop layouts --show NAME")
    return 0


def cmd_detect(args: argparse.Namespace) -> int:
    from queuetop.detect import detect

    with open_target(args, purpose="monitor") as db:
        if _layout_name(args) or args.table:
            layout, _ = resolve_layout(args, db)
            candidates = [(layout.name, layout)]
        else:
            found = detect(db)
            if not found:
                raise UsageError(f"no queue table in {db.target.display} fits a preset",
                                 "`queuetop layouts` lists what each expects; `queuetop init` creates the native one")
            candidates = [(c.preset, c.layout) for c in found]
    for index, (preset, layout) in enumerate(candidates):
        if index:
            print()
        print(layout_toml(preset, layout))
    return 0


def layout_toml(preset: str, layout: Layout) -> str:
    """A layout file that starts from a preset and names where this target keeps the tables."""
    from queuetop.layouts import load_layout

    base = load_layout(preset)
    lines = [f"# queuetop layout: preset {preset} ({base.description})", f'preset = "{preset}"', "", "[tables]"]
    if layout.schema:
        lines.append(f'schema = "{layout.schema}"')
    lines.append(f'queue = "{layout.queue_table}"')
    if layout.completed_table:
        lines.append(f'completed = "{layout.completed_table}"')
    for section, prefix in (("queue_columns", ""), ("completed_columns", "c_")):
        changed = {r: c for r, c in layout.columns.items()
                   if r.startswith("c_") == bool(prefix) and base.columns.get(r) != c}
        if changed:
            lines += ["", f"[{section}]"]
            for role, column in changed.items():
                sql_type = layout.types.get(role)
                lines.append(f'{role.removeprefix(prefix)} = "{column}{" " + sql_type if sql_type else ""}"')
    return "\n".join(lines)


def _check_interval(args: argparse.Namespace) -> None:
    if not 0.1 <= args.interval <= 3600:
        raise UsageError(f"--interval must be from 0.1 to 3600 seconds, not {args.interval}")


def cmd_watch(args: argparse.Namespace) -> int:
    _check_interval(args)
    settings = settings_from(args)
    target = parse_target(args.db)
    auto_init = _is_embedded_default(args, target) and _layout_name(args) in (None, "native")
    layout, note = _watch_layout(args, target, auto_init)
    if args.types and not layout.has_job_type:
        raise UsageError(f"layout {layout.name} has no job type column, so --type cannot choose", "drop --type")
    background = None
    if args.with_load:
        from queuetop.load.command import config_from_args, start_background_load

        _refuse_load(layout, "watch --with-load")
        config = config_from_args(args)
        if auto_init:
            open_target(args).close()  # the load's workers need the schema before the dashboard makes it
        background = start_background_load(target, config)
    return _dashboard(args, target, background, auto_init=auto_init, layout=layout, settings=settings, note=note)


def _watch_layout(args: argparse.Namespace, target: Target, auto_init: bool) -> tuple[Layout, str | None]:
    """The dashboard's layout. A database that cannot be reached yet is no error here: the dashboard shows the
    outage and keeps trying, with the layout given (or the native one)."""
    from queuetop.db import ConnectError, SchemaMissing
    from queuetop.layouts import load_layout, require_table, with_tables

    if auto_init:
        return NATIVE, None
    try:
        with Database.open(target, purpose="monitor") as db:
            return resolve_layout(args, db)
    except (ConnectError, SchemaMissing):
        name = _layout_name(args)
        if not name:
            return NATIVE, None
        return require_table(with_tables(load_layout(name), args.table, args.completed_table)), None


def _refuse_load(layout: Layout, command: str) -> None:
    if not layout.native:
        raise UsageError(f"`queuetop {command}` cannot drive layout {layout.name} yet: its load driver runs the "
                         "native schema's claims only", "watch it with `queuetop --layout "
                         f"{layout.name}` while your own workers run, or try the native queue: `queuetop demo`")


def cmd_load(args: argparse.Namespace) -> int:
    from queuetop.layouts import load_layout
    from queuetop.load.command import run_load_command

    name = _layout_name(args)
    _refuse_load(load_layout(name) if name else NATIVE, "load")
    return run_load_command(args)


def cmd_demo(args: argparse.Namespace) -> int:
    import tempfile

    from queuetop.load.command import demo_config, start_background_load
    from queuetop.schema import init_schema

    _check_interval(args)
    name = _layout_name(args)
    if name:
        from queuetop.layouts import load_layout

        _refuse_load(load_layout(name), "demo")
    where = args.db or str(Path(tempfile.mkdtemp(prefix="queuetop-demo-")) / "demo.db")
    target = parse_target(where)
    with Database.open(target, create=True) as db:
        init_schema(db)
    background = start_background_load(target, demo_config())
    if not args.db:
        args.no_history = True  # a queue thrown away at the end: no history file to pile up
    status = _dashboard(args, target, background, auto_init=False)
    print(f"demo stopped; the demo queue is in {target.display}")
    print(f"  look again with: queuetop --db {where}")
    return status


def _dashboard(args: argparse.Namespace, target: Target, background: LoadRun | None, auto_init: bool,
               layout: Layout = NATIVE, settings: dict | None = None, note: str | None = None) -> int:
    from queuetop.tui import run_dashboard

    history_path, retention = _history(args, target, layout)
    try:
        return run_dashboard(target, layout=layout, interval=args.interval, read_only=args.read_only,
                             job_types=args.types, auto_init=auto_init, background=background, log_path=LOG_PATH,
                             settings=settings, note=note, history_path=history_path,
                             retention=retention)  # fmt: skip
    finally:
        if background is not None:
            summary = background.stop()
            if summary:
                print(summary)


def _history(args: argparse.Namespace, target: Target, layout: Layout) -> tuple[Path | None, Retention | None]:
    """The history file of this target and layout (None with --no-history), and the retention asked for."""
    from queuetop.history_store import Retention, history_path

    retention = Retention.parse(args.history_keep) if args.history_keep else None
    if args.no_history:
        return None, retention
    return history_path(target, layout), retention


def cmd_history(args: argparse.Namespace) -> int:
    from queuetop.history_report import history_csv, history_json, history_markdown
    from queuetop.history_store import HistoryStore, find_history, history_dir, parse_duration

    since_s = parse_duration(args.since, "--since")
    target = parse_target(args.db)
    name = _layout_name(args)
    layout_name = None
    if name:
        from queuetop.layouts import load_layout

        layout_name = load_layout(name).name
    found = find_history(target, layout_name, table=args.table)
    shown = f"{target.display}" + (f" (layout {layout_name})" if layout_name else "")
    if not found:
        raise UsageError(f"no history kept for {shown} in {history_dir()}",
                         "the dashboard keeps it while it runs (`queuetop watch`), unless --no-history")
    if len(found) > 1 and layout_name is None:
        layouts = ", ".join(sorted(meta.get("layout", "?").split(":")[0] for _, meta in found))
        raise UsageError(f"several histories kept for {shown}: layouts {layouts}", "choose one with --layout NAME")
    path, meta = found[0]
    store = HistoryStore(path, create=False)
    try:
        latest = store.latest()
        known = store.job_types()
        unknown = [t for t in args.types if t not in known]
        if unknown:
            listed = ", ".join(known[:8]) + (", …" if len(known) > 8 else "")
            raise UsageError(f"no history of job type {unknown[0]!r} in {path.name}", f"known: {listed}")
        level = store.level_for(since_s) if args.level == "auto" else store.retention.level_named(args.level)
        records = [] if latest is None else store.records(since=latest - since_s, job_types=args.types or None,
                                                          level=level)  # fmt: skip
        width = store.retention.levels[level].width_s
        level_name = store.retention.levels[level].name
    finally:
        store.close()
    if args.format == "csv":
        print(history_csv(records, meta.get("clock", "utc")), end="")
    elif args.format == "json":
        print(history_json(records, meta, level_name, width))
    else:
        print(history_markdown(records, meta, level_name, width), end="")
    return 0


# -- the stats table -------------------------------------------------------------------------------------
COLUMNS: list[tuple[str, str | None, Callable[[TypeStats], str]]] = [
    ("TYPE", None, lambda r: r.job_type),
    ("DEPTH", "depth", lambda r: fmt.count(r.depth, r.depth_is_estimate)),
    ("OLDEST", "oldest_age_s", lambda r: fmt.duration(r.oldest_age_s)),
    ("SCHED", "scheduled", lambda r: fmt.count(r.scheduled)),
    ("CLAIMED", "claimed", lambda r: fmt.count(r.claimed)),
    ("TIMED-OUT", "timed_out", lambda r: fmt.count(r.timed_out)),
    ("DEAD", "dead", lambda r: fmt.count(r.dead)),
    ("LOST", "lost", lambda r: fmt.count(r.lost)),
    ("IN/s 10s", "arrivals", lambda r: fmt.rate(r.arrivals_10s_per_s)),
    ("OUT/s 10s", "completions", lambda r: fmt.rate(r.completions_10s_per_s)),
    ("IN/s 60s", "arrivals", lambda r: fmt.rate(r.arrivals_60s_per_s)),
    ("OUT/s 60s", "completions", lambda r: fmt.rate(r.completions_60s_per_s)),
    ("WAIT p50/p95/p99", "wait",
     lambda r: "/".join(fmt.duration(v) for v in (r.wait_p50_s, r.wait_p95_s, r.wait_p99_s))),
    ("PROC p50/p95/p99", "processing", lambda r: "/".join(
        fmt.duration(v) for v in (r.processing_p50_s, r.processing_p95_s, r.processing_p99_s))),
    ("DRAIN", None, lambda r: fmt.drain(r.drain, r.drain_eta_s)),
]  # fmt: skip


def render_table(snapshot: Snapshot) -> str:
    """The stats table: only the columns the queue's shape can know."""
    columns = [(name, cell) for name, figure, cell in COLUMNS if figure is None or snapshot.provides(figure)]
    rows = [[cell(row) for _, cell in columns] for row in (*snapshot.types, snapshot.totals)]
    header = [name for name, _ in columns]
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = (c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded)

    clock = "UTC" if snapshot.clock == "utc" else "server local time"
    out = [f"{snapshot.target} ({snapshot.dialect}, layout {snapshot.layout}) at {snapshot.taken_at:%Y-%m-%d %H:%M:%S} "
           f"{clock}, poll {snapshot.poll_ms:.1f} ms, rates and latencies over the last {snapshot.window_s:.0f} s"]
    out.append(line(header))
    if not snapshot.types:
        out.append("(the queue is empty: add jobs with `queuetop enqueue`)")
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
