"""The doctor's reads on PostgreSQL: EXPLAIN (FORMAT JSON) with sequential scans discouraged (so the answer is
"can an index serve this?", whatever the table's size today), pg_class / pg_stat_user_tables for size and dead
tuples, pg_locks + pg_stat_activity for the sessions that hold or wait for locks on the queue, pg_cron for
retention jobs."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

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
from queuetop.db.dialects.postgres import NOW_UTC

if TYPE_CHECKING:
    from queuetop.db.connection import Database

# Each index's key columns of a table or of its partitions, in order (an expression's place, attnum 0, has none)
INDEX_KEYS_SQL = (TAG + "SELECT i.indexrelid, k.n, a.attname FROM pg_index AS i CROSS JOIN LATERAL "
                        "unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) JOIN pg_attribute AS a ON a.attrelid = "
                        "i.indrelid AND a.attnum = k.attnum WHERE (i.indrelid = to_regclass(?) OR i.indrelid IN "
                        "(SELECT inhrelid FROM pg_inherits WHERE inhparent = to_regclass(?))) AND k.n <= i.indnkeyatts "
                        "ORDER BY i.indexrelid, k.n")
_INDEX_NODES = ("Index Scan", "Index Only Scan", "Bitmap Index Scan")
# The first key column of each index named, with its table's name (an expression's first key: NULL)
LEADING_KEY_SQL = (TAG + "SELECT c.relname, t.relname, a.attname FROM pg_class AS c JOIN pg_index AS i ON "
                         "i.indexrelid = c.oid JOIN pg_class AS t ON t.oid = i.indrelid LEFT JOIN pg_attribute AS a "
                         "ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] WHERE c.relname IN ({names})")
# psqlODBC wraps each statement in a savepoint and frees prepared plans: for an idle session that is all
# pg_stat_activity shows of its last statement. Housekeeping, not what the worker ran.
_DRIVER_HOUSEKEEPING = re.compile(r'(SAVEPOINT|RELEASE|ROLLBACK TO) _per_query_svp_|DEALLOCATE "?[^;"]*"?', re.I)


def last_statement(query: object) -> str:
    text = ";".join(part for part in _DRIVER_HOUSEKEEPING.sub("", str(query or "")).split(";") if part.strip())
    return short(text) if text.strip() else ""


def _mentions(condition: str, column: str) -> bool:
    """Whether an Index Cond reads `column` (bare, qualified or quoted: a whole word of its text)."""
    return re.search(rf"(?<!\w){re.escape(column)}(?!\w)", condition) is not None


class PostgresDiagnostics(Diagnostics):
    name = "postgresql"

    def prepare(self, db: Database) -> None:
        # With sequential scans priced out, the planner takes any index that can serve the predicate, so a small
        # table today gives the answer a big one will; a Seq Scan that remains means there is no such index.
        # Bitmap scans go too: on a near-empty table they win with a sort on top, which a big table would not do.
        db.execute("SET enable_seqscan = off")
        db.execute("SET enable_bitmapscan = off")

    def finish(self, db: Database) -> None:
        db.execute("RESET enable_seqscan")
        db.execute("RESET enable_bitmapscan")

    def plan(self, db: Database, sql: str, params: tuple[Any, ...]) -> Plan:
        text = db.fetchone("EXPLAIN (FORMAT JSON) " + sql, params)[0]
        document = json.loads(text) if isinstance(text, str) else text
        accesses: list[Access] = []
        sorts = False
        conditions: list[str | None] = []  # each access's Index Cond

        def walk(node: dict[str, Any], relation: str | None) -> None:
            nonlocal sorts
            kind = node.get("Node Type", "")
            table = node.get("Relation Name", relation)
            if kind == "Seq Scan":
                accesses.append(Access(str(table), AccessKind.TABLE_SCAN))
                conditions.append(None)
            elif kind in _INDEX_NODES:
                seek = "Index Cond" in node or kind == "Bitmap Index Scan"
                accesses.append(Access(str(table or "?"), AccessKind.SEEK if seek else AccessKind.INDEX_SCAN,
                                       node.get("Index Name")))  # fmt: skip
                conditions.append(node.get("Index Cond"))
            elif kind in ("Sort", "Incremental Sort"):
                sorts = True
            for child in node.get("Plans", []):
                walk(child, node.get("Relation Name") if kind == "Bitmap Heap Scan" else None)

        walk(document[0]["Plan"], None)
        return Plan(self._ranges_only(db, accesses, conditions), sorts, json.dumps(document, indent=1))

    def _ranges_only(self, db: Database, accesses: list[Access], conditions: list[str | None]) -> tuple[Access, ...]:
        """The accesses, each "seek" whose condition leaves the index's first key free made the index scan it is:
        PostgreSQL puts any key column's condition in the Index Cond, and one on a later key (pg-boss 12's
        `created_on > ?` on its index of (name, created_on)) reads every entry of the index, not a range of it."""
        names = sorted({a.index for a in accesses if a.kind is AccessKind.SEEK and a.index})
        if not names:
            return tuple(accesses)
        rows = db.fetchall(LEADING_KEY_SQL.format(names=", ".join("?" * len(names))), tuple(names))
        leading = {(index, table): column for index, table, column in rows}  # index names repeat across schemas
        return tuple(Access(a.table, AccessKind.INDEX_SCAN, a.index)
                     if a.kind is AccessKind.SEEK and condition and (first := leading.get((a.index, a.table)))
                     and not _mentions(condition, str(first)) else a
                     for a, condition in zip(accesses, conditions, strict=True))

    def partial_indexes(self, db: Database, schema: str | None, table: str) -> set[str]:
        # a partitioned table's too: a plan reads its partitions' indexes (pg-boss keeps a partition per queue)
        rows = db.fetchall(TAG + "SELECT c.relname FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid "
                                 "WHERE i.indpred IS NOT NULL AND (i.indrelid = to_regclass(?) OR i.indrelid IN "
                                 "(SELECT inhrelid FROM pg_inherits WHERE inhparent = to_regclass(?)))",
                           (self.dialect.qualify(schema, table),) * 2)  # fmt: skip
        return {row[0] for row in rows}

    def index_keys(self, db: Database, schema: str | None, table: str) -> list[tuple[str, ...]] | None:
        rows = db.fetchall(INDEX_KEYS_SQL, (self.dialect.qualify(schema, table),) * 2)
        return keys_by_index(rows)

    def table_size(self, db: Database, schema: str | None, table: str) -> TableSize:
        row = db.fetchone(TAG + "SELECT CAST(c.reltuples AS bigint), pg_total_relation_size(c.oid), s.n_live_tup, "
                                "s.n_dead_tup, s.n_tup_ins, s.n_tup_del, EXTRACT(EPOCH FROM clock_timestamp() - "
                                "GREATEST(s.last_vacuum, s.last_autovacuum)) FROM pg_class AS c "
                                "LEFT JOIN pg_stat_user_tables AS s ON s.relid = c.oid WHERE c.oid = to_regclass(?)",
                          (self.dialect.qualify(schema, table),))  # fmt: skip
        if not row:
            return TableSize(None, False, None, None)
        estimate, size, live, dead, inserted, deleted, since_vacuum = row
        # reltuples is -1 before the first ANALYZE; the statistics' live count is fresher
        rows = int(live) if live is not None else (int(estimate) if estimate is not None and estimate >= 0 else None)
        return TableSize(rows=rows, rows_exact=False, bytes=int(size), dead_rows=None if dead is None else int(dead),
                         inserted=None if inserted is None else int(inserted),
                         deleted=None if deleted is None else int(deleted),
                         since_vacuum_s=None if since_vacuum is None else float(since_vacuum))  # fmt: skip

    def estimated_rows(self, db: Database, schema: str | None, table: str) -> int | None:
        # A partitioned table (pg-boss: a partition per queue) holds its partitions' rows, summed (its own
        # reltuples, after an ANALYZE, is their sum again); a view (graphile-worker's jobs) as many as the biggest
        # relation its rule reads (a join of a table with its small lookups: the table's rows). reltuples is -1
        # until a table's first ANALYZE (a bulk load just now): then the statistics' live count, which an ANALYZE
        # sets and the writes reported after it move (it can count a load twice: not the first choice); read by
        # the function behind pg_stat_user_tables, not the view, which a new session pays 1.5 ms to open (the
        # first poll of a small table waits for this read: 3.1 -> 1.6 ms on a new connection here).
        name = self.dialect.qualify(schema, table)
        row = db.fetchone(TAG + "SELECT MAX(per_relation.estimate) FROM (SELECT SUM(CASE WHEN c.reltuples >= 0 "
                                "THEN c.reltuples ELSE pg_stat_get_live_tuples(c.oid) END) AS estimate "
                                "FROM (SELECT to_regclass(?) AS oid UNION SELECT d.refobjid FROM pg_rewrite AS r "
                                "JOIN pg_depend AS d ON d.classid = CAST('pg_rewrite' AS regclass) "
                                "AND d.objid = r.oid AND d.refclassid = CAST('pg_class' AS regclass) "
                                "WHERE r.ev_class = to_regclass(?)) AS read "
                                "JOIN pg_class AS c ON c.relkind IN ('r', 'm') AND (c.oid = read.oid OR c.oid IN "
                                "(SELECT inhrelid FROM pg_inherits WHERE inhparent = read.oid)) "
                                "GROUP BY read.oid) AS per_relation",
                          (name, name))  # fmt: skip
        return None if not row or row[0] is None else int(row[0])

    def retention_jobs(self, db: Database, schema: str | None, table: str) -> list[str] | None:
        if not db.fetchone(TAG + "SELECT 1 WHERE to_regclass('cron.job') IS NOT NULL"):
            return None  # no pg_cron: the schedule, if any, lives outside the database
        rows = db.fetchall(TAG + "SELECT COALESCE(jobname, CAST(jobid AS text)) || ': ' || schedule || ' ' || command "
                                 "FROM cron.job WHERE active AND command ILIKE ?", (f"%{table}%",))  # fmt: skip
        return [short(row[0]) for row in rows]

    def sessions(self, db: Database, tables: list[tuple[str | None, str]]) -> list[SessionRow] | None:
        names = tuple(self.dialect.qualify(schema, table) for schema, table in tables)
        marks = ", ".join(["to_regclass(?)"] * len(names))
        rows = db.fetchall(f"""{TAG}WITH touching AS (
                SELECT DISTINCT l.pid FROM pg_locks AS l WHERE l.relation IN ({marks})),
            related AS (
                SELECT pid FROM touching
                UNION SELECT unnest(pg_blocking_pids(t.pid)) FROM touching AS t)
            SELECT a.pid, COALESCE(a.application_name, ''), COALESCE(a.client_hostname, host(a.client_addr), 'local'),
                COALESCE(a.usename, ''), a.state,
                EXTRACT(EPOCH FROM clock_timestamp() - a.xact_start),
                EXTRACT(EPOCH FROM clock_timestamp() - a.state_change),
                array_to_string(pg_blocking_pids(a.pid), ','), LEFT(a.query, 400),
                EXTRACT(EPOCH FROM clock_timestamp() - a.query_start),
                a.pid IN (SELECT pid FROM touching)
            FROM pg_stat_activity AS a JOIN related AS r ON r.pid = a.pid
            WHERE a.pid <> pg_backend_pid() ORDER BY a.xact_start""", names)
        sessions = []
        for pid, app, host, user, state, in_tx, idle, blockers, query, running, touches in rows:
            blocked_by = tuple(b for b in str(blockers or "").split(",") if b)
            sessions.append(SessionRow(
                session=str(pid), application=app, host=host, user=user,
                idle_in_transaction=str(state or "").startswith("idle in transaction"),
                transaction_s=None if in_tx is None else float(in_tx),
                idle_s=float(idle) if idle is not None and str(state or "").startswith("idle") else None,
                blocked_by=blocked_by, wait_s=float(running) if blocked_by and running is not None else None,
                query=last_statement(query), touches_queue=touches in (True, 1, "1")))  # fmt: skip
        return sessions

    def retention_sql(self, schema: str | None, table: str, column: str, clock: str, days: int,
                      where: str | None) -> str:  # fmt: skip
        q, name = self.dialect.quote, self.dialect.qualify(schema, table)
        now = {"local": "LOCALTIMESTAMP", "zoned": "now()"}.get(clock, NOW_UTC)
        extra = f" AND {where}" if where else ""
        return (f"DELETE FROM {name} WHERE ctid IN (SELECT ctid FROM {name} WHERE {q(column)} < "
                f"{now} - INTERVAL '{int(days)} days'{extra} LIMIT {RETENTION_BATCH});")

    def terminate_sql(self, session: str) -> str | None:
        return f"SELECT pg_terminate_backend({int(session)});" if session.isdigit() else None
