"""What every dialect shares, and what each spells its own way: the primitives statements are built from.

Quoting and qualifying identifiers, the layouts' type vocabulary as this database's types, typed `?`
parameters, the database's clock and clock arithmetic, paging (LIMIT / TOP), table hints, RETURNING / OUTPUT,
session settings, the catalog read, and the sorting of driver errors. A dialect knows no layout, no connection
and no queue: the statements themselves are built in `queuetop.layouts.sql` from a layout and these pieces.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from queuetop.core.errors import ErrorKind

Row = tuple[Any, ...]


class Dialect:
    """SQL text and the few per-database execution details. Subclasses fill in the rest."""

    name = "?"
    nolock = ""  # table hint for the monitor's counts (SQL Server without read-committed snapshot: NOLOCK)
    row_hint = ""  # table hint for the drill-down's rows (SQL Server without read-committed snapshot: READPAST)
    reads = "committed"  # what the monitor's counts see: "committed", or "dirty" (may count uncommitted rows)
    supports_schemas = True
    supports_include = True

    # -- identifiers -------------------------------------------------------------------------------------
    def quote(self, identifier: str) -> str:
        return '"' + identifier.replace('"', '""') + '"'

    def json_text_sql(self, column: str, path: tuple[str, ...]) -> str:
        """The text at a path of keys (each a checked identifier) inside a column holding JSON; NULL where absent."""
        raise NotImplementedError

    def pair_sql(self, first: str, second: str) -> str:
        """Two columns as one text, `first/second` (a job's queue beside its type); a NULL reads as empty."""
        return f"CONCAT({first}, '/', {second})"

    def qualify(self, schema: str | None, name: str) -> str:
        schema = self.schema_for(schema)
        if schema:
            return f"{self.quote(schema)}.{self.quote(name)}"
        return self.quote(name)

    def schema_for(self, schema: str | None) -> str | None:
        """The schema as this database spells it: None where it has none (SQLite), or where SQL Server's `dbo`
        means "the default schema" (PostgreSQL: the search path's first, `public`)."""
        if not self.supports_schemas or (schema == "dbo" and self.name != "mssql"):
            return None
        return schema

    # -- primitives for statements built from a layout (queuetop.layouts.sql) ----------------------------
    SQL_TYPES: ClassVar[dict[str, str]] = {}  # the layouts' type vocabulary -> this database's type, where they differ

    def now_sql(self, clock: str) -> str:
        """The database's own current time, local ("local", as GETDATE()), UTC, or as an instant ("zoned": to
        compare with times that carry their zone)."""
        raise NotImplementedError

    def once(self, expr: str) -> str:
        """`expr`, a time that is the same for every row of a statement (its now, maybe shifted), worked out once
        for the statement rather than for each row it is tested on (`Statements.condition(once=True)`). As it is
        where the database does that by itself: SQL Server's GETDATE() is a runtime constant (nor does T-SQL take a
        subquery inside an aggregate), and SQLite keeps strftime('now', ...) for the statement (90,000 rows counted
        with it per row or in a subquery: 8.7 and 9.5 ms)."""
        return expr

    def sequence_sql(self) -> str:
        """The last value the identity of a table's column handed out (its `?` are `sequence_names`'); NULL
        before the first."""
        raise NotImplementedError(f"{self.name}: queuetop reads no identity's sequence here")

    def sequence_names(self, schema: str | None, table: str, column: str) -> tuple[str, ...]:
        """`sequence_sql`'s parameters: the table, quoted and qualified, and the column."""
        return self.qualify(schema, table), column

    def zoned_session_sql(self) -> str | None:
        """What makes a session read times that carry their zone in UTC, where the database converts them to the
        session's zone (PostgreSQL's timestamptz); None where nothing needs to."""
        return None

    def now_by_column_sql(self, clock: str, column: str, sign: int, interval: bool) -> str:
        """The database's current time shifted by each row's own `column` (quoted already): seconds, or an
        `interval` where the database has that type."""
        raise NotImplementedError

    def shifted_now_sql(self, clock: str) -> str:
        """The database's current time shifted by a `?` parameter made by `shift_param`."""
        raise NotImplementedError

    def second_sql(self, expr: str) -> str:
        """A time expression truncated to its second, read back by `decode_time`: the key the monitor counts
        arrivals and completions by, so a poll fetches one row per job type and second, never one per job."""
        raise NotImplementedError

    def shift_param(self, seconds: float) -> Any:
        return seconds

    def later_sql(self, clock: str) -> str:
        """The database's now plus a number of seconds that may be large (a lease, a delay), given by
        `later_params`: as `shifted_now_sql`, but see SQL Server's."""
        return self.shifted_now_sql(clock)

    def later_params(self, seconds: float) -> tuple[Any, ...]:
        return (self.shift_param(seconds),)

    def insert_returning_sql(self, table: str, columns: list[str], values: list[str], id_column: str) -> str:
        """INSERT of one row that returns its id."""
        names = f" ({', '.join(columns)})" if columns else ""
        rows = f"VALUES ({', '.join(values)})" if values else "DEFAULT VALUES"
        before, after = self.returning(id_column)
        return f"INSERT INTO {table}{names}{before} {rows}{after}"

    def returning(self, column: str) -> tuple[str, str]:
        """Where a data-changing statement names what it returns: (before the rows, after them)."""
        return "", f" RETURNING {column}"

    def bit_literal(self, value: int) -> str:
        return str(int(bool(value)))

    def sql_type(self, layout_type: str) -> str:
        if layout_type in self.SQL_TYPES:
            return self.SQL_TYPES[layout_type]
        base = layout_type.split("(")[0]
        return self.SQL_TYPES.get(base, base) + layout_type[len(base):]

    def param(self, layout_type: str | None) -> str:
        """A `?` placeholder typed as the column it meets, so the database compares like with like (and, on SQL
        Server, seeks a varchar index instead of converting every row to nvarchar)."""
        return f"CAST(? AS {self.sql_type(layout_type)})" if layout_type else "?"

    def encode_value(self, layout_type: str | None, value: Any) -> Any:
        if value is None:
            return None
        if layout_type in ("datetime", "datetime2"):
            return self.encode_time(value)
        if layout_type == "bit":
            return int(bool(value))
        return value

    # -- values ------------------------------------------------------------------------------------------
    def encode_time(self, value: datetime | None) -> Any:
        return value

    def decode_time(self, value: Any) -> datetime | None:
        return value

    def placeholders(self, count: int) -> str:
        return ", ".join("?" * count)

    # -- connections -------------------------------------------------------------------------------------
    def triggered_tables_sql(self) -> str | None:
        """(schema, table) of every table with an enabled trigger, where that changes how a statement may read back
        what it wrote (SQL Server); None elsewhere."""
        return None

    def has_triggers(self, schema: str | None, table: str) -> bool:
        return False

    def session_setup(self, purpose: str) -> list[str]:
        """Statements run once on a new connection. `purpose` is "monitor" or "worker"."""
        return []

    def server_now_sql(self) -> str:
        raise NotImplementedError

    def rows_of_params(self, alias: str, columns: Sequence[tuple[str, str | None]], count: int) -> str:
        """A FROM source of `count` rows of typed `?` parameters, row by row, named `alias` with `columns` ((name,
        layout type) each): a VALUES list, which PostgreSQL plans as one node (a UNION of 50 rows cost it 1.2 ms
        more of planning)."""
        row = "(" + ", ".join(self.param(sql_type) for _, sql_type in columns) + ")"
        return f"(VALUES {', '.join([row] * count)}) AS {alias} ({', '.join(name for name, _ in columns)})"

    def state_group(self, expr: str) -> str:
        """How a count of states groups by `expr` (the job type): as is, but see SQLite's."""
        return expr

    def read_snapshot_sql(self) -> str | None:
        """The statement that says (1/0) whether reads see committed rows without waiting for writers' locks, asked
        once per connection (SQL Server: read-committed snapshot); None where they always do."""
        return None

    def reads_committed_snapshot(self) -> None:
        """The database said its reads are snapshots (`read_snapshot_sql`): the monitor needs no hints."""

    def client_port_sql(self) -> str | None:
        """(client port, server port) of this session's TCP connection, as the server sees it (NULL over a Unix
        socket): how the watchdog finds the socket to cut when the connect's own socket could not be told apart
        (another thread opened one meanwhile; through a proxy the ports are the proxy's and match none of ours).
        None: the database cannot say."""
        return None

    def error_kind(self, sqlstate: str, message: str) -> ErrorKind | None:
        """Classify a driver error (a missing table, a timeout, a deadlock or serialization conflict), or None
        for anything else."""
        return None

    # -- the catalog: what tables and columns exist (layout detection and checks) -------------------------
    def catalog_sql(self, names: int = 0) -> str:
        """(schema, table, column, is_view) of every user table and view, in one statement; `names`: of the tables
        called one of that many names only (in any schema; the names given as lower-case parameters)."""
        raise NotImplementedError

    # -- schema ------------------------------------------------------------------------------------------

    # -- queue operations --------------------------------------------------------------------------------

    # -- monitor reads (standard SQL; SQL Server adds its NOLOCK hint) -----------------------------------

    # -- paging: a statement's first rows ------------------------------------------------------------------
    def first_rows_sql(self, select: str) -> str:
        """A `SELECT ...` limited to a `?` number of rows (see `first_rows_params`)."""
        return select + " LIMIT ?"

    def first_rows_params(self, params: tuple[Any, ...], limit: int) -> tuple[Any, ...]:
        return (*params, limit)
