"""Test helpers: a settable clock and direct reads of the queue tables (to check what really is there)."""

from __future__ import annotations

from datetime import datetime, timedelta

from queuetop.db import Database
from queuetop.layouts import Layout

BASE = datetime(2026, 1, 1, 12, 0, 0)


class FakeClock:
    """The server clock, frozen and moved by hand: `clock.at(7)` is BASE + 7 s."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.now = BASE + timedelta(seconds=seconds)

    def at(self, seconds: float) -> FakeClock:
        self.now = BASE + timedelta(seconds=seconds)
        return self

    def __call__(self) -> datetime:
        return self.now


def queue_rows(db: Database, layout: Layout) -> dict[int, tuple]:
    """id -> (type, claimed_at, token, attempts) of every row in the queue table."""
    sql = db.dialect.sql(layout, "SELECT {id}, {type}, {claimed_at}, {token}, {attempts} FROM {queue}")
    return {int(r[0]): tuple(r[1:]) for r in db.fetchall(sql)}


def completed_rows(db: Database, layout: Layout) -> dict[int, tuple]:
    """id -> (type, outcome, attempts) of every row in the completed table."""
    sql = db.dialect.sql(layout, "SELECT {c_id}, {c_type}, {c_outcome}, {c_attempts} FROM {completed}")
    return {int(r[0]): tuple(r[1:]) for r in db.fetchall(sql)}


def completed_ids_with_repeats(db: Database, layout: Layout) -> list[int]:
    sql = db.dialect.sql(layout, "SELECT {c_id} FROM {completed}")
    return [int(r[0]) for r in db.fetchall(sql)]
