"""The command line: every command's options, help and examples (argparse), and argparse's mistakes said in
one line."""


from __future__ import annotations

import argparse
import importlib
import re
from typing import NoReturn

from queuetop import __version__
from queuetop.cli.common import EXIT_USAGE, LAYOUT_ENV_VAR, LOG_PATH
from queuetop.cli.config import CONFIG_ENV_VAR, default_config_path
from queuetop.db.target import ENV_VAR, default_database_path
from queuetop.layouts import CLAIM_FORMS, PRESET_NAMES
from queuetop.load.options import add_load_arguments
from queuetop.serve.typecap import DEFAULT_MAX_TYPES
from queuetop.watch.fold import DEFAULT_SHOWN_TYPES

COMMANDS = ("init", "stats", "jobs", "job", "enqueue", "release", "dead", "watch", "load", "demo", "layouts", "detect",
            "doctor", "workers", "check", "serve", "alerts", "grafana", "config", "history")


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


class Command:
    """A command's function, named here and imported when it runs: building the command line imports none of the
    commands (`queuetop stats` does not load the load driver, the exporter or the dashboard's modules)."""

    def __init__(self, module: str, function: str) -> None:
        self.module, self.function = module, function

    def __call__(self, args: argparse.Namespace) -> int:
        module = importlib.import_module(f"queuetop.cli.{self.module}")
        return getattr(module, self.function)(args)

    def __repr__(self) -> str:
        return f"queuetop.cli.{self.module}.{self.function}"


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
    init.set_defaults(run=Command("queue_commands", "cmd_init"))

    stats = command("stats", "print per-type queue statistics once, or every few seconds (a table, or --json)", """\
  queuetop stats
  queuetop stats --type email --type report
  queuetop stats --json | jq '.types[] | {job_type, depth, oldest_age_s}'
  queuetop stats --watch 5                  a table every 5 s until Ctrl-C; rates from the second on
  queuetop stats --exact                    a deep queue counted row by row, not estimated (≈) at first
  queuetop stats --watch 1 --count 60 --json > minute.jsonl     one JSON document a line, 60 of them
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
    stats.add_argument("--watch", type=float, metavar="SECONDS",
                       help="poll again every SECONDS (0.1 to 3600) until Ctrl-C: a table each time, or with --json "
                            "one JSON document a line; rates and latencies from the second poll on")
    stats.add_argument("--count", type=int, metavar="N", help="with --watch: stop after N polls")
    stats.add_argument("--exact", action="store_true",
                       help="count every row before printing: a deep queue's first look otherwise estimates its "
                            "depth from a sample (marked ≈), and a table past 100,000 rows leaves its rows in no "
                            "state uncounted")
    stats.set_defaults(run=Command("queue_commands", "cmd_stats"))

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
    enqueue.set_defaults(run=Command("queue_commands", "cmd_enqueue"))

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
    release.set_defaults(run=Command("queue_commands", "cmd_release"))

    dead = command("dead", "count, retry or delete dead jobs (out of attempts): native and job_queue", """\
  queuetop dead count                  how many, per type
  queuetop dead retry --type email     back to pending, as if never tried (asks first; --yes to skip)
  queuetop dead delete --yes           remove them for good
""", t_is_type=True)
    dead.add_argument("action", choices=("count", "retry", "delete"), help="what to do with them")
    dead.add_argument("--type", "-t", dest="job_type", metavar="T", help="only this job type")
    dead.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    dead.set_defaults(run=Command("queue_commands", "cmd_dead"))

    jobs = command("jobs", "list the jobs of one state, a page at a time: every column, oldest (or soonest) first",
                   """\
  queuetop jobs                                   the oldest pending jobs, 50 at a time
  queuetop jobs --state timed_out --type email    claims past their timeout, soonest first
  queuetop jobs --state dead --json | jq '.jobs[].info'
  queuetop jobs --state pending --after '["2026-11-26T15:00:01", 1047]'   the page after that job
Pending jobs oldest first, scheduled soonest due, claims soonest to time out, dead by when they died; the id
breaks ties. A full page ends with the --after that continues it: each page is a range of an index from the
last job's position (keyset), never a count of the rows before it.
""", t_is_type=True)
    jobs.add_argument("--state", default="pending", metavar="STATE",
                      help="pending (default), scheduled, claimed, timed_out, dead: the layout's states")
    jobs.add_argument("--type", "-t", dest="job_type", metavar="T", help="only this job type")
    jobs.add_argument("--limit", type=int, default=50, metavar="N", help="jobs per page (default 50)")
    jobs.add_argument("--after", metavar="JSON", help="continue after this job (the line a full page ends with)")
    jobs.add_argument("--json", action="store_true", help="print JSON: the jobs and the next page's --after")
    jobs.set_defaults(run=Command("job_commands", "cmd_jobs"))

    job = command("job", "show one job by its id, wherever it is now: its state and every column", """\
  queuetop job 1047
  queuetop job 1047 --json | jq .columns.info
Looked for in the queue table, then in the completed table (a job that finished and was deleted is gone).
""")
    job.add_argument("job_id", metavar="ID", help="the job's id (a GUID for seed 001's requests)")
    job.add_argument("--json", action="store_true", help="print JSON: id, table, state, columns")
    job.set_defaults(run=Command("job_commands", "cmd_job"))

    workers = command("workers", "who holds what: per claimer, from the claims (held, timed out, the last minute)", """\
  queuetop workers                        one line per worker; a worker whose claims all timed out: probably dead
  queuetop workers --json | jq '.workers[] | select(.probably_dead)'
  queuetop workers --layout job_queue     seed 004's Processing_Server

A dead worker's claims are released from the dashboard's workers panel (W, then r), or all at once with
`queuetop release`. Shapes whose rows do not name a claimer (requests, work_queue, processed) say so.
""")
    workers.add_argument("--json", action="store_true", help="print JSON (fields documented in the README)")
    workers.set_defaults(run=Command("queue_commands", "cmd_workers"))

    layouts = command("layouts", "list the queue shapes (presets) with the tables and columns each expects", """\
  queuetop layouts
  queuetop layouts --show job_queue > my_queue.toml      a preset's file, to copy and edit
""")
    layouts.add_argument("--show", metavar="NAME", help="print one preset's TOML file")
    layouts.set_defaults(run=Command("queue_commands", "cmd_layouts"))

    detect = command("detect", "print the layout (TOML) queuetop would use for the target, ready to edit", """\
  queuetop detect --db "DRIVER={PostgreSQL Unicode};SERVER=db1;DATABASE=jobs;UID=ops" > ops.toml
  queuetop --layout ops.toml --db "..."
""")
    detect.set_defaults(run=Command("queue_commands", "cmd_detect"))

    doctor = command("doctor", "check the queue's indexes, settings, size and sessions before a load test", """\
  queuetop doctor                                     the embedded database
  queuetop doctor --layout work_queue --db "DRIVER={PostgreSQL Unicode};SERVER=db1;DATABASE=ops;UID=dba"
  queuetop doctor --json | jq '.findings[] | select(.status != "ok")'
  queuetop doctor --strict --sample 0 && run-load-test   a warning stops the script too; no growth sample

checks: every poll, drill-down and dequeue statement planned (not run) and served by an index; SQL Server's
read-committed snapshot, lock escalation, parameterization, the native indexes' columns and the settings of the
code that writes the queue; table sizes, growth, retention, dead tuples / ghost records / free pages; sessions
idle in a transaction holding claims and blocking chains, with application and host. Each finding: ok, warn,
fail or unknown, what it means, and the statement that would fix it (printed, never run).
exit code: 0 nothing failed (warnings and unknowns allowed), 1 a check failed (--strict: or warned),
2 the checks could not run (bad option, database unreachable)
""")
    doctor.add_argument("--json", action="store_true", help="print the findings as JSON (shape in the README)")
    doctor.add_argument("--strict", action="store_true", help="exit 1 on a warning too")
    doctor.add_argument("--sample", type=float, default=2.0, metavar="S",
                        help="seconds between the two size reads that give growth (default 2; 0: one read)")
    doctor.add_argument("--verbose", "-v", action="store_true", help="also show each statement planned")
    doctor.set_defaults(run=Command("queue_commands", "cmd_doctor"))

    watch = command("watch", "the live dashboard (the default command)", f"""\
  queuetop                                  watch the embedded database
  queuetop watch --interval 0.5 --type email
  queuetop watch --read-only --db "DRIVER={{PostgreSQL Unicode}};SERVER=db1;DATABASE=jobs;UID=ops"
  queuetop watch --with-load --consumers 8  drive a load test and watch it in one window
  queuetop watch --history-keep raw:2h,10s:48h,1m:30d   keep more history
  queuetop -t prod -t staging               one dashboard over two targets of the config file (Tab: next one)
  queuetop watch --all                      every target of the config file, one section each
  queuetop watch --max-types 200            a type per tenant: the 200 busiest, the rest summed on one line

keys: ? lists them all in the app. Errors are logged to {LOG_PATH}
{HISTORY_HELP}""")
    add_watch_arguments(watch)
    watch.add_argument("--all", dest="all_targets", action="store_true",
                       help="every target of the config file, one section each (as several -t NAME)")
    watch.add_argument("--with-load", action="store_true", help="also run a load test (options below) while watching")
    add_load_arguments(watch)
    watch.set_defaults(run=Command("watch_commands", "cmd_watch"))

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
    load.set_defaults(run=Command("watch_commands", "cmd_load"))

    demo = command("demo", "a fresh queue, a background load and the dashboard on top: the guided tour", """\
  queuetop demo                   in a temporary SQLite file (no history file: the queue is thrown away)
  queuetop demo --db demo.db      keep the demo queue in demo.db, and its history
  queuetop demo --layout job_queue                 seed 004's Job_Queue, driven by its own usp_API_Get_Job
  queuetop demo --layout work_queue --claim-form update_top
""")
    add_watch_arguments(demo)
    demo.add_argument("--claim-form", choices=tuple(CLAIM_FORMS), metavar="FORM",
                      help="which of the seed's dequeues the demo's workers run (see `queuetop load --help`)")
    demo.set_defaults(run=Command("watch_commands", "cmd_demo"))

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
    check.set_defaults(run=Command("fleet_commands", "cmd_check"))

    serve = command("serve", "serve the queue's figures as OpenMetrics for Prometheus (one poll loop per target)",
                    """\
  queuetop serve                                  http://127.0.0.1:9187/metrics for the default target
  queuetop serve -t prod -t staging --interval 5  one endpoint, a `target` label per target
  queuetop serve --all --listen 0.0.0.0:9187      every target of the config file, on every interface
  queuetop serve -t prod --slo max_oldest_age_s=300   and queuetop_slo_breach series for the breached SLOs
Listens on the loopback interface unless --listen names another address. Each target is polled by its own
thread and connection every --interval seconds, never once per scrape; a dead target shows queuetop_up 0.
About 18 series per job type: past --max-types, the busiest types keep their names and the rest are summed
into job_type="(other)" (a type with an SLO limit of its own is always named).
""")
    add_slo_arguments(serve, shown=False)
    serve.add_argument("--listen", default="127.0.0.1:9187", metavar="HOST:PORT",
                       help="where to listen (default 127.0.0.1:9187; port 0 picks a free one)")
    serve.add_argument("--interval", type=float, default=None, metavar="S",
                       help="seconds between polls of each target (default: the target's interval, else 1)")
    serve.add_argument("--all", dest="all_targets", action="store_true", help="every target of the config file")
    serve.add_argument("--max-types", type=int, default=DEFAULT_MAX_TYPES, metavar="N",
                       help=f"job types exported by name per target (default {DEFAULT_MAX_TYPES}); the rest as "
                            'job_type="(other)"')  # fmt: skip
    serve.set_defaults(run=Command("fleet_commands", "cmd_serve"))

    alerts = command("alerts", "print Prometheus alerting rules made from the SLOs, for the series `serve` exports",
                     """\
  queuetop alerts > /etc/prometheus/queuetop.rules.yml       the config file's SLOs, the default target
  queuetop alerts --all --for 5m > queuetop.rules.yml        every target of the config file, as `serve --all`
  queuetop alerts -t prod --slo max_oldest_age_s=300 --slo email:max_timed_out=0
  promtool check rules queuetop.rules.yml
Per target (its `target` label, as `serve` gives it) and SLO: a rule for each job type with a limit of its own,
one for every other type at the default; and, whatever the SLOs, rules for a target queuetop cannot read
(queuetop_up 0), no series at all, a queue backing up, a queue stalled. Each says what to run first.
""")
    add_slo_arguments(alerts, shown=False)
    alerts.add_argument("--for", dest="for_s", type=duration_arg, default=60.0, metavar="DURATION",
                        help="how long a breach must last before its alert fires (Prometheus' `for`; default 1m)")
    alerts.add_argument("--backing-up-for", dest="backing_up_s", type=duration_arg, default=600.0,
                        metavar="DURATION", help="how long arrivals must outrun completions, the queue growing, "
                                                 "before QueuetopBackingUp fires (default 10m)")  # fmt: skip
    alerts.add_argument("--stalled-for", dest="stalled_s", type=duration_arg, default=300.0, metavar="DURATION",
                        help="how long jobs must wait with none completed before QueuetopStalled fires "
                             "(default 5m)")  # fmt: skip
    alerts.add_argument("--all", dest="all_targets", action="store_true", help="every target of the config file")
    alerts.set_defaults(run=Command("fleet_commands", "cmd_alerts"))

    grafana = command("grafana", "print a Grafana dashboard (JSON) for the series `serve` exports", """\
  queuetop grafana > queuetop.json      then Grafana: Dashboards > New > Import, and pick its Prometheus
A row per target (the `target` variable, repeated), with depth, oldest age, arrivals and completions, wait and
processing percentiles, timed-out and dead jobs, SLO breaches and the monitor's own poll time; variables for
target, layout and job type. The same file is dashboards/queuetop.json in queuetop's repository.
""")
    grafana.set_defaults(run=Command("fleet_commands", "cmd_grafana"))

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
    config.set_defaults(run=Command("fleet_commands", "cmd_config"))

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
    history.set_defaults(run=Command("watch_commands", "cmd_history"))
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
    parser.add_argument("--max-types", type=int, default=DEFAULT_SHOWN_TYPES, metavar="N",
                        help=f"past N job types, show the N busiest and sum the rest into one (other) line "
                             f"(default {DEFAULT_SHOWN_TYPES:,}; 0: every type); a type with an SLO limit of its "
                             "own is always shown")  # fmt: skip
    add_slo_arguments(parser, shown=False)
    parser.add_argument("--no-bell", dest="bell", action="store_false",
                        help="do not ring the terminal bell when an SLO is newly breached")
    parser.add_argument("--no-history", action="store_true",
                        help=f"keep no history file (default: every poll is kept in {history_dir_text()})")
    parser.add_argument("--history-keep", metavar="LEVELS", default=None,
                        help=f"what the history keeps, finest first (default {DEFAULT_KEEP})")


def add_slo_arguments(parser: argparse.ArgumentParser, shown: bool = True) -> None:
    """The SLO options: one flag per SLO for every job type, and --slo for one type (or any SLO by name)."""
    from queuetop.watch.slo import SPECS

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
    from queuetop.store.model import history_dir

    return str(history_dir())


HISTORY_HELP = f"""
history: every poll is kept (unless --no-history) in a SQLite file per target and layout in
  {history_dir_text()}  ($QUEUETOP_HISTORY_DIR to change; never in the watched database):
  raw polls for 1 h, 10 s means for 24 h, 1 min means for 7 d (--history-keep); the charts start full,
  `w` shows up to 7 days, `[` `]` scrub back in time; `queuetop history` prints it.
"""
