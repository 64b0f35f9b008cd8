"""What every dialect shares: quoting, the role names of a layout, and the monitor's standard-SQL reads.

A dialect turns a layout's roles into statements and runs them on a `Database`. Statements are templates
written with role names (`{queue}`, `{claimed_at}`, ...) and filled with quoted identifiers, never with
values: values always travel as `?` parameters. Every statement starts with `/* queuetop */` so a DBA can
tell the monitor's work apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from queuetop.errors import ErrorKind

if TYPE_CHECKING:
    from queuetop.db.connection import Database
    from queuetop.layouts import Layout

TAG = "/* queuetop */ "
Row = tuple[Any, ...]


@dataclass(frozen=True)
class SchemaObject:
    """One object `queuetop init` makes sure exists."""

    kind: str  # schema, table, view, index
    name: str
    exists_sql: str
    exists_params: tuple[Any, ...]
    create_sql: str


class Dialect:
    """SQL text and the few per-database execution details. Subclasses fill in the rest."""

    name = "?"
    nolock = ""  # table hint for the monitor's counts (SQL Server without read-committed snapshot: NOLOCK)
    row_hint = ""  # table hint for the drill-down's rows (SQL Server without read-committed snapshot: READPAST)
    reads = "committed"  # what the monitor's counts see: "committed", or "dirty" (may count uncommitted rows)
    supports_schemas = True
    supports_include = True

    def __init__(self) -> None:
        self._statements: dict[tuple[int, str], tuple[Layout, str]] = {}

    # -- identifiers -------------------------------------------------------------------------------------
    def quote(self, identifier: str) -> str:
        return '"' + identifier.replace('"', '""') + '"'

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
        """The database's own current time, local ("local", as GETDATE()) or UTC."""
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

    def names(self, layout: Layout) -> dict[str, str]:
        """Quoted identifiers for every role of the layout, for filling statement templates."""
        names = {role: self.quote(col) for role, col in layout.columns.items()}
        names["queue"] = self.qualify(layout.schema, layout.queue_table)
        if layout.pending_view:
            names["pending_view"] = self.qualify(layout.schema, layout.pending_view)
        if layout.completed_table:
            names["completed"] = self.qualify(layout.schema, layout.completed_table)
        names["nolock"] = self.nolock
        names["row_hint"] = self.row_hint
        return names

    def sql(self, layout: Layout, template: str) -> str:
        """The statement for a template, filled with the layout's quoted names (cached: the hot path of every
        queue operation)."""
        key = (id(layout), template)
        cached = self._statements.get(key)
        if cached is None or cached[0] is not layout:
            cached = (layout, TAG + template.format_map(self.names(layout)))
            self._statements[key] = cached
        return cached[1]

    def fill(self, layout: Layout, template: str) -> str:
        """A piece of a statement filled with the layout's quoted names (no tag: it goes inside another)."""
        return template.format_map(self.names(layout))

    # -- values ------------------------------------------------------------------------------------------
    def encode_time(self, value: datetime | None) -> Any:
        return value

    def decode_time(self, value: Any) -> datetime | None:
        return value

    def placeholders(self, count: int) -> str:
        return ", ".join("?" * count)

    # -- connections -------------------------------------------------------------------------------------
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

    def configure_reads(self, db: Database) -> None:
        """Settle, once per connection, how the monitor's reads avoid blocking writers (SQL Server asks the
        database whether read-committed snapshot is on). Elsewhere reads never block writers: nothing to do."""

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
    def catalog_sql(self) -> str:
        """(schema, table, column, is_view) of every user table and view, in one statement."""
        raise NotImplementedError

    # -- schema ------------------------------------------------------------------------------------------
    def schema_objects(self, layout: Layout) -> list[SchemaObject]:
        raise NotImplementedError

    def schema_notes(self, layout: Layout) -> list[str]:
        """What `queuetop init` must tell the user about the schema it made (none by default)."""
        return []

    def schema_lock(self, layout: Layout) -> tuple[str, tuple[Any, ...]] | None:
        """The statement that makes concurrent `queuetop init`s of one schema take turns, run first in init's
        transaction (each then sees what the one before it made); None where the transaction already does (SQLite's
        BEGIN IMMEDIATE)."""
        return None

    @staticmethod
    def schema_lock_name(layout: Layout) -> str:
        return f"queuetop init {layout.schema or ''}.{layout.queue_table}"

    def index_definitions(self, layout: Layout) -> list[tuple[str, str, str, str, str | None]]:
        """(name, table role, key columns, included columns, filter) for each native index."""
        n = self.names(layout)
        return [
            # Pending rows only: typed dequeue seeks here.
            ("IX_WorkQueue_Pending", "queue", f"{n['type']}, {n['priority']}, {n['available']}",
             n["created"], f"{n['claimed_at']} IS NULL"),
            # Pending rows by age, for the monitor: a type's oldest pending job is one seek. `Attempts >= 0` is
            # always true; it is there so that only statements that say it can use this index: a claim, whose
            # order this index does not give, must never pick it (as a planner would on stale statistics).
            # It carries AvailableDate so that "pending now" (available <= now) is read from the index alone, and
            # the id in its key so that the drill-down's oldest first (created, id) is its order where a database
            # without INCLUDE (SQLite) puts AvailableDate in the key.
            ("IX_WorkQueue_PendingAge", "queue", f"{n['type']}, {n['created']}, {n['id']}", n["available"],
             f"{n['claimed_at']} IS NULL AND {n['attempts']} >= 0"),
            # Jobs scheduled for later: the poll counts them per type from a range of this index (the rows available
            # after now), not from every waiting row. It carries its filter's column: SQL Server reads an `IS NULL`
            # filter's column from the table otherwise (issue 22 asks the same of the indexes above).
            ("IX_WorkQueue_Scheduled", "queue", n["available"], f"{n['type']}, {n['claimed_at']}",
             f"{n['claimed_at']} IS NULL"),
            # Dequeue across all types in priority order without sorting the queue.
            ("IX_WorkQueue_Dequeue", "queue", f"{n['priority']}, {n['available']}", "", f"{n['claimed_at']} IS NULL"),
            # Claims in flight: claimed and timed-out counts, and the release sweep, read only these.
            ("IX_WorkQueue_Claimed", "queue", f"{n['type']}, {n['timeout']}", n["created"],
             f"{n['claimed_at']} IS NOT NULL"),
            # The completion watermark: throughput and latencies read only what finished recently.
            ("IX_WorkCompleted_Completed", "completed", n["c_completed"],
             f"{n['c_type']}, {n['c_created']}, {n['c_claimed_at']}, {n['c_outcome']}", None),
            # Dead jobs are few; counting them must not scan the history.
            ("IX_WorkCompleted_Dead", "completed", n["c_type"], "", f"{n['c_outcome']} = 'dead'"),
        ]  # fmt: skip

    def create_index_sql(self, layout: Layout, name: str, table_role: str, keys: str, include: str,
                         where: str | None) -> str:  # fmt: skip
        if include and not self.supports_include:
            keys, include = f"{keys}, {include}", ""
        included = f" INCLUDE ({include})" if include else ""
        filtered = f" WHERE {where}" if where else ""
        return f"{TAG}CREATE INDEX {self.quote(name)} ON {self.names(layout)[table_role]} ({keys}){included}{filtered}"

    # -- queue operations --------------------------------------------------------------------------------

    # -- monitor reads (standard SQL; SQL Server adds its NOLOCK hint) -----------------------------------

    def max_job_id(self, db: Database, layout: Layout) -> int:
        sql = self.sql(layout, "SELECT (SELECT MAX({id}) FROM {queue}{nolock}), "
                               "(SELECT MAX({c_id}) FROM {completed}{nolock})")
        row = db.fetchone(sql)
        return max(int(row[0] or 0), int(row[1] or 0))

    def arrivals_after(self, db: Database, layout: Layout, after_id: int, also_ids: Sequence[int]) -> list[Row]:
        """(id, type, created) of jobs with id > after_id or in also_ids, wherever they are now."""
        extra_q = f" OR {{id}} IN ({self.placeholders(len(also_ids))})" if also_ids else ""
        extra_c = f" OR {{c_id}} IN ({self.placeholders(len(also_ids))})" if also_ids else ""
        sql = self.sql(layout, f"SELECT {{id}}, {{type}}, {{created}} FROM {{queue}}{{nolock}} "
                               f"WHERE {{id}} > ?{extra_q} UNION ALL "
                               f"SELECT {{c_id}}, {{c_type}}, {{c_created}} FROM {{completed}}{{nolock}} "
                               f"WHERE {{c_id}} > ?{extra_c}")
        return db.fetchall(sql, (after_id, *also_ids, after_id, *also_ids))

    def completions_since(self, db: Database, layout: Layout, since: datetime) -> list[Row]:
        """(id, type, created, claimed, completed, outcome) of jobs finished after `since`."""
        sql = self.sql(layout, "SELECT {c_id}, {c_type}, {c_created}, {c_claimed_at}, {c_completed}, {c_outcome} "
                               "FROM {completed}{nolock} WHERE {c_completed} > ?")
        return db.fetchall(sql, (self.encode_time(since),))

    # -- paging: a statement's first rows ------------------------------------------------------------------
    def first_rows_sql(self, select: str) -> str:
        """A `SELECT ...` limited to a `?` number of rows (see `first_rows_params`)."""
        return select + " LIMIT ?"

    def first_rows_params(self, params: tuple[Any, ...], limit: int) -> tuple[Any, ...]:
        return (*params, limit)
