"""PostgreSQL through pyodbc and psqlODBC: `FOR UPDATE SKIP LOCKED` claims, moves in one statement.

Each queue operation is a single statement (a data-modifying CTE moves a row to the completed table), so
nothing here needs an explicit transaction and no connection is ever left idle in one. Parameters carry
explicit casts because psqlODBC prepares statements server-side, where a bare `?` has no type.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from queuetop.db.dialects.base import TAG, Dialect, Row, SchemaObject
from queuetop.errors import ErrorKind

if TYPE_CHECKING:
    from queuetop.db.connection import Database
    from queuetop.layouts import Layout

NOW_UTC = "(clock_timestamp() AT TIME ZONE 'UTC')"
STATEMENT_NOW_UTC = "(statement_timestamp() AT TIME ZONE 'UTC')"


class PostgresDialect(Dialect):
    name = "postgresql"

    def session_setup(self, purpose: str) -> list[str]:
        statements = ["SET application_name = 'queuetop'", "SET lock_timeout = '2s'"]
        # The monitor gives up quickly; workers get more room for big batches.
        timeout = {"monitor": "5s", "bulk": "0"}.get(purpose, "60s")
        statements.append(f"SET statement_timeout = '{timeout}'")
        # A monitor session never waits for a lock and never holds one open: it is read-only.
        if purpose == "monitor":
            statements.append("SET idle_in_transaction_session_timeout = '10s'")
        return statements

    def server_now_sql(self) -> str:
        return f"SELECT {NOW_UTC}"

    SQL_TYPES: ClassVar[dict[str, str]] = {
        "guid": "uuid", "bit": "boolean", "datetime": "timestamp", "datetime2": "timestamp", "tinyint": "smallint",
        "int": "integer", "nvarchar": "varchar", "varchar(max)": "text", "nvarchar(max)": "text",
    }  # fmt: skip

    def now_sql(self, clock: str) -> str:
        # The session's time zone is the server's (queuetop never changes it): LOCALTIMESTAMP is what the seeds'
        # writers see as GETDATE().
        # The statement's start (not clock_timestamp(), which is volatile): one value for the whole statement, and
        # stable, so a state's `available > now` can bound an index scan.
        return "LOCALTIMESTAMP" if clock == "local" else STATEMENT_NOW_UTC

    def second_sql(self, expr: str) -> str:
        return f"date_trunc('second', {expr})"

    def shifted_now_sql(self, clock: str) -> str:
        return f"({self.now_sql(clock)} + CAST(? AS double precision) * INTERVAL '1 second')"

    def clock_sql(self) -> str:
        # The statement's start, not clock_timestamp(): one value for the whole statement, and stable, so a
        # comparison with it can bound an index scan.
        return STATEMENT_NOW_UTC

    def later_sql(self) -> str:
        # Down to the millisecond: a timestamp(3) column rounds to the nearest one, and a job enqueued in the last
        # half millisecond was then available only after a claim sent right after it (statement_timestamp() is
        # exact), which found nothing.
        return f"date_trunc('milliseconds', {STATEMENT_NOW_UTC} + CAST(? AS double precision) * INTERVAL '1 second')"

    def first_rows_sql(self, select: str) -> str:
        return select + " LIMIT CAST(? AS integer)"

    def bit_literal(self, value: int) -> str:
        return "true" if value else "false"

    def encode_value(self, layout_type: str | None, value: Any) -> Any:
        if layout_type == "bit" and value is not None:
            return "true" if value else "false"
        if layout_type in ("datetime", "datetime2"):
            return value  # bound as a timestamp through CAST
        return super().encode_value(layout_type, value)

    def client_port_sql(self) -> str | None:
        return "SELECT inet_client_port(), inet_server_port()"

    def error_kind(self, sqlstate: str, message: str) -> ErrorKind | None:
        # admin_shutdown (pg_terminate_backend, a fast shutdown), crash_shutdown, cannot_connect_now
        if sqlstate in ("57P01", "57P02", "57P03") or "terminating connection" in message:
            return ErrorKind.ENDED
        if sqlstate == "42P01" or ("does not exist" in message and ("relation" in message or "schema" in message)):
            return ErrorKind.SCHEMA
        if sqlstate in ("57014", "55P03") or "canceling statement due to" in message:
            return ErrorKind.TIMEOUT
        # serialization_failure and deadlock_detected: the transaction was rolled back and may be run again
        if sqlstate in ("40001", "40P01") or "deadlock detected" in message or "could not serialize" in message:
            return ErrorKind.CONFLICT
        return None

    def catalog_sql(self) -> str:
        return ("SELECT c.table_schema, c.table_name, c.column_name, CASE WHEN t.table_type = 'VIEW' THEN 1 ELSE 0 END "
                "FROM information_schema.columns AS c JOIN information_schema.tables AS t "
                "ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
                "WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema')")

    # -- schema ------------------------------------------------------------------------------------------
    def schema_objects(self, layout: Layout) -> list[SchemaObject]:
        regclass = "SELECT 1 WHERE to_regclass(?) IS NOT NULL"

        def qualified(name: str) -> tuple[str, tuple[Any, ...]]:
            return regclass, (self.qualify(layout.schema, name),)

        objects = []
        if layout.schema:
            objects.append(SchemaObject("schema", layout.schema,
                                        "SELECT 1 FROM information_schema.schemata WHERE schema_name = ?",
                                        (layout.schema,), f"CREATE SCHEMA IF NOT EXISTS {self.quote(layout.schema)}"))
        objects += [
            SchemaObject("table", layout.queue_table, *qualified(layout.queue_table), self.sql(layout, f"""
                CREATE TABLE IF NOT EXISTS {{queue}} (
                  {{id}} bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                  {{type}} varchar(128) NOT NULL CHECK (length({{type}}) >= 1),
                  {{info}} text NULL,
                  {{priority}} smallint NOT NULL DEFAULT 128 CHECK ({{priority}} BETWEEN 0 AND 255),
                  {{created}} timestamp(3) NOT NULL DEFAULT {NOW_UTC},
                  {{available}} timestamp(3) NOT NULL DEFAULT {NOW_UTC},
                  {{created_by}} varchar(128) NULL,
                  {{claimed_at}} timestamp(3) NULL,
                  {{claimed_by}} varchar(128) NULL,
                  {{token}} uuid NULL,
                  {{timeout}} timestamp(3) NULL,
                  {{attempts}} integer NOT NULL DEFAULT 0)""")),
            SchemaObject("view", layout.pending_view, *qualified(layout.pending_view), self.sql(layout, """
                CREATE OR REPLACE VIEW {pending_view} AS SELECT * FROM {queue} WHERE {claimed_at} IS NULL""")),
            SchemaObject("table", layout.completed_table, *qualified(layout.completed_table), self.sql(layout, """
                CREATE TABLE IF NOT EXISTS {completed} (
                  {c_id} bigint PRIMARY KEY,
                  {c_type} varchar(128) NOT NULL,
                  {c_created} timestamp(3) NULL,
                  {c_claimed_at} timestamp(3) NULL,
                  {c_completed} timestamp(3) NOT NULL,
                  {c_claimed_by} varchar(128) NULL,
                  {c_attempts} integer NULL,
                  {c_outcome} varchar(16) NOT NULL)""")),
        ]  # fmt: skip
        for index in self.index_definitions(layout):
            objects.append(SchemaObject("index", index[0], *qualified(index[0]), self.create_index_sql(layout, *index)))
        return objects

    def schema_lock(self, layout: Layout) -> tuple[str, tuple[Any, ...]] | None:
        # CREATE ... IF NOT EXISTS is not enough: two at once can still collide in the catalog. A transaction-level
        # advisory lock on a key made from the schema's name: released at commit.
        key = zlib.crc32(self.schema_lock_name(layout).encode("utf-8"))
        return f"{TAG}SELECT pg_advisory_xact_lock(CAST(? AS bigint))", (key,)

    # -- queue operations --------------------------------------------------------------------------------
    def enqueue(self, db: Database, layout: Layout, values: Sequence[Any], count: int) -> list[int]:
        job_type, info, priority, delay_s, created_by = values
        sql = self.sql(layout, f"""INSERT INTO {{queue}} ({{type}}, {{info}}, {{priority}}, {{created}}, {{available}},
                {{created_by}})
            SELECT CAST(? AS varchar(128)), CAST(? AS text), CAST(? AS smallint), {STATEMENT_NOW_UTC},
                   {self.later_sql()}, CAST(? AS varchar(128))
            FROM generate_series(1, CAST(? AS integer)) RETURNING {{id}}""")
        return sorted(row[0] for row in db.fetchall(sql, (job_type, info, priority, delay_s, created_by, count)))

    def claim(self, db: Database, layout: Layout, *, worker: str, token: str, job_types: Sequence[str],
              batch: int, lease_s: float) -> list[Row]:  # fmt: skip
        if len(job_types) > 1:
            return self._claim_types(db, layout, worker=worker, token=token, job_types=job_types, batch=batch,
                                     lease_s=lease_s)
        sql = self.sql(layout, f"""UPDATE {{queue}} SET {{claimed_at}} = {STATEMENT_NOW_UTC}, {{claimed_by}} = ?,
                {{token}} = CAST(? AS uuid), {{timeout}} = {self.later_sql()}, {{attempts}} = {{attempts}} + 1
            WHERE {{id}} IN (SELECT {{id}} FROM {{queue}}
                WHERE {{claimed_at}} IS NULL AND {{available}} <= {STATEMENT_NOW_UTC}"""
            + self.job_type_filter(layout, job_types) + """
                ORDER BY {priority}, {available} LIMIT CAST(? AS integer) FOR UPDATE SKIP LOCKED)
            RETURNING {id}, {type}, {info}, {priority}, {created}, {attempts}, {timeout}""")  # fmt: skip
        return db.fetchall(sql, (worker, token, lease_s, *job_types, batch))

    def _claim_types(self, db: Database, layout: Layout, *, worker: str, token: str, job_types: Sequence[str],
                     batch: int, lease_s: float) -> list[Row]:  # fmt: skip
        """Several types: one seek of IX_WorkQueue_Pending per type (its first `batch` rows, locked as read), the
        best `batch` of those taken; a filter over the dequeue index would read every other type's rows first.
        A LATERAL join, because PostgreSQL allows no FOR UPDATE in the arms of a UNION ALL."""
        values = ", ".join(["(CAST(? AS varchar(128)))"] * len(job_types))
        sql = self.sql(layout, f"""UPDATE {{queue}} SET {{claimed_at}} = {STATEMENT_NOW_UTC}, {{claimed_by}} = ?,
                {{token}} = CAST(? AS uuid), {{timeout}} = {self.later_sql()}, {{attempts}} = {{attempts}} + 1
            WHERE {{id}} IN (SELECT picked.{{id}} FROM (VALUES {values}) AS qt_types (job_type)
                CROSS JOIN LATERAL (SELECT {{id}}, {{priority}}, {{available}} FROM {{queue}}
                    WHERE {{claimed_at}} IS NULL AND {{available}} <= {STATEMENT_NOW_UTC}
                    AND {{type}} = qt_types.job_type ORDER BY {{priority}}, {{available}} LIMIT CAST(? AS integer)
                    FOR UPDATE SKIP LOCKED) AS picked
                ORDER BY picked.{{priority}}, picked.{{available}} LIMIT CAST(? AS integer))
            RETURNING {{id}}, {{type}}, {{info}}, {{priority}}, {{created}}, {{attempts}}, {{timeout}}""")  # fmt: skip
        return db.fetchall(sql, (worker, token, lease_s, *job_types, batch, batch))

    def move_to_completed(self, db: Database, layout: Layout, *, job_id: int, token: str, outcome: str,
                          min_attempts: int | None = None) -> bool:  # fmt: skip
        guard = " AND {attempts} >= CAST(? AS integer)" if min_attempts is not None else ""
        sql = self.sql(layout, "WITH moved AS (DELETE FROM {queue} WHERE {id} = CAST(? AS bigint) "
                               "AND {token} = CAST(? AS uuid)" + guard +
                               " RETURNING {id}, {type}, {created}, {claimed_at}, {claimed_by}, {attempts}) "
                               f"INSERT INTO {{completed}} ({self.COMPLETED_INSERT_COLUMNS}) "
                               f"SELECT {{id}}, {{type}}, {{created}}, {{claimed_at}}, {STATEMENT_NOW_UTC}, "
                               "{claimed_by}, {attempts}, CAST(? AS varchar(16)) FROM moved")  # fmt: skip
        guard_params = (min_attempts,) if min_attempts is not None else ()
        return db.execute(sql, (job_id, token, *guard_params, outcome)) == 1

    def retry_later(self, db: Database, layout: Layout, *, job_id: int, token: str, delay_s: float,
                    max_attempts: int) -> bool:  # fmt: skip
        sql = self.sql(layout, f"""UPDATE {{queue}} SET {{claimed_at}} = NULL, {{claimed_by}} = NULL, {{token}} = NULL,
            {{timeout}} = NULL, {{available}} = {self.later_sql()}
            WHERE {{id}} = CAST(? AS bigint) AND {{token}} = CAST(? AS uuid) AND {{attempts}} < CAST(? AS integer)""")
        return db.execute(sql, (delay_s, job_id, token, max_attempts)) == 1

    def release_claim(self, db: Database, layout: Layout, *, job_id: int, token: str, max_attempts: int) -> bool:
        sql = self.sql(layout, "UPDATE {queue} SET {claimed_at} = NULL, {claimed_by} = NULL, {token} = NULL, "
                               "{timeout} = NULL WHERE {id} = CAST(? AS bigint) AND {token} = CAST(? AS uuid) "
                               f"AND {{timeout}} < {self.clock_sql()} AND {{attempts}} < CAST(? AS integer)")
        return db.execute(sql, (job_id, token, max_attempts)) == 1

    def unclaim(self, db: Database, layout: Layout, *, job_id: int, token: str) -> bool:
        sql = self.sql(layout, """UPDATE {queue} SET {claimed_at} = NULL, {claimed_by} = NULL, {token} = NULL,
            {timeout} = NULL, {attempts} = {attempts} - 1
            WHERE {id} = CAST(? AS bigint) AND {token} = CAST(? AS uuid)""")
        return db.execute(sql, (job_id, token)) == 1

    def release_timed_out(self, db: Database, layout: Layout, *, job_type: str | None,
                          max_attempts: int) -> tuple[int, int]:  # fmt: skip
        types = [job_type] if job_type else []
        # Lock only what no one else holds: a job a worker is finishing right now is skipped, not waited on,
        # and the timeout is checked again under the lock, so a job claimed anew meanwhile is left alone.
        pick = (f"SELECT {{id}} FROM {{queue}} WHERE {{claimed_at}} IS NOT NULL AND {{timeout}} < {STATEMENT_NOW_UTC} "
                "AND {attempts} %s CAST(? AS integer)" + self.job_type_filter(layout, types)
                + " FOR UPDATE SKIP LOCKED")
        bury = self.sql(layout, "WITH moved AS (DELETE FROM {queue} WHERE {id} IN (" + pick % ">=" + ") "
                                "RETURNING {id}, {type}, {created}, {claimed_at}, {claimed_by}, {attempts}) "
                                f"INSERT INTO {{completed}} ({self.COMPLETED_INSERT_COLUMNS}) "
                                f"SELECT {{id}}, {{type}}, {{created}}, {{claimed_at}}, {STATEMENT_NOW_UTC}, "
                                "{claimed_by}, {attempts}, 'dead' FROM moved")
        release = self.sql(layout, "UPDATE {queue} SET {claimed_at} = NULL, {claimed_by} = NULL, {token} = NULL, "
                                   "{timeout} = NULL WHERE {id} IN (" + pick % "<" + ")")
        dead = db.execute(bury, (max_attempts, *types))
        released = db.execute(release, (max_attempts, *types))
        return released, dead
