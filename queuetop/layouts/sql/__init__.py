"""Every statement of a layout, built from the layout and a dialect's primitives.

Every shape is served here, the native schema's included: the monitor's reads (`counts`: states counted per
job type; `flow`: arrivals and completions past a watermark), the rows the drill-down, the load report and the
workers screen show (`rows`), the actions (`act`: enqueue the way the seed's insert does, release by
compare-and-set, dead retry/delete), and a worker's claims and completions (`claim`; `lease`: the batch
claims, moves with an outcome, retries and releases of a leased queue, the native schema's). Roles become quoted column
names, conditions come from `predicate.py`, values always travel as typed `?` parameters, and times are the
database's own clock of the layout's kind (`GETDATE()` / `LOCALTIMESTAMP` / SQLite 'localtime' for the seeds,
UTC for native) — never the client's. Each statement starts with `/* queuetop */` and is rendered once per
layout and dialect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from queuetop.layouts.sql.act import ActSQL
from queuetop.layouts.sql.base import NO_COUNT, TAG, Bind, Statement
from queuetop.layouts.sql.counts import CountSQL
from queuetop.layouts.sql.flow import FlowSQL
from queuetop.layouts.sql.init import InitSQL, SchemaObject
from queuetop.layouts.sql.lease import LeaseSQL
from queuetop.layouts.sql.rows import RowSQL

if TYPE_CHECKING:
    from queuetop.db import Database
    from queuetop.layouts import Layout

__all__ = ["NO_COUNT", "TAG", "Bind", "SchemaObject", "Statement", "Statements", "statements_on"]


class Statements(CountSQL, FlowSQL, RowSQL, ActSQL, LeaseSQL, InitSQL):
    """The statements of one layout in one dialect. Settings ($max_attempts, $lost_after) are bound at run time."""


def statements_on(db: Database, layout: Layout) -> Statements:
    """The layout's statements for reading on `db`, whose session then reads the layout's times in its clock."""
    db.use_clock(layout.clock)
    return Statements(db.dialect, layout)
