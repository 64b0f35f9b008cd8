"""The commands that watch or drive a queue over time: the dashboard (one target or several), demo, load, and
history."""


from __future__ import annotations

import argparse
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from queuetop.cli.common import (
    LOG_PATH,
    _announce,
    _is_embedded_default,
    _layout_name,
    _naming,
    open_target,
    refuse_typos,
    resolve_layout,
    settings_from,
)
from queuetop.db import Database, UsageError, parse_target
from queuetop.db.target import Target
from queuetop.layouts import NATIVE, Layout

if TYPE_CHECKING:
    from queuetop.layouts.detect import Candidate
    from queuetop.load.driver import LoadRun
    from queuetop.store.model import Retention
    from queuetop.tui import WatchedTarget


def _check_watch_options(args: argparse.Namespace) -> None:
    if not 0.1 <= args.interval <= 3600:
        raise UsageError(f"--interval must be from 0.1 to 3600 seconds, not {args.interval}")
    if args.max_types < 0:
        raise UsageError(f"--max-types must be 0 (every job type) or more, not {args.max_types}",
                         "past it the busiest types are shown and the rest summed into one (other) line")


def shown_types(args: argparse.Namespace) -> int | None:
    """--max-types as the dashboard takes it: None for 0, every job type."""
    return args.max_types or None


def cmd_watch(args: argparse.Namespace) -> int:
    from queuetop.layouts.detect import SeveralQueues

    if len(args.per_target) > 1:
        return _watch_many(args)
    _check_watch_options(args)
    settings = settings_from(args)
    target = parse_target(args.db)
    auto_init = _is_embedded_default(args, target) and _layout_name(args) in (None, "native")
    try:
        layout, note = _watch_layout(args, target, auto_init)
    except SeveralQueues as several:  # queue systems side by side in one database (procrastinate beside pg-boss)
        if args.with_load:
            raise  # a load drives one of them: the error says how to choose it
        from queuetop.tui import run_multi_dashboard

        sections = _sections(args, target, several.candidates)
        return run_multi_dashboard(sections, job_types=args.types, log_path=LOG_PATH, bell=args.bell)
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
        _check_watch_options(run)

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
                             history_path=history_path, retention=retention,
                             max_types=shown_types(run))  # fmt: skip

    with ThreadPoolExecutor(max_workers=len(runs)) as pool:  # a slow target must not hold up the others' start
        return list(pool.map(watched, runs))


def _sections(args: argparse.Namespace, target: Target, found: Sequence[Candidate]) -> list[WatchedTarget]:
    """A dashboard section for each queue system found in one database (`SeveralQueues`), as for several targets:
    each with its own layout, history file and the sentence that says what was found."""
    from queuetop.tui import WatchedTarget

    slos = args.effective.slos if hasattr(args, "effective") else None
    sections = []
    for candidate in found:
        history_path, retention = _history(args, target, candidate.layout)
        sections.append(WatchedTarget(
            f"{candidate.layout.library or candidate.preset} {candidate.table.display}", target, candidate.layout,
            interval=args.interval, read_only=bool(args.read_only), settings=settings_from(args),
            note=candidate.sentence, slos=slos, history_path=history_path, retention=retention,
            max_types=shown_types(args)))  # fmt: skip
    return sections


def _watch_layout(args: argparse.Namespace, target: Target, auto_init: bool) -> tuple[Layout, str | None]:
    """The dashboard's layout. A database that cannot be reached yet is no error here: the dashboard shows the
    outage and keeps trying, with the layout given (or the native one)."""
    from queuetop.db import ConnectError, SchemaMissing
    from queuetop.layouts import load_layout, require_table, with_tables

    types = getattr(args, "types", None) or []  # the dashboard's --type (serve has none)
    if auto_init:
        if types and Path(target.value).expanduser().exists():  # a mistyped --type, before the dashboard
            with suppress(ConnectError, SchemaMissing), Database.open(target, purpose="monitor") as db:
                refuse_typos(db, NATIVE, types)
        return NATIVE, None
    try:
        with Database.open(target, purpose="monitor") as db:
            layout, note = resolve_layout(args, db)
            refuse_typos(db, layout, types)  # a mistyped --type, before the dashboard
            return layout, note
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

    from queuetop.act.shape_queue import create_demo_tables
    from queuetop.act.shape_worker import check_claim_form
    from queuetop.layouts import load_layout, require_table, with_tables
    from queuetop.layouts.schema import init_schema
    from queuetop.load.command import demo_config, load_types, start_background_load
    from queuetop.load.config import DEMO_SWEEP_S

    _check_watch_options(args)
    settings = settings_from(args)
    name = _layout_name(args)
    layout = require_table(with_tables(load_layout(name), args.table, args.completed_table)) if name else NATIVE
    check_claim_form(layout, args.claim_form)  # before anything is made
    where = args.db or str(Path(tempfile.mkdtemp(prefix="queuetop-demo-")) / "demo.db")
    target = parse_target(where)
    with Database.open(target, create=True) as db:
        if layout.made_by_init:
            init_schema(db)
        else:
            create_demo_tables(db, layout)
    # the demo's four job types (GUIDs where the shape stores GUIDs), or one stream where it has no job type column
    names = None
    if not layout.has_job_type:
        names = (layout.queue_table,)
    elif layout.type_of("type") == "guid":
        names = tuple(t for t, _ in load_types("4", layout))
    config = demo_config(layout, names)
    if not args.db:
        args.no_history = True  # a queue thrown away at the end: no history file to pile up
    background = start_background_load(target, config, layout, args.claim_form, settings)
    status = _dashboard(args, target, background, auto_init=False, layout=layout, settings=settings,
                        greeting=demo_greeting(layout, config.lease_s, DEMO_SWEEP_S))
    print(f"demo stopped; the demo queue is in {target.display}")
    shape = "" if layout.made_by_init else f" --layout {layout.name}"  # found without being named
    print(f"  look again with: queuetop --db {where}{shape}")
    return status


def demo_greeting(layout: Layout, lease_s: float, sweep_s: float) -> str:
    """What the demo says when it opens: what its load does, and what is left for the user to do."""
    what = "the native queue" if layout.made_by_init else f"layout {layout.name}, through its seed's own dequeue"
    text = f"Demo: a live load on {what}. One claim in a hundred is abandoned, as by a worker that died: "
    taken_back = layout.claim.taken_back if layout.claim else "never"
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
                             history_path=history_path, retention=retention,
                             max_types=shown_types(args))  # fmt: skip
    finally:
        if background is not None:
            summary = background.stop()
            if summary:
                print(summary)


def _history(args: argparse.Namespace, target: Target, layout: Layout) -> tuple[Path | None, Retention | None]:
    """The history file of this target and layout (None with --no-history), and the retention asked for."""
    from queuetop.store.model import Retention, history_path

    retention = Retention.parse(args.history_keep) if args.history_keep else None
    if args.no_history:
        return None, retention
    return history_path(target, layout), retention


def cmd_history(args: argparse.Namespace) -> int:
    from queuetop.store.history_report import history_csv, history_json, history_markdown
    from queuetop.store.history_store import HistoryStore
    from queuetop.store.model import history_dir, parse_duration
    from queuetop.store.threads import damaged_histories, find_history

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
