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
# Columns the native tables gained after their first release, by role: `init` adds each to a table made before
# it (a table made now has it already); an install without one is still the native schema for watching, and its
# writes are refused until `init` ran (`schema.require_current`). WorkCompleted.JobInfo: a dead job retried keeps
# its payload.
ADDED_COLUMNS = (("completed", "c_info", {"mssql": "nvarchar(max)", "postgresql": "text", "sqlite": "TEXT"}),)
ADDED_ROLES = frozenset(role for _, role, _ in ADDED_COLUMNS)


@dataclass(frozen=True)
class IndexDefinition:
    """One native index: its columns by role. `sqlserver_include`: columns SQL Server needs besides — a filtered
    index lacking its filter's column makes the optimizer read that column from the table, a key lookup per row
    (known for `IS NULL` filters), so every pending count becomes lookups or a scan; the other databases read a
    partial index's predicate from the index itself."""

    name: str
    table: str  # role: "queue" | "completed"
    keys: tuple[str, ...]  # column roles
    include: tuple[str, ...] = ()
    where: str | None = None  # the filter, in this database's SQL
    sqlserver_include: tuple[str, ...] = ()


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

    def index_definitions(self) -> list[IndexDefinition]:
        """The native indexes, as this database makes them."""
        n = self.names()
        return [
            # Pending rows only: typed dequeue seeks here.
            IndexDefinition("IX_WorkQueue_Pending", "queue", ("type", "priority", "available"), ("created",),
                            f"{n['claimed_at']} IS NULL", sqlserver_include=("claimed_at",)),
            # Pending rows by age, for the monitor: a type's oldest pending job is one seek. `Attempts >= 0` is
            # always true; it is there so that only statements that say it can use this index: a claim, whose
            # order this index does not give, must never pick it (as a planner would on stale statistics).
            # It carries AvailableDate so that "pending now" (available <= now) is read from the index alone, and
            # the id in its key so that the drill-down's oldest first (created, id) is its order where a database
            # without INCLUDE (SQLite) puts AvailableDate in the key.
            IndexDefinition("IX_WorkQueue_PendingAge", "queue", ("type", "created", "id"), ("available",),
                            f"{n['claimed_at']} IS NULL AND {n['attempts']} >= 0",
                            sqlserver_include=("claimed_at", "attempts")),
            # Jobs scheduled for later: the poll counts them per type from a range of this index (the rows available
            # after now), not from every waiting row. It carries its filter's column everywhere.
            IndexDefinition("IX_WorkQueue_Scheduled", "queue", ("available",), ("type", "claimed_at"),
                            f"{n['claimed_at']} IS NULL"),
            # Dequeue across all types in priority order without sorting the queue.
            IndexDefinition("IX_WorkQueue_Dequeue", "queue", ("priority", "available"), (),
                            f"{n['claimed_at']} IS NULL", sqlserver_include=("claimed_at",)),
            # Claims in flight: claimed and timed-out counts, and the release sweep, read only these; on SQL
            # Server also who holds each (the workers screen) without a lookup.
            IndexDefinition("IX_WorkQueue_Claimed", "queue", ("type", "timeout"), ("created",),
                            f"{n['claimed_at']} IS NOT NULL", sqlserver_include=("claimed_at", "claimed_by")),
            # The completion watermark: throughput and latencies read only what finished recently.
            IndexDefinition("IX_WorkCompleted_Completed", "completed", ("c_completed",),
                            ("c_type", "c_created", "c_claimed_at", "c_outcome")),
            # Dead jobs are few; counting them must not scan the history. Their completion time and id in the key:
            # a type's dead jobs, longest dead first (the drill-down, `queuetop jobs --state dead`), are a range of
            # it, each page one seek, where the type alone in the key sorted all of the type's dead jobs for each.
            IndexDefinition("IX_WorkCompleted_Dead", "completed", ("c_type", "c_completed", "c_id"), (),
                            f"{n['c_outcome']} = 'dead'", sqlserver_include=("c_outcome",)),
        ]  # fmt: skip

    def index_columns(self, index: IndexDefinition) -> tuple[list[str], list[str]]:
        """(key columns, included columns) of an index as this database makes it, unquoted: SQL Server's carry
        the filter's columns too (see IndexDefinition); a database without INCLUDE has them all as keys."""
        roles = index.include + (index.sqlserver_include if self.dialect.name == "mssql" else ())
        keys, include = list(index.keys), list(dict.fromkeys(role for role in roles if role not in index.keys))
        if include and not self.dialect.supports_include:
            keys, include = keys + include, []
        columns = self.layout.columns
        return [columns[role] for role in keys], [columns[role] for role in include]

    def index_columns_sql(self, index: IndexDefinition) -> Statement | None:
        """The columns an existing native index has (name, included?), where `init` compares them with its
        definition: SQL Server, whose definitions grew columns (an index is found by name, so an install made
        before keeps the old one); None elsewhere."""
        if self.dialect.name != "mssql":
            return None
        table = self.layout.queue_table if index.table == "queue" else self.layout.completed_table
        return (f"{TAG}SELECT c.name FROM sys.indexes AS i JOIN sys.index_columns AS ic ON ic.object_id = "
                "i.object_id AND ic.index_id = i.index_id JOIN sys.columns AS c ON c.object_id = ic.object_id AND "
                "c.column_id = ic.column_id WHERE i.object_id = OBJECT_ID(?) AND i.name = ?",
                (self.dialect.qualify(self.layout.schema, table), index.name))  # fmt: skip

    def create_index_sql(self, index: IndexDefinition, upgrade: bool = False) -> str:
        """CREATE INDEX of a native index; `upgrade`: SQL Server's DROP_EXISTING form, which remakes an index of
        that name that lacks columns in one statement (the old one serves queries until the new one is built)."""
        d = self.dialect
        keys, include = self.index_columns(index)
        included = f" INCLUDE ({', '.join(map(d.quote, include))})" if include else ""
        filtered = f" WHERE {index.where}" if index.where else ""
        table = self.names()[index.table]
        again = " WITH (DROP_EXISTING = ON)" if upgrade else ""
        return (f"{TAG}CREATE INDEX {d.quote(index.name)} ON {table} ({', '.join(map(d.quote, keys))}){included}"
                f"{filtered}{again}")

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
                  {c_info} nvarchar(max) NULL,
                  {c_created} datetime2(3) NULL,
                  {c_claimed_at} datetime2(3) NULL,
                  {c_completed} datetime2(3) NOT NULL,
                  {c_claimed_by} nvarchar(128) NULL,
                  {c_attempts} int NULL,
                  {c_outcome} varchar(16) NOT NULL,
                  CONSTRAINT [PK_WorkCompleted] PRIMARY KEY CLUSTERED ({c_id}))""")),
        ]  # fmt: skip
        objects += self._added_columns()
        queue = self.dialect.qualify(layout.schema, layout.queue_table)
        # A large enqueue or release must never escalate to a table lock: READPAST cannot skip one, so every
        # claimer would wait on it and fail with 1222. Row locks only, on the table queuetop made.
        objects.append(SchemaObject(
            "setting", f"{layout.queue_table} LOCK_ESCALATION = DISABLE",
            "SELECT 1 FROM sys.tables WHERE object_id = OBJECT_ID(?) AND lock_escalation_desc = 'DISABLE'", (queue,),
            self.sql("ALTER TABLE {queue} SET (LOCK_ESCALATION = DISABLE)")))
        tables = {"queue": layout.queue_table, "completed": layout.completed_table}
        for index in self.index_definitions():
            objects.append(SchemaObject("index", index.name, *index_id(tables[index.table], index.name),
                                        self.create_index_sql(index)))
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
                  {c_info} text NULL,
                  {c_created} timestamp(3) NULL,
                  {c_claimed_at} timestamp(3) NULL,
                  {c_completed} timestamp(3) NOT NULL,
                  {c_claimed_by} varchar(128) NULL,
                  {c_attempts} integer NULL,
                  {c_outcome} varchar(16) NOT NULL)""")),
        ]  # fmt: skip
        objects += self._added_columns()
        for index in self.index_definitions():
            objects.append(SchemaObject("index", index.name, *qualified(index.name), self.create_index_sql(index)))
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
                  {c_info} TEXT NULL,
                  {c_created} TEXT NULL,
                  {c_claimed_at} TEXT NULL,
                  {c_completed} TEXT NOT NULL,
                  {c_claimed_by} TEXT NULL,
                  {c_attempts} INTEGER NULL,
                  {c_outcome} TEXT NOT NULL)""")),
        ]  # fmt: skip
        objects += self._added_columns()
        for index in self.index_definitions():
            objects.append(SchemaObject("index", index.name, *exists("index", index.name),
                                        self.create_index_sql(index)))
        return objects

    def _added_columns(self) -> list[SchemaObject]:
        layout, d, objects = self.layout, self.dialect, []
        for table_role, role, sql_types in ADDED_COLUMNS:
            table = layout.queue_table if table_role == "queue" else layout.completed_table
            assert table is not None
            column, qualified = layout.columns[role], d.qualify(layout.schema, table)
            if d.name == "mssql":
                exists: tuple[str, tuple[Any, ...]] = ("SELECT 1 WHERE COL_LENGTH(?, ?) IS NOT NULL",
                                                       (qualified, column))
            elif d.name == "postgresql":
                exists = ("SELECT 1 FROM information_schema.columns WHERE table_schema = ? AND table_name = ? AND "
                          "column_name = ?", (d.schema_for(layout.schema) or "public", table, column))  # fmt: skip
            else:
                exists = ("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", (table, column))
            add = "ADD COLUMN" if d.name != "mssql" else "ADD"
            alter = f"{TAG}ALTER TABLE {qualified} {add} {d.quote(column)} {sql_types[d.name]} NULL"
            objects.append(SchemaObject("column", f"{table}.{column}", *exists, alter))
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
