"""Down to the job: the jobs of one state (of one type), a page at a time, every column the layout names for them;
and one job by its id, wherever it is now (`read_job`).

Each state is read in the order a person asks of it — pending oldest first, scheduled soonest due, claims soonest
to time out, finished and dead newest last by id — with the row's id last as the tie-break, and a page goes on
from the last row's order values (keyset paging, `Statements.rows_in_states`): a page deep into a big table costs what
the first does. `queuetop jobs` prints it; its JSON is `JobPage.as_json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from queuetop.core.errors import UsageError
from queuetop.core.format import duration
from queuetop.db import Database
from queuetop.layouts import INTEGER_TYPES, Layout
from queuetop.layouts.sql import statements_on

# The order of each state's jobs, by role (those the layout has), before the id.
ORDER = {"pending": ("created",), "scheduled": ("available",), "claimed": ("timeout", "claimed_at"),
         "timed_out": ("timeout", "claimed_at"), "dead": ("c_completed",)}  # fmt: skip
MAX_LIMIT = 10_000


@dataclass(frozen=True)
class JobPage:
    """One page of one state's jobs."""

    state: str
    job_type: str | None
    columns: tuple[str, ...]  # the roles of each job, as the layout names them (no c_ prefix)
    jobs: tuple[Mapping[str, Any], ...]
    after: tuple[Any, ...] | None  # the next page's --after (the last job's order values); None: no more

    def as_json(self) -> dict[str, Any]:
        return {"state": self.state, "job_type": self.job_type,
                "jobs": [{role: _plain(value) for role, value in job.items()} for job in self.jobs],
                "next_after": None if self.after is None else [_plain(value) for value in self.after]}  # fmt: skip


def read_jobs(db: Database, layout: Layout, state: str, job_type: str | None = None,
              after: Sequence[Any] | None = None, limit: int = 50,
              settings: Mapping[str, Any] | None = None) -> JobPage:  # fmt: skip
    """One page of the jobs in `state` (of `job_type`), after the job whose order values are `after`."""
    if state not in layout.states:
        known = ", ".join(name for name in layout.states)
        raise UsageError(f"layout {layout.name} has no state {state!r}", f"its states: {known}")
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be from 1 to {MAX_LIMIT:,}, not {limit}")
    prefix = "c_" if layout.states[state].table == "completed" else ""
    roles = [role for role in layout.columns if role.startswith("c_") == bool(prefix)]
    order = [role for role in ORDER.get(state, ()) if role in roles]  # a joined value is no index's order
    order.append(prefix + "id")
    if after is not None and len(after) != len(order):
        raise UsageError(f"--after takes {len(order)} value(s) for state {state!r} (the order "
                         f"{', '.join(role.removeprefix('c_') for role in order)}), not {len(after)}",
                         "copy it from the line `queuetop jobs` prints after a full page")
    typed = job_type if layout.has_job_type else None
    after_values = None if after is None else [_parse(layout.type_of(role), value) for role, value in
                                                zip(order, after, strict=True)]  # fmt: skip
    rows = db.fetchall(*statements_on(db, layout).rows_in_states([state], typed, roles, order, limit,
                                                                 dict(settings or {}), after=after_values))  # fmt: skip
    jobs = tuple(_columns(db, layout, roles, row, prefix) for row in rows)
    last = tuple(jobs[-1][role.removeprefix(prefix)] for role in order) if len(jobs) == limit else None
    return JobPage(state, typed, tuple(role.removeprefix(prefix) for role in roles), jobs, last)


def _fits(sql_type: str | None, job_id: Any) -> bool:
    """Can `job_id` be an id of a column of this type? A text that is no whole number is no integer's."""
    integer = (sql_type or "").lower() in INTEGER_TYPES
    return not integer or isinstance(job_id, int) or str(job_id).lstrip("-").isdigit()


@dataclass(frozen=True)
class JobView:
    """One job: the table it is in now, its state there, every column the layout names for it."""

    job_id: Any
    table: str  # the table's name
    state: str  # a state of the layout, "done" or "finished (OUTCOME)", or "in no state"
    columns: Mapping[str, Any]
    now: datetime | None = None  # the database's clock when it was read: each time's age is against it

    def as_json(self) -> dict[str, Any]:
        return {"id": _plain(self.job_id), "table": self.table, "state": self.state,
                "columns": {role: _plain(value) for role, value in self.columns.items()}}  # fmt: skip


def read_job(db: Database, layout: Layout, job_id: Any, settings: Mapping[str, Any] | None = None) -> JobView | None:
    """The job with this id: in the queue table, else in the completed table; None where it is in neither (never
    enqueued, or deleted since: a finished job of a shape that deletes them)."""
    statements = statements_on(db, layout)
    for table, prefix in (("queue", ""), ("completed", "c_")):
        if table == "completed" and not layout.completed_table:
            break
        if not _fits(layout.type_of(prefix + "id"), job_id):
            continue  # an id of another kind than this table's own (django-q2's results are numbered apart)
        roles = [role for role in layout.columns if role.startswith("c_") == bool(prefix)]
        row = db.fetchone(*statements.job_by_id(table, roles, job_id, dict(settings or {})))
        if not row:
            continue
        columns = _columns(db, layout, roles, row[: len(roles)], prefix)
        state = row[len(roles)]
        if state is None:
            outcome = columns.get("outcome")
            state = f"finished ({outcome})" if table == "completed" and outcome else "in no state"
        name = layout.queue_table if table == "queue" else layout.completed_table
        now = db.dialect.decode_time(db.fetchone(f"SELECT {db.dialect.now_sql(layout.clock)}")[0])
        return JobView(job_id, str(name), str(state), columns, now)
    return None


def _columns(db: Database, layout: Layout, roles: Sequence[str], row: Sequence[Any], prefix: str) -> dict[str, Any]:
    """A row of `roles` by role (without the completed table's `c_`), its times decoded."""
    times = {role for role in roles if layout.type_of(role) in ("datetime", "datetime2")}
    return {role.removeprefix(prefix): db.dialect.decode_time(value) if role in times else value
            for role, value in zip(roles, row, strict=True)}  # fmt: skip


def shown_value(value: Any, indent: str = "", now: datetime | None = None) -> str:
    """A column's value for a person: "—" for none, a time as ISO with its age against `now` ("12.3s ago", "in
    4m05s"), a JSON payload pretty-printed (its lines after the first indented by `indent`, to stay under their
    column), anything else as text."""
    if value is None:
        return "—"
    if isinstance(value, datetime):
        shown = value.isoformat(sep=" ", timespec="milliseconds")
        if now is None or value.tzinfo != now.tzinfo:
            return shown
        ago = (now - value).total_seconds()
        return f"{shown}  ({duration(ago)} ago)" if ago >= 0 else f"{shown}  (in {duration(-ago)})"
    if isinstance(value, date):
        return value.isoformat()
    text = str(value)
    if text[:1] in "{[":
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False).replace("\n", "\n" + indent)
        except ValueError:
            pass
    return text


def _parse(layout_type: str | None, value: Any) -> Any:
    """An --after value as the statement takes it: a time from its ISO text, the rest as given."""
    if layout_type in ("datetime", "datetime2") and isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise UsageError(f"--after: {value!r} is not a time", "copy it from `queuetop jobs`' last line") from None
    return value


def _plain(value: Any) -> Any:
    """A value as JSON has it: times as ISO text, anything else it cannot say as text."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
