"""`queuetop load` and the background load of `queuetop demo` / `queuetop watch --with-load`.

`run_load_command` is the headless load test: a progress line on stderr while it runs, the end report on
stdout (text, or `--json`), exit 1 when a job was lost or duplicated. Ctrl-C stops it cleanly and still
reports. `start_background_load` runs the same driver under the dashboard until `stop()`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from dataclasses import replace

from queuetop.act.shape_queue import check_guid
from queuetop.act.shape_worker import check_claim_form
from queuetop.core.progress import ProgressLine
from queuetop.db import ConnectError, Database, QueuetopError, Target, UsageError, parse_target
from queuetop.db.target import ENV_VAR
from queuetop.layouts import NATIVE, Layout
from queuetop.load.config import ConsumerPool, LoadConfig, demo_config, parse_rate, parse_types, parse_work
from queuetop.load.driver import LoadRun
from queuetop.load.options import DEFAULT_DURATION_S, add_load_arguments
from queuetop.load.report import LoadReport, build_report, build_shape_report
from queuetop.load.tally import RunFacts

__all__ = ["add_load_arguments", "config_from_args", "demo_config", "run_load_command", "start_background_load"]

DEFAULT_TYPES = "3"
DEFAULT_LEASE_S = 30.0
# The job types of seed 000's own test script, then more made the same way (a GUID job type per name).
SEED_GUID_TYPES = ("AC351A46-49E4-4F0C-BF8C-F45255012150", "FB0F15E0-2A97-46A3-951B-6655E4D7A06A")
_TYPE_NAMESPACE = uuid.UUID("0b8f3c52-64a4-4a11-8f0e-3d1f3f3c8a7e")
PROGRESS_EVERY_S = 0.5


def config_from_args(args: argparse.Namespace, layout: Layout = NATIVE) -> LoadConfig:
    """The load options as a LoadConfig for this layout; UsageError naming the option for a bad value."""
    if args.producers < 1:  # a LoadConfig may have none (benchmarks drain a prepared backlog); the CLI may not
        raise UsageError(f"--producers must be at least 1, not {args.producers}")
    default_work, work = parse_work(args.work)
    lease = args.lease
    form = check_claim_form(layout, args.claim_form)
    if args.batch > 1 and form not in ("batch_mark", "batch"):
        raise UsageError(f"layout {layout.name}'s dequeue ({form}) takes one job per claim, so --batch "
                         f"{args.batch} cannot be run", "drop --batch (seed 004's job_queue takes batches)")
    if lease is None and layout.claim is not None and layout.claim.lease_s is not None:
        lease = layout.claim.lease_s
    return LoadConfig(
        types=load_types(args.load_types, layout), producers=args.producers, pools=(ConsumerPool(args.consumers),),
        rate=parse_rate(args.rate),
        duration_s=args.duration, jobs=args.jobs, work=work, default_work=default_work, fail=args.fail,
        crash=args.crash, lease_s=DEFAULT_LEASE_S if lease is None else lease, batch=args.batch,
        release_every_s=args.release_every, max_attempts=args.max_attempts,
    )  # fmt: skip


def load_types(spec: str | None, layout: Layout) -> tuple[tuple[str, float], ...]:
    """The job types a load produces, as this shape stores them: names; GUIDs on seed 000's uniqueidentifier
    JobType (`--types N`: the seed's own two, then GUIDs made from load-3, load-4, ...); on a shape without a
    job type column, one nameless stream (named after the queue table in the report)."""
    if not layout.has_job_type:
        if spec is not None:
            raise UsageError(f"layout {layout.name} has no job type column, so --types cannot be produced",
                             "drop --types")
        return ((layout.queue_table, 1.0),)
    given = DEFAULT_TYPES if spec is None else spec  # an empty --types '' is a mistake, not the default
    if layout.type_of("type") != "guid":
        return parse_types(given)
    if given.strip().isdigit():
        named = parse_types(given)
        guids = [*SEED_GUID_TYPES, *(str(uuid.uuid5(_TYPE_NAMESPACE, name)).upper() for name, _ in named)]
        return tuple((guid, 1.0) for guid in guids[: len(named)])
    return tuple((check_guid(name), weight) for name, weight in parse_types(spec))


# -- queuetop load -----------------------------------------------------------------------------------------
def run_load_command(args: argparse.Namespace, layout: Layout = NATIVE, settings: dict | None = None) -> int:
    """The headless load test. 0: every job accounted for once; 1: some lost or duplicated."""
    config = config_from_args(args, layout)
    if config.duration_s is None and config.jobs is None:
        config = replace(config, duration_s=DEFAULT_DURATION_S)
    target = parse_target(args.db)
    if args.db is None and not os.environ.get(ENV_VAR) and layout.made_by_init:  # made on first use
        _ensure_embedded_schema(target, layout)
    run = LoadRun(target, config, layout, until_done=True, claim_form=args.claim_form, settings=settings).start()
    progress = ProgressLine(sys.stderr)
    try:
        while not run.wait(PROGRESS_EVERY_S):
            progress.show(run.progress_line())
    except KeyboardInterrupt:
        run.interrupted = True
        progress.show(run.progress_line() + " · stopping (Ctrl-C)")
    run.shutdown()
    progress.done(run.progress_line())
    if run.error is not None and not isinstance(run.error, QueuetopError):
        raise run.error  # a bug: cli.main says so (the traceback with --debug)
    report = read_report(target, run.facts())
    if args.json:
        print(json.dumps(report.to_json(), indent=2, default=str))
    else:
        print(report.render())
    if run.error is not None:
        raise run.error  # the report above says how far it got; the error explains why it stopped
    return 0 if report.ok else 1


def read_report(target: Target, facts: RunFacts, attempts: int = 5) -> LoadReport:
    """The end report, on a connection of its own: opened again if the server ends it meanwhile (a restart)."""
    for attempt in range(1, attempts + 1):
        try:
            with Database.open(target, purpose="worker") as db:
                return report_of(db, facts)
        except ConnectError:  # lost, or not back yet
            if attempt == attempts:
                raise
            time.sleep(0.5 * attempt)
    raise AssertionError("unreachable")


def report_of(db: Database, facts: RunFacts) -> LoadReport:
    """The end report, from the tables and the run's ledger."""
    build = build_report if facts.layout.batch_claims else build_shape_report
    return build(db, facts.layout, facts)


def _ensure_embedded_schema(target: Target, layout: Layout) -> None:
    from queuetop.layouts.schema import init_schema, schema_current

    with Database.open(target, create=True) as db:
        if not schema_current(db, layout):  # queuetop's own file: made, or brought up to date
            init_schema(db, layout)


# -- background loads ----------------------------------------------------------------------------------------
class BackgroundLoad:
    """A load running under the dashboard: a progress line per poll, stop() when the dashboard closes."""

    def __init__(self, run: LoadRun) -> None:
        self.run = run

    def progress_line(self) -> str:
        return self.run.progress_line()

    def stop(self) -> str:
        """Stop cleanly and sum up the run in one line, from the database."""
        self.run.shutdown()
        try:
            report = read_report(self.run.target, self.run.facts())
        except QueuetopError as exc:
            return f"load {self.run.tag} stopped; its report could not be read: {exc}"
        summary = report.summary()
        if self.run.error is not None:
            summary += f"; it stopped early: {self.run.error}"
        return summary


def start_background_load(target: Target, config: LoadConfig, layout: Layout = NATIVE, claim_form: str | None = None,
                          settings: dict | None = None) -> BackgroundLoad:  # fmt: skip
    """Start a load that runs until stopped (producing stops at --duration or --jobs if given). Raises
    QueuetopError at once if the target cannot be reached or has no queue schema."""
    run = LoadRun(target, config, layout, until_done=False, claim_form=claim_form, settings=settings)
    return BackgroundLoad(run.start())
