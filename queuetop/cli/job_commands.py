"""`queuetop jobs`: the jobs of one state, a page at a time, and `queuetop job ID`: one job, every column (act/jobs.py),
as text or JSON for scripts."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import TYPE_CHECKING

from queuetop.cli.common import _announce, open_target, refuse_typos, resolve_layout, settings_from
from queuetop.core import format as fmt
from queuetop.db import UsageError

if TYPE_CHECKING:
    from queuetop.layouts import Layout

CELL = 40  # a value wider than this is cut in the table (--json has it whole)


def cmd_jobs(args: argparse.Namespace) -> int:
    from queuetop.act.jobs import read_jobs

    after = None
    if args.after is not None:
        try:
            after = json.loads(args.after)
        except json.JSONDecodeError:
            after = None
        if not isinstance(after, list):
            raise UsageError(f"--after {args.after!r} is not a JSON list", "copy it from the line `queuetop jobs` "
                             "prints after a full page, e.g. --after '[\"2026-11-26T15:00:01\", 1047]'")
    with open_target(args, purpose="monitor") as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        if args.job_type and not layout.has_job_type:
            raise UsageError(f"layout {layout.name} has no job type column, so --type cannot choose", "drop --type")
        page = read_jobs(db, layout, args.state, args.job_type, after, args.limit, settings_from(args))
        if not page.jobs and args.job_type:
            refuse_typos(db, layout, [args.job_type])
    if args.json:
        print(json.dumps(page.as_json(), indent=2))
        return 0
    scope = f" of type {args.job_type!r}" if args.job_type else ""
    if not page.jobs:
        print(f"no {args.state} job{scope}" + (" after that one" if after else ""))
        return 0
    columns = [c for c in page.columns if c != "type" or not args.job_type]
    rows = [[_cell(job.get(c)) for c in columns] for job in page.jobs]
    widths = [max(fmt.cells(text) for text in [c, *(row[i] for row in rows)]) for i, c in enumerate(columns)]
    print("  ".join(fmt.pad(c.upper(), w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for row in rows:
        print("  ".join(fmt.pad(text, w) for text, w in zip(row, widths, strict=True)).rstrip())
    if page.after is not None:
        sys.stdout.flush()
        print(f"\n{len(page.jobs):,} {args.state} job(s){scope} on this page; the next one: the same command with "
              f"--after {shlex.quote(json.dumps(page.as_json()['next_after']))}", file=sys.stderr)  # fmt: skip
    return 0


def cmd_job(args: argparse.Namespace) -> int:
    from queuetop.act.jobs import read_job, shown_value

    with open_target(args, purpose="monitor") as db:
        layout, note = resolve_layout(args, db)
        _announce(note)
        view = read_job(db, layout, _job_id(layout, args.job_id), settings_from(args))
    if view is None:
        raise UsageError(f"no job {args.job_id} in {layout.queue_table}"
                         + (f" or {layout.completed_table}" if layout.completed_table else ""),
                         "it finished and was deleted, or was never enqueued; `queuetop jobs` lists the jobs there are")
    if args.json:
        print(json.dumps(view.as_json(), indent=2))
        return 0
    print(f"job {args.job_id}: {view.state}, in {view.table}")
    width = max(fmt.cells(role) for role in view.columns)
    for role, value in view.columns.items():
        print(f"  {fmt.pad(role, width)}  {shown_value(value, ' ' * (width + 4), view.now)}")
    return 0


def _job_id(layout: Layout, text: str) -> object:
    """The id as the layout's id column takes it: a whole number, or a GUID (seed 001's requests); or, where the
    completed table numbers its rows itself (django-q2's task uuids), as that table's id."""
    from queuetop.act.shape_queue import check_guid

    if layout.type_of("id") == "guid":
        return check_guid(text)
    try:
        return int(text)
    except ValueError:
        if layout.completed_ids_own:
            return text
        raise UsageError(f"job id {text!r} is not a whole number", "e.g. queuetop job 1047") from None


def _cell(value: object) -> str:
    if value is None:
        return "—"
    text = value.isoformat(sep=" ", timespec="seconds") if hasattr(value, "isoformat") else str(value)
    text = " ".join(text.split())
    return text if len(text) <= CELL else text[: CELL - 1] + "…"
