"""The SQL of `queuetop doctor` and of the dashboard's blocking panel, one module per dialect.

What a DBA would look up by hand before a load test, read from each database's own catalog and statistics
views: how the planner would run a statement (without running it), a table's size and dead rows, the sessions
that hold locks on the queue's tables in an open transaction or wait on one, and SQL Server's settings that
matter to a queue (read-committed snapshot, lock escalation, parameterization, the settings of the code that
writes it).
Every statement is tagged `/* queuetop */`, takes its values as `?` parameters and its identifiers quoted by
the dialect. Nothing here changes the database: the statements that would fix something are built as text, for
a person to read and run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from queuetop.db.dialects import Dialect

if TYPE_CHECKING:
    from queuetop.db.connection import Database

TAG = "/* queuetop */ "
# Rows per statement of the retention DELETE doctor prints: few enough that SQL Server never escalates to a table
# lock (at ~5,000) and no statement holds a claim up for long; run again until it deletes none.
RETENTION_BATCH = 1_000


class AccessKind(Enum):
    """How a plan reaches a table's rows."""

    SEEK = "seek"  # an index searched with a condition: only the matching entries are read
    INDEX_SCAN = "index scan"  # an index read in order from one end (stops early under a row limit)
    TABLE_SCAN = "table scan"  # every row of the table (SQL Server: a clustered index or heap scan)


@dataclass(frozen=True)
class Access:
    """One place in a plan where a table is read."""

    table: str
    kind: AccessKind
    index: str | None = None

    def describe(self) -> str:
        if self.kind is AccessKind.TABLE_SCAN:
            return f"scans {self.table}" + (f" (clustered index {self.index})" if self.index else "")
        return f"{self.kind.value} of {self.index or 'an index'} on {self.table}"


@dataclass(frozen=True)
class Plan:
    """What the planner would do with a statement: the table reads, and whether it sorts rows first."""

    accesses: tuple[Access, ...]
    sorts: bool  # an explicit sort: every matching row is read before the first is returned
    text: str  # the plan as the database gave it (JSON, XML or EXPLAIN QUERY PLAN lines)
    # SQL Server's key (or RID) lookups: the index a seek used lacks columns the statement reads, so each row it
    # finds costs a second seek into the table (each access: the table and its clustered index)
    lookups: tuple[Access, ...] = ()


@dataclass(frozen=True)
class TableSize:
    """A table's size as the database's statistics or a count give it."""

    rows: int | None
    rows_exact: bool  # a count, not the statistics' estimate
    bytes: int | None  # table and indexes
    dead_rows: int | None  # PostgreSQL dead tuples, SQL Server ghost records; None: not known here
    inserted: int | None = None  # PostgreSQL: inserts since statistics were reset (growth between two reads)
    deleted: int | None = None
    since_vacuum_s: float | None = None  # PostgreSQL: since the last (auto)vacuum


@dataclass(frozen=True)
class SessionRow:
    """A session that holds or waits for a lock on the queue's tables, or blocks one that does."""

    session: str  # pid / session_id; "?" where the database does not say (SQLite)
    application: str
    host: str
    user: str
    idle_in_transaction: bool  # a transaction is open and the session is doing nothing
    transaction_s: float | None  # how long its transaction has been open
    idle_s: float | None  # since its last statement ended
    blocked_by: tuple[str, ...]  # sessions it waits for
    wait_s: float | None
    query: str  # its current or last statement, shortened; empty when not known
    touches_queue: bool  # holds or waits for a lock on the queue's tables


class Diagnostics:
    """The reads of one dialect. Subclasses implement them; the base builds the fix statements."""

    name = "?"

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    # -- plans -------------------------------------------------------------------------------------------
    def prepare(self, db: Database) -> None:
        """Session settings the doctor's plans need (run once on its own connection)."""

    def finish(self, db: Database) -> None:
        """Undo `prepare`, so the connection is as it was."""

    def plan(self, db: Database, sql: str, params: tuple[Any, ...]) -> Plan:
        raise NotImplementedError

    def partial_indexes(self, db: Database, schema: str | None, table: str) -> set[str]:
        """Names of the table's partial (filtered) indexes: scanning one reads only the rows of its filter."""
        return set()

    def index_keys(self, db: Database, schema: str | None, table: str) -> list[tuple[str, ...]] | None:
        """Each index of the table (a partitioned table's: its partitions'), its key columns in order, an
        expression's place left out; None where this database shows none (a view, or no right to see them)."""
        return None

    def index_leads_with(self, db: Database, schema: str | None, table: str, columns: Sequence[str]) -> bool | None:
        """Does an index of the table begin with these columns, in this order (so each value of the first is a
        seek, its rows in the order of the second)? None: the database cannot say."""
        keys = self.index_keys(db, schema, table)
        if not keys:
            return None
        wanted = tuple(column.lower() for column in columns)
        return any(tuple(name.lower() for name in key[: len(wanted)]) == wanted for key in keys)

    # -- tables ------------------------------------------------------------------------------------------
    def table_size(self, db: Database, schema: str | None, table: str) -> TableSize:
        raise NotImplementedError

    def estimated_rows(self, db: Database, schema: str | None, table: str) -> int | None:
        """The table's rows as the catalog guesses them, in a read that costs the same at 10⁸ rows as at 10 (never
        a count); a view's, the biggest relation it reads; None where it cannot guess (statistics never gathered, no
        right to read them, a view on SQLite)."""
        return None

    def retention_jobs(self, db: Database, schema: str | None, table: str) -> list[str] | None:
        """Scheduled jobs that mention the table (pg_cron, SQL Server Agent); None: this database cannot say."""
        return None

    # -- sessions ----------------------------------------------------------------------------------------
    def sessions(self, db: Database, tables: list[tuple[str | None, str]]) -> list[SessionRow] | None:
        """Sessions holding or waiting for locks on these tables, and those blocking them; None: cannot see."""
        return None

    # -- fixes, as text ----------------------------------------------------------------------------------
    def create_index_sql(self, schema: str | None, table: str, name: str, keys: list[str], where: str | None,
                         include: Sequence[str] = ()) -> str:  # fmt: skip
        """CREATE INDEX for a person to run: keys and included columns are column names, `where` a condition
        already in SQL."""
        d = self.dialect
        if include and not d.supports_include:
            keys, include = [*keys, *include], ()
        included = f" INCLUDE ({', '.join(map(d.quote, include))})" if include else ""
        filtered = f" WHERE {where}" if where else ""
        return (f"CREATE INDEX {d.quote(name)} ON {d.qualify(schema, table)} "
                f"({', '.join(d.quote(k) for k in keys)}){included}{filtered};")

    def retention_sql(self, schema: str | None, table: str, column: str, clock: str, days: int,
                      where: str | None) -> str:  # fmt: skip
        """A batch DELETE of rows finished more than `days` ago, to run on a schedule until it deletes none."""
        raise NotImplementedError

    def terminate_sql(self, session: str) -> str | None:
        """The statement that ends a session (and rolls back its transaction)."""
        return None


def keys_by_index(rows: Sequence[tuple[Any, ...]]) -> list[tuple[str, ...]] | None:
    """Rows of (index, position from 1, column), in order, as each index's key columns; a gap (an expression's
    place) ends an index's columns. None where there are none."""
    keys: dict[Any, list[str]] = {}
    for index, position, column in rows:
        names = keys.setdefault(index, [])
        if len(names) == int(position) - 1 and column is not None:
            names.append(str(column))
    return [tuple(names) for names in keys.values()] or None


def diagnostics_for(dialect: Dialect) -> Diagnostics:
    """The diagnostics of a connection's dialect (its module alone imported: SQL Server's reads deadlock graphs
    with xml.etree, 2 ms of a `stats` that a first poll now spends asking the catalog a table's size)."""
    if dialect.name == "mssql":
        from queuetop.db.diagnostics.mssql import MSSQLDiagnostics

        return MSSQLDiagnostics(dialect)
    if dialect.name == "postgresql":
        from queuetop.db.diagnostics.postgres import PostgresDiagnostics

        return PostgresDiagnostics(dialect)
    from queuetop.db.diagnostics.sqlite import SQLiteDiagnostics

    return SQLiteDiagnostics(dialect)


def short(text: Any, limit: int = 160) -> str:
    """A statement's text on one line, cut to `limit` characters."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
