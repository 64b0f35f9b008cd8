"""A joined column (`[joined_columns]`): a value kept in another table, read for each queue row by key
(procrastinate's worker heartbeat). Checked as it is read like every name of a layout, rendered as one scalar
subquery per database (T-SQL through both grammars), never written, and watched on a real SQLite file through the
CLI: a job held by a live worker is claimed, one held by a silent or vanished worker timed out. The real library
is tests/libraries/test_procrastinate.py."""

from __future__ import annotations

import json
import sqlite3

import pytest

from queuetop.core.errors import UsageError
from queuetop.db import Database, parse_target
from queuetop.db.dialects import MSSQLDialect, PostgresDialect, SQLiteDialect
from queuetop.layouts import layout_from_toml
from queuetop.layouts.sql import Statements
from queuetop.watch.collector import ShapeCollector

from .test_cli import assert_clean_failure, queuetop
from .tsql_check import assert_tsql

LAYOUT = """
[tables]
queue = "jobs"
[queue_columns]
id = "id bigint"
type = "kind"
claimed_by = "worker_id bigint"
[joined_columns]
heartbeat = {table = "workers", column = "last_beat", key = "id", by = "claimed_by"}
[settings]
silent_after = 30
[states]
pending = "claimed_by is null"
claimed = "claimed_by is not null and heartbeat >= now - $silent_after"
timed_out = "claimed_by is not null and (heartbeat is null or heartbeat < now - $silent_after)"
"""
RENDERED = {
    "postgresql": '(SELECT MAX(qt_joined."last_beat") FROM "workers" AS qt_joined WHERE qt_joined."id" = '
                  '"jobs"."worker_id")',
    "mssql": "(SELECT MAX(qt_joined.[last_beat]) FROM [workers] AS qt_joined WITH (NOLOCK) WHERE qt_joined.[id] = "
             "[jobs].[worker_id])",
    "sqlite": '(SELECT MAX(qt_joined."last_beat") FROM "workers" AS qt_joined WHERE qt_joined."id" = '
              '"jobs"."worker_id")',
}  # fmt: skip


@pytest.mark.parametrize("dialect", [SQLiteDialect(), PostgresDialect(), MSSQLDialect()], ids=lambda d: d.name)
def test_a_joined_column_is_a_subquery_on_the_row_in_scope(dialect):
    layout = layout_from_toml("mine", LAYOUT)
    assert layout.has("heartbeat") and "heartbeat" not in layout.columns  # detection asks the queue table for none
    sql, params = Statements(dialect, layout).state_counts(["pending", "claimed", "timed_out"], dict(layout.settings))
    assert RENDERED[dialect.name] in sql and len(params) == sql.count("?")
    if dialect.name == "mssql":
        assert_tsql(sql, params)


def test_a_joined_column_in_a_named_schema_reads_the_table_of_that_schema():
    layout = layout_from_toml("mine", LAYOUT.replace('queue = "jobs"', 'schema = "app"\nqueue = "jobs"'))
    sql, _ = Statements(PostgresDialect(), layout).state_counts(["claimed"], dict(layout.settings))
    assert 'FROM "app"."workers" AS qt_joined' in sql and '= "jobs"."worker_id"' in sql


@pytest.mark.parametrize("change, complaint", [
    ('key = "id", by', 'key = "id", extra = "x", by'),  # an unknown field
    ('column = "last_beat", ', ""),  # a field missing
    ('table = "workers"', 'table = "workers; drop table jobs"'),
    ('by = "claimed_by"', 'by = "nothing"'),
    ('by = "claimed_by"', 'by = "type"'),  # fine: a column of the queue table
    ("heartbeat = {", "created = {"),  # a role's name
    ("heartbeat = {", "kind = {"),
])  # fmt: skip
def test_a_joined_column_is_checked_as_it_is_read(change, complaint):
    text = LAYOUT.replace(change, complaint)
    if complaint == 'by = "type"':
        assert layout_from_toml("mine", text).joined["heartbeat"].by == "type"
        return
    with pytest.raises(UsageError, match=r"joined_columns|joined column|invalid identifier|mentions heartbeat"):
        layout_from_toml("mine", text)


def test_a_joined_column_no_state_uses_is_a_mistake_and_none_can_be_written():
    with pytest.raises(UsageError, match="'beat' is not a role"):
        layout_from_toml("mine", LAYOUT.replace("[settings]", '[joined_columns.beat]\ntable = "workers"\n'
                                                'column = "last_beat"\nkey = "id"\nby = "claimed_by"\n[settings]'))
    with pytest.raises(UsageError, match="'heartbeat', which is read from another table"):
        layout_from_toml("mine", LAYOUT + '[enqueue]\ntype = "type"\nheartbeat = "info"\n')
    claim = '[claim]\nforms = ["update_top"]\n[claim.set]\nheartbeat = "now"\nclaimed_by = "$worker"\n'
    with pytest.raises(UsageError, match="sets 'heartbeat'"):
        layout_from_toml("mine", LAYOUT + claim)


def test_the_cli_tells_a_live_worker_from_a_silent_one_and_a_vanished_one_on_a_real_sqlite_file(tmp_path):
    path = tmp_path / "q.db"
    with sqlite3.connect(path) as connection:
        connection.executescript("""
            CREATE TABLE workers (id INTEGER PRIMARY KEY, last_beat TEXT NOT NULL);
            CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT, worker_id INTEGER);
            INSERT INTO workers VALUES (1, strftime('%Y-%m-%d %H:%M:%f', 'now', '-2 seconds')),
                                       (2, strftime('%Y-%m-%d %H:%M:%f', 'now', '-5 minutes'));
            INSERT INTO jobs (kind, worker_id) VALUES ('report', NULL), ('report', 1), ('report', 1), ('report', 2),
                                                      ('report', 9), ('email', 1);""")
    layout = tmp_path / "layout.toml"
    layout.write_text(LAYOUT)
    result = queuetop("stats", "--json", "--db", str(path), "--layout", str(layout))
    assert result.returncode == 0, result.stderr
    figures = {t["job_type"]: (t["depth"], t["claimed"], t["timed_out"]) for t in json.loads(result.stdout)["types"]}
    # worker 1 beat 2 s ago: its jobs are claimed; worker 2 is silent for 5 min and worker 9 is gone: timed out
    assert figures == {"report": (1, 2, 2), "email": (0, 1, 0)}
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT count(*) FROM workers").fetchone() == (2,)  # watching wrote nothing
    release = queuetop("release", "--db", str(path), "--layout", str(layout))
    assert_clean_failure(release, "declares no [release] section")


LOG = """
arrivals = "identity"
completed_rows = "c_status in ('done', 'failed')"
[tables]
queue = "jobs"
completed = "job_log"
[queue_columns]
id = "id bigint"
type = "kind"
status = "status"
[completed_columns]
id = "job_id bigint"
type = "kind"
completed = "logged_at"
status = "step"
[joined_columns]
picked_at = {table = "job_log", column = "logged_at", key = "job_id", by = "c_id", when = {step = "picked"}}
[states]
pending = "status = 'queued'"
[completions]
at = "c_completed"
processing = ["picked_at", "c_completed"]
"""


@pytest.mark.parametrize("dialect", [SQLiteDialect(), PostgresDialect(), MSSQLDialect()], ids=lambda d: d.name)
def test_a_log_of_each_jobs_steps_is_read_as_the_lines_that_end_a_job(dialect):
    """A completed table that logs every step (pgqueuer_log): arrivals by id and completions read the line that
    ends each job, and a time of an earlier step is the same job's line of that step, by its id."""
    layout = layout_from_toml("mine", LOG)
    statements = Statements(dialect, layout)
    q = dialect.quote
    ended = f"{q('step')} IN ('done', 'failed')"
    arrivals, params = statements.arrival_counts(10, 12)
    log_arm = arrivals.split(" UNION ALL ")[1]
    assert f"FROM {q('job_log')}" in log_arm and ended in log_arm and len(params) == arrivals.count("?")
    sample, _ = statements.completion_sample(0, 1, 1.0, 100)
    picked = (f"(SELECT MAX(qt_joined.{q('logged_at')}) FROM {q('job_log')} AS qt_joined{dialect.nolock} WHERE "
              f"qt_joined.{q('job_id')} = {q('job_log')}.{q('job_id')} AND qt_joined.{q('step')} = 'picked')")
    assert picked in sample and ended in sample
    job, _ = statements.job_by_id("completed", ["c_id", "c_completed"], 7)
    assert ended in job
    # a time of the last of several steps: its line holding any of their texts (procrastinate's last wait began at
    # its 'deferred' line or a retry's)
    waited = Statements(dialect, layout_from_toml("mine", LOG.replace('when = {step = "picked"}',
                                                                      'when = {step = ["queued", "retried"]}')))
    sample_after_retries, _ = waited.completion_sample(0, 1, 1.0, 100)
    assert f"qt_joined.{q('step')} IN ('queued', 'retried'))" in sample_after_retries
    if dialect.name == "mssql":
        for sql, binds in (statements.arrival_counts(10, 12), statements.completion_sample(0, 1, 1.0, 100),
                           waited.completion_sample(0, 1, 1.0, 100)):  # fmt: skip
            assert_tsql(sql, binds)


@pytest.mark.parametrize("change, complaint", [
    ('when = {step = "picked"}', "when = {step = \"it's\"}"),  # a text the grammar does not admit
    ('when = {step = "picked"}', 'when = {"step; --" = "picked"}'),
    ('when = {step = "picked"}', 'when = "picked"'),
    ('when = {step = "picked"}', 'when = {step = []}'),  # no text at all
    ('when = {step = "picked"}', "when = {step = [\"picked\", \"it's\"]}"),  # one of several the grammar refuses
    ("completed_rows = \"c_status in ('done', 'failed')\"", 'completed_rows = "status = \'queued\'"'),
])  # fmt: skip
def test_a_logs_rows_and_a_joined_columns_when_are_checked_as_they_are_read(change, complaint):
    with pytest.raises(UsageError, match=r"joined_columns|completed_rows|invalid identifier"):
        layout_from_toml("mine", LOG.replace(change, complaint))


CREATED_ELSEWHERE = """
arrivals = "identity"
done = "status = 'done'"
[tables]
queue = "jobs"
[queue_columns]
id = "id bigint"
type = "kind"
status = "status"
[joined_columns]
created = {table = "job_events", column = "at", key = "job_id", by = "id", when = {event = "made"}}
[states]
pending = "status = 'todo'"
"""


def test_a_creation_time_kept_in_another_table_ages_the_oldest_job_by_its_lowest_id(tmp_path):
    """procrastinate keeps a job's creation in its events: `created` as a joined column. The oldest of some rows is
    the creation of the lowest id among them (ids grow with time), one lookup per type, not one per row: inside the
    full count, and after the heads (their lowest ids, looked up in one statement); on a real SQLite file, the first
    poll (every row counted) and the next (each type's first rows read) agree with it, and the statements pass both
    T-SQL grammars."""
    layout = layout_from_toml("mine", CREATED_ELSEWHERE)
    for dialect in (MSSQLDialect(), PostgresDialect()):
        statements = Statements(dialect, layout)
        assert statements.oldest_by_min_id and not statements.heads_by_type_list
        counts = statements.state_counts(["pending"], dict(layout.settings))
        heads = statements.shape_heads(["a", "b"], 201, 0)  # each type's lowest id, its time looked up after
        looked_up = statements.created_of([3, 4])
        assert "qt_key = (SELECT MIN(" in counts[0] and "job_events" not in heads[0]
        assert dialect.quote("job_events") in looked_up[0] and looked_up[1] == (3, 4)
        if dialect.name == "mssql":
            for sql, params in (counts, heads, looked_up):
                assert_tsql(sql, params)
    path = tmp_path / "q.db"
    with sqlite3.connect(path) as con:
        con.executescript(
            "CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT, status TEXT);"
            "CREATE TABLE job_events (id INTEGER PRIMARY KEY, job_id INTEGER, event TEXT, at TEXT);"
            "INSERT INTO jobs VALUES (1, 'mail', 'done'), (2, 'mail', 'todo'), (3, 'mail', 'todo'), (4, 'sms', 'todo');"
            "INSERT INTO job_events (job_id, event, at) VALUES (1, 'made', datetime('now', '-90 seconds')),"
            " (2, 'made', datetime('now', '-60 seconds')), (2, 'took', datetime('now', '-1 seconds')),"
            " (3, 'made', datetime('now', '-5 seconds')), (4, 'made', datetime('now', '-30 seconds'));")
    with Database.open(parse_target(f"sqlite:{path}")) as db:
        collector = ShapeCollector(db, layout)
        for snapshot in (collector.poll(), collector.poll()):
            ages = {t.job_type: t.oldest_age_s for t in snapshot.types}
            assert ages == {"mail": pytest.approx(60, abs=3), "sms": pytest.approx(30, abs=3)}, ages
