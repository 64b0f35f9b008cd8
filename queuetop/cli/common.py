"""What every command does first: open the target, choose the layout, and fill in the config file's settings and
SLOs per target (command line > environment > file > default; see queuetop.cli.config)."""


from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from queuetop.db import Database, UsageError, parse_target
from queuetop.db.target import ENV_VAR, Target
from queuetop.layouts import NATIVE, Layout

if TYPE_CHECKING:
    from queuetop.cli.config import Effective
    from queuetop.watch.slo import Slos
    from queuetop.watch.snapshot import Snapshot


EXIT_USAGE = 2
LAYOUT_ENV_VAR = "QUEUETOP_LAYOUT"


def log_path() -> Path:
    """Where the dashboard logs unexpected errors."""
    from platformdirs import user_log_path

    return user_log_path("queuetop", appauthor=False) / "queuetop.log"


LOG_PATH = log_path()


# -- opening the target ----------------------------------------------------------------------------------
def open_target(args: argparse.Namespace, purpose: str = "worker", create: bool = False) -> Database:
    """Open --db. The embedded default is created, schema and all, on first use."""
    from queuetop.layouts.schema import init_schema, schema_current

    target = parse_target(args.db)
    embedded = _is_embedded_default(args, target) and _layout_name(args) in (None, "native")
    db = Database.open(target, purpose=purpose, create=create or embedded)
    if embedded and not schema_current(db):  # queuetop's own file: made, or brought up to date, as it is opened
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
    from queuetop.layouts import load_layout, require_table, with_tables
    from queuetop.layouts.detect import Catalog, check_layout, choose, default_schemas, detect
    from queuetop.layouts.schema import schema_present

    name = _layout_name(args)
    table, completed = getattr(args, "table", None), getattr(args, "completed_table", None)
    if name:
        layout = require_table(with_tables(load_layout(name), table, completed))
        return check_layout(db, layout), None
    if not table and schema_present(db, NATIVE):
        return NATIVE, None
    catalog = Catalog(db)
    if table:  # a table without a layout: the preset that fits it, on that very table (its schema too)
        named = with_tables(NATIVE, table)
        found = catalog.find(db.dialect.schema_for(named.schema), named.queue_table, default_schemas(db))
        if found is None:
            raise UsageError(f"table {table} not found in {db.target.display}",
                             "name it as [SCHEMA.]NAME; `queuetop detect` shows the queue tables found")
        fits = [c for c in detect(db, catalog) if (c.table.schema, c.table.name) == (found.schema, found.name)]
        if not fits:
            raise UsageError(f"no preset fits the table {table}", "name its shape with --layout, or write a layout "
                             "file (`queuetop layouts --show NAME` prints one to start from)")
        return fits[0].layout, fits[0].sentence
    return choose(db, catalog)


def _announce(note: str | None) -> None:
    if note:
        print(f"queuetop: {note}", file=sys.stderr)


def _is_embedded_default(args: argparse.Namespace, target: Target) -> bool:
    return args.db is None and not os.environ.get(ENV_VAR) and target.kind == "sqlite"


# -- the config file's settings, per target ----------------------------------------------------------------
WRITING = {"init", "enqueue", "load"}


MANY_TARGETS = ("watch", "check", "serve", "alerts", "config")


def _naming(args: argparse.Namespace) -> str:
    """What named several targets, as the subject of a sentence."""
    return "--all names" if getattr(args, "all_targets", False) else "the -t options name"


def configure(args: argparse.Namespace) -> list[argparse.Namespace]:
    """The command's arguments once per target, with the config file's settings and SLOs filled in (command line
    > environment > file > default; see queuetop.cli.config). Commands other than check, serve and config take one
    target."""
    from queuetop.cli.config import find_config, load_config, resolve, targets_to_use

    path, named = find_config(args.config)
    file = load_config(path, named)
    if file.warning:
        print(f"queuetop: warning: {file.warning}", file=sys.stderr)
    names = targets_to_use(args.targets, getattr(args, "all_targets", False), file)
    if len(names) > 1 and args.command not in MANY_TARGETS:
        raise UsageError(f"`queuetop {args.command}` works on one target, not {len(names)}",
                         "give one -t NAME (watch, check, serve, alerts and config take several)")  # fmt: skip
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
    from queuetop.cli.config import slo_from_option
    from queuetop.watch.slo import Limit, Slo, Slos

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
    from queuetop.cli.config import Origin

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


def refuse_typos(db: Database, layout: Layout, types: Sequence[str], snapshot: Snapshot | None = None) -> None:
    """A --type with nothing to show (no row in the snapshot, or nothing found to act on) that is close to a job
    type the queue has is a typo: refused, "did you mean" (`act.queue.refuse_typo`). A type merely idle passes."""
    from queuetop.act.queue import refuse_typo
    from queuetop.layouts.sql import Statements

    if not layout.has_job_type or layout.type_of("type") == "guid":
        return
    statements = Statements(db.dialect, layout)
    for job_type in types:
        if snapshot is None or snapshot.type_named(job_type) is None:
            refuse_typo(db, statements, job_type)
