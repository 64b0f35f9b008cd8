"""Maintenance writes in batches: delete or retry dead jobs, make scheduled jobs available — however many rows.

One statement over every matching row holds a lock per row until it commits: past ~5,000 SQL Server escalates
to a table lock, which READPAST cannot skip, so every claim waits on it (and with escalation disabled it holds
millions of key locks instead). So each change is a statement over at most `MAINTENANCE_BATCH` rows that skips
rows others hold (`Statements._change`), committed on its own, repeated until a batch comes back short — as
Hangfire's expiration manager deletes. Nothing is open between two batches: Ctrl-C (or SIGTERM) stops the loop
there, and what the batches before it changed stays changed, as the progress said.
"""

from __future__ import annotations

from collections.abc import Callable

from queuetop.db import Database
from queuetop.layouts.sql import Statement

MAINTENANCE_BATCH = 1_000

Progress = Callable[[int], None]  # rows changed so far, after each batch


def in_batches(db: Database, statement: Statement, *, batch: int = MAINTENANCE_BATCH, expected: int | None = None,
               on_progress: Progress | None = None) -> int:  # fmt: skip
    """Run `statement` (made for `batch` rows) again and again, each in its own transaction, until it changes fewer
    than `batch` rows, or `expected` rows (counted before: rows that enter the state meanwhile do not keep it
    going forever); the rows changed."""
    done = 0
    while True:
        with db.transaction():
            changed = db.execute(*statement)
        done += changed
        if on_progress is not None:
            on_progress(done)
        if changed < batch or (expected is not None and done >= expected):
            return done
