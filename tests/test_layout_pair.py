"""A second dimension: a job's queue beside its type, `type = "pair(queue_name, task_name)"`, read as one text
`queue/task` (most libraries have both: procrastinate's queue_name and task_name, django-tasks-db's queue_name and
task_path). Parsed with both names checked like any identifier, rendered per database (CONCAT; SQLite's `||`, a
NULL read as empty), never written, kept in the file `queuetop detect` prints, and watched on a real SQLite file
and a real PostgreSQL server: the same task on two queues is two rows."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest

from queuetop.cli.queue_commands import layout_toml
from queuetop.core.errors import UsageError
from queuetop.db import Database, parse_target
from queuetop.db.dialects import MSSQLDialect, PostgresDialect, SQLiteDialect
from queuetop.layouts import layout_from_toml, load_layout, with_tables
from queuetop.layouts.sql import Statements
from queuetop.watch.collector import ShapeCollector

from .conftest import PG_TARGET
from .tsql_check import assert_tsql

LAYOUT = """
arrivals = "identity"
[tables]
queue = "jobs"
[queue_columns]
id = "id bigint"
type = "pair(queue_name, task_name)"
status = "status"
[states]
pending = "status = 'todo'"
claimed = "status = 'doing'"
"""
RENDERED = {"postgresql": """CONCAT("queue_name", '/', "task_name")""",
            "mssql": "CONCAT([queue_name], '/', [task_name])",
            "sqlite": """(COALESCE(CAST("queue_name" AS TEXT), '') || '/' || """
                      """COALESCE(CAST("task_name" AS TEXT), ''))"""}  # fmt: skip
ROWS = [(1, "mail", "send", "todo"), (2, "mail", "send", "todo"), (3, "bulk", "send", "todo"),
        (4, "bulk", "send", "doing"), (5, None, "send", "todo")]  # fmt: skip


@pytest.mark.parametrize("dialect", [SQLiteDialect(), PostgresDialect(), MSSQLDialect()], ids=lambda d: d.name)
def test_a_pair_is_its_two_columns_as_one_text_in_each_databases_words(dialect):
    layout = layout_from_toml("mine", LAYOUT)
    assert (layout.columns["type"], layout.pairs["type"]) == ("queue_name", "task_name")
    sql, params = Statements(dialect, layout).state_counts(["pending", "claimed"])
    assert RENDERED[dialect.name] in sql and len(params) == sql.count("?")
    if dialect.name == "mssql":
        assert_tsql(sql, params)


@pytest.mark.parametrize("change, complaint", [
    ('"pair(queue_name, task_name)"', '"pair(queue_name)"'),
    ('"pair(queue_name, task_name)"', '"pair(queue_name, task name)"'),
    ('"pair(queue_name, task_name)"', '"pair(queue_name, \'x\')"'),
])  # fmt: skip
def test_a_pair_is_checked_as_it_is_read(change, complaint):
    with pytest.raises(UsageError, match="pair"):
        layout_from_toml("mine", LAYOUT.replace(change, complaint))


def test_a_pair_is_never_written():
    with pytest.raises(UsageError, match="two columns"):
        layout_from_toml("mine", LAYOUT + '[enqueue]\ntype = "type"\n')


def poll_twice(db: Database, queue: str) -> dict[str, tuple[int, int | None]]:
    collector = ShapeCollector(db, with_tables(layout_from_toml("mine", LAYOUT), queue))
    collector.poll()
    snapshot = collector.poll()
    assert snapshot.error is None, snapshot.error
    return {t.job_type: (t.depth, t.claimed) for t in snapshot.types}


SHOWN = {"mail/send": (2, 0), "bulk/send": (1, 1), "/send": (1, 0)}  # a queue NULL reads as empty


def test_the_same_task_on_two_queues_is_two_rows_on_sqlite(tmp_path):
    path = tmp_path / "q.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue_name TEXT, task_name TEXT, status TEXT)")
        con.executemany("INSERT INTO jobs VALUES (?, ?, ?, ?)", ROWS)
    with Database.open(parse_target(f"sqlite:{path}")) as db:
        assert poll_twice(db, "jobs") == SHOWN


def test_the_layout_detect_prints_keeps_the_pair():
    """`queuetop detect` prints a layout file from the preset it found; a pair made from it stays a pair."""
    base = load_layout("django_tasks")
    paired = replace(base, columns={**base.columns, "type": "queue_name"}, pairs={"type": "task_path"})
    assert 'type = "pair(queue_name, task_path)"' in layout_toml("django_tasks", paired)


@pytest.mark.postgres
def test_the_same_task_on_two_queues_is_two_rows_on_postgresql():
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        db.execute("DROP SCHEMA IF EXISTS qt_pair CASCADE")
        db.execute("CREATE SCHEMA qt_pair")
        try:
            db.execute("CREATE TABLE qt_pair.jobs (id bigint PRIMARY KEY, queue_name text, task_name text, "
                       "status text)")
            for row in ROWS:
                db.execute("INSERT INTO qt_pair.jobs VALUES (?, ?, ?, ?)", row)
            shown = poll_twice(db, "qt_pair.jobs")
        finally:
            db.execute("DROP SCHEMA qt_pair CASCADE")
    assert shown == SHOWN


def test_a_presets_advice_on_its_type_is_left_out_where_a_file_pairs_the_type():
    """The documented way to see procrastinate's queues: its preset with the type paired. doctor then leaves out
    the advised indexes keyed on the type (no column of its own to index) and keeps the others."""
    layout = layout_from_toml("mine", 'preset = "procrastinate"\n[queue_columns]\ntype = "pair(queue_name, task_name)"')
    assert [advice.name for advice in layout.advice if layout.indexable(advice)] == [
        "IX_{queue}_scheduled"]
    sql, _ = Statements(PostgresDialect(), layout).state_counts(["pending", "claimed"], dict(layout.settings))
    assert """CONCAT("queue_name", '/', "task_name")""" in sql
