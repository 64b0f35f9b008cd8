"""The actions: enqueue as the seed's insert does, release by compare-and-set, dead retry/delete, make available,
and a demo's tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from queuetop.layouts.sql.base import TAG, Bind, Statement, StatementsBase


class ActSQL(StatementsBase):
    """The statements of the actions a layout declares."""

    def count_state(self, state_name: str, job_type: str | None = None,
                    settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """How many rows are in a state (of one job type)."""
        state = self.layout.states[state_name]

        def build(binds: list) -> str:
            return f"SELECT COUNT(*) FROM {self.table(state.table)}{self._hint()} {self._where(state, job_type, binds)}"

        sql, params = self._bound(f"count:{state_name}:{job_type is not None}", build, settings)
        return sql, (*params, *self._type_param(state, job_type))

    def ids_in_state(self, state_name: str, job_type: str | None, limit: int,
                     settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """(id, token or NULL) of up to `limit` rows in a state: the rows an action then changes one by one, each by
        compare-and-set (so the read takes the counts' hint: it never waits on a worker's locks)."""
        state = self.layout.states[state_name]
        prefix = "c_" if state.table == "completed" else ""

        def build(binds: list) -> str:
            token = self.col("token") if not prefix and self.layout.has("token") else "NULL"
            return self.dialect.first_rows_sql(
                f"SELECT {self.col(prefix + 'id')}, {token} FROM {self.table(state.table)}{self._hint()} WHERE "
                f"{self.condition(state.condition, binds)}{self._type_filter(state, job_type)} "
                f"ORDER BY {self.col(prefix + 'id')}")

        sql, params = self._bound(f"ids:{state_name}:{job_type is not None}", build, settings)
        return sql, self.dialect.first_rows_params((*params, *self._type_param(state, job_type)), limit)

    def clear_claim(self, state_name: str, settings: dict[str, Any] | None, job_id: Any, token: Any) -> Statement:
        """Clear one row's claim (the token, or what `[claim] clear` names), only while it still holds `token` and
        is still in the state: a job claimed again meanwhile (a new token) is never stolen. Where a failure is
        retried (`[claim] failure = "retry"`), only while it has attempts left: the others are buried as dead by
        the caller (`Statements.move_finished`)."""
        state, claim = self.layout.states[state_name], self.layout.claim
        cleared = claim.clear if claim is not None and claim.clear else ("token",)
        sets = ", ".join(f"{self.col(role)} = NULL" for role in cleared)
        retried = claim is not None and claim.failure == "retry"

        def build(binds: list) -> str:
            head = (f"UPDATE {self.table('queue')} SET {sets} WHERE {self.col('id')} = "
                    f"{self.dialect.param(self.layout.type_of('id'))} AND {self.col('token')} = "
                    f"{self.dialect.param(self.layout.type_of('token'))} AND ")
            binds.append(lambda s: s["__id"])
            binds.append(lambda s: s["__token"])
            where = head + self.condition(state.condition, binds)
            if retried:
                binds.append(lambda s: int(s["max_attempts"]))
                where += f" AND {self.col('attempts')} < {self.dialect.param('int')}"
            return where

        return self._bound(f"clear:{state_name}", build, {**(settings or {}), "__id": job_id, "__token": token})

    def _id_list(self, prefix: str, count: int) -> str:
        placeholder = self.dialect.param(self.layout.type_of(prefix + "id"))
        return f"{self.col(prefix + 'id')} IN ({', '.join([placeholder] * count)})"

    def requeue(self, state_name: str, ids: Sequence[Any], settings: dict[str, Any] | None = None,
                roles: Sequence[str] | None = None) -> tuple[Statement, Statement]:  # fmt: skip
        """(insert back into the queue, delete from the completed table) for the given ids still in the state:
        run in one transaction, and only kept when both touched the same number of rows. `roles`: the columns
        copied back (default: every role both tables have)."""
        state = self.layout.states[state_name]
        if roles is None:
            roles = [role.removeprefix("c_") for role in self.layout.columns if role.startswith("c_")
                     and role.removeprefix("c_") in self.layout.columns]  # fmt: skip

        def build_insert(binds: list) -> str:
            where = self.condition(state.condition, binds)
            return (f"INSERT INTO {self.table('queue')} ({', '.join(self.col(r) for r in roles)}) "
                    f"SELECT {', '.join(self.col('c_' + r) for r in roles)} FROM {self.table('completed')} "
                    f"WHERE {self._id_list('c_', len(ids))} AND {where}")

        def build_delete(binds: list) -> str:
            where = self.condition(state.condition, binds)
            return f"DELETE FROM {self.table('completed')} WHERE {self._id_list('c_', len(ids))} AND {where}"

        id_values = tuple(self.dialect.encode_value(self.layout.type_of("c_id"), i) for i in ids)
        key = f"{state_name}:{len(ids)}:{','.join(roles)}"
        insert_sql, insert_params = self._bound(f"requeue_insert:{key}", build_insert, settings)
        delete_sql, delete_params = self._bound(f"requeue_delete:{key}", build_delete, settings)
        return (insert_sql, (*id_values, *insert_params)), (delete_sql, (*id_values, *delete_params))

    def retry_dead(self, job_type: str | None, settings: dict[str, Any] | None = None,
                   batch: int | None = None) -> Statement:  # fmt: skip
        """Every dead job (of one type) back to pending, as the layout's dead_retry says; `batch`: at most that
        many rows (see `_change`)."""
        sets = ", ".join(f"{self.col(role)} = {'NULL' if value is None else int(value)}"
                         for role, value in self.layout.dead_retry.items())  # fmt: skip
        return self._change("retry_dead", "dead", job_type, settings, sets, batch)

    def delete_state(self, state_name: str, job_type: str | None, settings: dict[str, Any] | None = None,
                     batch: int | None = None) -> Statement:  # fmt: skip
        """Delete the rows in a state (of one type); `batch`: at most that many (see `_change`)."""
        return self._change(f"delete:{state_name}", state_name, job_type, settings, None, batch)

    def change_job(self, action: str, state_name: str, job_id: Any,
                   settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """One job's action ("retry" a dead job as dead_retry says, "delete" it, "make_available" a scheduled one),
        only while the job is still in the state: the state's condition is the compare-and-set, so a job that moved
        on meanwhile (retried, claimed, deleted) is left alone and the statement changes no row."""
        state = self.layout.states[state_name]
        id_role = ("c_" if state.table == "completed" else "") + "id"
        sets = {"retry": ", ".join(f"{self.col(role)} = {'NULL' if value is None else int(value)}"
                                   for role, value in self.layout.dead_retry.items()),
                "make_available": f"{self.col('available')} = {self.now()}", "delete": None}[action]  # fmt: skip
        verb = f"UPDATE {self.table(state.table)} SET {sets}" if sets else f"DELETE FROM {self.table(state.table)}"

        def build(binds: list) -> str:
            return (f"{verb} WHERE ({self.condition(state.condition, binds)}) AND {self.col(id_role)} = "
                    f"{self.dialect.param(self.layout.type_of(id_role))}")

        sql, params = self._bound(f"change_job:{action}:{state_name}", build, settings)
        return sql, (*params, self.dialect.encode_value(self.layout.type_of(id_role), job_id))

    def _change(self, key: str, state_name: str, job_type: str | None, settings: dict[str, Any] | None,
                sets: str | None, batch: int | None) -> Statement:  # fmt: skip
        """An UPDATE (`sets`) or DELETE of the rows in a state (of one job type). With `batch`, of at most that many
        rows, skipping rows others hold: the caller repeats it, each in a transaction of its own, until fewer come
        back (`act.batches`), so no statement takes more than `batch` row locks — SQL Server escalates past ~5,000
        to a table lock that READPAST cannot skip and every claim waits on. SQL Server's `TOP (?)` with ROWLOCK,
        READPAST, UPDLOCK (as a claim: the rows it reads are the rows it changes); elsewhere the ids of a limited
        pick (PostgreSQL's SKIP LOCKED); a layout without an id for the table: one statement for every row."""
        state = self.layout.states[state_name]
        id_role = ("c_" if state.table == "completed" else "") + "id"
        batch = batch if batch is not None and self.layout.has(id_role) else None
        table, verb = self.table(state.table), "DELETE FROM" if sets is None else "UPDATE"
        change = f" SET {sets}" if sets is not None else ""

        def build(binds: list) -> str:
            where = self._where(state, job_type, binds)
            if batch is None:
                return f"{verb} {table}{change} {where}"
            if self.dialect.name == "mssql":
                verb_top = "DELETE TOP (?) FROM" if sets is None else "UPDATE TOP (?)"
                return f"{verb_top} {table} WITH (ROWLOCK, READPAST, UPDLOCK){change} {where}"
            skip = " FOR UPDATE SKIP LOCKED" if self.dialect.name == "postgresql" else ""
            return (f"{verb} {table}{change} WHERE {self.col(id_role)} IN (SELECT {self.col(id_role)} FROM {table} "
                    f"{where} LIMIT ?{skip})")

        sql, params = self._bound(f"{key}:{job_type is not None}:{batch is not None}", build, settings)
        params = (*params, *self._type_param(state, job_type))
        if batch is None:
            return sql, params
        return sql, (batch, *params) if self.dialect.name == "mssql" else (*params, batch)

    def insert(self, fields: Sequence[str], delayed: bool) -> str:
        """INSERT of one job: the given roles as typed parameters (the available time, when `delayed`, as the
        database's clock plus a parameter), the layout's constants, and its id returned."""
        def build(binds: list) -> str:
            layout = self.layout
            columns, values = [], []
            for role in fields:
                columns.append(self.col(role))
                if role == "available" and delayed:
                    values.append(self.dialect.shifted_now_sql(layout.clock))
                else:
                    values.append(self.dialect.param(layout.type_of(role)))
            for role, value in layout.enqueue_constants.items():
                columns.append(self.col(role))
                values.append(self.dialect.bit_literal(value) if layout.type_of(role) == "bit" else str(int(value)))
            sql = self.dialect.insert_returning_sql(self.table("queue"), columns, values, self.col("id"))
            before, _ = self.dialect.returning(self.col("id"))
            return self.through_table(sql, before.removeprefix(" OUTPUT "), ["id"]) if before else sql

        return self._render(f"insert:{','.join(fields)}:{delayed}", build)[0]

    def enqueue_call(self, fields: Sequence[str], delayed: bool) -> str:
        """One job added by the library's own function (`[enqueue] function`): each given enqueue field a typed
        parameter of the argument it names (the available time, when `delayed`, the database's clock plus a
        parameter), in named notation so the others keep the library's defaults; the new job's id read out of the
        row it returns."""
        call = self.layout.enqueue_call
        assert call is not None

        def value(name: str) -> str:
            if name.startswith("constant:"):
                return "CAST(? AS text)"
            return self.dialect.shifted_now_sql(self.layout.clock) if name == "available" and delayed else \
                f"CAST(? AS {call.args[name][1]})"

        # A library's functions may name its tables unqualified (procrastinate's do): called with the layout's
        # schema as the search path for this one statement, as the library's own connection has it; its
        # parameter is the last (`ShapeQueue`).
        path = " FROM (SELECT set_config('search_path', ?, true)) AS qt_path" if self.layout.schema else ""

        def build(binds: list) -> str:
            function = self.dialect.qualify(self.layout.schema, call.function)
            if call.row is not None:  # one row of the composite type: each attribute a parameter or NULL
                values = [value(name) if name is not None else "NULL" for name in call.row_values(fields)]
                row = self.dialect.qualify(self.layout.schema, call.row)
                return f"SELECT unnest({function}(ARRAY[ROW({', '.join(values)})::{row}])){path}"
            named = [f"{self.dialect.quote(call.args[name][0])} => {value(name)}" for name in fields]
            return f"SELECT ({function}({', '.join(named)})).{self.dialect.quote(call.returns)}{path}"

        return self._render(f"enqueue_call:{','.join(fields)}:{delayed}", build)[0]

    def make_available(self, job_type: str | None, settings: dict[str, Any] | None = None,
                       batch: int | None = None) -> Statement:  # fmt: skip
        """Scheduled jobs (of one type) available now: their available time set to the database's now, only where
        a row is still scheduled when the statement runs (a job claimed meanwhile is left alone); `batch`: at most
        that many rows (see `_change`)."""
        return self._change("make_available", "scheduled", job_type, settings, f"{self.col('available')} = "
                                                                                 f"{self.now()}", batch)

    # -- a shape's tables, for `queuetop demo --layout` ----------------------------------------------------
    def create_tables(self) -> list[str]:
        """DDL for an empty copy of this shape, made from its typed roles: the identity (or a GUID with its
        default) as the primary key, times of arrival defaulting to the layout's clock, attempts and flags to 0,
        the rest nullable; the pending view where the layout has one. A demo's tables, not the seed's own DDL:
        no index beyond the key (the seeds' monitor cost is the subject of bench/shape_poll_cost.py)."""
        layout, statements = self.layout, []
        if layout.schema and self.dialect.schema_for(layout.schema) and self.dialect.name == "postgresql":
            statements.append(f"CREATE SCHEMA IF NOT EXISTS {self.dialect.quote(layout.schema)}")
        for which, prefix in (("queue", ""), ("completed", "c_")):
            if which == "completed" and not layout.completed_table:
                continue
            columns, named = [], set()
            for role in (r for r in layout.columns if r.startswith("c_") == bool(prefix)):
                if layout.columns[role] not in named:  # two roles may share a column (job_queue's Available_Date)
                    named.add(layout.columns[role])
                    columns.append(self._column_ddl(role, role.removeprefix(prefix), key=which == "queue"))
            statements.append(f"CREATE TABLE {self.table(which)} ({', '.join(columns)})")
        pending = layout.states.get("pending")
        if layout.pending_view and pending is not None:
            binds: list[Bind] = []
            where = self.condition(pending.condition, binds)
            if not binds:  # a view cannot take parameters
                view = self.dialect.qualify(layout.schema, layout.pending_view)
                statements.append(f"CREATE VIEW {view} AS SELECT * FROM {self.table('queue')} WHERE {where}")
        return [TAG + sql for sql in statements]

    def _column_ddl(self, role: str, kind: str, key: bool) -> str:
        """One column of a demo table: `kind` is the role without its c_ prefix."""
        sql_type = self.layout.type_of(role) or ("bigint" if kind == "id" else "text")
        name, db_type, dialect = self.col(role), self.dialect.sql_type(sql_type), self.dialect.name
        if kind == "id" and sql_type != "guid":
            if not key:
                return f"{name} {db_type} NOT NULL"
            if dialect == "sqlite":
                return f"{name} INTEGER PRIMARY KEY AUTOINCREMENT"
            if dialect == "postgresql":
                return f"{name} {db_type} GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
            return f"{name} {db_type} IDENTITY(1, 1) NOT NULL PRIMARY KEY"
        if kind == "id":
            newid = {"sqlite": f"({SQLITE_NEWID})", "postgresql": "gen_random_uuid()"}.get(dialect, "NEWID()")
            return f"{name} {db_type} NOT NULL DEFAULT {newid}" + (" PRIMARY KEY" if key else "")
        if kind in ("created", "available") or (kind == "claimed_at" and role.startswith("c_")):
            now = self.now() if dialect != "sqlite" else f"({self.now()})"
            return f"{name} {db_type} NOT NULL DEFAULT {now}"
        if kind in ("attempts",) or sql_type == "bit":
            return f"{name} {db_type} NOT NULL DEFAULT {self.dialect.bit_literal(0) if sql_type == 'bit' else 0}"
        if kind == "priority":
            return f"{name} {db_type} NOT NULL DEFAULT 128"
        return f"{name} {db_type}" + (" NOT NULL" if kind == "type" else " NULL")


# newid() on SQLite: a version-4 GUID as upper-case canonical text, as SQL Server shows one.
SQLITE_NEWID = ("hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' "
                "|| substr('89AB', 1 + (random() & 3), 1) || substr(hex(randomblob(2)), 2) || '-' "
                "|| hex(randomblob(6))")  # fmt: skip

