"""SQL Server (T-SQL) through pyodbc and the Microsoft ODBC driver.

Claims use the updatable-CTE form `WITH c AS (SELECT TOP (n) ... WITH (ROWLOCK, READPAST, UPDLOCK) ...)
UPDATE c ... OUTPUT inserted.*` (seed 003's shape; seed 000's `UPDATE TOP (1) ... OUTPUT` is equivalent but
cannot be parsed by the tools the tests use). Moves to the completed table are one `DELETE ... OUTPUT ...
INTO` from an updatable CTE, so every operation is a single statement and no transaction is ever left open.
Monitor reads take `NOLOCK`, a low deadlock priority and a short lock timeout: they must never block a dequeuer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from queuetop.db.dialects.base import Dialect, Row, SchemaObject

if TYPE_CHECKING:
    from queuetop.db.connection import Database
    from queuetop.layouts import Layout

MAX_PARAMETERS = 2100


class MSSQLDialect(Dialect):
    name = "mssql"
    nolock = " WITH (NOLOCK)"

    def quote(self, identifier: str) -> str:
        return "[" + identifier.replace("]", "]]") + "]"

    def session_setup(self, purpose: str) -> list[str]:
        statements = ["SET LOCK_TIMEOUT 2000", "SET XACT_ABORT ON"]
        if purpose == "monitor":
            statements.append("SET DEADLOCK_PRIORITY LOW")
        return statements

    def returning(self, column: str) -> tuple[str, str]:
        return f" OUTPUT inserted.{column}", ""

    def first_rows_sql(self, select: str) -> str:
        assert select.startswith("SELECT "), select
        return "SELECT TOP (?) " + select.removeprefix("SELECT ")

    def first_rows_params(self, params: tuple[Any, ...], limit: int) -> tuple[Any, ...]:
        return (limit, *params)

    def oldest_pending(self, db: Database, layout: Layout, job_type: str, limit: int) -> list[Row]:
        sql = self.sql(layout, "SELECT TOP (?) {id}, {created}, {available}, {priority}, {attempts}, "
                               "SUBSTRING({info}, 1, 200) FROM {queue}{nolock} WHERE {claimed_at} IS NULL "
                               "AND {type} = ? ORDER BY {created}, {id}")
        return db.fetchall(sql, (limit, job_type))

    def current_claims(self, db: Database, layout: Layout, job_type: str, limit: int) -> list[Row]:
        sql = self.sql(layout, "SELECT TOP (?) {id}, {claimed_by}, {claimed_at}, {timeout}, {attempts} "
                               "FROM {queue}{nolock} WHERE {claimed_at} IS NOT NULL AND {type} = ? "
                               "ORDER BY {timeout}, {id}")
        return db.fetchall(sql, (limit, job_type))

    def recent_completions(self, db: Database, layout: Layout, job_type: str, since: datetime,
                           limit: int) -> list[Row]:  # fmt: skip
        sql = self.sql(layout, "SELECT TOP (?) {c_id}, {c_outcome}, {c_created}, {c_claimed_at}, {c_completed} "
                               "FROM {completed}{nolock} WHERE {c_completed} > ? AND {c_type} = ? "
                               "ORDER BY {c_completed} DESC, {c_id} DESC")
        return db.fetchall(sql, (limit, since, job_type))

    def pending_heads_statement(self, layout: Layout, types: Sequence[tuple[str, bool]],
                                limit: int) -> tuple[str, tuple[Any, ...]]:  # fmt: skip
        values = ", ".join(["(CAST(? AS nvarchar(128)), CAST(? AS int))"] * len(types))
        pending = "{type} = qt_types.job_type AND {claimed_at} IS NULL"
        sql = self.sql(layout, "SELECT qt_types.job_type, (SELECT COUNT(*) FROM (SELECT TOP (?) 1 AS one "
                               f"FROM {{queue}}{{nolock}} WHERE {pending} AND qt_types.counted = 1) AS capped), "
                               f"(SELECT MIN({{created}}) FROM {{queue}}{{nolock}} "
                               f"WHERE {pending}{self.age_index_guard(layout)}) "
                               f"FROM (VALUES {values}) AS qt_types (job_type, counted)")
        return sql, (limit, *(v for job_type, counted in types for v in (job_type, int(counted))))

    def server_now_sql(self) -> str:
        return "SELECT SYSUTCDATETIME()"

    SQL_TYPES: ClassVar[dict[str, str]] = {
        "guid": "uniqueidentifier", "nvarchar(max)": "nvarchar(max)", "varchar(max)": "varchar(max)",
        "text": "nvarchar(max)", "datetime2": "datetime2(3)",
    }  # fmt: skip

    def now_sql(self, clock: str) -> str:
        return "GETDATE()" if clock == "local" else "SYSUTCDATETIME()"

    def shifted_now_sql(self, clock: str) -> str:
        return f"DATEADD(millisecond, ?, {self.now_sql(clock)})"

    def second_sql(self, expr: str) -> str:
        # Seconds since 2000 fit an int until 2068; DATEDIFF_BIG would need SQL Server 2016.
        base = "CAST('2000-01-01' AS datetime2(0))"
        return f"DATEADD(second, DATEDIFF(second, {base}, {expr}), {base})"

    def shift_param(self, seconds: float) -> Any:
        return round(seconds * 1000)

    def encode_value(self, layout_type: str | None, value: Any) -> Any:
        if layout_type in ("datetime", "datetime2"):
            return value
        return super().encode_value(layout_type, value)

    def error_kind(self, sqlstate: str, message: str) -> str | None:
        if sqlstate == "42S02" or "Invalid object name" in message:
            return "schema"
        if sqlstate == "HYT00" or "Lock request time out" in message:
            return "timeout"
        return None

    def catalog_sql(self) -> str:
        return ("SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, CASE WHEN t.TABLE_TYPE = 'VIEW' THEN 1 ELSE 0 END "
                "FROM INFORMATION_SCHEMA.COLUMNS AS c JOIN INFORMATION_SCHEMA.TABLES AS t "
                "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME")

    # -- schema ------------------------------------------------------------------------------------------
    def schema_objects(self, layout: Layout) -> list[SchemaObject]:
        def object_id(name: str) -> tuple[str, tuple[Any, ...]]:
            return "SELECT 1 WHERE OBJECT_ID(?) IS NOT NULL", (self.qualify(layout.schema, name),)

        def index_id(table: str, name: str) -> tuple[str, tuple[Any, ...]]:
            return ("SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(?) AND name = ?",
                    (self.qualify(layout.schema, table), name))  # fmt: skip

        objects = []
        if layout.schema:
            objects.append(SchemaObject("schema", layout.schema, "SELECT 1 WHERE SCHEMA_ID(?) IS NOT NULL",
                                        (layout.schema,), f"CREATE SCHEMA {self.quote(layout.schema)}"))
        objects += [
            SchemaObject("table", layout.queue_table, *object_id(layout.queue_table), self.sql(layout, """
                CREATE TABLE {queue} (
                  {id} bigint IDENTITY(1, 1) NOT NULL,
                  {type} nvarchar(128) NOT NULL,
                  {info} nvarchar(max) NULL,
                  {priority} tinyint NOT NULL DEFAULT 128,
                  {created} datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
                  {available} datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
                  {created_by} nvarchar(128) NULL,
                  {claimed_at} datetime2(3) NULL,
                  {claimed_by} nvarchar(128) NULL,
                  {token} uniqueidentifier NULL,
                  {timeout} datetime2(3) NULL,
                  {attempts} int NOT NULL DEFAULT 0,
                  CONSTRAINT [PK_WorkQueue] PRIMARY KEY CLUSTERED ({id}))""")),
            SchemaObject("view", layout.pending_view, *object_id(layout.pending_view), self.sql(layout, """
                CREATE VIEW {pending_view} AS SELECT * FROM {queue} WHERE {claimed_at} IS NULL""")),
            SchemaObject("table", layout.completed_table, *object_id(layout.completed_table), self.sql(layout, """
                CREATE TABLE {completed} (
                  {c_id} bigint NOT NULL,
                  {c_type} nvarchar(128) NOT NULL,
                  {c_created} datetime2(3) NULL,
                  {c_claimed_at} datetime2(3) NULL,
                  {c_completed} datetime2(3) NOT NULL,
                  {c_claimed_by} nvarchar(128) NULL,
                  {c_attempts} int NULL,
                  {c_outcome} varchar(16) NOT NULL,
                  CONSTRAINT [PK_WorkCompleted] PRIMARY KEY CLUSTERED ({c_id}))""")),
        ]  # fmt: skip
        tables = {"queue": layout.queue_table, "completed": layout.completed_table}
        for index in self.index_definitions(layout):
            objects.append(SchemaObject("index", index[0], *index_id(tables[index[1]], index[0]),
                                        self.create_index_sql(layout, *index)))
        return objects

    # -- queue operations --------------------------------------------------------------------------------
    def enqueue(self, db: Database, layout: Layout, values: Sequence[Any], count: int) -> list[int]:
        # Any catalog view with enough rows serves as a row source; TOP cuts it to the count.
        sql = self.sql(layout, """INSERT INTO {queue} ({type}, {info}, {priority}, {created}, {available}, {created_by})
            OUTPUT inserted.{id}
            SELECT TOP (?) CAST(? AS nvarchar(128)), CAST(? AS nvarchar(max)), CAST(? AS tinyint),
                   CAST(? AS datetime2(3)), CAST(? AS datetime2(3)), CAST(? AS nvarchar(128))
            FROM sys.all_columns AS a CROSS JOIN sys.all_columns AS b""")
        return sorted(row[0] for row in db.fetchall(sql, (count, *values)))

    def claim(self, db: Database, layout: Layout, *, worker: str, token: str, job_types: Sequence[str],
              batch: int, now: datetime, timeout: datetime) -> list[Row]:  # fmt: skip
        sql = self.sql(layout, """WITH c AS (
                SELECT TOP (?) * FROM {queue} WITH (ROWLOCK, READPAST, UPDLOCK)
                WHERE {claimed_at} IS NULL AND {available} <= ?""" + self.job_type_filter(layout, job_types) + """
                ORDER BY {priority}, {available})
            UPDATE c SET {claimed_at} = ?, {claimed_by} = ?, {token} = ?, {timeout} = ?, {attempts} = {attempts} + 1
            OUTPUT inserted.{id}, inserted.{type}, inserted.{info}, inserted.{priority}, inserted.{created},
                   inserted.{attempts}""")  # fmt: skip
        return db.fetchall(sql, (batch, now, *job_types, now, worker, token, timeout))

    def _bury(self, outcome: str) -> str:
        """A template deleting every row of the CTE `c` and landing it in the completed table, in one statement."""
        return ("DELETE FROM c OUTPUT deleted.{id}, deleted.{type}, deleted.{created}, deleted.{claimed_at}, ?, "
                f"deleted.{{claimed_by}}, deleted.{{attempts}}, {outcome} "
                f"INTO {{completed}} ({self.COMPLETED_INSERT_COLUMNS})")

    def move_to_completed(self, db: Database, layout: Layout, *, job_id: int, token: str, outcome: str,
                          now: datetime, min_attempts: int | None = None) -> bool:  # fmt: skip
        guard = " AND {attempts} >= ?" if min_attempts is not None else ""
        sql = self.sql(layout, "WITH c AS (SELECT * FROM {queue} WITH (ROWLOCK) WHERE {id} = ? AND {token} = ?"
                               + guard + ") " + self._bury("?"))
        guard_params = (min_attempts,) if min_attempts is not None else ()
        return db.execute(sql, (job_id, token, *guard_params, now, outcome)) == 1

    def release_timed_out(self, db: Database, layout: Layout, *, job_type: str | None, now: datetime,
                          max_attempts: int) -> tuple[int, int]:  # fmt: skip
        types = [job_type] if job_type else []
        # READPAST: a job a worker is finishing right now is skipped, not waited on; UPDLOCK re-checks the
        # timeout under the lock, so a job claimed anew meanwhile is left alone.
        pick = ("WITH c AS (SELECT * FROM {queue} WITH (ROWLOCK, READPAST, UPDLOCK) WHERE {claimed_at} IS NOT NULL "
                "AND {timeout} < ? AND {attempts} %s ?" + self.job_type_filter(layout, types) + ") ")
        bury = self.sql(layout, pick % ">=" + self._bury("'dead'"))
        release = self.sql(layout, pick % "<" + "UPDATE c SET {claimed_at} = NULL, {claimed_by} = NULL, "
                                               "{token} = NULL, {timeout} = NULL")
        dead = db.execute(bury, (now, max_attempts, *types, now))
        released = db.execute(release, (now, max_attempts, *types))
        return released, dead
