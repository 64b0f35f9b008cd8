"""SQL Server (T-SQL) through pyodbc and the Microsoft ODBC driver.

Claims use the updatable-CTE form `WITH c AS (SELECT TOP (n) ... WITH (ROWLOCK, READPAST, UPDLOCK) ...)
UPDATE c ... OUTPUT inserted.*` (seed 003's shape; seed 000's `UPDATE TOP (1) ... OUTPUT` is equivalent but
cannot be parsed by the tools the tests use). Moves to the completed table are one `DELETE ... OUTPUT ...
INTO` from an updatable CTE, so every operation is a single statement and no transaction is ever left open.
Times are the server's (`SYSUTCDATETIME()` in the statement), never a client's.

Monitor reads run at a low deadlock priority with a short lock timeout: they must never block a dequeuer. With
read-committed snapshot on they are plain reads; without it counts take `NOLOCK` and drill-down rows `READPAST`
(`configure_reads`).

Parameters are typed as the column they meet, `CAST(? AS nvarchar(128))`, `CAST(? AS uniqueidentifier)`, rather
than by pyodbc's `setinputsizes`: the type is in the statement (so in the golden file and the T-SQL check), it
holds for every execution however the Database's cursors are made, and it is the form the layouts' typed roles
already use, where it matters most: pyodbc binds `str` as nvarchar, and an nvarchar parameter against a varchar
column with a SQL collation (seed 004) converts the column, turning a seek into a scan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from queuetop.db.dialects.base import TAG, Dialect, SchemaObject
from queuetop.errors import ErrorKind

if TYPE_CHECKING:
    from queuetop.db.connection import Database
    from queuetop.layouts import Layout

MAX_PARAMETERS = 2100


class MSSQLDialect(Dialect):
    name = "mssql"
    # Without read-committed snapshot, a plain read waits for writers' locks: counts read NOLOCK (they may include
    # uncommitted rows, and say so: reads "dirty"); the drill-down's rows read READPAST (never a phantom row).
    nolock = " WITH (NOLOCK)"
    row_hint = " WITH (READPAST)"
    reads = "dirty"

    def configure_reads(self, db: Database) -> None:
        """With read-committed snapshot (RCSI) on, plain reads see committed rows without blocking: no hints."""
        row = db.fetchone("SELECT is_read_committed_snapshot_on FROM sys.databases WHERE database_id = DB_ID()")
        if row and row[0]:
            self.nolock = self.row_hint = ""
            self.reads = "committed"
            self._statements.clear()

    def quote(self, identifier: str) -> str:
        return "[" + identifier.replace("]", "]]") + "]"

    # What a table with a filtered index asks of every session that creates the index or writes the table
    # (error 1934 otherwise). The ODBC driver sets most of these, sqlcmd does not set QUOTED_IDENTIFIER: say so.
    FILTERED_INDEX_SETTINGS = "; ".join([*(f"SET {option} ON" for option in (
        "ANSI_NULLS", "ANSI_PADDING", "ANSI_WARNINGS", "ARITHABORT", "CONCAT_NULL_YIELDS_NULL", "QUOTED_IDENTIFIER")),
        "SET NUMERIC_ROUNDABORT OFF"])  # one batch: one round trip

    def session_setup(self, purpose: str) -> list[str]:
        statements = [self.FILTERED_INDEX_SETTINGS, "SET LOCK_TIMEOUT 2000", "SET XACT_ABORT ON"]
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

    def later_sql(self, clock: str) -> str:
        # Whole seconds, then milliseconds: DATEADD takes an int, and a delay past 24.8 days overflows in ms
        return f"DATEADD(millisecond, ?, DATEADD(second, ?, {self.now_sql(clock)}))"

    def later_params(self, seconds: float) -> tuple[Any, ...]:
        whole = int(seconds)
        return round((seconds - whole) * 1000), whole

    def encode_value(self, layout_type: str | None, value: Any) -> Any:
        if layout_type in ("datetime", "datetime2"):
            return value
        return super().encode_value(layout_type, value)

    def client_port_sql(self) -> str | None:
        return "SELECT client_tcp_port, local_tcp_port FROM sys.dm_exec_connections WHERE session_id = @@SPID"

    def error_kind(self, sqlstate: str, message: str) -> ErrorKind | None:
        if sqlstate == "42S02" or "Invalid object name" in message:
            return ErrorKind.SCHEMA
        # HYT00: the ODBC query timeout (Connection.timeout); 1222: SET LOCK_TIMEOUT ran out
        if sqlstate == "HYT00" or "Lock request time out" in message or "Query timeout expired" in message:
            return ErrorKind.TIMEOUT
        # 1205 deadlock victim (SQLSTATE 40001); 3960 snapshot update conflict; both roll the statement back
        if sqlstate == "40001" or "deadlock victim" in message or "update conflict" in message:
            return ErrorKind.CONFLICT
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
        queue = self.qualify(layout.schema, layout.queue_table)
        # A large enqueue or release must never escalate to a table lock: READPAST cannot skip one, so every
        # claimer would wait on it and fail with 1222. Row locks only, on the table queuetop made.
        objects.append(SchemaObject(
            "setting", f"{layout.queue_table} LOCK_ESCALATION = DISABLE",
            "SELECT 1 FROM sys.tables WHERE object_id = OBJECT_ID(?) AND lock_escalation_desc = 'DISABLE'", (queue,),
            self.sql(layout, "ALTER TABLE {queue} SET (LOCK_ESCALATION = DISABLE)")))
        tables = {"queue": layout.queue_table, "completed": layout.completed_table}
        for index in self.index_definitions(layout):
            objects.append(SchemaObject("index", index[0], *index_id(tables[index[1]], index[0]),
                                        self.create_index_sql(layout, *index)))
        return objects

    def schema_lock(self, layout: Layout) -> tuple[str, tuple[Any, ...]] | None:
        # An application lock owned by init's transaction: a second init waits (up to 60 s), then sees the schema.
        return (f"{TAG}EXEC sp_getapplock @Resource = ?, @LockMode = 'Exclusive', @LockOwner = 'Transaction', "
                "@LockTimeout = 60000", (self.schema_lock_name(layout),))

    def schema_notes(self, layout: Layout) -> list[str]:
        return [f"{self.qualify(layout.schema, layout.queue_table)} has filtered indexes: every session and stored "
                "procedure that writes it must run with QUOTED_IDENTIFIER ON (and ANSI_NULLS ON), or the insert "
                "fails with error 1934. sqlcmd's default is OFF: run it with -I; a procedure keeps the setting it "
                "was created with, so create it from a session with QUOTED_IDENTIFIER ON"]

    # -- queue operations --------------------------------------------------------------------------------

