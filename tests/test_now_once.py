"""A count's per-state conditions test the database's now on every row its WHERE chose. PostgreSQL works a stable
expression (LOCALTIMESTAMP, the now shifted by a setting) out again for each row, so there a count says it as a
scalar subquery, which runs once (an InitPlan; requests at 10⁷ rows: a poll 22.8 -> 8.2 ms, bench/README), while the
WHERE, which the planner reads to estimate rows and to bound an index scan, keeps the time itself. SQL Server's
GETDATE() is a runtime constant (and T-SQL takes no subquery in an aggregate), SQLite keeps strftime('now') for the
statement: both say now as they always did."""

from __future__ import annotations

import pytest

from queuetop.db.dialects import MSSQLDialect, PostgresDialect, SQLiteDialect
from queuetop.layouts import load_layout
from queuetop.layouts.sql import Statements


def family_arm(dialect, preset: str, states: list[str], table: str = "queue") -> tuple[str, str]:
    """The SELECT list and the WHERE of the arm of `state_counts` that counts `states` (one family)."""
    sql, _ = Statements(dialect, load_layout(preset)).state_counts(states, {})
    (arm,) = [arm for arm in sql.split(" UNION ALL ") if arm.startswith(f"SELECT '{table}'")]
    select, where = arm.split(" WHERE ", 1)
    return select, where


def test_on_postgresql_a_counts_now_is_worked_out_once_in_its_cases_never_in_its_where() -> None:
    select, where = family_arm(PostgresDialect(), "requests", ["claimed", "lost"], "completed")
    shifted = "(SELECT date_trunc('milliseconds', LOCALTIMESTAMP + CAST(? AS double precision) * INTERVAL '1 second'))"
    assert select.count(shifted) == 2  # claimed's line and lost's, each once for the statement
    assert where == '"CompletedDate" IS NULL'  # the family's own rows: the in-flight index's filter
    select, where = family_arm(PostgresDialect(), "job_queue", ["claimed", "timed_out"])
    assert select.count("(SELECT LOCALTIMESTAMP)") == 2  # claimed's timeout > now, timed out's timeout <= now
    assert "LOCALTIMESTAMP" in where and "(SELECT" not in where


@pytest.mark.parametrize("dialect", [SQLiteDialect(), MSSQLDialect()], ids=["sqlite", "mssql"])
def test_elsewhere_a_counts_now_is_said_as_the_database_says_it(dialect) -> None:
    for preset, states, table, now in (("requests", ["claimed", "lost"], "completed", dialect.shifted_now_sql("local")),
                                       ("job_queue", ["claimed", "timed_out"], "queue", dialect.now_sql("local"))):
        select, _ = family_arm(dialect, preset, states, table)
        assert "(SELECT" not in select and select.count(now) == 2
