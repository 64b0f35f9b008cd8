"""The commands on one queue: init, stats, enqueue, release, dead, workers, layouts, detect, doctor; and the
tables `stats` and `workers` print."""


from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from queuetop.cli.common import (
    EXIT_USAGE,
    _announce,
    _layout_name,
    open_target,
    refuse_typos,
    resolve_layout,
    settings_from,
    target_label,
)
from queuetop.core import format as fmt
from queuetop.core.progress import ProgressLine
from queuetop.db import Database, QueuetopError, UsageError, parse_target
from queuetop.layouts import NATIVE, PRESET_NAMES, Layout
from queuetop.layouts.sql import Statements
from queuetop.watch.pace import POLL_MAX_SHARE, Pace
from queuetop.watch.recount import SPACED_MAX_SHARE
from queuetop.watch.snapshot import Snapshot, TypeStats

if TYPE_CHECKING:
    from queuetop.act.workers import WorkersView
    from queuetop.watch.collector import ShapeCollector


# -- commands on one queue ---------------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace) -> int:
    from queuetop.layouts.schema import init_schema

    name = _layout_name(args)
    if name not in (None, "native"):
        raise UsageError(f"`queuetop init` creates the native schema only, not layout {name}",
                         "a seed's tables are yours: watch them as they are with --layout")
    with open_target(args, create=True) as db:
        steps = init_schema(db)
        print(f"{db.target.display} ({db.dialect.name})")
        for step in steps:
            state = "created" if step.created else "OUTDATED" if step.lacks else "exists "
            print(f"  {state:<8} {step.kind:<6} {step.name}")
        made = sum(step.created for step in steps)
        print("schema ready: " + (f"{made} object(s) created" if made else "nothing to do, everything was there"))
        for step in (step for step in steps if step.lacks):
            print(f"index {step.name} lacks {', '.join(step.lacks)} (made by an older queuetop: each count through it "
                  f"reads those columns from the table, row by row); in a quiet moment, run:\n  {step.upgrade_sql}")
        for note in Statements(db.dialect, NATIVE).schema_notes():
            print(f"note: {note}")
    return 0


def _stats_collector(args: argparse.Namespace, db: Database, settings: dict, one_shot: bool = False) -> ShapeCollector:
    """The collector `stats` polls (once, or every --watch seconds): the layout resolved and said, --type checked
    against it. On a deep queue its first poll estimates the depth from a sample and leaves the rows in no state
    uncounted (firstlook.py), unless --exact: then it counts every row and waits for the rows in no state. A
    `one_shot` collector (no --watch) starts no count it would not wait for: the process would end and leave it
    running on the server."""
    from queuetop.watch.collector import collector_for

    layout, note = resolve_layout(args, db)
    _announce(note)
    if args.types and not layout.has_job_type:
        raise UsageError(f"layout {layout.name} has no job type column, so --type cannot choose", "drop --type")
    return collector_for(db, layout, job_types=args.types, settings=settings, note=note, first_count_wait_s=None,
                         first_look=not getattr(args, "exact", False),  # the dashboard piped: never exact
                         one_shot=one_shot)


def cmd_stats(args: argparse.Namespace) -> int:
    if args.watch is not None or args.count is not None:
        return _watch_stats(args)
    settings = settings_from(args)
    try:
        with open_target(args, purpose="monitor") as db:
            collector = _stats_collector(args, db, settings, one_shot=True)
            snapshot = collector.poll()
            refuse_typos(db, collector.layout, args.types, snapshot)
    except UsageError:
        raise  # a mistake in the command line: one line and exit 2, whatever the format
    except QueuetopError as exc:
        if args.format not in ("json", "openmetrics"):  # the table (--format's default, or none given)
            raise
        return _could_not_read(args, exc, args.format, {"types": [], "totals": None})
    if args.format == "json":
        print(json.dumps(snapshot.to_json(), indent=2))
    elif args.format == "openmetrics":
        from queuetop.serve.exporter import TargetState, exposition
        from queuetop.watch.monitor import CONNECTED, PollOutcome

        state = TargetState(target_label(args), PollOutcome(CONNECTED, snapshot), snapshot.poll_ms / 1000)
        print(exposition([state]), end="")
    else:
        print(render_table(snapshot))
    return 0


def stats_for_a_pipe(args: argparse.Namespace) -> int:
    """`queuetop` alone with stdout not a terminal (a pipe, a file, cron): the dashboard would have no screen to
    be read on, so the figures come once, as `queuetop stats` prints them (`queuetop watch` is the dashboard
    anyway)."""
    if len(args.per_target) > 1 or args.with_load:
        raise UsageError("stdout is not a terminal, and several targets or --with-load need the dashboard",
                         "`queuetop stats -t NAME` prints one target's figures; `queuetop watch ...` runs the "
                         "dashboard anyway")  # fmt: skip
    print("queuetop: stdout is not a terminal: the figures once, as `queuetop stats` prints them "
          "(`queuetop stats --watch 5` repeats them; `queuetop watch` is the dashboard anyway)", file=sys.stderr)
    args.format, args.watch, args.count = "table", None, None
    return cmd_stats(args)


def _watch_stats(args: argparse.Namespace) -> int:
    """`stats --watch SECONDS [--count N]`: one collector across the polls, so the second poll on has the rates
    and latencies that need two; each poll printed as it comes (a table and a blank line, or one JSON document a
    line). A poll that cannot read the queue is a line on stderr (and with --json a document with its `error`),
    and the next one connects again. Exit 0 when every poll read the queue, else 2."""
    if args.watch is None:
        raise UsageError("--count needs --watch", "queuetop stats --watch 5 --count 12: a minute, every 5 s")
    if not 0.1 <= args.watch <= 3600:
        raise UsageError(f"--watch must be from 0.1 to 3600 seconds, not {args.watch:g}")
    if args.count is not None and args.count < 1:
        raise UsageError(f"--count must be 1 or more, not {args.count}")
    if args.format == "openmetrics":
        raise UsageError("--watch prints tables or JSON lines, not OpenMetrics", "`queuetop serve` keeps an "
                         "exposition up to date for Prometheus; --format openmetrics alone writes one for a file")
    settings, db, collector, failed = settings_from(args), None, None, False
    polls, next_at, pace, told = 0, time.monotonic(), Pace(), False
    try:
        while args.count is None or polls < args.count:
            try:
                if db is None:
                    db = open_target(args, purpose="monitor")
                    if collector is None:
                        collector = _stats_collector(args, db, settings)
                    else:
                        collector.use(db)
                assert collector is not None
                snapshot = collector.poll()
                pace.took(snapshot.poll_ms / 1000)
                if polls == 0:
                    refuse_typos(db, collector.layout, args.types, snapshot)
                print(json.dumps(snapshot.to_json()) if args.format == "json" else render_table(snapshot) + "\n",
                      flush=True)  # fmt: skip
            except UsageError:
                raise
            except QueuetopError as exc:
                failed = True
                if db is not None:
                    db.close()
                    db = None
                if args.format == "json":
                    print(json.dumps(_error_document(args, exc, {"types": [], "totals": None})), flush=True)
                print(f"queuetop: error: {exc} (again in {args.watch:g} s)", file=sys.stderr, flush=True)
                pace.took(None)
            polls += 1
            if args.count is None or polls < args.count:
                wait = pace.wait_s(args.watch)
                if wait > args.watch and not told:
                    told = True
                    print(f"queuetop: a poll of this queue takes {fmt.duration(pace.dear_s or 0.0)}: one every "
                          f"{wait:.3g} s, not every {args.watch:g}, so that polls take at most "
                          f"{POLL_MAX_SHARE:.0%} of the time (`queuetop doctor` names the index they lack)",
                          file=sys.stderr, flush=True)  # fmt: skip
                next_at = max(next_at + wait, time.monotonic())  # a slow poll delays, never bunches, the next
                time.sleep(max(0.0, next_at - time.monotonic()))  # the clock moved on since: never below zero
    finally:
        if db is not None:
            db.close()
    return EXIT_USAGE if failed else 0


def _could_not_read(args: argparse.Namespace, error: QueuetopError, output: str, nothing: dict[str, object]) -> int:
    """For a script reading `--json` or `--format openmetrics`: the document still comes, saying what went wrong
    (`error`, with `nothing` for the figures; `queuetop_up 0`), and the error's line still goes to stderr. Exit 2."""
    if output == "openmetrics":
        from queuetop.serve.exporter import TargetState, exposition
        from queuetop.watch.monitor import RECONNECTING, PollOutcome

        print(exposition([TargetState(target_label(args), PollOutcome(RECONNECTING, error=str(error)))]), end="")
    else:
        print(json.dumps(_error_document(args, error, nothing), indent=2))
    print(f"queuetop: error: {error}", file=sys.stderr)
    return EXIT_USAGE


def _error_document(args: argparse.Namespace, error: QueuetopError, nothing: dict[str, object]) -> dict[str, object]:
    """The JSON a script gets when the queue could not be read: when, where, the error, and `nothing` figures."""
    from queuetop.db.connection import utc_now

    try:
        shown = parse_target(args.db).display
    except QueuetopError:
        shown = None  # the target itself is what could not be read: never echo it back
    return {"taken_at": utc_now().isoformat(timespec="milliseconds") + "Z", "target": shown, "error": str(error),
            **nothing}


def cmd_enqueue(args: argparse.Namespace) -> int:
    from queuetop.act.queue import Interrupted
    from queuetop.act.shape_queue import ShapeQueue

    if args.delay < 0:
        raise UsageError(f"--delay must be zero or more seconds, not {args.delay}")
    with open_target(args) as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        try:
            ids = ShapeQueue(db, layout).enqueue_many(args.job_type, args.count, info=args.info,
                                                      priority=args.priority, delay_s=args.delay,
                                                      created_by="queuetop-cli")  # fmt: skip
        except Interrupted as exc:  # Ctrl-C (or SIGTERM, SIGHUP) between two chunks: what stayed, exactly
            print(f"queuetop: {exc.message}", file=sys.stderr)
            return 128 + exc.signum
    noun = "job" if len(ids) == 1 else "jobs"
    listed = ", ".join(map(str, ids)) if len(ids) <= 10 else f"{ids[0]}..{ids[-1]}"
    kind = f" of type {args.job_type!r}" if args.job_type is not None else f" into {layout.queue_table}"
    print(f"enqueued {len(ids):,} {noun}{kind}: id{'s' if len(ids) > 1 else ''} {listed}")
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from queuetop.act.shape_queue import ShapeQueue

    with open_target(args) as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        if args.worker is not None:
            return _release_worker(args, db, layout)
        scope = f" of type {args.job_type!r}" if args.job_type else ""
        settings = {**settings_from(args), "max_attempts": args.max_attempts}
        result = ShapeQueue(db, layout, settings).release(args.job_type, dry_run=args.dry_run)
        if result.timed_out == 0 and args.job_type:
            refuse_typos(db, layout, [args.job_type])
        if not layout.release_buries:
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
    from queuetop.act.workers import release_worker

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
        dead = f"; {result.dead:,} out of attempts moved to dead" if layout.release_buries else ""
        print(f"released {result.released:,} of {result.timed_out:,} timed-out claim(s) {who} back to pending{dead}")
    return 0


def cmd_dead(args: argparse.Namespace) -> int:
    from queuetop.act.shape_queue import ShapeQueue

    with open_target(args) as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        if args.action != "count":  # refused as asked, even where there is nothing to do yet
            layout.require(f"dead {args.action}")
        queue = ShapeQueue(db, layout, settings_from(args))
        scope = f" of type {args.job_type!r}" if args.job_type else ""
        found = queue.dead("count", args.job_type)
        if found == 0 and args.job_type:
            refuse_typos(db, layout, [args.job_type])
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
        done = "back to pending" if args.action == "retry" else "deleted"
        line, so_far = ProgressLine(sys.stderr), [0]

        def progress(changed: int) -> None:
            so_far[0] = changed
            line.show(f"{changed:,} of {found:,} dead job(s){scope} {done}")

        try:
            changed = queue.dead(args.action, args.job_type, on_progress=progress)
        except KeyboardInterrupt:  # between two batches: what they changed is committed
            line.done(f"stopped: {so_far[0]:,} of {found:,} dead job(s){scope} {done}, the others unchanged")
            raise
        if so_far[0] and line.tty:
            line.done("")  # the progress line ends; the result follows on a line of its own
        print(f"{changed:,} dead job(s){scope} {done}")
    return 0


def cmd_workers(args: argparse.Namespace) -> int:
    from queuetop.act.workers import read_workers

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
    w = max(map(len, PRESET_NAMES))
    for name in PRESET_NAMES:
        layout = load_layout(name)
        tables = ", ".join(layout.table_names()) if not layout.table_required else "(your table: --table)"
        print(f"{name:<{w}} {layout.description}")
        print(f"{'':<{w}} tables:  {tables}   clock: {layout.clock}")
        queue = [c for r, c in layout.columns.items() if not r.startswith("c_")]
        print(f"{'':<{w}} columns: {', '.join(dict.fromkeys(queue))}")
        if layout.joined:
            joined = (f"{name} = {j.table}.{j.column} by {j.key} = {layout.columns[j.by]}"
                      for name, j in layout.joined.items())
            print(f"{'':<{w}} joined:  {', '.join(joined)}")
        completed = [c for r, c in layout.columns.items() if r.startswith("c_")]
        if completed:
            print(f"{'':<{w}} completed table: {', '.join(dict.fromkeys(completed))}")
        if layout.library:
            print(f"{'':<{w}} job library: {layout.library} {layout.library_versions}, on "
                  f"{' and '.join(layout.databases)}" + ("; read only" if not layout.declares else ""))
            if layout.library_words:
                print(f"{'':<{w}} its words: " + "; ".join(f"{state} = {said}" for state, said in
                                                           layout.library_words.items()))  # fmt: skip
        missing = [f for f, ok in layout.provides.items() if not ok]
        if missing:
            print(f"{'':<{w}} cannot know: {', '.join(missing)}")
        if layout.claim is not None:
            failure = {None: "no failure path (--fail refused)", "timeout": "a failed attempt times out, is retried",
                       "lost": "a failed request is lost until released",
                       "retry": "a failed attempt is retried after a delay, dead after $max_attempts",
                       }[layout.claim.failure]
            print(f"{'':<{w}} load: claim form {', '.join(layout.claim.forms)}; {failure}")
    print("\nwatch one: queuetop --layout NAME [--table SCHEMA.NAME] --db TARGET;  "
          "drive one: queuetop load --layout NAME ...;  its file: queuetop layouts --show NAME")
    return 0


def cmd_detect(args: argparse.Namespace) -> int:
    from queuetop.layouts.detect import detect

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
    from queuetop.serve.doctor import render_text, run_doctor

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
        changed = {r: c for r, c in layout.columns.items() if r.startswith("c_") == bool(prefix)
                   and (base.columns.get(r) != c or base.pairs.get(r) != layout.pairs.get(r))}
        if changed:
            lines += ["", f"[{section}]"]
            for role, column in changed.items():
                sql_type, path, second = layout.types.get(role), layout.json_paths.get(role), layout.pairs.get(role)
                spec = f"json({column}, {'.'.join(path)})" if path else column + (f" {sql_type}" if sql_type else "")
                spec = f"pair({column}, {second})" if second else spec
                lines.append(f'{role.removeprefix(prefix)} = "{spec}"')
    return "\n".join(lines)


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
    ("NO STATE", "in_no_state", lambda r: fmt.count(r.in_no_state)),  # shown when some row is in no state
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
    columns = [(name, cell) for name, figure, cell in COLUMNS if figure is None or (
               snapshot.provides(figure) and (figure != "in_no_state" or snapshot.totals.in_no_state))]
    rows = [[cell(row) for _, cell in columns] for row in (*snapshot.types, snapshot.totals)]
    line = aligned([name for name, _ in columns], rows)
    clock = "UTC" if snapshot.clock == "utc" else "server local time"
    out = [f"{snapshot.target} ({snapshot.dialect}, layout {snapshot.layout}) at {snapshot.taken_at:%Y-%m-%d %H:%M:%S} "
           f"{clock}, poll {snapshot.poll_ms:.1f} ms, rates and latencies over the last {snapshot.window_s:.0f} s"]
    out.append(line(0))
    if not snapshot.types:
        out.append("(the queue is empty: add jobs with `queuetop enqueue`)")
    out += [line(i) for i in range(1, len(rows) + 1)]
    if snapshot.totals.depth_is_estimate:
        out.append("≈ an estimate: a deep queue's first look samples it, later polls track it between full counts "
                   "(or, where it cannot be tracked, show the last count of every row, made at most "
                   f"{SPACED_MAX_SHARE:.0%} of the time); "
                   "a type the sample missed (none of its jobs in it, in another state or arrived in the last minute) "
                   "is not listed (`queuetop stats --exact` counts every row first)")
    if snapshot.totals.in_no_state:
        out.append(f"NO STATE: {snapshot.totals.in_no_state:,} rows in none of layout {snapshot.layout}'s states "
                   f"(a value its states do not name?): `queuetop layouts --show {snapshot.layout}` shows them")
    elif snapshot.totals.in_no_state is None and snapshot.provides("in_no_state"):
        out.append("NO STATE: not counted — rows in none of the states can be anywhere, and a first look at a table "
                   "this big does not read all of it (`queuetop stats --exact` does)")
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
