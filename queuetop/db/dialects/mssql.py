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

from typing import Any, ClassVar

from queuetop.core.errors import ErrorKind, UsageError
from queuetop.db.dialects.base import Dialect

MAX_PARAMETERS = 2100


class MSSQLDialect(Dialect):
    name = "mssql"
    # Without read-committed snapshot, a plain read waits for writers' locks: counts read NOLOCK (they may include
    # uncommitted rows, and say so: reads "dirty"); the drill-down's rows read READPAST (never a phantom row).
    nolock = " WITH (NOLOCK)"
    row_hint = " WITH (READPAST)"
    reads = "dirty"

    # Tables with an enabled trigger refuse `OUTPUT` without `INTO` (error 334): a statement that reads back what
    # it wrote there goes through a table variable instead (`StatementsBase.through_table`). Read per connection.
    tables_with_triggers: frozenset[tuple[str, str]] = frozenset()

    def read_snapshot_sql(self) -> str | None:
        return "SELECT is_read_committed_snapshot_on FROM sys.databases WHERE database_id = DB_ID()"

    def triggered_tables_sql(self) -> str | None:
        return ("SELECT OBJECT_SCHEMA_NAME(parent_id), OBJECT_NAME(parent_id) FROM sys.triggers "
                "WHERE parent_class = 1 AND is_disabled = 0")

    def has_triggers(self, schema: str | None, table: str) -> bool:
        return ((schema or "dbo").lower(), table.lower()) in self.tables_with_triggers

    def reads_committed_snapshot(self) -> None:
        """With read-committed snapshot (RCSI) on, plain reads see committed rows without blocking: no hints."""
        self.nolock = self.row_hint = ""
        self.reads = "committed"

    def quote(self, identifier: str) -> str:
        return "[" + identifier.replace("]", "]]") + "]"

    def json_text_sql(self, column: str, path: tuple[str, ...]) -> str:
        return f"JSON_VALUE({column}, '$.{'.'.join(path)}')"  # SQL Server 2016+: NULL where absent (lax)

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
        if clock == "zoned":  # datetimeoffset against datetimeoffset
            return "SYSDATETIMEOFFSET()"
        return "GETDATE()" if clock == "local" else "SYSUTCDATETIME()"

    def now_by_column_sql(self, clock: str, column: str, sign: int, interval: bool) -> str:
        if interval:
            raise UsageError("SQL Server has no interval type", "give the column as seconds (int)")
        return f"DATEADD(second, {'' if sign > 0 else '-'}{column}, {self.now_sql(clock)})"

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
        # 1205 deadlock victim (SQLSTATE 40001); 3960 snapshot update conflict; both roll the statement back.
        # 601: a NOLOCK read (the monitor's, without RCSI) met a page being split or moved: the next read is fine
        if sqlstate == "40001" or "deadlock victim" in message or "update conflict" in message \
                or "due to data movement" in message:
            return ErrorKind.CONFLICT
        return None

    def catalog_sql(self, names: int = 0) -> str:
        return ("SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, CASE WHEN t.TABLE_TYPE = 'VIEW' THEN 1 ELSE 0 END "
                "FROM INFORMATION_SCHEMA.COLUMNS AS c JOIN INFORMATION_SCHEMA.TABLES AS t "
                "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME"
                + (f" WHERE LOWER(c.TABLE_NAME) IN ({self.placeholders(names)})" if names else ""))

    # -- schema ------------------------------------------------------------------------------------------

    # -- queue operations --------------------------------------------------------------------------------

