"""PostgreSQL through pyodbc and psqlODBC: `FOR UPDATE SKIP LOCKED` claims, moves in one statement.

Each queue operation is a single statement (a data-modifying CTE moves a row to the completed table), so
nothing here needs an explicit transaction and no connection is ever left idle in one. Parameters carry
explicit casts because psqlODBC prepares statements server-side, where a bare `?` has no type.
"""

from __future__ import annotations

from typing import Any, ClassVar

from queuetop.core.errors import ErrorKind
from queuetop.db.dialects.base import Dialect

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
            # The planner's cost of a poll's count over a big table crosses jit_above_cost, and compiling it costs
            # more than running it: pg-boss at 10^6 jobs, a warm poll 574 ms with JIT, see bench/README.
            statements.append("SET jit = off")
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
        if clock == "zoned":  # timestamptz against timestamptz: an instant, whatever the session's zone
            return "statement_timestamp()"
        return "LOCALTIMESTAMP" if clock == "local" else STATEMENT_NOW_UTC

    def sequence_sql(self) -> str:
        # Names as parameters: pg_get_serial_sequence finds the sequence whatever it is called (graphile-worker's
        # is still jobs_id_seq1 from before its table was renamed).
        return "SELECT pg_sequence_last_value(CAST(pg_get_serial_sequence(?, ?) AS regclass))"

    def zoned_session_sql(self) -> str | None:
        return "SET TIME ZONE 'UTC'"

    def now_by_column_sql(self, clock: str, column: str, sign: int, interval: bool) -> str:
        shift = column if interval else f"{column} * INTERVAL '1 second'"
        return f"({self.now_sql(clock)} {'+' if sign > 0 else '-'} {shift})"

    def second_sql(self, expr: str) -> str:
        return f"date_trunc('second', {expr})"

    def once(self, expr: str) -> str:
        # A scalar subquery with nothing from the row is an InitPlan, run once: LOCALTIMESTAMP and the shifted now
        # are stable, not constant, so in a CASE they were worked out again for each row (requests at 10^7, its
        # 90,000 lost claims counted on every poll: 20-27 ms, 7-10 ms with the time worked out once)
        return f"(SELECT {expr})"

    def shifted_now_sql(self, clock: str) -> str:
        # Down to the millisecond: a timestamp(3) column rounds to the nearest one, and a job enqueued in the last
        # half millisecond was then available only after a claim sent right after it (statement_timestamp() is
        # exact), which found nothing.
        return f"date_trunc('milliseconds', {self.now_sql(clock)} + CAST(? AS double precision) * INTERVAL '1 second')"

    def first_rows_sql(self, select: str) -> str:
        return select + " LIMIT CAST(? AS integer)"

    def json_text_sql(self, column: str, path: tuple[str, ...]) -> str:
        # a json, jsonb or text column alike (kombu keeps its payload as text): read as jsonb
        return f"(CAST({column} AS jsonb) #>> '{{{','.join(path)}}}')"

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

    def catalog_sql(self, names: int = 0) -> str:
        # information_schema.columns' rows, read from pg_catalog: the view works out its privileges and types for
        # every column of the database (18 ms for ~100 columns here, far more on a catalog of thousands of tables;
        # this 2-4 ms), and every command that finds its table reads it first. The same rows: tables, partitioned
        # tables, views and foreign tables, not another session's temporary ones, the columns the user holds
        # a privilege on (or owns the table of).
        return ("SELECT n.nspname, c.relname, a.attname, CASE WHEN c.relkind = 'v' THEN 1 ELSE 0 END "
                "FROM pg_catalog.pg_attribute AS a JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid "
                "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
                "WHERE c.relkind IN ('r', 'p', 'v', 'f') AND a.attnum > 0 AND NOT a.attisdropped "
                "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND NOT pg_is_other_temp_schema(n.oid) "
                "AND (pg_has_role(c.relowner, 'USAGE') "
                "OR has_column_privilege(c.oid, a.attnum, 'SELECT, INSERT, UPDATE, REFERENCES'))"
                + (f" AND lower(c.relname) IN ({self.placeholders(names)})" if names else ""))

    # -- schema ------------------------------------------------------------------------------------------

    # -- queue operations --------------------------------------------------------------------------------

