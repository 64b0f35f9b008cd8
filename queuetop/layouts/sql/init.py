"""`queuetop init`'s schema: the native tables, view and indexes (DESIGN.md), as each database spells them, and
how concurrent inits take turns. The only DDL queuetop sends to a table of its own; a demo's copy of a seed's
tables is `act.py`'s `create_tables`.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

from queuetop.layouts.sql.base import TAG, Statement, StatementsBase

PG_NOW_UTC = "(clock_timestamp() AT TIME ZONE 'UTC')"  # a column default: the time of the row's own insert


@dataclass(frozen=True)
class SchemaObject:
    """One object `queuetop init` makes sure exists."""

    kind: str  # schema, table, view, index, setting
    name: str
    exists_sql: str
    exists_params: tuple[Any, ...]
    create_sql: str


class InitSQL(StatementsBase):
    """The schema `queuetop init` makes for the layout (native.toml's roles), object by object."""

    def schema_objects(self) -> list[SchemaObject]:
        """Each object with the statement that says whether it exists and the one that makes it, in order."""
        build = {"mssql": self._tsql_schema_objects, "postgresql": self._pg_schema_objects}
        return build.get(self.dialect.name, self._sqlite_schema_objects)()

    def schema_notes(self) -> list[str]:
        """What `queuetop init` must tell the user about the schema it made (none but on SQL Server)."""
        return self._tsql_schema_notes() if self.dialect.name == "mssql" else []

    def schema_lock(self) -> Statement | None:
        """The statement that makes concurrent `queuetop init`s of one schema take turns, run first in init's
        transaction (each then sees what the one before it made); None where the transaction already does
        (SQLite's BEGIN IMMEDIATE)."""
        build = {"mssql": self._tsql_schema_lock, "postgresql": self._pg_schema_lock}.get(self.dialect.name)
        return build() if build is not None else None

    def schema_lock_name(self) -> str:
        layout = self.layout
        return f"queuetop init {layout.schema or ''}.{layout.queue_table}"

    def index_definitions(self) -> list[tuple[str, str, str, str, str | None]]:
        """(name, table role, key columns, included columns, filter) for each native index."""
        n = self.names()
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

    def create_index_sql(self, name: str, table_role: str, keys: str, include: str,
                         where: str | None) -> str:  # fmt: skip
        if include and not self.dialect.supports_include:
            keys, include = f"{keys}, {include}", ""
        included = f" INCLUDE ({include})" if include else ""
        filtered = f" WHERE {where}" if where else ""
        table = self.names()[table_role]
        return f"{TAG}CREATE INDEX {self.dialect.quote(name)} ON {table} ({keys}){included}{filtered}"

    def _tsql_schema_objects(self) -> list[SchemaObject]:
        layout = self.layout
        def object_id(name: str) -> tuple[str, tuple[Any, ...]]:
            return "SELECT 1 WHERE OBJECT_ID(?) IS NOT NULL", (self.dialect.qualify(layout.schema, name),)

        def index_id(table: str, name: str) -> tuple[str, tuple[Any, ...]]:
            return ("SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(?) AND name = ?",
                    (self.dialect.qualify(layout.schema, table), name))  # fmt: skip

        objects = []
        if layout.schema:
            objects.append(SchemaObject("schema", layout.schema, "SELECT 1 WHERE SCHEMA_ID(?) IS NOT NULL",
                                        (layout.schema,), f"CREATE SCHEMA {self.dialect.quote(layout.schema)}"))
        objects += [
            SchemaObject("table", layout.queue_table, *object_id(layout.queue_table), self.sql("""
                CREATE TABLE {queue} (
                  {id} bigint IDENTITY(1, 1) NOT NULL,
                  {type} nvarchar(128) NOT NULL,
                  {info} nvarchar(max) NULL,
                  {priority} tinyint NOT NULL DEFAULT 128,
                  {created} datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
                  {available} datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
                  {created_by} nvarchar(128) NULL,
                  {claimed_at} datetime2(3) NULL,
                  {claimed_by} nvarchar(128) NULL,
                  {token} uniqueidentifier NULL,
                  {timeout} datetime2(3) NULL,
                  {attempts} int NOT NULL DEFAULT 0,
                  CONSTRAINT [PK_WorkQueue] PRIMARY KEY CLUSTERED ({id}))""")),
            SchemaObject("view", layout.pending_view, *object_id(layout.pending_view), self.sql("""
                CREATE VIEW {pending_view} AS SELECT * FROM {queue} WHERE {claimed_at} IS NULL""")),
            SchemaObject("table", layout.completed_table, *object_id(layout.completed_table), self.sql("""
                CREATE TABLE {completed} (
                  {c_id} bigint NOT NULL,
                  {c_type} nvarchar(128) NOT NULL,
                  {c_created} datetime2(3) NULL,
                  {c_claimed_at} datetime2(3) NULL,
                  {c_completed} datetime2(3) NOT NULL,
                  {c_claimed_by} nvarchar(128) NULL,
                  {c_attempts} int NULL,
                  {c_outcome} varchar(16) NOT NULL,
                  CONSTRAINT [PK_WorkCompleted] PRIMARY KEY CLUSTERED ({c_id}))""")),
        ]  # fmt: skip
        queue = self.dialect.qualify(layout.schema, layout.queue_table)
        # A large enqueue or release must never escalate to a table lock: READPAST cannot skip one, so every
        # claimer would wait on it and fail with 1222. Row locks only, on the table queuetop made.
        objects.append(SchemaObject(
            "setting", f"{layout.queue_table} LOCK_ESCALATION = DISABLE",
            "SELECT 1 FROM sys.tables WHERE object_id = OBJECT_ID(?) AND lock_escalation_desc = 'DISABLE'", (queue,),
            self.sql("ALTER TABLE {queue} SET (LOCK_ESCALATION = DISABLE)")))
        tables = {"queue": layout.queue_table, "completed": layout.completed_table}
        for index in self.index_definitions():
            objects.append(SchemaObject("index", index[0], *index_id(tables[index[1]], index[0]),
                                        self.create_index_sql(*index)))
        return objects

    def _pg_schema_objects(self) -> list[SchemaObject]:
        layout = self.layout
        regclass = "SELECT 1 WHERE to_regclass(?) IS NOT NULL"

        def qualified(name: str) -> tuple[str, tuple[Any, ...]]:
            return regclass, (self.dialect.qualify(layout.schema, name),)

        objects = []
        if layout.schema:
            objects.append(SchemaObject("schema", layout.schema,
                                        "SELECT 1 FROM information_schema.schemata WHERE schema_name = ?",
                                        (layout.schema,),
                                        f"CREATE SCHEMA IF NOT EXISTS {self.dialect.quote(layout.schema)}"))
        objects += [
            SchemaObject("table", layout.queue_table, *qualified(layout.queue_table), self.sql(f"""
                CREATE TABLE IF NOT EXISTS {{queue}} (
                  {{id}} bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                  {{type}} varchar(128) NOT NULL CHECK (length({{type}}) >= 1),
                  {{info}} text NULL,
                  {{priority}} smallint NOT NULL DEFAULT 128 CHECK ({{priority}} BETWEEN 0 AND 255),
                  {{created}} timestamp(3) NOT NULL DEFAULT {PG_NOW_UTC},
                  {{available}} timestamp(3) NOT NULL DEFAULT {PG_NOW_UTC},
                  {{created_by}} varchar(128) NULL,
                  {{claimed_at}} timestamp(3) NULL,
                  {{claimed_by}} varchar(128) NULL,
                  {{token}} uuid NULL,
                  {{timeout}} timestamp(3) NULL,
                  {{attempts}} integer NOT NULL DEFAULT 0)""")),
            SchemaObject("view", layout.pending_view, *qualified(layout.pending_view), self.sql("""
                CREATE OR REPLACE VIEW {pending_view} AS SELECT * FROM {queue} WHERE {claimed_at} IS NULL""")),
            SchemaObject("table", layout.completed_table, *qualified(layout.completed_table), self.sql("""
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
        for index in self.index_definitions():
            objects.append(SchemaObject("index", index[0], *qualified(index[0]), self.create_index_sql(*index)))
        return objects

    def _sqlite_schema_objects(self) -> list[SchemaObject]:
        layout = self.layout
        now = "(strftime('%Y-%m-%d %H:%M:%f', 'now'))"

        def exists(kind: str, name: str) -> tuple[str, tuple[Any, ...]]:
            return "SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?", (kind, name)

        objects = [
            SchemaObject("table", layout.queue_table, *exists("table", layout.queue_table), self.sql(f"""
                CREATE TABLE {{queue}} (
                  {{id}} INTEGER PRIMARY KEY AUTOINCREMENT,
                  {{type}} TEXT NOT NULL CHECK (length({{type}}) BETWEEN 1 AND 128),
                  {{info}} TEXT NULL,
                  {{priority}} INTEGER NOT NULL DEFAULT 128 CHECK ({{priority}} BETWEEN 0 AND 255),
                  {{created}} TEXT NOT NULL DEFAULT {now},
                  {{available}} TEXT NOT NULL DEFAULT {now},
                  {{created_by}} TEXT NULL,
                  {{claimed_at}} TEXT NULL,
                  {{claimed_by}} TEXT NULL,
                  {{token}} TEXT NULL,
                  {{timeout}} TEXT NULL,
                  {{attempts}} INTEGER NOT NULL DEFAULT 0)""")),
            SchemaObject("view", layout.pending_view, *exists("view", layout.pending_view), self.sql("""
                CREATE VIEW {pending_view} AS SELECT * FROM {queue} WHERE {claimed_at} IS NULL""")),
            SchemaObject("table", layout.completed_table, *exists("table", layout.completed_table),
                         self.sql("""
                CREATE TABLE {completed} (
                  {c_id} INTEGER PRIMARY KEY,
                  {c_type} TEXT NOT NULL,
                  {c_created} TEXT NULL,
                  {c_claimed_at} TEXT NULL,
                  {c_completed} TEXT NOT NULL,
                  {c_claimed_by} TEXT NULL,
                  {c_attempts} INTEGER NULL,
                  {c_outcome} TEXT NOT NULL)""")),
        ]  # fmt: skip
        for index in self.index_definitions():
            objects.append(SchemaObject("index", index[0], *exists("index", index[0]),
                                        self.create_index_sql(*index)))
        return objects

    def _pg_schema_lock(self) -> Statement | None:
        # CREATE ... IF NOT EXISTS is not enough: two at once can still collide in the catalog. A transaction-level
        # advisory lock on a key made from the schema's name: released at commit.
        key = zlib.crc32(self.schema_lock_name().encode("utf-8"))
        return f"{TAG}SELECT pg_advisory_xact_lock(CAST(? AS bigint))", (key,)

    def _tsql_schema_lock(self) -> Statement | None:
        # An application lock owned by init's transaction: a second init waits (up to 60 s), then sees the schema.
        return (f"{TAG}EXEC sp_getapplock @Resource = ?, @LockMode = 'Exclusive', @LockOwner = 'Transaction', "
                "@LockTimeout = 60000", (self.schema_lock_name(),))

    def _tsql_schema_notes(self) -> list[str]:
        layout = self.layout
        queue = self.dialect.qualify(layout.schema, layout.queue_table)
        return [f"{queue} has filtered indexes: every session and stored "
                "procedure that writes it must run with QUOTED_IDENTIFIER ON (and ANSI_NULLS ON), or the insert "
                "fails with error 1934. sqlcmd's default is OFF: run it with -I; a procedure keeps the setting it "
                "was created with, so create it from a session with QUOTED_IDENTIFIER ON"]
