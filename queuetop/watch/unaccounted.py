"""The rows in no state: per job type, the rows of the queue table that none of the layout's conditions account for
(`Layout.accounted`) — a status value the states do not name, a row a claim left half-written. Such a row is in
no figure a poll shows, so without this count it would be invisible: it is shown ("in no state"), never dropped.

A row in no state can be anywhere in the table, so the count reads all of it, off the poll on a connection and a
thread of its own (`recount.Recounter`): at once, then at most once a minute and 1 % of the time, so that a table
of 10⁷ finished rows costs the monitor a scan every few minutes and its polls nothing. The first poll of a
small table waits a moment for the first count, so that it comes with the first look; where the catalog guesses
more rows than a count reads in that moment (`first_count_ends_soon`: 10⁶ rows take 0.2–0.7 s on PostgreSQL),
the first poll does not wait for what it would not get (it was 150–250 ms of a 200-ms first poll on pg-boss,
django-tasks and procrastinate at 10⁶ jobs) and the count starts with the next poll. `stats`, a one-shot look, waits
for it until it ends where the table is that small, and leaves it uncounted past that (a scan of every row, as
long as the rest of a first poll on seed 004 at 10⁶ rows); `stats --exact` waits for it whatever the size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from queuetop.core.errors import QueuetopError
from queuetop.db import Database
from queuetop.db.diagnostics import diagnostics_for
from queuetop.layouts.sql import Statements
from queuetop.watch.recount import RECOUNT_EVERY_S, Recounter

EVERY_S = RECOUNT_EVERY_S  # a count this often at most (and at most 1 % of the time)
FIRST_WAIT_S = 0.25  # what the first poll of a dashboard or an exporter waits for the first count ...
FIRST_WAIT_UP_TO_ROWS = 100_000  # ... of a table this big at most (about 70 ms of counting on PostgreSQL)
WAIT_AT_MOST_S = 60.0  # what a one-shot look waits at most (the count's statement times out well before)


def first_count_ends_soon(db: Database, schema: str | None, table: str) -> bool:
    """Is the table small enough for its first count to end while the first poll waits (FIRST_WAIT_S)? As the
    catalog guesses its rows, in a read that costs nothing at any size; where it cannot guess, yes (as before)."""
    try:
        rows = diagnostics_for(db.dialect).estimated_rows(db, schema, table)
    except QueuetopError:  # no right to read the catalog
        return True
    return rows is None or rows <= FIRST_WAIT_UP_TO_ROWS


class InNoState:
    """The latest count of one queue's rows in no state, per job type (as the collector names types)."""

    def __init__(self, statements: Statements, settings: Mapping[str, Any], what: str) -> None:
        self._statement = statements.in_no_state(dict(settings))
        self._recount: Recounter[list[tuple[Any, ...]]] = Recounter(f"{what} (rows in no state)", EVERY_S)
        self.counts: dict[str, int] | None = None  # None until the first count: not known yet

    def begin(self, db: Database) -> None:
        """Start the first count as a first poll that will wait for it begins: it reads the table beside the poll's
        own statements, not after them (`stats` on 10⁶ rows of seed 004: a 56-ms count after a 66-ms poll). The
        poll's `step` dates it and waits."""
        if self.counts is None:
            statement = self._statement
            self._recount.start(db, None, lambda own: own.fetchall(*statement))

    def step(self, db: Database, t: float, type_of: Callable[[Any], str], wait_s: float | None = 0.0) -> None:
        """At a poll (server time `t`): start a count when one is due, and take one that has ended, after waiting
        up to `wait_s` for it (None: until it ends)."""
        self._recount.date(t)
        if not self._recount.running and self._recount.schedule.due(t, resting=False):
            statement = self._statement
            self._recount.start(db, t, lambda own: own.fetchall(*statement))
        if wait_s != 0.0:
            self._recount.settle(WAIT_AT_MOST_S if wait_s is None else wait_s)
        rows = self._recount.take()
        if rows is not None:
            self._take(rows, type_of)

    def _take(self, rows: Iterable[tuple[Any, ...]], type_of: Callable[[Any], str]) -> None:
        counts: dict[str, int] = {}
        for job_type, rows_here in rows:
            if rows_here:
                name = type_of(job_type)
                counts[name] = counts.get(name, 0) + int(rows_here)
        self.counts = counts

    def of(self, job_types: Iterable[str]) -> int | None:
        """The rows in no state of these types; None before the first count."""
        if self.counts is None:
            return None
        if isinstance(job_types, (set, frozenset)) and len(job_types) > len(self.counts):  # the smaller of the two
            return sum(rows for job_type, rows in self.counts.items() if job_type in job_types)
        return sum(self.counts.get(job_type, 0) for job_type in job_types)

    def settle(self, timeout_s: float = 30.0) -> None:
        """Wait for a count in flight (tests); the next poll takes it."""
        self._recount.settle(timeout_s)
