"""The doctor's reads on SQL Server: the estimated plan (SET SHOWPLAN_XML ON: nothing runs), the database's
read-committed snapshot setting, a table's lock escalation, row counts from sys.dm_db_partition_stats, ghost
records from sys.dm_db_index_physical_stats, the modules that write the queue with QUOTED_IDENTIFIER OFF
(sys.sql_modules), SQL Server Agent jobs that mention a table, and sys.dm_tran_locks + sys.dm_exec_sessions
for the sessions that hold or wait for locks on the queue.

Not run against a real SQL Server on the development machines: every statement here is parsed by sqlfluff's
T-SQL grammar in the tests (tests/test_doctor_tsql.py), and the showplan parser is tested on plan XML.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from queuetop.core.errors import DatabaseError
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
    short,
)

if TYPE_CHECKING:
    from queuetop.db.connection import Database

SHOWPLAN_NS = "{http://schemas.microsoft.com/sqlserver/2004/07/showplan}"
_SEEKS = ("Index Seek", "Clustered Index Seek")
_INDEX_SCANS = ("Index Scan",)
_TABLE_SCANS = ("Clustered Index Scan", "Table Scan")
_SORTS = ("Sort", "Top N Sort")
_LOOKUPS = ("Key Lookup", "RID Lookup")

READ_COMMITTED_SNAPSHOT_SQL = (TAG + "SELECT is_read_committed_snapshot_on FROM sys.databases "
                                     "WHERE database_id = DB_ID()")
# Forced parameterization turns the literals of a filtered index's predicate in a query into parameters, and a
# parameter never matches a filter; ANSI_NULLS is what a session gets that does not set it itself.
DATABASE_SETTINGS_SQL = (TAG + "SELECT is_parameterization_forced, is_ansi_nulls_on FROM sys.databases "
                               "WHERE database_id = DB_ID()")
# OUTPUT without INTO fails on a table with an enabled trigger (error 334), OUTPUT INTO one as its target (331).
TRIGGERS_SQL = TAG + "SELECT name FROM sys.triggers WHERE parent_id = OBJECT_ID(?) AND is_disabled = 0"
PRINCIPALS_SQL = TAG + "SELECT ORIGINAL_LOGIN(), USER_NAME()"
LOCK_ESCALATION_SQL = TAG + "SELECT lock_escalation_desc FROM sys.tables WHERE object_id = OBJECT_ID(?)"
FILTERED_INDEXES_SQL = TAG + "SELECT name FROM sys.indexes WHERE object_id = OBJECT_ID(?) AND has_filter = 1"
# Each index's key columns in order (included columns have key_ordinal 0); none where VIEW DEFINITION is lacking
INDEX_KEYS_SQL = (TAG + "SELECT ic.index_id, ic.key_ordinal, c.name FROM sys.index_columns AS ic JOIN sys.columns AS c "
                        "ON c.object_id = ic.object_id AND c.column_id = ic.column_id WHERE ic.object_id = "
                        "OBJECT_ID(?) AND ic.key_ordinal > 0 ORDER BY ic.index_id, ic.key_ordinal")
# Procedures, triggers and functions whose text names the table: QUOTED_IDENTIFIER and ANSI_NULLS are fixed when
# each was created.
WRITERS_SQL = (TAG + "SELECT OBJECT_SCHEMA_NAME(m.object_id), OBJECT_NAME(m.object_id), o.type_desc, "
                     "m.uses_quoted_identifier, m.uses_ansi_nulls FROM sys.sql_modules AS m JOIN sys.objects AS o "
                     "ON o.object_id = m.object_id WHERE o.type IN ('P', 'TR', 'FN', 'IF', 'TF') "
                     "AND m.[definition] LIKE ?")  # bracketed: sqlfluff reads a bare `definition` as a keyword
# sys.partitions: visible with any right on the table (dm_db_partition_stats needs VIEW DATABASE STATE)
# a table's rows (its heap or clustered index, every partition); a view's, the biggest table its definition reads
ROWS_ESTIMATE_SQL = (TAG + "SELECT MAX(per_table.estimate) FROM (SELECT SUM(p.rows) AS estimate "
                           "FROM sys.partitions AS p WHERE p.index_id IN (0, 1) AND (p.object_id = OBJECT_ID(?) "
                           "OR p.object_id IN (SELECT d.referenced_id FROM sys.sql_expression_dependencies AS d "
                           "WHERE d.referencing_id = OBJECT_ID(?))) GROUP BY p.object_id) AS per_table")
SIZE_SQL = (TAG + "SELECT SUM(CASE WHEN index_id IN (0, 1) THEN row_count ELSE 0 END), "
                  "SUM(used_page_count) * 8192 FROM sys.dm_db_partition_stats WHERE object_id = OBJECT_ID(?)")
# LIMITED mode leaves ghost_record_count NULL; SAMPLED reads 1 % of the leaf pages of a big index (all of a small one).
GHOSTS_SQL = (TAG + "SELECT SUM(ghost_record_count), SUM(version_ghost_record_count) "
                    "FROM sys.dm_db_index_physical_stats(DB_ID(), OBJECT_ID(?), NULL, NULL, 'SAMPLED') "
                    "WHERE index_level = 0")
AGENT_JOBS_SQL = (TAG + "SELECT j.name + N': ' + s.step_name FROM msdb.dbo.sysjobs AS j "
                        "JOIN msdb.dbo.sysjobsteps AS s ON s.job_id = j.job_id WHERE j.enabled = 1 "
                        "AND s.command LIKE ?")


def sessions_sql(tables: int) -> str:
    marks = ", ".join(["OBJECT_ID(?)"] * tables)
    return f"""{TAG}WITH touching AS (
        SELECT DISTINCT l.request_session_id AS session_id FROM sys.dm_tran_locks AS l
        WHERE l.resource_database_id = DB_ID() AND (
            (l.resource_type = 'OBJECT' AND l.resource_associated_entity_id IN ({marks}))
            OR (l.resource_type IN ('KEY', 'PAGE', 'RID', 'HOBT') AND l.resource_associated_entity_id IN (
                SELECT p.hobt_id FROM sys.partitions AS p WHERE p.object_id IN ({marks}))))),
    related AS (
        SELECT session_id FROM touching
        UNION SELECT r.blocking_session_id FROM sys.dm_exec_requests AS r
        JOIN touching AS t ON t.session_id = r.session_id WHERE r.blocking_session_id <> 0)
    SELECT s.session_id, s.program_name, s.host_name, s.login_name, s.status, s.open_transaction_count,
        DATEDIFF(second, tx.began, SYSDATETIME()), DATEDIFF(second, s.last_request_end_time, SYSDATETIME()),
        r.blocking_session_id, r.wait_time, LEFT(q.text, 400),
        CASE WHEN s.session_id IN (SELECT session_id FROM touching) THEN 1 ELSE 0 END
    FROM related AS x
    JOIN sys.dm_exec_sessions AS s ON s.session_id = x.session_id
    LEFT JOIN sys.dm_exec_requests AS r ON r.session_id = s.session_id
    LEFT JOIN sys.dm_exec_connections AS c ON c.session_id = s.session_id
    OUTER APPLY (SELECT MIN(a.transaction_begin_time) AS began FROM sys.dm_tran_session_transactions AS st
        JOIN sys.dm_tran_active_transactions AS a ON a.transaction_id = st.transaction_id
        WHERE st.session_id = s.session_id) AS tx
    OUTER APPLY sys.dm_exec_sql_text(COALESCE(r.sql_handle, c.most_recent_sql_handle)) AS q
    WHERE s.session_id <> @@SPID
    ORDER BY tx.began"""


def parse_showplan(text: str) -> Plan:
    """The table reads of a showplan XML document: seeks, scans of a nonclustered index, and table scans (a
    clustered index scan reads the whole table); key and RID lookups (a seek of the clustered index marked
    `Lookup="1"`, or a RID Lookup), kept apart; and whether the plan sorts."""
    root = ET.fromstring(text)
    accesses: list[Access] = []
    lookups: list[Access] = []
    sorts = False
    for op in root.iter(f"{SHOWPLAN_NS}RelOp"):
        physical = op.get("PhysicalOp", "")
        if physical in _SORTS:
            sorts = True
        if physical not in _SEEKS + _INDEX_SCANS + _TABLE_SCANS + _LOOKUPS:
            continue
        # The operator's own object: its first child element (IndexScan / TableScan) holds it
        detail = next((child for child in op if child.tag != f"{SHOWPLAN_NS}OutputList"
                       and child.find(f"{SHOWPLAN_NS}Object") is not None), None)  # fmt: skip
        obj = detail.find(f"{SHOWPLAN_NS}Object") if detail is not None else None
        table = (obj.get("Table", "?") if obj is not None else "?").strip("[]")
        index = obj.get("Index", "").strip("[]") or None if obj is not None else None
        if physical in _LOOKUPS or (detail is not None and detail.get("Lookup") in ("1", "true")):
            lookups.append(Access(table, AccessKind.SEEK, index))
            continue
        if physical in _SEEKS:
            kind = AccessKind.SEEK
        elif physical in _INDEX_SCANS:
            kind = AccessKind.INDEX_SCAN
        else:
            kind = AccessKind.TABLE_SCAN
        accesses.append(Access(table, kind, index))
    return Plan(tuple(accesses), sorts, text, tuple(lookups))


class MSSQLDiagnostics(Diagnostics):
    name = "mssql"

    def plan(self, db: Database, sql: str, params: tuple[Any, ...]) -> Plan:
        # While SHOWPLAN_XML is on, statements are compiled, not run: each returns its estimated plan instead.
        db.execute("SET SHOWPLAN_XML ON")
        try:
            text = db.fetchone(sql, params)[0]
        finally:
            db.execute("SET SHOWPLAN_XML OFF")
        return parse_showplan(str(text))

    def partial_indexes(self, db: Database, schema: str | None, table: str) -> set[str]:
        return {row[0] for row in db.fetchall(FILTERED_INDEXES_SQL, (self.dialect.qualify(schema, table),))}

    def index_keys(self, db: Database, schema: str | None, table: str) -> list[tuple[str, ...]] | None:
        return keys_by_index(db.fetchall(INDEX_KEYS_SQL, (self.dialect.qualify(schema, table),)))

    def read_committed_snapshot(self, db: Database) -> bool:
        return bool(db.fetchone(READ_COMMITTED_SNAPSHOT_SQL)[0])

    def lock_escalation(self, db: Database, schema: str | None, table: str) -> str | None:
        row = db.fetchone(LOCK_ESCALATION_SQL, (self.dialect.qualify(schema, table),))
        return str(row[0]) if row else None

    def lock_escalation_sql(self, schema: str | None, table: str) -> str:
        return f"ALTER TABLE {self.dialect.qualify(schema, table)} SET (LOCK_ESCALATION = DISABLE);"

    def read_committed_snapshot_sql(self, database: str) -> str:
        return f"ALTER DATABASE {self.dialect.quote(database)} SET READ_COMMITTED_SNAPSHOT ON WITH ROLLBACK IMMEDIATE;"

    def database_name(self, db: Database) -> str:
        return str(db.fetchone(TAG + "SELECT DB_NAME()")[0])

    def writers_without_index_settings(self, db: Database, table: str) -> list[tuple[str, str, str, str]]:
        """(schema, name, kind, the settings it has OFF) of the modules that mention the table and were created
        with QUOTED_IDENTIFIER or ANSI_NULLS off (each fails its writes to a table with a filtered index)."""
        rows = db.fetchall(WRITERS_SQL, (f"%{table}%",))
        return [(str(s), str(n), str(kind), " and ".join(name for name, on in (("QUOTED_IDENTIFIER", quoted),
                                                                               ("ANSI_NULLS", nulls)) if not on))
                for s, n, kind, quoted, nulls in rows if not (quoted and nulls)]  # fmt: skip

    def database_settings(self, db: Database) -> tuple[bool, bool]:
        """(forced parameterization, ANSI_NULLS on by default) of the current database."""
        forced, nulls = db.fetchone(DATABASE_SETTINGS_SQL)
        return bool(forced), bool(nulls)

    def parameterization_sql(self, database: str) -> str:
        return f"ALTER DATABASE {self.dialect.quote(database)} SET PARAMETERIZATION SIMPLE;"

    def enabled_triggers(self, db: Database, schema: str | None, table: str) -> list[str]:
        return sorted(str(row[0]) for row in db.fetchall(TRIGGERS_SQL, (self.dialect.qualify(schema, table),)))

    def principals(self, db: Database) -> tuple[str, str]:
        """(login, database user) of this connection: whom a GRANT names."""
        login, user = db.fetchone(PRINCIPALS_SQL)
        return str(login), str(user)

    def grant_sql(self, permission: str, login: str, user: str) -> str:
        """The GRANT that gives this connection a permission it was refused: VIEW SERVER STATE is the server's (to
        the login, in master; Azure SQL Database has none: VIEW DATABASE STATE there), the others the database's."""
        if permission == "VIEW SERVER STATE":
            return (f"USE master;\nGRANT VIEW SERVER STATE TO {self.dialect.quote(login)};\n"
                    f"-- Azure SQL Database: GRANT VIEW DATABASE STATE TO {self.dialect.quote(user)};")
        return f"GRANT {permission} TO {self.dialect.quote(user)};"

    def ansi_nulls_sql(self, database: str) -> str:
        return f"ALTER DATABASE {self.dialect.quote(database)} SET ANSI_NULLS ON;"

    def table_size(self, db: Database, schema: str | None, table: str) -> TableSize:
        name = self.dialect.qualify(schema, table)
        rows, size = db.fetchone(SIZE_SQL, (name,)) or (None, None)
        ghosts = db.fetchone(GHOSTS_SQL, (name,)) or (None, None)
        dead = None if ghosts[0] is None else int(ghosts[0]) + int(ghosts[1] or 0)
        return TableSize(rows=None if rows is None else int(rows), rows_exact=False,
                         bytes=None if size is None else int(size), dead_rows=dead)  # fmt: skip

    def estimated_rows(self, db: Database, schema: str | None, table: str) -> int | None:
        name = self.dialect.qualify(schema, table)
        row = db.fetchone(ROWS_ESTIMATE_SQL, (name, name))
        return None if not row or row[0] is None else int(row[0])

    def retention_jobs(self, db: Database, schema: str | None, table: str) -> list[str] | None:
        try:
            return [short(row[0]) for row in db.fetchall(AGENT_JOBS_SQL, (f"%{table}%",))]
        except DatabaseError:
            return None  # no permission on msdb (or no Agent: Azure SQL Database): cannot say

    def sessions(self, db: Database, tables: list[tuple[str | None, str]]) -> list[SessionRow] | None:
        names = tuple(self.dialect.qualify(schema, table) for schema, table in tables)
        rows = db.fetchall(sessions_sql(len(names)), names + names)
        sessions = []
        for sid, app, host, user, status, open_tx, in_tx, idle, blocker, wait_ms, query, touches in rows:
            idle_in_tx = str(status or "") == "sleeping" and int(open_tx or 0) > 0
            sessions.append(SessionRow(
                session=str(sid), application=str(app or ""), host=str(host or ""), user=str(user or ""),
                idle_in_transaction=idle_in_tx, transaction_s=None if in_tx is None else float(in_tx),
                idle_s=float(idle) if idle_in_tx and idle is not None else None,
                blocked_by=(str(blocker),) if blocker else (), wait_s=None if not wait_ms else wait_ms / 1000,
                query=short(query), touches_queue=bool(touches)))  # fmt: skip
        return sessions

    def retention_sql(self, schema: str | None, table: str, column: str, clock: str, days: int,
                      where: str | None) -> str:  # fmt: skip
        now = {"local": "GETDATE()", "zoned": "SYSDATETIMEOFFSET()"}.get(clock, "SYSUTCDATETIME()")
        extra = f" AND {where}" if where else ""
        return (f"DELETE TOP ({RETENTION_BATCH}) FROM {self.dialect.qualify(schema, table)} WITH (ROWLOCK, READPAST) "
                f"WHERE {self.dialect.quote(column)} < DATEADD(day, -{int(days)}, {now}){extra};")

    def terminate_sql(self, session: str) -> str | None:
        return f"KILL {int(session)};" if session.isdigit() else None
