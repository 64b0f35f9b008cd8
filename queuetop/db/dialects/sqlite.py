"""SQLite: the embedded default. WAL, a busy timeout, and `BEGIN IMMEDIATE` around every write.

SQLite serialises writers, so a claim needs no skip-locked hint: `BEGIN IMMEDIATE` takes the write lock up
front (a deferred transaction could fail to upgrade its read snapshot under contention), and readers in WAL
mode never wait for it. Times are stored as UTC text `YYYY-MM-DD HH:MM:SS.fff`, which sorts as it compares.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from queuetop.core.errors import ErrorKind, UsageError
from queuetop.db.dialects.base import Dialect

TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


class SQLiteDialect(Dialect):
    name = "sqlite"
    supports_schemas = False
    supports_include = False  # covering key columns instead

    def encode_time(self, value: datetime | None) -> Any:
        return None if value is None else value.strftime(TIME_FORMAT)[:-3]

    def decode_time(self, value: Any) -> datetime | None:
        return None if value is None else datetime.fromisoformat(value)

    def rows_of_params(self, alias: str, columns: Sequence[tuple[str, str | None]], count: int) -> str:
        # SQLite names a VALUES list's columns column1, column2 …: the rows are SELECTs, to name them.
        row = "SELECT " + ", ".join(f"? AS {name}" for name, _ in columns)
        return f"({' UNION ALL '.join([row] * count)}) AS {alias}"

    def pair_sql(self, first: str, second: str) -> str:
        # concat() is SQLite 3.44's: older ones join with ||, which a NULL would make NULL
        return f"(COALESCE(CAST({first} AS TEXT), '') || '/' || COALESCE(CAST({second} AS TEXT), ''))"

    def state_group(self, expr: str) -> str:
        # `+` keeps SQLite from picking an index for the order of a few groups over one that reads only the
        # state's rows: without ANALYZE's figures (a watched file is never analysed) it scanned all 10^5 pending
        # rows of IX_WorkQueue_Pending to count 5,000 scheduled ones (8 ms), not a range of IX_WorkQueue_Scheduled
        # (0.04 ms).
        return f"+{expr}"

    def server_now_sql(self) -> str:
        return "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')"

    def now_sql(self, clock: str) -> str:
        return "strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime')" if clock == "local" else \
            "strftime('%Y-%m-%d %H:%M:%f', 'now')"

    def sequence_sql(self) -> str:
        # A table whose key is INTEGER PRIMARY KEY AUTOINCREMENT (Django's AutoField) keeps the highest id it ever
        # handed out here; without AUTOINCREMENT a deleted highest id is used again and no row is kept.
        return "SELECT (SELECT seq FROM sqlite_sequence WHERE name = ?)"  # one row, NULL before the first id

    def sequence_names(self, schema: str | None, table: str, column: str) -> tuple[str, ...]:
        return (table,)

    def json_text_sql(self, column: str, path: tuple[str, ...]) -> str:
        return f"json_extract({column}, '$.{'.'.join(path)}')"  # JSON1, built into SQLite since 3.38

    def now_by_column_sql(self, clock: str, column: str, sign: int, interval: bool) -> str:
        if interval:
            raise UsageError("SQLite has no interval type", "give the column as seconds (int)")
        local = ", 'localtime'" if clock == "local" else ""
        return f"strftime('%Y-%m-%d %H:%M:%f', 'now'{local}, printf('%+f seconds', {'' if sign > 0 else '-'}{column}))"

    def second_sql(self, expr: str) -> str:
        return f"substr({expr}, 1, 19)"  # 'YYYY-MM-DD HH:MM:SS' of the stored text: no date arithmetic per row

    def shifted_now_sql(self, clock: str) -> str:
        local = ", 'localtime'" if clock == "local" else ""
        return f"strftime('%Y-%m-%d %H:%M:%f', 'now'{local}, ?)"

    def shift_param(self, seconds: float) -> Any:
        return f"{seconds:+.3f} seconds"

    def param(self, layout_type: str | None) -> str:
        return "?"  # SQLite keeps what it is given; the columns' affinity does the rest

    def encode_value(self, layout_type: str | None, value: Any) -> Any:
        if layout_type == "guid" and isinstance(value, str):
            return value.upper()  # as SQL Server shows a uniqueidentifier, and as the seeds' rows hold it
        return super().encode_value(layout_type, value)

    def error_kind(self, sqlstate: str, message: str) -> ErrorKind | None:
        if "no such table" in message:
            return ErrorKind.SCHEMA
        # SQLITE_BUSY past busy_timeout ("database is locked"), SQLITE_LOCKED ("database table is locked"),
        # SQLITE_PROTOCOL (a process holding the WAL locks: "locking protocol"), and a statement stopped by the
        # statement-timeout progress handler ("interrupted")
        if "is locked" in message or "database is busy" in message or message in ("interrupted", "locking protocol"):
            return ErrorKind.TIMEOUT
        return None

    def catalog_sql(self, names: int = 0) -> str:
        return ("SELECT NULL, m.name, p.name, m.type = 'view' FROM sqlite_master AS m "
                "JOIN pragma_table_info(m.name) AS p WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite_%'"
                + (f" AND lower(m.name) IN ({self.placeholders(names)})" if names else ""))

    # -- schema ------------------------------------------------------------------------------------------

    # -- queue operations --------------------------------------------------------------------------------

