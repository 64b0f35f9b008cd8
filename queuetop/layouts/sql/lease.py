"""A leased queue's worker side, as a layout declares it (`[claim] forms = ["batch"]`, `failure = "retry"`,
`[complete] move = true`: the native schema's): claims of a batch, a completion that moves the row to the
completed table with its outcome, a retry after a delay, dead at the attempt limit, a give-back, a release.

Every change to a claimed row is a compare-and-set on its claim token: a worker whose claim timed out and was
released, or claimed again by someone else, changes nothing (and is told so by a count of 0). Times are the
database's clock of the layout's kind, in the statement; rows others hold are skipped, never waited on
(READPAST / SKIP LOCKED; SQLite's BEGIN IMMEDIATE takes the one write lock first). Each statement is one round
trip; where a move takes two (SQLite has no DELETE inside an INSERT), the caller runs them in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from queuetop.layouts.sql.base import Statement
from queuetop.layouts.sql.claim import ClaimSQL
from queuetop.layouts.sql.counts import _first_term

MAX_CLAIM_ARMS = 100  # job types SQLite reads as separate index ranges (it caps compound selects at 500 terms)
NEWEST_FOR_TYPES = 10_000  # rows read to name the job types an unknown --type could have meant
LOCKED_PICK = " WITH (ROWLOCK, READPAST, UPDLOCK)"  # T-SQL: skip rows others hold, lock what is read


@dataclass(frozen=True)
class _Rows:
    """The rows a move takes: `where(binds, fixed_now)` renders its condition; `hint` is its T-SQL table hint;
    `fixed_now` says "now" is the `__now` parameter (SQLite's two statements of one move must agree)."""

    where: Callable[[list, bool], str]
    hint: str
    fixed_now: bool = False
    top: bool = False  # T-SQL: the pick is `TOP (?)` rows (`__batch`), the first `?` of the statement


class LeaseSQL(ClaimSQL):
    """Batch claims, moves with an outcome, retries, give-backs and releases of a leased queue."""

    # What a batch claim returns beyond CLAIM_COLUMNS (NULL where the layout has no such role): a worker's job.
    BATCH_DETAIL = ("info", "priority", "created", "timeout")

    # -- taking jobs -------------------------------------------------------------------------------------
    def claim_batch(self, job_types: Sequence[Any], values: dict[str, Any]) -> Statement:
        """Up to `__batch` claimable rows, best first by `[claim] order`, stamped as `[claim] set` says; returns
        CLAIM_COLUMNS and BATCH_DETAIL of each. One type: one seek of the pending index. Several: one seek per
        type (each its first `__batch` rows), the best `__batch` of those taken; an IN list would read the
        dequeue index across every other type's rows first."""
        count = len(job_types)
        shape = "none" if count == 0 else "one" if count == 1 else f"many:{count}"
        values = {**values, "__types": list(job_types)}
        build = {"mssql": self._claim_batch_tsql, "postgresql": self._claim_batch_pg}.get(
            self.dialect.name, self._claim_batch_sqlite)
        return self._claim_statement(f"claim_batch:{shape}", lambda binds: build(binds, count), values)

    def _batch_output(self, prefix: str = "") -> str:
        extra = ", ".join(prefix + self.col(role) if self.layout.has(role) else f"NULL AS qt_{role}"
                          for role in self.BATCH_DETAIL)  # fmt: skip
        return f"{self._claim_output(prefix)}, {extra}"

    def _batch_limit(self, binds: list) -> str:
        binds.append(lambda s: int(s["__batch"]))
        return self.dialect.param("int")

    def _top(self, binds: list) -> str:
        """T-SQL's `TOP (?) ` of `__batch` rows."""
        return f"TOP ({self._batch_limit(binds)}) "

    def _asked_type(self, binds: list, index: int) -> str:
        """The typed `?` of the index-th job type asked for."""
        binds.append(lambda s: self.dialect.encode_value(self.layout.type_of("type"), s["__types"][index]))
        return self.dialect.param(self.layout.type_of("type"))

    def _type_is(self, binds: list, index: int) -> str:
        """`type = ?` for the index-th job type asked for."""
        return f"{self.col('type')} = {self._asked_type(binds, index)}"

    def _pending(self, binds: list) -> str:
        """The rows a claim may take: any of `[claim] states`."""
        names = self._claim_spec().states
        either = " OR ".join(self.condition(self.layout.states[name].condition, binds) for name in names)
        return f"({either})" if len(names) > 1 else either

    def _claim_batch_tsql(self, binds: list, count: int) -> str:
        table, claim = self.table("queue"), self._claim_spec()
        if count <= 1:
            limit = self._batch_limit(binds)
            where = self._pending(binds) + ("".join(f" AND {self._type_is(binds, 0)}" for _ in range(count)))
            output = self._batch_output("inserted.")
            return self.through_table(f"WITH qt_next AS (SELECT TOP ({limit}) * FROM {table}{LOCKED_PICK} WHERE "
                                      f"{where}{self._order()}) UPDATE qt_next SET {self._sets(claim.sets, binds)} "
                                      f"OUTPUT {output}", output, self._claim_roles(self.BATCH_DETAIL))  # fmt: skip
        # seed 004's UPDATE ... FROM ... INNER JOIN form, over one TOP (n) seek per type
        sets = self._sets(claim.sets, binds)
        output = self._batch_output("inserted.")
        limit = self._batch_limit(binds)
        keys = ", ".join(self.col(role) for role in ("id", *claim.order))
        arms = []
        for index in range(count):
            arm_limit = self._batch_limit(binds)
            arms.append(f"SELECT * FROM (SELECT TOP ({arm_limit}) {keys} FROM {table}{LOCKED_PICK} WHERE "
                        f"{self._pending(binds)} AND {self._type_is(binds, index)}{self._order()}) AS qt_arm{index}")
        picked = f"SELECT TOP ({limit}) qt_all.{self.col('id')} FROM ({' UNION ALL '.join(arms)}) AS qt_all"
        return self.through_table(
            f"UPDATE qt_q SET {sets} OUTPUT {output} FROM {table} AS qt_q{LOCKED_PICK} INNER JOIN ({picked}"
            f"{self._order('qt_all.')}) AS qt_picked ON qt_q.{self.col('id')} = qt_picked.{self.col('id')} "
            f"WHERE {self._pending(binds)}", output, self._claim_roles(self.BATCH_DETAIL))  # still claimable

    def _claim_batch_pg(self, binds: list, count: int) -> str:
        table, claim = self.table("queue"), self._claim_spec()
        sets, id_col = self._sets(claim.sets, binds), self.col("id")
        if count <= 1:
            where = self._pending(binds) + ("".join(f" AND {self._type_is(binds, 0)}" for _ in range(count)))
            pick = (f"SELECT {id_col} FROM {table} WHERE {where}{self._order()} LIMIT {self._batch_limit(binds)}"
                    f"{self._skip_locked()}")
        else:  # a LATERAL join: PostgreSQL allows no FOR UPDATE in the arms of a UNION ALL
            rows = ", ".join(f"({self._asked_type(binds, index)})" for index in range(count))
            keys = ", ".join(self.col(role) for role in ("id", *claim.order))
            arm = (f"SELECT {keys} FROM {table} WHERE {self._pending(binds)} AND {self.col('type')} = "
                   f"qt_types.job_type{self._order()} LIMIT {self._batch_limit(binds)}{self._skip_locked()}")
            pick = (f"SELECT qt_picked.{id_col} FROM (VALUES {rows}) AS qt_types (job_type) CROSS JOIN LATERAL "
                    f"({arm}) AS qt_picked{self._order('qt_picked.')} LIMIT {self._batch_limit(binds)}")
        return f"UPDATE {table} SET {sets} WHERE {id_col} IN ({pick}) RETURNING {self._batch_output()}"

    def _claim_batch_sqlite(self, binds: list, count: int) -> str:
        """Read in index order, so the pick stops after `__batch` rows instead of sorting the backlog: untyped,
        the dequeue index (order, then rowid); typed, the pending index, whose keys here are (type, order,
        created, rowid); several types, one range per type, each stopped at `__batch` rows, merged."""
        table, claim, id_col = self.table("queue"), self._claim_spec(), self.col("id")
        sets = self._sets(claim.sets, binds)
        order = [*claim.order, *(["created"] if count and self.layout.has("created") else []), "id"]
        order_by = f" ORDER BY {', '.join(self.col(role) for role in order)}"
        if count == 0:
            pending = self._pending(binds)
            pick = f"SELECT {id_col} FROM {table} WHERE {pending}{order_by} LIMIT {self._batch_limit(binds)}"
        elif count > MAX_CLAIM_ARMS:  # the slow, sorting way
            pending = self._pending(binds)
            in_list = ", ".join(self._asked_type(binds, index) for index in range(count))
            pick = (f"SELECT {id_col} FROM {table} WHERE {pending} AND {self.col('type')} IN ({in_list})"
                    f"{order_by} LIMIT {self._batch_limit(binds)}")
        else:
            keys = ", ".join(self.col(role) for role in dict.fromkeys(order))
            arms = [f"SELECT {keys} FROM {table} WHERE {self._pending(binds)} AND {self._type_is(binds, index)}"
                    f"{order_by} LIMIT {self._batch_limit(binds)}" for index in range(count)]
            if count == 1:
                pick = f"SELECT {id_col} FROM ({arms[0]})"
            else:
                merged = " UNION ALL ".join(f"SELECT * FROM ({arm})" for arm in arms)
                pick = f"SELECT {id_col} FROM ({merged}){order_by} LIMIT {self._batch_limit(binds)}"
        return f"UPDATE {table} SET {sets} WHERE {id_col} IN ({pick}) RETURNING {self._batch_output()}"

    # -- finishing them ----------------------------------------------------------------------------------
    def _held(self, binds: list) -> str:
        """`id = ? AND token = ?`: the row, while it still carries the claim's token."""
        binds.append(lambda s: self.dialect.encode_value(self.layout.type_of("id"), s["__id"]))
        binds.append(lambda s: self.dialect.encode_value(self.layout.type_of("token"), s["__token"]))
        return (f"{self.col('id')} = {self.dialect.param(self.layout.type_of('id'))} AND {self.col('token')} = "
                f"{self.dialect.param(self.layout.type_of('token'))}")

    def _attempts(self, op: str, binds: list) -> str:
        binds.append(lambda s: int(s["max_attempts"]))
        return f"{self.col('attempts')} {op} {self.dialect.param('int')}"

    def _moved_columns(self) -> tuple[list[str], list[str]]:
        """(the queue's roles a move carries, the completed table's columns they and the completion fill)."""
        roles = list(self.moved_roles())
        return roles, [self.col("c_" + role) for role in roles] + [self.col("c_completed"), self.col("c_outcome")]

    def _move(self, key: str, rows: _Rows, outcome: str | None, settings: dict[str, Any]) -> list[Statement]:
        """The `rows`, moved to the completed table at the database's now with their outcome (None: a `?`,
        `__outcome`): one statement, or on SQLite an INSERT and a DELETE for one transaction (the DELETE only when
        the INSERT moved rows)."""
        roles, into = self._moved_columns()
        completed, queue = self.table("completed"), self.table("queue")

        def outcome_sql(binds: list) -> str:
            if outcome is not None:
                return f"'{outcome}'"
            binds.append(lambda s: s["__outcome"])
            return self.dialect.param(self.layout.type_of("c_outcome"))

        def build(binds: list) -> str:
            if self._tsql():
                top = self._top(binds) if rows.top else ""
                pick = f"WITH qt_moved AS (SELECT {top}* FROM {queue}{rows.hint} WHERE {rows.where(binds, False)}) "
                carried = ", ".join(f"deleted.{self.col(role)}" for role in roles)
                return (f"{pick}DELETE FROM qt_moved OUTPUT {carried}, {self.now()}, {outcome_sql(binds)} "
                        f"INTO {completed} ({', '.join(into)})")
            carried = ", ".join(self.col(role) for role in roles)
            if self.dialect.name == "postgresql":
                return (f"WITH qt_moved AS (DELETE FROM {queue} WHERE {rows.where(binds, False)} RETURNING {carried}) "
                        f"INSERT INTO {completed} ({', '.join(into)}) SELECT {carried}, {self.now()}, "
                        f"{outcome_sql(binds)} FROM qt_moved")
            now = "?" if rows.fixed_now else self.now()
            if rows.fixed_now:
                binds.append(lambda s: s["__now"])
            out = outcome_sql(binds)
            return (f"INSERT INTO {completed} ({', '.join(into)}) SELECT {carried}, {now}, {out} FROM {queue} "
                    f"WHERE {rows.where(binds, rows.fixed_now)}")

        statements = [self._bound(f"move:{key}", build, settings)]
        if self.dialect.name == "sqlite":
            statements.append(self._bound(f"move_delete:{key}", lambda binds: f"DELETE FROM {queue} WHERE "
                                          f"{rows.where(binds, rows.fixed_now)}", settings))  # fmt: skip
        return statements

    def move_finished(self, job_id: Any, token: Any, outcome: str, min_attempts: int | None = None) -> list[Statement]:
        """A claimed job moved to the completed table with its outcome, while it still carries `token` (and, for
        a burial, has had at least `min_attempts`): see `_move`. Each statement changes 1 row, or none."""

        def where(binds: list, fixed_now: bool) -> str:
            held = self._held(binds)
            return held + (f" AND {self._attempts('>=', binds)}" if min_attempts is not None else "")

        settings = {"__id": job_id, "__token": token, "__outcome": outcome, "max_attempts": min_attempts}
        return self._move(f"finished:{min_attempts is not None}", _Rows(where, " WITH (ROWLOCK)"), None, settings)

    def bury_in_state(self, job_id: Any, token: Any, state: str, max_attempts: int) -> list[Statement]:
        """A claim out of attempts moved to the completed table as dead, while it still carries `token` and is still
        in `state` (timed out) by the database's clock: one whose lease runs again is left alone (see `_move`)."""

        def where(binds: list, fixed_now: bool) -> str:
            held = self._held(binds)
            condition = self.condition(self.layout.states[state].condition, binds, fixed_now)
            return f"{held} AND {condition} AND {self._attempts('>=', binds)}"

        settings = {"__id": job_id, "__token": token, "max_attempts": max_attempts}
        return self._move(f"dead_in:{state}", _Rows(where, " WITH (ROWLOCK)"), "dead", settings)

    def _clear_sets(self) -> str:
        return ", ".join(f"{self.col(role)} = NULL" for role in self._claim_spec().clear)

    def retry_later(self, job_id: Any, token: Any, delay_s: float, max_attempts: int) -> Statement:
        """A failed attempt given back, available again `delay_s` after the database's now, while the row still
        carries `token` and has attempts left."""

        def build(binds: list) -> str:
            later = self._later(binds, lambda s: float(s["__delay"]))
            return (f"UPDATE {self.table('queue')} SET {self._clear_sets()}, {self.col('available')} = {later} "
                    f"WHERE {self._held(binds)} AND {self._attempts('<', binds)}")

        values = {"__id": job_id, "__token": token, "__delay": delay_s, "max_attempts": max_attempts}
        return self._bound("retry_later", build, values)

    def give_back(self, job_id: Any, token: Any) -> Statement:
        """A job claimed but never started handed back as if never claimed (its attempt not spent), while the row
        still carries `token`."""

        def build(binds: list) -> str:
            spent = "attempts" in self._claim_spec().sets
            attempts = f", {self.col('attempts')} = {self.col('attempts')} - 1" if spent else ""
            return f"UPDATE {self.table('queue')} SET {self._clear_sets()}{attempts} WHERE {self._held(binds)}"

        return self._bound("give_back", build, {"__id": job_id, "__token": token})

    # -- releasing the claims that timed out -------------------------------------------------------------------
    def release_state(self, state: str, job_type: str | None, max_attempts: int, now: Any = None,
                      batch: int | None = None, job_id: Any = None) -> tuple[list[Statement], Statement]:  # fmt: skip
        """(the claims in `state` out of attempts moved to the completed table as dead (`_move`), the others given
        back to pending), of one job type or all. Rows others hold are skipped, and the state is checked again
        under the lock, so a job claimed anew meanwhile is left alone. On SQLite "now" is the `__now` parameter,
        read once inside the write lock by the caller (`now`), so the burial's INSERT and DELETE agree on the rows.
        `batch`: each statement takes at most that many (SQL Server `TOP (?)`, PostgreSQL `LIMIT ?` in its locked
        pick; not SQLite, whose one transaction holds the write lock whatever the count), for a caller that runs
        them again until they come back short (`act.batches`). `job_id`: that one claim only (the job view's
        release), still only while it is in `state`: a job that finished or was claimed again is left alone."""
        spec = self.layout.states[state]
        fixed_now = self.dialect.name == "sqlite"
        batch = None if fixed_now or job_id is not None else batch
        settings: dict[str, Any] = {"max_attempts": max_attempts, "__type": job_type, "__now": now, "__batch": batch,
                                    "__id": job_id}  # fmt: skip

        def typed(binds: list) -> str:
            if job_type is None:
                return ""
            binds.append(lambda s: self.dialect.encode_value(self.layout.type_of("type"), s["__type"]))
            return f" AND {self.col('type')} = {self.dialect.param(self.layout.type_of('type'))}"

        def one(binds: list) -> str:
            if job_id is None:
                return ""
            binds.append(lambda s: self.dialect.encode_value(self.layout.type_of("id"), s["__id"]))
            return f" AND {self.col('id')} = {self.dialect.param(self.layout.type_of('id'))}"

        def rows(op: str) -> _Rows:
            def where(binds: list, now_fixed: bool) -> str:
                condition = (f"{self.condition(spec.condition, binds, now_fixed)} AND {self._attempts(op, binds)}"
                             f"{typed(binds)}{one(binds)}")
                if self.dialect.name != "postgresql":
                    return condition
                limit = f" LIMIT {self._batch_limit(binds)}" if batch is not None else ""
                return (f"{self.col('id')} IN (SELECT {self.col('id')} FROM {self.table('queue')} WHERE {condition}"
                        f"{limit}{self._skip_locked()})")

            return _Rows(where, LOCKED_PICK, fixed_now, top=batch is not None)

        key = f"{state}:{job_type is not None}:{batch is not None}" + (":one" if job_id is not None else "")
        bury = self._move(f"dead:{key}", rows(">="), "dead", settings)
        back = rows("<")

        def build(binds: list) -> str:
            if self._tsql():
                top = self._top(binds) if back.top else ""
                return (f"WITH qt_back AS (SELECT {top}* FROM {self.table('queue')}{LOCKED_PICK} WHERE "
                        f"{back.where(binds, False)}) UPDATE qt_back SET {self._clear_sets()}")
            return f"UPDATE {self.table('queue')} SET {self._clear_sets()} WHERE {back.where(binds, fixed_now)}"

        return bury, self._bound(f"release:{key}", build, settings)

    # -- job types in the queue -----------------------------------------------------------------------------
    def has_type(self, job_type: Any) -> Statement:
        """1 if a job of this type is in the queue table, else 0: one seek per family of the queue's states (each
        the range of a filtered index: `claimed_at IS NULL`, `IS NOT NULL`), never a scan."""
        states = [name for name, state in self.layout.states.items() if state.table == "queue"]

        def build(binds: list) -> str:
            arms = []
            for _, names in self.families(states):
                head = self.condition(_first_term(self.layout.states[names[0]].condition), binds)
                binds.append(lambda s: self.dialect.encode_value(self.layout.type_of("type"), s["__type"]))
                arms.append(f"EXISTS (SELECT 1 FROM {self.table('queue')}{self._hint()} WHERE {head} AND "
                            f"{self.col('type')} = {self.dialect.param(self.layout.type_of('type'))})")
            return f"SELECT CASE WHEN {' OR '.join(arms)} THEN 1 ELSE 0 END"

        return self._bound("has_type", build, {"__type": job_type})

    def queued_types(self, newest: int = NEWEST_FOR_TYPES) -> Statement:
        """The job types of the queue table's newest `newest` rows, sorted: run only to word an error, so it
        reads a bounded range of the id's index, never the whole table (the whole table where a layout has no id).
        """
        if not self.layout.has("id"):
            sql, _ = self._render("queued_types", lambda binds: f"SELECT DISTINCT {self.col('type')} FROM "
                                                                f"{self.table('queue')}{self._hint()} ORDER BY 1")
            return sql, ()
        newest_rows = self.dialect.first_rows_sql(f"SELECT {self.col('type')} AS qt_type FROM {self.table('queue')}"
                                                  f"{self._hint()} ORDER BY {self.col('id')} DESC")
        sql, _ = self._render("queued_types:newest", lambda binds: f"SELECT DISTINCT qt_type FROM ({newest_rows}) "
                                                                   "AS qt_newest ORDER BY 1")
        return sql, self.dialect.first_rows_params((), newest)

    # -- enqueueing in bulk ------------------------------------------------------------------------------------
    def insert_rows(self, fields: Sequence[str], values: Sequence[Any], delay_s: float, count: int) -> Statement:
        """`count` identical jobs in one statement: the given roles from `values`, the available time the
        database's now plus `delay_s`, the layout's stamped roles its now; their ids returned. The rows come from
        a row source of the database's (a series, a recursive CTE, a cross join of a catalog view cut by TOP)."""
        layout = self.layout

        def build(binds: list) -> str:
            count_param = self.dialect.param("int")
            if self.dialect.name != "postgresql":  # the count comes first: TOP (?) / the recursive CTE's bound
                binds.append(lambda s: int(s["__count"]))
            columns = [self.col(role) for role in (*fields, *layout.enqueue_stamped, "available")]
            row = [self.dialect.param(layout.type_of(role)) for role in fields]
            for index, role in enumerate(fields):
                binds.append(lambda s, i=index, r=role: self.dialect.encode_value(layout.type_of(r), s["__values"][i]))
            row += [self.now()] * len(layout.enqueue_stamped)
            row.append(self._later(binds, lambda s: float(s["__delay"])))
            into = f"INSERT INTO {self.table('queue')} ({', '.join(columns)})"
            before, after = self.dialect.returning(self.col("id"))
            if self._tsql():
                return self.through_table(f"{into}{before} SELECT TOP ({count_param}) {', '.join(row)} FROM "
                                          "sys.all_columns AS a CROSS JOIN sys.all_columns AS b",
                                          before.removeprefix(" OUTPUT "), ["id"])  # fmt: skip
            if self.dialect.name == "postgresql":
                binds.append(lambda s: int(s["__count"]))
                return f"{into} SELECT {', '.join(row)} FROM generate_series(1, {count_param}){after}"
            return (f"WITH RECURSIVE qt_n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM qt_n WHERE i < ?) {into} "
                    f"SELECT {', '.join(row)} FROM qt_n WHERE true{after}")  # WHERE: SQLite's upsert ambiguity

        values_of = {"__count": count, "__values": list(values), "__delay": delay_s}
        return self._bound(f"insert_rows:{','.join(fields)}", build, values_of)
