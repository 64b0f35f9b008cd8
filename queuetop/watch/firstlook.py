"""The first look at a deep queue: its pending depth estimated from a bounded sample, made exact off the poll.

A poll after the first tracks the depth (tracking.py: arrivals and completions move it, a capped read keeps the
shallow types exact), but the first poll had to count every row, so the first look at a big, sick queue — the
moment a monitor is opened for — was its slowest: 10⁶ pending rows took 356 ms of counting on PostgreSQL and
1.2 s on SQLite before the first figure, and `queuetop stats` 1.2 s and 3.4 s in all.

So where a count would be long the first poll counts a sample instead:

- how long: the queue table's id span (`Statements.id_span`, the two ends of its primary key) bounds its rows.
  Up to EXACT_UP_TO ids the first poll counts every row, as it always did (a few ms; every small queue, and so
  every test that does not ask for a deep one, sees exact figures from the first poll on), and so it does
  where the sample finds no more than EXACT_UP_TO pending rows in all (a wide span, few rows: an old claim
  holds its low end);
- the sample: SAMPLE_WINDOWS ranges of the primary key spread evenly over the span, SAMPLE_ROWS ids in all
  (`Statements.pending_sample`): each a range seek, so it costs the same at 10⁵ rows as at 10⁸. A type's pending
  rows in the windows, times span ÷ ids read, estimate its depth; the estimate is the tracked figure a later
  poll starts from, marked ≈ until the full count (started by the next poll, on a connection of its own)
  replaces it;
- what stays exact: the other states (counted as every tracked poll counts them), the oldest pending job and
  the depth of every type the capped read finds shallow (`DEPTH_EXACT_UP_TO`); a type with pending rows but
  none in the windows appears when the full count lands (started by the second poll: the first poll's figures
  come out first; `stats --exact` waits for it).

Only a shape whose ids are an identity and whose finished rows leave the queue table samples this way (the span
is the live queue, not its history): the native schema and pgqueuer, and two whose depth cannot be tracked
(graphile-worker, django-q2: `Layout.depth_tracked`). These two count their states together, in one pass over the
table, so their first look counts none of them: the depth is the sample's (≈) and every other state is unknown
(None, shown "—", absent from the exporter: never a 0 it did not count) until the next poll counts every row, a
poll interval later (`recount.SpacedCount` then spaces the counts). `stats` looks once, so there they count every
row at once. The other shapes count every row on their first poll as before: where rows stay for good (seeds 000,
002-004, procrastinate, Celery) the span is their history, and its live end is what that first pass finds; seed
001, pg-boss and django-tasks have no identity to span; dramatiq-pg and huey read no arrival (bench/README says
what each first poll costs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from queuetop.db import Database
from queuetop.layouts.sql import Statements
from queuetop.watch.watermarks import Reads

SAMPLE_ROWS = 10_000  # ids the first look reads, however deep the queue ...
SAMPLE_WINDOWS = 20  # ... in this many ranges of the primary key, spread evenly over its span
EXACT_UP_TO = 2 * SAMPLE_ROWS  # a table whose ids span no more than this is counted whole on the first poll


def sample_windows(low: int, high: int, rows: int = SAMPLE_ROWS, windows: int = SAMPLE_WINDOWS
                   ) -> list[tuple[int, int]]:  # fmt: skip
    """`windows` ranges of `rows` // `windows` ids each, (first, last), spread evenly from `low` to `high`."""
    width, stride = rows // windows, (high - low + 1) // windows
    return [(low + n * stride, low + n * stride + width - 1) for n in range(windows)]


def estimate_pending(db: Database, statements: Statements, settings: dict[str, Any], reads: Reads,
                     type_of: Callable[[Any], str]) -> dict[str, int] | None:  # fmt: skip
    """Per job type (as `type_of` names it), the pending rows estimated from a sample of the queue table; None
    where the table is small enough to be counted whole (or empty)."""
    low, high = reads.fetch(db, statements.id_span())[0]
    if low is None or int(high) - int(low) + 1 <= EXACT_UP_TO:
        return None
    low, high = int(low), int(high)
    windows = sample_windows(low, high, SAMPLE_ROWS, SAMPLE_WINDOWS)  # the module's figures now: a test sets them
    read = sum(last - first + 1 for first, last in windows)
    scale = (high - low + 1) / read
    estimates: dict[str, int] = {}
    for job_type, rows in reads.fetch(db, statements.pending_sample(windows, settings)):
        name = type_of(job_type)
        estimates[name] = estimates.get(name, 0) + round(int(rows) * scale)
    # Few pending rows over a wide span (an old claim or a job scheduled far ahead holds the low end): counting
    # them costs what the sample did, and a sample would miss most of them.
    return estimates if sum(estimates.values()) > EXACT_UP_TO else None
