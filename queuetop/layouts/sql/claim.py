"""A worker's side: the seed's own dequeue in each of its forms, and its completion."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from queuetop.layouts.sql.base import Statement, StatementsBase


class ClaimSQL(StatementsBase):
    """Claims and completions, as `queuetop load` drives them."""

    # -- the seed's own dequeue, as `queuetop load` drives it ------------------------------------------------
    # SQL Server gets the seed's statement as its author wrote it (its hints, TOP, OUTPUT; the layout's order
    # where the seed's statement has room for one: seed 004's ORDER BY, seed 003's CTE, whose clustered index
    # gives that order anyway; elsewhere TOP follows the clustered key, as the seeds' own do); PostgreSQL the same
    # claim with FOR UPDATE SKIP LOCKED in place of READPAST/UPDLOCK/XLOCK; SQLite runs it under BEGIN IMMEDIATE
    # (its one writer at a time is the lock). Run-time values (worker, token, lease, job type, batch, id) travel
    # as `__name` settings.
    CLAIM_COLUMNS = ("id", "type", "token", "attempts")  # what every claim returns, NULL where the shape has none

    def _tsql(self) -> bool:
        return self.dialect.name == "mssql"

    def _skip_locked(self, locked: bool = True) -> str:
        return " FOR UPDATE SKIP LOCKED" if locked and self.dialect.name == "postgresql" else ""

    @property
    def claim_in_transaction(self) -> bool:
        """Whether even a one-statement claim runs in a transaction: on SQLite, whose BEGIN IMMEDIATE takes the
        write lock before the statement reads (else two claimers may read the same row and one fails late)."""
        return self.dialect.name == "sqlite"

    def _claim_spec(self) -> Any:
        claim = self.layout.claim
        assert claim is not None, f"layout {self.layout.name} describes no claim"
        return claim

    def _value(self, role: str, value: str | int, binds: list) -> str:
        """SQL for one value a claim or a completion writes (see layouts.CLAIM_VALUES)."""
        layout = self.layout
        if isinstance(value, int):
            return self.dialect.bit_literal(value) if layout.type_of(role) == "bit" else str(int(value))
        if value == "now":
            return self.now()
        if value == "now + $lease":
            return self._later(binds, lambda s: float(s["__lease"]))
        if value == "attempts + 1":
            return f"{self.col('attempts')} + 1"
        key = {"$worker": "__worker", "$token": "__token"}[value]
        binds.append(lambda s: self.dialect.encode_value(layout.type_of(role), s[key]))
        return self.dialect.param(layout.type_of(role))

    def _sets(self, values: Any, binds: list) -> str:
        return ", ".join(f"{self.col(role)} = {self._value(role, value, binds)}" for role, value in values.items())

    def _claimable(self, binds: list, typed: bool) -> str:
        """The rows a claim may take: any of its states (of the job type, when it claims one type at a time)."""
        claim = self._claim_spec()
        where = " OR ".join(f"({self.condition(self.layout.states[name].condition, binds)})" for name in claim.states)
        where = f"({where})" if len(claim.states) > 1 else where
        if typed:
            binds.append(lambda s: self.dialect.encode_value(self.layout.type_of("type"), s["__type"]))
            where += f" AND {self.col('type')} = {self.dialect.param(self.layout.type_of('type'))}"
        return where

    def _order(self, alias: str = "") -> str:
        roles = self._claim_spec().order
        return f" ORDER BY {', '.join(alias + self.col(role) for role in roles)}" if roles else ""

    def _claim_output(self, prefix: str = "") -> str:
        # NULLs named, so every column of a claim's result has a name (pgbench's \gset needs one)
        return ", ".join(prefix + self.col(role) if self.layout.has(role) else f"NULL AS qt_{role}"
                         for role in self.CLAIM_COLUMNS)  # fmt: skip

    def _claim_roles(self, roles: Sequence[str] = ()) -> list[str | None]:
        """The role of each column `_claim_output` (and then `roles`) returns, None for a NULL (`through_table`)."""
        return [role if self.layout.has(role) else None for role in (*self.CLAIM_COLUMNS, *roles)]

    def _claim_statement(self, key: str, build: Callable[[list], str], values: dict[str, Any]) -> Statement:
        return self._bound(key, build, {**values, "__lease": values.get("__lease", 0)})

    def claim_one(self, form: str, values: dict[str, Any]) -> Statement:
        """`update_top` / `cte`: one statement that takes one row and returns CLAIM_COLUMNS."""
        claim, typed = self._claim_spec(), "__type" in values
        table = self.table("queue")

        def build(binds: list) -> str:
            if self._tsql():
                output = self._claim_output("inserted.")
                if form == "update_top":
                    target = self.dialect.qualify(self.layout.schema, self.layout.pending_view) \
                        if claim.through_view and self.layout.pending_view else table
                    sets = self._sets(claim.sets, binds)
                    return self.through_table(f"UPDATE TOP (1) {target} WITH (READPAST) SET {sets} OUTPUT {output} "
                                              f"WHERE {self._claimable(binds, typed)}", output, self._claim_roles())
                pick = f"SELECT TOP (1) * FROM {table} WITH (READPAST) WHERE {self._claimable(binds, typed)}"
                return self.through_table(f"WITH qt_next AS ({pick}{self._order()}) UPDATE qt_next SET "
                                          f"{self._sets(claim.sets, binds)} OUTPUT {output}", output,
                                          self._claim_roles())  # fmt: skip
            sets = self._sets(claim.sets, binds)
            pick = (f"SELECT {self.col('id')} FROM {table} WHERE {self._claimable(binds, typed)}{self._order()} "
                    f"LIMIT 1{self._skip_locked()}")
            return (f"UPDATE {table} SET {sets} WHERE {self.col('id')} = ({pick}) "
                    f"AND {self._claimable(binds, typed)} RETURNING {self._claim_output()}")

        return self._claim_statement(f"claim_one:{form}:{typed}", build, values)

    def claim_pick(self, form: str, values: dict[str, Any]) -> Statement:
        """`select_update` / `unlocked` / `move`: the transaction's first statement, reading the one row it takes
        (CLAIM_COLUMNS; for `move` then the roles it carries into the completed table, see `moved_roles`)."""
        typed = "__type" in values
        locked = form != "unlocked"
        hint = {"select_update": " WITH (UPDLOCK, READPAST)", "move": " WITH (ROWLOCK, XLOCK)"}.get(form, "")
        carried = "".join(f", {self.col(role)}" for role in self.moved_roles()) if form == "move" else ""

        def build(binds: list) -> str:
            columns = f"{self._claim_output()}{carried}"
            if self._tsql():  # the seeds' selects have no ORDER BY: TOP (1) takes the clustered key's first
                return (f"SELECT TOP (1) {columns} FROM {self.table('queue')}{hint} "
                        f"WHERE {self._claimable(binds, typed)}")
            return (f"SELECT {columns} FROM {self.table('queue')} WHERE {self._claimable(binds, typed)}"
                    f"{self._order()} LIMIT 1{self._skip_locked(locked)}")

        return self._claim_statement(f"claim_pick:{form}:{typed}", build, values)

    def claim_mark(self, values: dict[str, Any]) -> Statement:
        """`batch_mark`: stamp up to `__batch` claimable rows with the claim's fresh token (seed 004's UPDATE ...
        FROM ... INNER JOIN (SELECT TOP (@nWorkCount) ...)); `claimed_by_token` then reads them back."""
        claim, typed = self._claim_spec(), "__type" in values
        table = self.table("queue")
        limit = self.dialect.param("int")

        def build(binds: list) -> str:
            sets = self._sets(claim.sets, binds)
            if self._tsql():
                binds.append(lambda s: int(s["__batch"]))
                return (f"UPDATE jq SET {sets} FROM {table} AS jq WITH (UPDLOCK) INNER JOIN (SELECT TOP ({limit}) "
                        f"{self.col('id')} FROM {table} WITH (READPAST) WHERE {self._claimable(binds, typed)}"
                        f"{self._order()}) AS jqs ON jq.{self.col('id')} = jqs.{self.col('id')} "
                        f"WHERE {self._claimable(binds, typed)}")
            inner = f"SELECT {self.col('id')} FROM {table} WHERE {self._claimable(binds, typed)}{self._order()}"
            binds.append(lambda s: int(s["__batch"]))
            inner += f" LIMIT {limit}{self._skip_locked()}"
            if self.dialect.name == "postgresql":
                return (f"UPDATE {table} AS jq SET {sets} FROM ({inner}) AS jqs "
                        f"WHERE jq.{self.col('id')} = jqs.{self.col('id')} AND {self._claimable(binds, typed)}")
            return f"UPDATE {table} SET {sets} WHERE {self.col('id')} IN ({inner}) AND {self._claimable(binds, typed)}"

        return self._claim_statement(f"claim_mark:{typed}", build, values)

    def claimed_by_token(self, token: Any) -> Statement:
        """CLAIM_COLUMNS of the rows a `batch_mark` claim stamped (seed 004: SELECT ... WHERE Processing_Mark =
        @xGUID)."""
        def build(binds: list) -> str:
            return (f"SELECT {self._claim_output()} FROM {self.table('queue')} WHERE {self.col('token')} = "
                    f"{self.dialect.param(self.layout.type_of('token'))}")

        sql, _ = self._render("claimed_by_token", build)
        return sql, (self.dialect.encode_value(self.layout.type_of("token"), token),)

    def claim_set(self, values: dict[str, Any]) -> Statement:
        """`select_update` / `unlocked`: the transaction's second statement, by the id the first one read (seed
        002: UPDATE work_queue SET processed_flag = 1 WHERE work_queue_id = @work_queue_id)."""
        claim = self._claim_spec()

        def build(binds: list) -> str:
            sets = self._sets(claim.sets, binds)
            binds.append(lambda s: s["__id"])
            return (f"UPDATE {self.table('queue')} SET {sets} WHERE {self.col('id')} = "
                    f"{self.dialect.param(self.layout.type_of('id'))}")

        return self._claim_statement("claim_set", build, values)

    def moved_roles(self) -> tuple[str, ...]:
        """`move`: the roles the queue row carries into the completed table (what both tables have)."""
        return tuple(role for role in self.layout.columns if not role.startswith("c_")
                     and "c_" + role in self.layout.columns)  # fmt: skip

    def move_delete(self, job_id: Any) -> Statement:
        """`move`: delete the row the pick read (seed 001: delete RequestsQueue where current of Stack_Cursor)."""
        def build(binds: list) -> str:
            return (f"DELETE FROM {self.table('queue')} WHERE {self.col('id')} = "
                    f"{self.dialect.param(self.layout.type_of('id'))}")

        sql, _ = self._render("move_delete", build)
        return sql, (self.dialect.encode_value(self.layout.type_of("id"), job_id),)

    def move_insert(self, carried: Sequence[Any]) -> Statement:
        """`move`: the row into the completed table, with what the claim stamps there (RemovedDate = now; the
        seed leaves that to the column's default, which is the same clock)."""
        claim, roles = self._claim_spec(), self.moved_roles()

        def build(binds: list) -> str:
            columns = [self.col("c_" + role) for role in roles] + [self.col(role) for role in claim.sets]
            values = [self.dialect.param(self.layout.type_of("c_" + role)) for role in roles]
            values += [self._value(role, value, binds) for role, value in claim.sets.items()]
            return f"INSERT INTO {self.table('completed')} ({', '.join(columns)}) VALUES ({', '.join(values)})"

        sql, binds = self._render("move_insert", build)
        encoded = tuple(self._carry(self.layout.type_of("c_" + role), value) for role, value in zip(roles, carried,
                                                                                                   strict=True))
        return sql, (*encoded, *(bind({}) for bind in binds))

    def _carry(self, sql_type: str | None, value: Any) -> Any:
        """A value read from one table, as a parameter for another (a time comes back as text on SQLite)."""
        if sql_type in ("datetime", "datetime2"):
            value = self.dialect.decode_time(value)
        return self.dialect.encode_value(sql_type, value)

    def finish(self, job_id: Any, token: Any) -> Statement:
        """The seed's completion of one job: its `[complete]` roles set to now, by id (and, where the seed
        guards it, only while the row still carries the claim's token)."""
        claim = self._claim_spec()
        table = claim.finish_table
        id_role = "c_id" if table == "completed" else "id"

        def build(binds: list) -> str:
            sets = self._sets(claim.finish, binds)
            where = f"{self.col(id_role)} = {self.dialect.param(self.layout.type_of(id_role))}"
            if claim.finish_guard:
                where += f" AND {self.col('token')} = {self.dialect.param(self.layout.type_of('token'))}"
            return f"UPDATE {self.table(table)} SET {sets} WHERE {where}"

        sql, _ = self._render("finish", build)
        params = (self.dialect.encode_value(self.layout.type_of(id_role), job_id),)
        if claim.finish_guard:
            params += (self.dialect.encode_value(self.layout.type_of("token"), token),)
        return sql, params

