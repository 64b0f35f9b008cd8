"""A role read from inside a column that holds JSON (`type = "json(payload, headers.task)"`: Celery's task name,
dramatiq's actor): parsed with its path checked like any identifier, rendered per database (PostgreSQL `#>>` on
the column as jsonb, SQL Server `JSON_VALUE`, SQLite `json_extract`), never written, and watched on a real SQLite
file through the CLI."""

from __future__ import annotations

import json
import sqlite3

import pytest

from queuetop.core.errors import UsageError
from queuetop.db.dialects import MSSQLDialect, PostgresDialect, SQLiteDialect
from queuetop.layouts import layout_from_toml
from queuetop.layouts.sql import Statements

from .test_cli import assert_clean_failure, queuetop

LAYOUT = """
[tables]
queue = "messages"
[queue_columns]
id = "id bigint"
type = "json(payload, headers.task)"
visible = "visible bit"
[states]
pending = "visible = 1"
"""
RENDERED = {"postgresql": """(CAST("payload" AS jsonb) #>> '{headers,task}')""",
            "mssql": "JSON_VALUE([payload], '$.headers.task')",
            "sqlite": """json_extract("payload", '$.headers.task')"""}  # fmt: skip


@pytest.mark.parametrize("dialect", [SQLiteDialect(), PostgresDialect(), MSSQLDialect()], ids=lambda d: d.name)
def test_a_json_role_is_the_text_at_its_path_in_each_databases_words(dialect):
    layout = layout_from_toml("mine", LAYOUT)
    assert (layout.columns["type"], layout.json_paths["type"]) == ("payload", ("headers", "task"))
    sql, params = Statements(dialect, layout).state_counts(["pending"])
    assert f"GROUP BY {dialect.state_group(RENDERED[dialect.name])}" in sql and len(params) == sql.count("?")


@pytest.mark.parametrize("spec, complaint", [
    ("json(payload, headers.task'); drop table x; --)", "cannot read"),
    ("json(payload)", "cannot read"),
    ("json(payload, headers..task)", "JSON path"),
    ("json(pay load, task)", "cannot read"),
])  # fmt: skip
def test_a_json_path_holds_plain_names_only(spec, complaint):
    with pytest.raises(UsageError, match=complaint):
        layout_from_toml("mine", LAYOUT.replace("json(payload, headers.task)", spec))


def test_no_write_may_set_a_role_read_from_json():
    with pytest.raises(UsageError, match="read from inside JSON"):
        layout_from_toml("mine", LAYOUT + '[enqueue]\ntype = "type"\n')


def test_the_cli_watches_a_real_sqlite_file_by_the_task_name_inside_each_message(tmp_path):
    path = tmp_path / "q.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, payload TEXT, visible BOOLEAN)")
        rows = [(json.dumps({"headers": {"task": task}, "body": "e30="}), visible)
                for task, visible in [("report", 1), ("report", 1), ("email", 1), ("email", 0), ("report", 0)]]
        rows.append(('{"headers": {}}', 1))  # a message without the key: its type is NULL, still counted
        connection.executemany("INSERT INTO messages (payload, visible) VALUES (?, ?)", rows)
    (tmp_path / "layout.toml").write_text(LAYOUT)
    result = queuetop("stats", "--json", "--db", str(path), "--layout", str(tmp_path / "layout.toml"))
    assert result.returncode == 0, result.stderr
    depths = {t["job_type"]: t["depth"] for t in json.loads(result.stdout)["types"]}
    assert depths["report"] == 2 and depths["email"] == 1 and sum(depths.values()) == 4
    bad = tmp_path / "bad.toml"
    bad.write_text(LAYOUT.replace("headers.task", "headers.task;x"))
    assert_clean_failure(queuetop("stats", "--db", str(path), "--layout", str(bad)), "cannot read")
