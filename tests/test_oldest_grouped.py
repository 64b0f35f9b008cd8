"""Each type's oldest pending job, read as the table's indexes allow (`Statements.oldest_grouped`): a seek per
type where an index begins with (type, created), as on the native schema; one pass over the pending rows, grouped
by type, where none does (pgqueuer's table, django-tasks-db's and pg-boss's before doctor's indexes), since a read
per type would read each type's pending rows on its own. The figures are the same either way; on a real SQLite file
and a real PostgreSQL server."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from queuetop.db import Database, parse_target
from queuetop.layouts import layout_from_toml, with_tables
from queuetop.watch.collector import ShapeCollector

from .conftest import PG_TARGET

# A queue whose finished jobs leave its table for a table of their own: the heads are read over a list of types
LAYOUT = """
clock = "utc"
arrivals = "identity"
[tables]
queue = "jobs"
completed = "done_jobs"
[queue_columns]
id = "id bigint"
type = "kind"
created = "created"
status = "status"
[completed_columns]
id = "id bigint"
type = "kind"
completed = "finished"
[states]
pending = "status = 'queued'"
claimed = "status = 'picked'"
[completions]
at = "c_completed"
"""
AGO = [(1, "mail", 90, "picked"),  # older, but taken: not the oldest pending
       (2, "mail", 60, "queued"), (3, "mail", 5, "queued"), (4, "sms", 30, "queued"), (5, "push", 20, "picked")]


def make(db: Database, schema: str | None, indexed: bool) -> None:
    prefix = f"{schema}." if schema else ""
    stamp = "timestamp" if db.dialect.name == "postgresql" else "TEXT"
    db.execute(f"CREATE TABLE {prefix}jobs (id bigint PRIMARY KEY, kind varchar(20), created {stamp}, "
               "status varchar(10))")
    db.execute(f"CREATE TABLE {prefix}done_jobs (id bigint PRIMARY KEY, kind varchar(20), finished {stamp})")
    db.execute(f"CREATE INDEX ix_status ON {prefix}jobs (status, kind)")
    if indexed:
        db.execute(f"CREATE INDEX ix_oldest ON {prefix}jobs (kind, created)")
    now = datetime.now(UTC).replace(tzinfo=None)  # as the test runs: the rows' ages are measured against it
    for job_id, kind, seconds_ago, status in AGO:
        created = (now - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%d %H:%M:%S")
        db.execute(f"INSERT INTO {prefix}jobs VALUES (?, ?, ?, ?)", (job_id, kind, created, status))


def oldest(db: Database, schema: str | None) -> tuple[bool, dict[str, float | None]]:
    layout = with_tables(layout_from_toml("mine", LAYOUT), f"{schema}.jobs" if schema else "jobs", "done_jobs")
    collector = ShapeCollector(db, layout)
    collector.poll()  # the first poll counts every row; the next ones read the heads
    snapshot = collector.poll()
    assert snapshot.error is None, snapshot.error
    return collector.statements.oldest_grouped, {t.job_type: t.oldest_age_s for t in snapshot.types}


def assert_ages(ages: dict[str, float | None]) -> None:
    assert set(ages) == {"mail", "sms", "push"} and ages["push"] is None
    assert ages["mail"] == pytest.approx(60, abs=5) and ages["sms"] == pytest.approx(30, abs=5)


@pytest.mark.parametrize("indexed", [True, False], ids=["an index on (type, created)", "none"])
def test_the_oldest_pending_job_per_type_on_sqlite(tmp_path, indexed):
    path = tmp_path / "q.db"
    sqlite3.connect(path).close()
    with Database.open(parse_target(f"sqlite:{path}")) as db:
        make(db, None, indexed)
        grouped, ages = oldest(db, None)
    assert grouped is not indexed
    assert_ages(ages)


@pytest.mark.postgres
@pytest.mark.parametrize("indexed", [True, False], ids=["an index on (type, created)", "none"])
def test_the_oldest_pending_job_per_type_on_postgresql(indexed):
    schema = f"qt_oldest_{int(indexed)}"
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        db.execute(f"CREATE SCHEMA {schema}")
        try:
            make(db, schema, indexed)
            grouped, ages = oldest(db, schema)
        finally:
            db.execute(f"DROP SCHEMA {schema} CASCADE")
    assert grouped is not indexed
    assert_ages(ages)
