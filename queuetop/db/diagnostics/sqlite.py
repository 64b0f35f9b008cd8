"""The doctor's reads on SQLite: EXPLAIN QUERY PLAN, counts and the file's free pages, and a probe for a held
write lock (SQLite cannot say which connection holds it, only that one does)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from queuetop.core.errors import QueuetopError, Timeout
from queuetop.db.diagnostics import (
    RETENTION_BATCH,
    TAG,
    Access,
    AccessKind,
    Diagnostics,
    Plan,
    SessionRow,
    TableSize,
    keys_by_index,
)

if TYPE_CHECKING:
    from queuetop.db.connection import Database

# "SEARCH t USING INDEX i (a=?)", "SEARCH t USING COVERING INDEX i (a>?)", "SEARCH t USING INTEGER PRIMARY KEY
# (rowid>?)", "SCAN t USING INDEX i", "SCAN t", "SEARCH t" (MAX(rowid)); an alias shows as "t AS a".
_ACCESS = re.compile(r"^(SEARCH|SCAN) (\S+)(?: AS \S+)?(?: USING (?:COVERING )?(INDEX (\S+)|INTEGER PRIMARY KEY))?")
_NOT_TABLES = ("CONSTANT", "SUBQUERY")  # "SCAN CONSTANT ROW"; "(subquery-1)" and CTEs are skipped too
PROBE_BUSY_TIMEOUT_MS = 0


class SQLiteDiagnostics(Diagnostics):
    name = "sqlite"

    def plan(self, db: Database, sql: str, params: tuple[Any, ...]) -> Plan:
        rows = db.fetchall("EXPLAIN QUERY PLAN " + sql, params)
        details = [str(row[3]) for row in rows]
        ctes = {m.group(1) for d in details if (m := re.match(r"^(?:MATERIALIZE|CO-ROUTINE) (\S+)", d))}
        accesses = []
        for detail in details:
            match = _ACCESS.match(detail)
            if not match or match.group(2) in _NOT_TABLES or match.group(2) in ctes or match.group(2).startswith("("):
                continue
            verb, table, using, index = match.groups()
            if using is None:
                # "SEARCH t" with no index named: SQLite's own MIN/MAX of the rowid, one step down the b-tree
                kind = AccessKind.SEEK if verb == "SEARCH" else AccessKind.TABLE_SCAN
                accesses.append(Access(table, kind, "rowid" if verb == "SEARCH" else None))
                continue
            name = index or "INTEGER PRIMARY KEY"
            kind = AccessKind.SEEK if verb == "SEARCH" else AccessKind.INDEX_SCAN
            accesses.append(Access(table, kind, name))
        sorts = any(d.startswith("USE TEMP B-TREE FOR") and "ORDER BY" in d for d in details)
        return Plan(tuple(accesses), sorts, "\n".join(details))

    def index_keys(self, db: Database, schema: str | None, table: str) -> list[tuple[str, ...]] | None:
        rows = db.fetchall(TAG + "SELECT l.name, i.seqno + 1, i.name FROM pragma_index_list(?) AS l, "
                                 "pragma_index_info(l.name) AS i ORDER BY l.name, i.seqno", (table,))  # fmt: skip
        return keys_by_index(rows)

    def partial_indexes(self, db: Database, schema: str | None, table: str) -> set[str]:
        rows = db.fetchall(TAG + "SELECT name FROM pragma_index_list(?) WHERE partial = 1", (table,))
        return {row[0] for row in rows}

    def table_size(self, db: Database, schema: str | None, table: str) -> TableSize:
        rows = int(db.fetchone(f"{TAG}SELECT COUNT(*) FROM {self.dialect.quote(table)}")[0])
        size = None
        try:  # dbstat is compiled into most builds, not all
            size = db.fetchone(TAG + "SELECT SUM(pgsize) FROM dbstat WHERE name = ? OR name IN "
                                     "(SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?)",
                               (table, table))[0]  # fmt: skip
        except QueuetopError:
            size = None
        return TableSize(rows=rows, rows_exact=True, bytes=None if size is None else int(size), dead_rows=None)

    def estimated_rows(self, db: Database, schema: str | None, table: str) -> int | None:
        # No statistics unless ANALYZE ran: the span of the rowids bounds the rows (deleted rows make it an
        # overestimate). Two seeks of the table's b-tree: SQLite seeks a MIN or a MAX alone in its SELECT, and scans
        # for both together. A WITHOUT ROWID table has no rowid: cannot say.
        name = self.dialect.quote(table)
        try:
            low, high = db.fetchone(f"{TAG}SELECT (SELECT MIN(rowid) FROM {name}), (SELECT MAX(rowid) FROM {name})")
        except QueuetopError:
            return None
        return 0 if low is None else int(high) - int(low) + 1

    def free_pages(self, db: Database) -> tuple[int, int, int]:
        """(free pages, all pages, page size) of the database file."""
        free = int(db.fetchone(TAG + "SELECT freelist_count FROM pragma_freelist_count")[0])
        total = int(db.fetchone(TAG + "SELECT page_count FROM pragma_page_count")[0])
        size = int(db.fetchone(TAG + "SELECT page_size FROM pragma_page_size")[0])
        return free, total, size

    def journal_mode(self, db: Database) -> str:
        """The file's journal mode, as it is ("wal", "delete", "truncate", ...): read, never changed."""
        return str(db.fetchone(TAG + "SELECT journal_mode FROM pragma_journal_mode")[0]).lower()

    def sessions(self, db: Database, tables: list[tuple[str | None, str]]) -> list[SessionRow] | None:
        """Whether another connection holds the write lock now: BEGIN IMMEDIATE without waiting, then ROLLBACK at
        once. Taking the lock for that instant delays a writer by at most its busy-handler's first sleep; the
        dashboard never runs this, only `queuetop doctor` once."""
        db.execute(f"PRAGMA busy_timeout = {PROBE_BUSY_TIMEOUT_MS}")
        try:
            db.execute("BEGIN IMMEDIATE")
        except Timeout:
            return [SessionRow(session="?", application="another connection", host="this machine", user="?",
                               idle_in_transaction=True, transaction_s=None, idle_s=None, blocked_by=(),
                               wait_s=None, query="(SQLite does not say which connection, nor what it ran)",
                               touches_queue=True)]  # fmt: skip
        else:
            db.execute("ROLLBACK")
        finally:
            db.execute(f"PRAGMA busy_timeout = {db.busy_timeout_ms}")
        return []

    def retention_sql(self, schema: str | None, table: str, column: str, clock: str, days: int,
                      where: str | None) -> str:  # fmt: skip
        q = self.dialect.quote
        local = ", 'localtime'" if clock == "local" else ""
        extra = f" AND {where}" if where else ""
        return (f"DELETE FROM {q(table)} WHERE rowid IN (SELECT rowid FROM {q(table)} WHERE {q(column)} < "
                f"strftime('%Y-%m-%d %H:%M:%f', 'now'{local}, '-{int(days)} days'){extra} LIMIT {RETENTION_BATCH});")
