"""The `queuetop` command: argument parsing, and one small function per subcommand.

Every failure a user can cause or meet (a bad argument, an unreachable server, a missing schema) ends as one
line on stderr naming the cause and the fix, with exit code 2; `--debug` adds the traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from queuetop import __version__
from queuetop import format as fmt
from queuetop.config import CONFIG_ENV_VAR, default_config_path
from queuetop.db import Database, QueuetopError, UsageError, parse_target
from queuetop.db.target import ENV_VAR, Target, default_database_path
from queuetop.errors import STOP_SIGNALS, Stopped
from queuetop.layouts import CLAIM_FORMS, NATIVE, PRESET_NAMES, Layout
from queuetop.load.command import add_load_arguments
from queuetop.snapshot import Snapshot, TypeStats

if TYPE_CHECKING:
    from queuetop.check import TargetResult
    from queuetop.config import Effective
    from queuetop.history_store import Retention
    from queuetop.load.driver import LoadRun
    from queuetop.slo import Slos
    from queuetop.tui import WatchedTarget
    from queuetop.workers import WorkersView

EXIT_USAGE = 2
COMMANDS = ("init", "stats", "enqueue", "release", "dead", "watch", "load", "demo", "layouts", "detect", "doctor",
            "workers", "check", "serve", "config", "history")
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
  -t NAME: a target named in the config file, {default_config_path()} or --config FILE
    ([targets.NAME] db = "...;PWD=${{ENV_VAR}}"; `queuetop config` shows what each setting is and where from)
"""


class OneLineErrors(argparse.ArgumentParser):
    """argparse with the README's promise: a mistake on the command line is one line on stderr, exit 2, naming
    the option, what it takes and where the rest is said (`--help`), instead of the whole usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"queuetop: error: {_plain(message)} (see `{self.prog} --help`)\n")


_ARGPARSE_WORDING = [  # argparse's phrases, said as the rest of queuetop's errors say things
    (re.compile(r"^argument (\S+?)(?:/\S+)?: invalid int value: (.*)$"), r"\1 takes a whole number, not \2"),
    (re.compile(r"^argument (\S+?)(?:/\S+)?: invalid float value: (.*)$"), r"\1 takes a number, not \2"),
    (re.compile(r"^argument (\S+?)(?:/\S+)?: invalid choice: (.*) \(choose from (.*)\)$"),
     r"\1 takes one of \3, not \2"),
    (re.compile(r"^argument (\S+?)(?:/\S+)?: expected one argument$"), r"\1 needs a value"),
    (re.compile(r"^argument (\S+?)(?:/\S+)?: (.*)$"), r"\1: \2"),
]


def _plain(message: str) -> str:
    for pattern, wording in _ARGPARSE_WORDING:
        if pattern.match(message):
            return pattern.sub(wording, message)
    return message


def _parser() -> argparse.ArgumentParser:
    # The options every command shares are accepted before and after the subcommand. The subcommand's copy
    # defaults to "not given" (SUPPRESS), so it never overwrites a value given before it.
    common = _common_options(argparse.ArgumentParser(add_help=False), suppress=False)
    common_after = _common_options(argparse.ArgumentParser(add_help=False), suppress=True)
    # enqueue, release and dead have long used -t for --type: there only --target names a target.
    common_after_no_t = _common_options(argparse.ArgumentParser(add_help=False), suppress=True, short_target=False)

    parser = OneLineErrors(
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
  queuetop -t prod                       watch a target named in the config file (`queuetop config` shows it)
  queuetop check --max-oldest-age 60     SLOs for cron, CI, Nagios: exit 0 ok, 1 breach, 2 could not check
  queuetop serve -t prod -t staging      OpenMetrics for Prometheus on http://127.0.0.1:9187/metrics
  queuetop history --since 2h            what the dashboard kept of the last 2 hours (watch --help: where)
""" + LAYOUT_HELP,
    )
    parser.add_argument("--version", action="version", version=f"queuetop {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, summary: str, examples: str, t_is_type: bool = False) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common_after_no_t if t_is_type else common_after], help=summary,
                              description=summary,
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
  queuetop stats --format openmetrics > /var/lib/node_exporter/textfile/queuetop.prom.$$ && \
    mv /var/lib/node_exporter/textfile/queuetop.prom.$$ /var/lib/node_exporter/textfile/queuetop.prom
""")
    stats.add_argument("--json", action="store_const", const="json", dest="format",
                       help="print JSON (shape documented in the README); the same as --format json")
    stats.add_argument("--format", choices=("table", "json", "openmetrics"), default="table",
                       help="table (default), json, or openmetrics: one exposition for node_exporter's textfile "
                            "collector (the series of `queuetop serve`)")
    stats.add_argument("--type", dest="types", action="append", default=[], metavar="T",
                       help="only this job type (repeatable)")  # fmt: skip
    stats.set_defaults(run=cmd_stats)

    enqueue = command("enqueue", "add test jobs to the queue", """\
  queuetop enqueue --type email
  queuetop enqueue --type report --count 500 --info '{"size": 3}' --priority 10
  queuetop enqueue --type cleanup --delay 60        available in a minute
  queuetop enqueue --layout job_queue --info 'resize 42' --priority 10
  queuetop enqueue --layout queuesample --type AC351A46-49E4-4F0C-BF8C-F45255012150 --info '<info><key>4</key></info>'
  queuetop -t staging enqueue -t email      -t before the command names a target, after it a type
""", t_is_type=True)
    enqueue.add_argument("--type", "-t", dest="job_type", metavar="T",
                         help="job type (required where the shape has one; seed 000: a GUID)")
    enqueue.add_argument("--count", "-n", type=int, default=1, metavar="N", help="how many jobs (default 1)")
    enqueue.add_argument("--info", metavar="TEXT",
                         help="the payload (JobInfo; a seed's payload column). Without it: none on the native schema; "
                              "'queuetop test job' on a seed's table, whose payload column takes no NULL")
    enqueue.add_argument("--priority", "-p", type=int, default=None, metavar="P",
                         help="0 (most urgent) to 255 (least); default: the table's (native 128, job_queue 255)")
    enqueue.add_argument("--delay", type=float, default=0.0, metavar="S", help="seconds before the jobs are available")
    enqueue.set_defaults(run=cmd_enqueue)

    release = command("release", "release claims past their timeout (out of attempts: dead)", """\
  queuetop release --dry-run           count them, change nothing
  queuetop release --type email        release timed-out claims of one type
  queuetop release --layout job_queue  clear timed-out Processing_Marks (compare-and-set on the mark)
  queuetop release --layout requests   put lost requests back into RequestsQueue
  queuetop release --worker render-7   only the timed-out claims of one claimer (`queuetop workers` lists them)
""", t_is_type=True)
    release.add_argument("--type", "-t", dest="job_type", metavar="T", help="only this job type")
    release.add_argument("--dry-run", action="store_true", help="only count what would be released")
    release.add_argument("--worker", metavar="NAME",
                         help="only this claimer's timed-out claims (RetrievedBy / Processing_Server), each by "
                              "compare-and-set on its token")  # fmt: skip
    release.add_argument("--max-attempts", type=int, default=3, metavar="N",
                         help="claims that used N attempts become dead instead (default 3)")  # fmt: skip
    release.set_defaults(run=cmd_release)

    dead = command("dead", "count, retry or delete dead jobs (out of attempts): native and job_queue", """\
  queuetop dead count                  how many, per type
  queuetop dead retry --type email     back to pending, as if never tried (asks first; --yes to skip)
  queuetop dead delete --yes           remove them for good
""", t_is_type=True)
    dead.add_argument("action", choices=("count", "retry", "delete"), help="what to do with them")
    dead.add_argument("--type", "-t", dest="job_type", metavar="T", help="only this job type")
    dead.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    dead.set_defaults(run=cmd_dead)

    workers = command("workers", "who holds what: per claimer, from the claims (held, timed out, the last minute)", """\
  queuetop workers                        one line per worker; a worker whose claims all timed out: probably dead
  queuetop workers --json | jq '.workers[] | select(.probably_dead)'
  queuetop workers --layout job_queue     seed 004's Processing_Server

A dead worker's claims are released from the dashboard's workers panel (W, then r), or all at once with
`queuetop release`. Shapes whose rows do not name a claimer (requests, work_queue, processed) say so.
""")
    workers.add_argument("--json", action="store_true", help="print JSON (fields documented in the README)")
    workers.set_defaults(run=cmd_workers)

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

    doctor = command("doctor", "check the queue's indexes, settings, size and sessions before a load test", """\
  queuetop doctor                                     the embedded database
  queuetop doctor --layout work_queue --db "DRIVER={PostgreSQL Unicode};SERVER=db1;DATABASE=ops;UID=dba"
  queuetop doctor --json | jq '.findings[] | select(.status != "ok")'
  queuetop doctor --strict --sample 0 && run-load-test   a warning stops the script too; no growth sample

checks: every poll, drill-down and dequeue statement planned (not run) and served by an index; SQL Server's
read-committed snapshot, lock escalation and QUOTED_IDENTIFIER of the code that writes the queue; table sizes,
growth, retention, dead tuples / ghost records / free pages; sessions idle in a transaction holding claims and
blocking chains, with application and host. Each finding: ok, warn, fail or unknown, what it means, and the
statement that would fix it (printed, never run).
exit code: 0 nothing failed (warnings and unknowns allowed), 1 a check failed (--strict: or warned),
2 the checks could not run (bad option, database unreachable)
""")
    doctor.add_argument("--json", action="store_true", help="print the findings as JSON (shape in the README)")
    doctor.add_argument("--strict", action="store_true", help="exit 1 on a warning too")
    doctor.add_argument("--sample", type=float, default=2.0, metavar="S",
                        help="seconds between the two size reads that give growth (default 2; 0: one read)")
    doctor.add_argument("--verbose", "-v", action="store_true", help="also show each statement planned")
    doctor.set_defaults(run=cmd_doctor)

    watch = command("watch", "the live dashboard (the default command)", f"""\
  queuetop                                  watch the embedded database
  queuetop watch --interval 0.5 --type email
  queuetop watch --read-only --db "DRIVER={{PostgreSQL Unicode}};SERVER=db1;DATABASE=jobs;UID=ops"
  queuetop watch --with-load --consumers 8  drive a load test and watch it in one window
  queuetop watch --history-keep raw:2h,10s:48h,1m:30d   keep more history
  queuetop -t prod -t staging               one dashboard over two targets of the config file (Tab: next one)
  queuetop watch --all                      every target of the config file, one section each

keys: ? lists them all in the app. Errors are logged to {LOG_PATH}
{HISTORY_HELP}""")
    add_watch_arguments(watch)
    watch.add_argument("--all", dest="all_targets", action="store_true",
                       help="every target of the config file, one section each (as several -t NAME)")
    watch.add_argument("--with-load", action="store_true", help="also run a load test (options below) while watching")
    add_load_arguments(watch)
    watch.set_defaults(run=cmd_watch)

    load = command("load", "run a load test: producers and consumers through the real queue operations", """\
  queuetop load --duration 30
  queuetop load --producers 2 --consumers 8 --rate unlimited --jobs 50000 --batch 10
  queuetop load --types email:5,report:1 --work email=fixed:5,report=exp:200 --fail 0.05 --crash 0.01 \\
                --lease 5 --release-every 2 --json
  queuetop load --layout job_queue --db "DRIVER=..." --consumers 16 --batch 10 --crash 0.01 --fail 0.05 --lease 20
                                    seed 004's own usp_API_Get_Job under 16 workers, crashes and timeouts
  queuetop load --layout work_queue --claim-form unlocked --consumers 8 --jobs 500
                                    seed 002's broken first try: the verdict finds the duplicates (exit 1)
every claim is written in a ledger outside the queue's tables: a duplicate is a job two workers held at once.
exit code: 0 when no job was lost and none was held by two workers at once, 1 otherwise, 2 on errors
""")
    add_load_arguments(load)
    load.add_argument("--json", action="store_true", help="print the end report as JSON")
    load.set_defaults(run=cmd_load)

    demo = command("demo", "a fresh queue, a background load and the dashboard on top: the guided tour", """\
  queuetop demo                   in a temporary SQLite file (no history file: the queue is thrown away)
  queuetop demo --db demo.db      keep the demo queue in demo.db, and its history
  queuetop demo --layout job_queue                 seed 004's Job_Queue, driven by its own usp_API_Get_Job
  queuetop demo --layout work_queue --claim-form update_top
""")
    add_watch_arguments(demo)
    demo.add_argument("--claim-form", choices=tuple(CLAIM_FORMS), metavar="FORM",
                      help="which of the seed's dequeues the demo's workers run (see `queuetop load --help`)")
    demo.set_defaults(run=cmd_demo)

    check = command("check", "check SLOs once (or for a while) and exit 0 ok, 1 breach, 2 could not check", """\
  queuetop check --max-oldest-age 60 --max-timed-out 0
  queuetop check --slo email:max_wait_p95_s=30 --slo max_depth=5000 --json
  queuetop check -t prod -t staging --for 30s      breached at every poll for 30 s: a breach; a blip is not
  */5 * * * * queuetop check -t prod || mail -s "queue SLO" ops@example.com < /dev/null   (cron)
exit code: 0 every SLO met; 1 at least one breach; 2 could not check (a target unreachable, an SLO its shape
cannot know, no SLO given). SLOs come from the options and the config file (`queuetop config` lists them).
""")
    add_slo_arguments(check)
    check.add_argument("--for", dest="for_s", type=duration_arg, default=0.0, metavar="DURATION",
                       help="poll for this long (30s, 2m) and report only breaches seen at every poll")
    check.add_argument("--interval", type=float, default=None, metavar="S",
                       help="seconds between polls with --for (default: the target's interval, else 1)")
    check.add_argument("--all", dest="all_targets", action="store_true", help="every target of the config file")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.set_defaults(run=cmd_check)

    serve = command("serve", "serve the queue's figures as OpenMetrics for Prometheus (one poll loop per target)",
                    """\
  queuetop serve                                  http://127.0.0.1:9187/metrics for the default target
  queuetop serve -t prod -t staging --interval 5  one endpoint, a `target` label per target
  queuetop serve --all --listen 0.0.0.0:9187      every target of the config file, on every interface
  queuetop serve -t prod --slo max_oldest_age_s=300   and queuetop_slo_breach series for the breached SLOs
Listens on the loopback interface unless --listen names another address. Each target is polled by its own
thread and connection every --interval seconds, never once per scrape; a dead target shows queuetop_up 0.
""")
    add_slo_arguments(serve, shown=False)
    serve.add_argument("--listen", default="127.0.0.1:9187", metavar="HOST:PORT",
                       help="where to listen (default 127.0.0.1:9187; port 0 picks a free one)")
    serve.add_argument("--interval", type=float, default=None, metavar="S",
                       help="seconds between polls of each target (default: the target's interval, else 1)")
    serve.add_argument("--all", dest="all_targets", action="store_true", help="every target of the config file")
    serve.set_defaults(run=cmd_serve)

    config = command("config", "print the effective settings, where each came from (passwords masked)", f"""\
  queuetop config
  queuetop config -t prod
  queuetop config --all --json
  PROD_QUEUE_PWD=... queuetop --config ./ops.toml config -t prod
The file: --config FILE, else ${CONFIG_ENV_VAR}, else {default_config_path()}. Precedence: command line, then
environment, then the file (the target's section, then its top level), then the default.
""")
    add_slo_arguments(config, shown=False)
    config.add_argument("--interval", type=float, default=None, metavar="S", help="as the dashboard's: shown with "
                        "where it came from")
    config.add_argument("--read-only", action="store_true", default=None, help="as the dashboard's")
    config.add_argument("--all", dest="all_targets", action="store_true", help="every target of the config file")
    config.add_argument("--json", action="store_true", help="print JSON")
    config.set_defaults(run=cmd_config)

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


def _common_options(parser: argparse.ArgumentParser, suppress: bool, short_target: bool = True
                    ) -> argparse.ArgumentParser:  # fmt: skip
    def default(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(*(("-t", "--target") if short_target else ("--target",)), dest="targets", action="append",
                        default=default([]), metavar="NAME",
                        help="a target named in the config file (repeatable for watch, check, serve and config)")
    parser.add_argument("--config", metavar="FILE", default=default(None),
                        help=f"the config file (default: ${CONFIG_ENV_VAR}, else {default_config_path()})")
    parser.add_argument("--db", metavar="TARGET", default=default(None),
                        help=f"database to watch (default: ${ENV_VAR}, else the embedded SQLite file)")
    parser.add_argument("--layout", metavar="NAME|FILE", default=default(None),
                        help=f"the queue's shape: a preset ({', '.join(PRESET_NAMES)}) or a .toml file "
                             f"(default: ${LAYOUT_ENV_VAR}, else the native schema, else the queue table found)")
    parser.add_argument("--table", metavar="[SCHEMA.]NAME", default=default(None),
                        help="the queue table, if not the layout's own")
    parser.add_argument("--completed-table", metavar="NAME", default=default(None),
                        help="the completed table, if not the layout's own")
    parser.add_argument("--lost-after", type=float, default=default(None), metavar="S",
                        help="a request taken but not completed after S seconds is lost (layout requests; default 60)")
    parser.add_argument("--debug", action="store_true", default=default(False), help="show tracebacks of errors")
    return parser


def add_watch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interval", type=float, default=None, metavar="S",
                        help="seconds between polls (default: the config file's, else 1)")
    parser.add_argument("--read-only", action="store_true", default=None, help="disable enqueue and release")
    parser.add_argument("--type", dest="types", action="append", default=[], metavar="T",
                        help="only show this job type (repeatable)")  # fmt: skip
    add_slo_arguments(parser, shown=False)
    parser.add_argument("--no-bell", dest="bell", action="store_false",
                        help="do not ring the terminal bell when an SLO is newly breached")
    parser.add_argument("--no-history", action="store_true",
                        help=f"keep no history file (default: every poll is kept in {history_dir_text()})")
    parser.add_argument("--history-keep", metavar="LEVELS", default=None,
                        help=f"what the history keeps, finest first (default {DEFAULT_KEEP})")


def add_slo_arguments(parser: argparse.ArgumentParser, shown: bool = True) -> None:
    """The SLO options: one flag per SLO for every job type, and --slo for one type (or any SLO by name)."""
    from queuetop.slo import SPECS

    group = parser.add_argument_group("SLOs (beat the config file's; `queuetop config` shows the result)")
    for slo, spec in SPECS.items():
        unit = {"s": "seconds", "jobs": "jobs", "/s": "per second"}[spec.unit]
        group.add_argument(spec.flag, dest=f"slo_{slo.value}", type=float, default=None, metavar="N",
                           help=f"{slo.value}: {spec.label} {'at least' if spec.is_minimum else 'at most'} N {unit}, "
                                "for every job type" if shown else argparse.SUPPRESS)  # fmt: skip
    group.add_argument("--slo", dest="slo_options", action="append", default=[], metavar="[TYPE:]NAME=VALUE",
                       help="one SLO by its name, for one job type or all (repeatable): email:max_wait_p95_s=30"
                            if shown else "one SLO, for one job type or all: email:max_wait_p95_s=30")


def duration_arg(text: str) -> float:
    """30, 30s, 2m, 1h → seconds (for --for)."""
    units = {"s": 1, "m": 60, "h": 3600}
    text = text.strip().lower()
    scale = units.get(text[-1:])
    try:
        value = float(text[:-1] if scale else text) * (scale or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: write 30, 30s, 2m or 1h") from None
    if not 0 <= value <= 86400:
        raise argparse.ArgumentTypeError(f"{text!r}: from 0 to 24 hours")
    return value



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
    lost_after = getattr(args, "lost_after", None)
    lost_after = 60.0 if lost_after is None else lost_after
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
        for note in db.dialect.schema_notes(NATIVE):
            print(f"note: {note}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from queuetop.collector import collector_for

    settings = settings_from(args)
    try:
        with open_target(args, purpose="monitor") as db:
            layout, note = resolve_layout(args, db)
            _announce(note)
            if args.types and not layout.has_job_type:
                raise UsageError(f"layout {layout.name} has no job type column, so --type cannot choose", "drop --type")
            snapshot = collector_for(db, layout, job_types=args.types, settings=settings, note=note).poll()
    except QueuetopError as exc:
        if args.format not in ("json", "openmetrics"):  # the table (--format's default, or none given)
            raise
        return _could_not_read(args, exc, args.format, {"types": [], "totals": None})
    if args.format == "json":
        print(json.dumps(snapshot.to_json(), indent=2))
    elif args.format == "openmetrics":
        from queuetop.exporter import TargetState, exposition
        from queuetop.monitor import CONNECTED, PollOutcome

        state = TargetState(target_label(args), PollOutcome(CONNECTED, snapshot), snapshot.poll_ms / 1000)
        print(exposition([state]), end="")
    else:
        print(render_table(snapshot))
    return 0


def _could_not_read(args: argparse.Namespace, error: QueuetopError, output: str, nothing: dict[str, object]) -> int:
    """For a script reading `--json` or `--format openmetrics`: the document still comes, saying what went wrong
    (`error`, with `nothing` for the figures; `queuetop_up 0`), and the error's line still goes to stderr. Exit 2."""
    if output == "openmetrics":
        from queuetop.exporter import TargetState, exposition
        from queuetop.monitor import RECONNECTING, PollOutcome

        print(exposition([TargetState(target_label(args), PollOutcome(RECONNECTING, error=str(error)))]), end="")
    else:
        from queuetop.db.connection import utc_now

        try:
            shown = parse_target(args.db).display
        except QueuetopError:
            shown = None  # the target itself is what could not be read: never echo it back
        print(json.dumps({"taken_at": utc_now().isoformat(timespec="milliseconds") + "Z", "target": shown,
                          "error": str(error), **nothing}, indent=2))  # fmt: skip
    print(f"queuetop: error: {error}", file=sys.stderr)
    return EXIT_USAGE


def cmd_enqueue(args: argparse.Namespace) -> int:
    from queuetop.queue import DEFAULT_PRIORITY, Interrupted, Queue
    from queuetop.shape_queue import ShapeQueue

    if args.delay < 0:
        raise UsageError(f"--delay must be zero or more seconds, not {args.delay}")
    with open_target(args) as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        try:
            if layout.native:
                if args.job_type is None:
                    raise UsageError("the job type is missing", "name it with --type T")
                priority = DEFAULT_PRIORITY if args.priority is None else args.priority
                ids = Queue(db, layout).enqueue_many(args.job_type, args.count, info=args.info, priority=priority,
                                                     delay_s=args.delay, created_by="queuetop-cli")  # fmt: skip
            else:
                ids = ShapeQueue(db, layout).enqueue_many(args.job_type, args.count, info=args.info,
                                                          priority=args.priority, delay_s=args.delay)  # fmt: skip
        except Interrupted as exc:  # Ctrl-C (or SIGTERM, SIGHUP) between two chunks: what stayed, exactly
            print(f"queuetop: {exc.message}", file=sys.stderr)
            return 128 + exc.signum
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
        if args.worker is not None:
            return _release_worker(args, db, layout)
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


def _release_worker(args: argparse.Namespace, db: Database, layout: Layout) -> int:
    from queuetop.workers import release_worker

    if args.job_type:
        raise UsageError("--worker and --type cannot be combined", "a worker's release takes every type it holds")
    settings = {**settings_from(args), "max_attempts": args.max_attempts}
    result = release_worker(db, layout, args.worker, dry_run=args.dry_run, max_attempts=args.max_attempts,
                            settings=settings)  # fmt: skip
    who = f"of worker {args.worker!r}"
    if result.timed_out == 0:
        print(f"no timed-out claims {who}: nothing to release")
    elif result.dry_run:
        print(f"{result.timed_out:,} timed-out claim(s) {who} would be released (dry run: nothing changed)")
    else:
        dead = f"; {result.dead:,} out of attempts moved to dead" if layout.native else ""
        print(f"released {result.released:,} of {result.timed_out:,} timed-out claim(s) {who} back to pending{dead}")
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


def cmd_workers(args: argparse.Namespace) -> int:
    from queuetop.workers import read_workers

    try:
        with open_target(args, purpose="monitor") as db:
            layout, note = resolve_layout(args, db)
            _announce(note)
            view = read_workers(db, layout, settings_from(args))
    except QueuetopError as exc:
        if not args.json:
            raise
        return _could_not_read(args, exc, "json", {"workers": []})
    if args.json:
        print(json.dumps(view.to_json(), indent=2))
    elif view.reason is not None:
        print(view.reason)
    else:
        print(render_workers(view))
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
        if layout.claim is not None:
            failure = {None: "no failure path (--fail refused)", "timeout": "a failed attempt times out, is retried",
                       "lost": "a failed request is lost until released"}[layout.claim.failure]
            print(f"{'':<12} load: claim form {', '.join(layout.claim.forms)}; {failure}")
    print("\nwatch one: queuetop --layout NAME [--table SCHEMA.NAME] --db TARGET;  "
          "drive one: queuetop load --layout NAME ...;  its file: queuetop layouts --show NAME")
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


def cmd_doctor(args: argparse.Namespace) -> int:
    from queuetop.doctor import render_text, run_doctor

    if not 0 <= args.sample <= 60:
        raise UsageError(f"--sample must be from 0 to 60 seconds, not {args.sample}")
    with open_target(args, purpose="monitor") as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        report = run_doctor(db, layout, settings=settings_from(args), sample_s=args.sample)
    print(json.dumps(report.as_json(), indent=2) if args.json else render_text(report, verbose=args.verbose))
    return report.exit_code(strict=args.strict)


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
    if len(args.per_target) > 1:
        return _watch_many(args)
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

        config = config_from_args(args, layout)
        if auto_init:
            open_target(args).close()  # the load's workers need the schema before the dashboard makes it
        background = start_background_load(target, config, layout, args.claim_form, settings)
    return _dashboard(args, target, background, auto_init=auto_init, layout=layout, settings=settings, note=note)


def _watch_many(args: argparse.Namespace) -> int:
    """`queuetop -t prod -t staging`, `queuetop watch --all`: one dashboard, one section and poll loop per target."""
    from queuetop.tui import run_multi_dashboard

    return run_multi_dashboard(watched_targets(args), job_types=args.types, log_path=LOG_PATH, bell=args.bell)


def watched_targets(args: argparse.Namespace) -> list[WatchedTarget]:
    """The targets of a multi-target dashboard as the command line and the config file resolve them (each one's
    layout found on its own database, a dead one's the layout given or native); scripts/screenshots.py uses it
    too, so its picture is built the way the command builds the dashboard."""
    from concurrent.futures import ThreadPoolExecutor

    from queuetop.tui import WatchedTarget

    runs = args.per_target
    if args.with_load:
        raise UsageError(f"--with-load drives one target, and {_naming(args)} {len(runs)}",
                         "run the load on one target: queuetop -t NAME watch --with-load")  # fmt: skip
    for run in runs:
        _check_interval(run)

    def watched(run: argparse.Namespace) -> WatchedTarget:
        target = parse_target(run.db)
        auto_init = _is_embedded_default(run, target) and _layout_name(run) in (None, "native")
        layout, note = _watch_layout(run, target, auto_init)  # a dead target: the layout given, or native
        name = run.effective.target or "default"
        if run.types and not layout.has_job_type:
            raise UsageError(f"target {name}: layout {layout.name} has no job type column, so --type cannot choose",
                             "drop --type")  # fmt: skip
        history_path, retention = _history(run, target, layout)
        return WatchedTarget(name, target, layout, interval=run.interval, read_only=bool(run.read_only),
                             auto_init=auto_init, settings=settings_from(run), note=note, slos=run.effective.slos,
                             history_path=history_path, retention=retention)  # fmt: skip

    with ThreadPoolExecutor(max_workers=len(runs)) as pool:  # a slow target must not hold up the others' start
        return list(pool.map(watched, runs))


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


def cmd_load(args: argparse.Namespace) -> int:
    from queuetop.load.command import run_load_command

    settings = settings_from(args)
    layout = NATIVE
    if _layout_name(args) or getattr(args, "table", None):
        with open_target(args) as db:
            layout, note = resolve_layout(args, db)
        _announce(note)
    return run_load_command(args, layout, settings)


def cmd_demo(args: argparse.Namespace) -> int:
    import tempfile

    from queuetop.layouts import load_layout, require_table, with_tables
    from queuetop.load.command import demo_config, load_types, start_background_load
    from queuetop.load.config import DEMO_SWEEP_S
    from queuetop.schema import init_schema
    from queuetop.shape_queue import create_demo_tables
    from queuetop.shape_worker import check_claim_form

    _check_interval(args)
    settings = settings_from(args)
    name = _layout_name(args)
    layout = require_table(with_tables(load_layout(name), args.table, args.completed_table)) if name else NATIVE
    if not layout.native:
        check_claim_form(layout, args.claim_form)  # before anything is made
    where = args.db or str(Path(tempfile.mkdtemp(prefix="queuetop-demo-")) / "demo.db")
    target = parse_target(where)
    with Database.open(target, create=True) as db:
        if layout.native:
            init_schema(db)
        else:
            create_demo_tables(db, layout)
    if layout.native:
        config = demo_config()
    else:  # the demo's four job types as the shape stores them, or one stream where it has no job type column
        names = tuple(t for t, _ in load_types("4", layout)) if layout.has_job_type else (layout.queue_table,)
        config = demo_config(layout, names)
    if not args.db:
        args.no_history = True  # a queue thrown away at the end: no history file to pile up
    background = start_background_load(target, config, layout, args.claim_form, settings)
    status = _dashboard(args, target, background, auto_init=False, layout=layout, settings=settings,
                        greeting=demo_greeting(layout, config.lease_s, DEMO_SWEEP_S))
    print(f"demo stopped; the demo queue is in {target.display}")
    shape = "" if layout.native else f" --layout {layout.name}"
    print(f"  look again with: queuetop --db {where}{shape}")
    return status


def demo_greeting(layout: Layout, lease_s: float, sweep_s: float) -> str:
    """What the demo says when it opens: what its load does, and what is left for the user to do."""
    what = "the native queue" if layout.native else f"layout {layout.name}, through its seed's own dequeue"
    text = f"Demo: a live load on {what}. One claim in a hundred is abandoned, as by a worker that died: "
    taken_back = "timeout" if layout.native else layout.claim.taken_back if layout.claim else "never"
    if taken_back == "timeout":
        return text + (f"its lease is {lease_s:g} s and the sweeper comes every {sweep_s:g} s, so timed-out "
                       "claims wait for you: press r to release them.")
    if taken_back == "release":
        return text + (f"it shows as lost after --lost-after; press r to move lost requests back (the sweeper "
                       f"does every {sweep_s:g} s).")
    return text + "this shape never takes such a job again: it stays taken and unfinished, as the seed leaves it."


def _dashboard(args: argparse.Namespace, target: Target, background: LoadRun | None, auto_init: bool,
               layout: Layout = NATIVE, settings: dict | None = None, note: str | None = None,
               greeting: str | None = None) -> int:  # fmt: skip
    from queuetop.tui import run_dashboard

    history_path, retention = _history(args, target, layout)
    try:
        slos = args.effective.slos if hasattr(args, "effective") else getattr(args, "slos", None)
        return run_dashboard(target, layout=layout, interval=args.interval, read_only=args.read_only,
                             job_types=args.types, auto_init=auto_init, background=background, log_path=LOG_PATH,
                             settings=settings, note=note, greeting=greeting, slos=slos, bell=args.bell,
                             history_path=history_path, retention=retention)  # fmt: skip
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
    from queuetop.history_store import HistoryStore, damaged_histories, find_history, history_dir, parse_duration

    since_s = parse_duration(args.since, "--since")
    target = parse_target(args.db)
    name = _layout_name(args)
    layout_name = None
    if name:
        from queuetop.layouts import load_layout

        layout_name = load_layout(name).name
    found = find_history(target, layout_name, table=args.table)
    shown = f"{target.display}" + (f" (layout {layout_name})" if layout_name else "")
    damaged = damaged_histories() if not found else []
    if damaged:
        path, reason = damaged[0]
        others = f" (and {len(damaged) - 1} more there)" if len(damaged) > 1 else ""
        raise UsageError(f"no readable history for {shown}: the history file {path} is damaged ({reason}){others}",
                         f"move it away (`mv {path} {path}.damaged`); the dashboard starts a new one")  # fmt: skip
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


# -- config, check, serve --------------------------------------------------------------------------------
WRITING = {"init", "enqueue", "load"}
MANY_TARGETS = ("watch", "check", "serve", "config")


def _naming(args: argparse.Namespace) -> str:
    """What named several targets, as the subject of a sentence."""
    return "--all names" if getattr(args, "all_targets", False) else "the -t options name"


def configure(args: argparse.Namespace) -> list[argparse.Namespace]:
    """The command's arguments once per target, with the config file's settings and SLOs filled in (command line
    > environment > file > default; see queuetop.config). Commands other than check, serve and config take one
    target."""
    from queuetop.config import find_config, load_config, resolve, targets_to_use

    path, named = find_config(args.config)
    file = load_config(path, named)
    if file.warning:
        print(f"queuetop: warning: {file.warning}", file=sys.stderr)
    names = targets_to_use(args.targets, getattr(args, "all_targets", False), file)
    if len(names) > 1 and args.command not in MANY_TARGETS:
        raise UsageError(f"`queuetop {args.command}` works on one target, not {len(names)}",
                         "give one -t NAME (watch, check, serve and config take several)")  # fmt: skip
    if len(names) > 1 and args.db is not None:
        raise UsageError(f"--db names one database and {_naming(args)} {len(names)} targets",
                         "give the targets alone (their databases are in the config file), or --db alone")  # fmt: skip
    cli = {"db": args.db, "layout": args.layout, "table": args.table, "completed_table": args.completed_table,
           "interval": getattr(args, "interval", None), "read_only": getattr(args, "read_only", None),
           "lost_after": args.lost_after}  # fmt: skip
    slos = slos_from_args(args)
    chosen_by = "--all" if getattr(args, "all_targets", False) else None
    return [with_effective(args, resolve(cli, file, name, cli_slos=slos, chosen_by=chosen_by)) for name in names]


def slos_from_args(args: argparse.Namespace) -> Slos:
    from queuetop.config import slo_from_option
    from queuetop.slo import Limit, Slo, Slos

    limits = [Limit(slo, value, None, f"command line ({slo.spec.flag})") for slo in Slo
              if (value := getattr(args, f"slo_{slo.value}", None)) is not None]  # fmt: skip
    for limit in limits:
        if limit.value < 0:
            raise UsageError(f"{limit.slo.spec.flag} must be zero or more, not {limit.value:g}")
    limits += [slo_from_option(text) for text in getattr(args, "slo_options", [])]
    return Slos(tuple(limits))


def with_effective(args: argparse.Namespace, effective: Effective) -> argparse.Namespace:
    """A copy of the arguments with the effective settings. A value from the environment is left for the code
    that reads the environment itself (parse_target, _layout_name), exactly as without a config file."""
    from queuetop.config import Origin

    new = argparse.Namespace(**vars(args))
    for name in ("db", "layout"):
        setting = effective.settings[name]
        setattr(new, name, setting.value if setting.origin in (Origin.COMMAND_LINE, Origin.FILE) else None)
    new.table, new.completed_table = effective["table"], effective["completed_table"]
    new.lost_after = effective["lost_after"]
    if hasattr(args, "interval"):
        new.interval = effective["interval"]
    if hasattr(args, "read_only"):
        new.read_only = effective["read_only"]
    new.effective = effective
    return new


def _refuse_writes(args: argparse.Namespace) -> None:
    effective = args.effective
    writes = args.command in WRITING or (args.command == "release" and not args.dry_run) or (
        args.command == "dead" and args.action != "count") or (args.command == "watch" and args.with_load)
    if writes and effective["read_only"]:
        setting = effective.settings["read_only"]
        name = f"target {effective.target}" if effective.target else "this target"
        raise UsageError(f"{name} is read-only ({setting.origin.value}: {setting.where}): `queuetop {args.command}` "
                         "would change the queue", "use a target that is not read-only")


def target_label(args: argparse.Namespace) -> str:
    """The `target` label of the metrics: the config file's name for the target, else "default"."""
    effective = getattr(args, "effective", None)
    return effective.target if effective is not None and effective.target else "default"


def with_per_target(args: argparse.Namespace) -> argparse.Namespace:
    """The first target's arguments (the only one for most commands), still carrying the whole list."""
    first = args.per_target[0]
    first.per_target = args.per_target
    return first


def cmd_config(args: argparse.Namespace) -> int:
    runs = args.per_target
    if args.json:
        print(json.dumps({"config_file": str(runs[0].effective.config_path) if runs[0].effective.config_path else None,
                          "targets": [run.effective.to_json() for run in runs]}, indent=2))
        return 0
    path = runs[0].effective.config_path
    from queuetop.config import find_config, load_config

    found, _ = find_config(args.config)
    print(f"config file: {path}" if path else f"config file: none ({found} does not exist)")
    for run in runs:
        print()
        print("\n".join(run.effective.lines()))
    names = list(load_config(found, False).targets) if path else []
    if names:
        print(f"\ntargets in the file: {', '.join(names)}  (choose with -t NAME)")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from queuetop.check import overall, report_lines

    if args.for_s and args.interval is not None and not 0.1 <= args.interval <= 3600:
        raise UsageError(f"--interval must be from 0.1 to 3600 seconds, not {args.interval}")
    runs = args.per_target
    # Each target on a thread and connection of its own; daemon threads, so that Ctrl-C (or SIGTERM) ends the
    # command at once: `stop` ends each target's wait between polls, and a poll still running is not waited for.
    stop = threading.Event()
    outcomes: dict[int, TargetResult | BaseException] = {}

    def check(i: int) -> None:
        try:
            outcomes[i] = _check_one(runs[i], stop)
        except BaseException as exc:  # a bug: raised below, in the command's own thread, as before
            outcomes[i] = exc

    threads = [threading.Thread(target=check, args=(i,), name=f"queuetop-check-{i}", daemon=True)
               for i in range(len(runs))]  # fmt: skip
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:
        stop.set()
        raise
    results = []
    for i in range(len(runs)):
        outcome = outcomes[i]
        if isinstance(outcome, BaseException):
            raise outcome
        results.append(outcome)
    status = overall(results)
    if args.json:
        print(json.dumps({"status": status.value, "exit_code": status.exit_code,
                          "targets": [r.to_json() for r in results]}, indent=2))  # fmt: skip
    else:
        for result in results:
            print("\n".join(report_lines(result)))
    return status.exit_code


def _check_one(args: argparse.Namespace, stop: threading.Event) -> TargetResult:
    from queuetop.check import run_check
    from queuetop.collector import collector_for

    def session() -> tuple[Callable[[], Snapshot], Callable[[], None]]:
        db = open_target(args, purpose="monitor")
        try:
            layout, note = resolve_layout(args, db)
            collector = collector_for(db, layout, settings=settings_from(args), note=note)
        except BaseException:
            db.close()
            raise
        return collector.poll, db.close

    try:
        display = parse_target(args.db).display
    except QueuetopError as exc:
        from queuetop.check import TargetResult

        return TargetResult(target_label(args), args.db or "", error=str(exc))
    return run_check(target_label(args), display, session, args.effective.slos, args.for_s, args.interval,
                     sleep=stop.wait)


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {text!r} is not HOST:PORT", "e.g. 127.0.0.1:9187, or 0.0.0.0:9187 for every "
                         "interface (only when Prometheus runs on another machine)")
    return host, int(port)


def cmd_serve(args: argparse.Namespace) -> int:
    import logging
    from concurrent.futures import ThreadPoolExecutor

    from queuetop.exporter import Exporter, TargetPoller
    from queuetop.monitor import Monitor

    host, port = parse_listen(args.listen)
    runs = args.per_target
    labels = [target_label(run) for run in runs]
    for run in runs:
        if run.interval is not None and not 0.1 <= run.interval <= 3600:
            raise UsageError(f"--interval must be from 0.1 to 3600 seconds, not {run.interval}")

    def poller(run: argparse.Namespace) -> TargetPoller:
        target = parse_target(run.db)
        auto_init = _is_embedded_default(run, target) and _layout_name(run) in (None, "native")
        layout, note = _watch_layout(run, target, auto_init)  # a dead target: the layout given, or native
        monitor = Monitor(target, layout, auto_init=auto_init, settings=settings_from(run), note=note)
        return TargetPoller(target_label(run), monitor, run.interval, slos=run.effective.slos)

    with ThreadPoolExecutor(max_workers=len(runs)) as pool:  # one slow target must not hold up the others' start
        pollers = list(pool.map(poller, runs))
    # A service's log: each target lost and found again, with the time, on stderr (journald, docker logs).
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger = logging.getLogger("queuetop")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    # Before anything is announced: a SIGTERM that comes right after "serving" must still stop cleanly.
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGHUP):  # systemd and docker stop a service with SIGTERM
        signal.signal(signum, lambda *_: stop.set())
    exporter = Exporter(pollers, host, port)
    try:
        exporter.start()
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.listen}: {exc.strerror}", "choose another --listen port") from None
    print(f"queuetop: serving {exporter.url} for {', '.join(labels)}, polling every "
          f"{', '.join(f'{p.interval_s:g}' for p in pollers)} s; Ctrl-C stops", file=sys.stderr)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        exporter.stop()  # each target's connection closed, not dropped
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
    line = aligned([name for name, _ in columns], rows)
    clock = "UTC" if snapshot.clock == "utc" else "server local time"
    out = [f"{snapshot.target} ({snapshot.dialect}, layout {snapshot.layout}) at {snapshot.taken_at:%Y-%m-%d %H:%M:%S} "
           f"{clock}, poll {snapshot.poll_ms:.1f} ms, rates and latencies over the last {snapshot.window_s:.0f} s"]
    out.append(line(0))
    if not snapshot.types:
        out.append("(the queue is empty: add jobs with `queuetop enqueue`)")
    out += [line(i) for i in range(1, len(rows) + 1)]
    return "\n".join(out)


def aligned(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Callable[[int], str]:
    """line(0) is the header, line(n) the n-th row: the first column to the left, the others to the right.
    Widths in terminal cells, not characters: a name in CJK or with an emoji keeps its row's columns aligned."""
    table = [list(header), *rows]
    widths = [max(fmt.cells(r[i]) for r in table) for i in range(len(header))]
    return lambda n: "  ".join(fmt.pad(c, w, right=i > 0) for i, (c, w) in enumerate(zip(table[n], widths,
                                                                                          strict=True)))


WORKER_COLUMNS: list[tuple[str, str, Callable]] = [
    ("HELD", "held", lambda w: fmt.count(w.held)),
    ("TIMED-OUT", "timed_out", lambda w: fmt.count(w.timed_out)),
    ("CLAIMS/1m", "claims_1m", lambda w: fmt.count(w.claims_1m)),
    ("DONE/1m", "completed_1m", lambda w: fmt.count(w.completed_1m)),
    ("FAILED/1m", "failed_1m", lambda w: fmt.count(w.failed_1m)),
    ("PROC p95", "processing_p95_s", lambda w: fmt.duration(w.processing_p95_s)),
    ("LAST CLAIM", "last_claim_ago_s", lambda w: fmt.duration(w.last_claim_ago_s) + " ago"
     if w.last_claim_ago_s is not None else "—"),
]  # fmt: skip


def render_workers(view: WorkersView) -> str:
    """The workers table: only the figures the shape can know; a probably dead worker says so at the end."""
    columns = [(name, cell) for name, figure, cell in WORKER_COLUMNS if view.figures.get(figure)]
    header = [view.claimer_column or "WORKER", *(name for name, _ in columns)]
    line = aligned(header, [[worker.name, *(cell(worker) for _, cell in columns)] for worker in view.workers])
    out = [f"workers of layout {view.layout} (by {view.claimer_column}) at {view.taken_at:%Y-%m-%d %H:%M:%S}", line(0)]
    for n, worker in enumerate(view.workers, start=1):
        out.append(line(n) + ("  probably dead: every claim it holds is past its timeout" if worker.probably_dead
                              else ""))  # fmt: skip
    if not view.workers:
        out.append("(no claims held now, none in the last 5 minutes)")
    return "\n".join(out)


# -- entry point -----------------------------------------------------------------------------------------
def _names_a_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> bool:
    """Whether the first word that is no option's value is a command: in `queuetop -t release -t up`, `release`
    names a target, and the command is the dashboard."""
    watch = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["watch"]
    takes_value = {flag for p in (parser, watch) for action in p._actions if action.nargs != 0
                   for flag in action.option_strings}  # fmt: skip
    words = iter(argv)
    for word in words:
        if word == "--":
            return next(words, None) in COMMANDS
        if not word.startswith("-"):
            return word in COMMANDS
        if word in takes_value:
            next(words, None)  # the option's value, whatever it says
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """The command. Its exit codes: 0 done (check: OK), 1 a verdict that failed (check: a breach; load: jobs lost
    or duplicated) or a bug, 2 an error, 128 + N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP) where
    there is no verdict to give (load gives its verdict, serve exits 0), 141 stdout closed (`| head`)."""
    saved = {signum: signal.signal(signum, _stop) for signum in STOP_SIGNALS if signum != signal.SIGINT}
    try:
        code = _run(argv)
        sys.stdout.flush()  # here, not at exit: a reader that left must be met where it can be handled
        return code
    except BrokenPipeError:
        # The reader left (`queuetop stats | head -1`): end as a pipeline expects, quietly. stdout goes to
        # /dev/null so the interpreter's own flush at exit does not complain about the same pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _stop(signum: int, _frame: object) -> None:
    raise Stopped(signum)


def _run(argv: Sequence[str] | None) -> int:
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not _names_a_command(parser, argv) and not {"-h", "--help", "--version"} & set(argv):
        argv.insert(0, "watch")  # `queuetop` alone is the dashboard
    args = parser.parse_args(argv)
    try:
        if args.command == "demo" and args.targets:
            raise UsageError("`queuetop demo` runs on a queue of its own, not on a named target",
                             "drop -t; `queuetop demo --db demo.db` keeps the demo queue in demo.db")
        if args.command not in ("demo", "layouts"):
            args.per_target = configure(args)
            args = with_per_target(args)
            _refuse_writes(args)
        else:  # the demo's queue is its own: no target, no config file; only the command line's SLOs
            args.interval = 1.0 if getattr(args, "interval", None) is None else args.interval
            args.read_only = bool(getattr(args, "read_only", False))
            args.slos = slos_from_args(args)
        return args.run(args)
    except QueuetopError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"queuetop: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        signum = Stopped.signal_of(exc)
        print("queuetop: interrupted" if signum == signal.SIGINT else
              f"queuetop: stopped by {signal.Signals(signum).name}", file=sys.stderr)  # fmt: skip
        return 128 + signum
    except BrokenPipeError:
        raise
    except Exception as exc:  # a bug: say so in one line unless asked for the traceback
        if args.debug:
            raise
        print(f"queuetop: unexpected error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
              file=sys.stderr)  # fmt: skip
        return 1
