"""doctor's check of how much of the table every poll reads, where a shape's rows stay for good (`ranged`).

Such a shape's poll reads its states from the lowest id still in one (the live end) to the newest, a range of the
primary key: each plan is a seek, so the plan check calls it fine. But the range is the data's, not the plan's: a
claim nobody finished holds the low end down, and every family of states then reads all the rows after it on every
poll (seed 004 at 10^6 jobs: 2·10^5 rows, four times a poll, 242 ms). Dead jobs, where they are a family of their
own, are read from the oldest of them (`Statements.dead_apart`): an old one no longer holds the others down, but
their own read is as long. This check reads that length
(one count of every state, as the first poll does, and the highest id) and, past LIVE_END_WARN_IDS, prints the indexes
the preset advises for the live end's reads (`[[advice]]` serving LIVE_END_PROBE) that the table lacks, so each family
reads its own rows instead; and says which jobs to clear for the range to close (`queuetop dead`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from queuetop.db import Database
from queuetop.db.diagnostics import Diagnostics
from queuetop.layouts import STATES, Layout
from queuetop.layouts.model import IndexAdvice
from queuetop.layouts.sql import statements_on
from queuetop.serve.findings import Finding, Status

LIVE_END_PROBE = "poll: states (live end, every poll)"  # the probe's name, and what an [[advice]] says it serves
LIVE_END_WARN_IDS = 50_000  # a live end longer than this costs a poll more than the rest of it (bench/README)
CHECK = "live end"


def live_end_finding(db: Database, layout: Layout, settings: dict[str, Any], diagnostics: Diagnostics,
                     advice_sql: Callable[[IndexAdvice], str]) -> Finding | None:  # fmt: skip
    """How many ids every poll reads, and the advised indexes that would let each family read only its own rows;
    None for a shape whose poll does not read a live end."""
    statements = statements_on(db, layout)
    if not statements.ranged:
        return None
    states = [name for name in STATES if name in layout.states]
    dead_at, lows, dead_lows = statements.dead_apart(states), [], []
    for row in db.fetchall(*statements.state_counts(states, settings)):  # (part, type, oldest, counts…, low)
        if row[-1] is not None:
            (dead_lows if statements.in_dead_family(row[3:], dead_at) else lows).append(int(row[-1]))
    (high,) = db.fetchone(*statements.max_id())
    if not (lows or dead_lows) or high is None:
        return Finding(CHECK, Status.OK, "no job is in a state: a poll reads only the newest rows")
    span = int(high) - min(lows) + 1 if lows else 0
    dead_span = int(high) - min(dead_lows) + 1 if dead_lows else 0
    summary = (f"every poll reads ids {min(lows):,} to {int(high):,} ({span:,}): from the oldest job still in a "
               f"state{' but dead' if dead_at is not None else ''}") if lows else "no job waiting or in flight"
    if dead_lows:
        summary += f"; the dead ones from the oldest of them, ids {min(dead_lows):,} on ({dead_span:,})"
    span = max(span, dead_span)
    if span <= LIVE_END_WARN_IDS:
        return Finding(CHECK, Status.OK, summary)
    partial = {name.lower() for name in diagnostics.partial_indexes(db, layout.schema, layout.queue_table)}

    def there(advice: IndexAdvice) -> bool | None:
        """A filtered one by its name (another index on the same keys, the primary key, reads every row); else an
        index whose keys begin with its keys."""
        if advice.where:
            return advice.name.format(queue=layout.queue_table, completed=layout.completed_table).lower() in partial
        return diagnostics.index_leads_with(db, layout.schema, layout.queue_table,
                                            [layout.columns[role] for role in advice.keys])

    serving = [advice for advice in layout.advice if LIVE_END_PROBE in advice.serves and layout.indexable(advice)]
    lacking = [advice for advice in serving if not there(advice)]
    clear = ("-- and the range closes when the oldest jobs leave their state: `queuetop dead count` shows the dead "
             "ones (`dead retry` / `dead delete`), `queuetop jobs --state claimed` the claims nobody finished")
    if not serving:  # no index narrows it: only the oldest jobs' leaving does
        return Finding(CHECK, Status.WARN, summary, f"each family of states reads those {span:,} rows on every poll",
                       clear.replace("-- and the range", "-- the range"))
    if not lacking:
        return Finding(CHECK, Status.OK, f"{summary}; the indexes advised for it are there", fix=None,
                       details=(clear.removeprefix("-- "),))
    return Finding(CHECK, Status.WARN, summary,
                   f"each family of states reads those {span:,} rows on every poll; with these indexes each reads "
                   "only its own rows", "\n".join([*(advice_sql(advice) for advice in lacking), clear]))
