"""Rows, not counts: the drill-down's lists, the load report's row states, the workers screen's claims."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from queuetop.layouts.sql.base import NO_COUNT, Statement, StatementsBase


class RowSQL(StatementsBase):
    """Reads of single rows and of claimers, each bounded by a limit or a range."""

    def rows_in_states(self, state_names: Sequence[str], job_type: str | None, roles: Sequence[str | None],
                       order: Sequence[str], limit: int, settings: dict[str, Any] | None = None,
                       descending: bool = False, after: Sequence[Any] | None = None) -> Statement:  # fmt: skip
        """The given roles (None: NULL) of up to `limit` rows in any of the states (all on one table), ordered.
        The pending rows alone are read as the monitor reads them (`_pending_where`: with the layout's guard, a
        seek of the index filtered on it, not a scan of the backlog). `after`: the order values of the row before
        the first (`queuetop jobs`' pages, `order` ascending and ending with the id): keyset paging, a range of the
        order's index, never OFFSET — a deep page costs what the first does. Written `k >= ? AND (k > ? OR id > ?)`
        (nested for a longer order), as every database takes it (SQL Server has no row-value comparison): the
        leading `k >= ?` is where the index seek starts. The flat `k > ? OR (k = ? AND id > ?)` is the same set, but
        no database seeks on an OR: PostgreSQL read a page 50,000 jobs deep in 28 ms, walking the type's index
        from its start, where it reads the first page in 1.5 ms (bench/jobs_paging.py, 10^7 rows)."""
        states = [self.layout.states[name] for name in state_names]
        # a role read from another table (procrastinate's creation time) orders nothing: sorting by it would read it
        # for every row of the state; the id that follows keeps the order where ids grow with time
        order = [role for role in order if role in self.layout.columns]
        assert after is None or (not descending and len(after) == len(order)), "a keyset follows the whole order"

        def build(binds: list) -> str:
            columns = ", ".join(self.col(role) if role and self.layout.has(role) else "NULL" for role in roles)
            if list(state_names) == ["pending"]:
                where = self._pending_where(binds)
            else:
                where = " OR ".join(f"({self.condition(state.condition, binds)})" for state in states)
            direction = " DESC" if descending else ""
            ordering = ", ".join(self.col(role) + direction for role in order)
            keyset = ""
            if after is not None:
                keyset = ""
                for role in reversed(order):  # from the id outwards: k >= ? AND (k > ? OR <the rest>)
                    col, param = self.col(role), self.dialect.param(self.layout.type_of(role))
                    keyset = f"{col} >= {param} AND ({col} > {param} OR {keyset})" if keyset else f"{col} > {param}"
                keyset = f" AND ({keyset})"
            return self.dialect.first_rows_sql(
                f"SELECT {columns} FROM {self.table(states[0].table)}{self._row_hint()} WHERE ({where})"
                f"{self._type_filter(states[0], job_type)}{keyset} ORDER BY {ordering}")

        key = f"rows:{','.join(state_names)}:{job_type is not None}:{roles}:{order}:{descending}:{after is not None}"
        sql, params = self._bound(key, build, settings)
        values = [self.dialect.encode_value(self.layout.type_of(role), value)
                  for role, value in zip(order, after or (), strict=False)]  # fmt: skip
        # the keyset's `?`s: k1 >= ?, k1 > ?, k2 >= ?, k2 > ?, ..., id > ?: each value twice but the last
        keyset = [value for value in values[:-1] for _ in range(2)] + values[-1:]
        return sql, self.dialect.first_rows_params((*params, *self._type_param(states[0], job_type), *keyset), limit)

    def recent_completions(self, job_type: str | None, since: Any, limit: int,
                           settings: dict[str, Any] | None = None, low_id: int | None = None) -> Statement:  # fmt: skip
        """(id, completed at, wait from, wait to, processing from, processing to, outcome or NULL) newest first,
        after `since`; from the log's line `low_id` on where the completions are a numbered log's lines (the line
        `line_at` finds before `since`: a range of its key, not a scan of its times)."""
        spec = self.layout.completions
        assert spec is not None
        prefix = "c_" if spec.table == "completed" else ""
        type_role = prefix + "type"

        def build(binds: list) -> str:
            pairs = [*(spec.wait or (None, None)), *(spec.processing or (None, None))]
            outcome = self.col("c_outcome") if prefix and self.layout.has("c_outcome") else "NULL"
            cols = ", ".join([self.col(prefix + "id"), self.col(spec.at),
                              *(self.col(role) if role else "NULL" for role in pairs), outcome])
            where = f"{self.col(spec.at)} > {self.dialect.param(self.layout.type_of(spec.at))}"
            where += self._completion_filter(binds)
            if job_type is not None:
                where += f" AND {self.col(type_role)} = {self.dialect.param(self.layout.type_of(type_role))}"
            if low_id is not None:
                where += self._completions_from_low()
            return self.dialect.first_rows_sql(f"SELECT {cols} FROM {self.table(spec.table)}{self._row_hint()} WHERE "
                                               f"{where} ORDER BY {self.col(spec.at)} DESC")

        sql, params = self._bound(f"recent:{job_type is not None}:{low_id is not None}", build, settings)
        typed = (self.dialect.encode_value(self.layout.type_of(type_role), job_type),) if job_type is not None else ()
        low = () if low_id is None else (low_id,)
        return sql, self.dialect.first_rows_params((since, *params, *typed, *low), limit)

    # -- where a load run's jobs ended up (the load report) --------------------------------------------------
    # A leased queue's (native's) report reads every row from the run's first id on, in both tables, and the
    # outcome of each finished one: a job seen twice is a duplicate, one seen nowhere is lost.
    def max_job_id(self) -> Statement:
        """The highest id in the queue table and in the completed one: two values, one row."""
        return self.sql("SELECT (SELECT MAX({id}) FROM {queue}{nolock}), "
                        "(SELECT MAX({c_id}) FROM {completed}{nolock})"), ()

    def arrivals_after(self, after_id: int, also_ids: Sequence[int]) -> Statement:
        """(id, type, created) of jobs with id > after_id or in also_ids, wherever they are now (UNION ALL: a
        job in both tables is seen twice)."""
        late = f" OR {{id}} IN ({self.dialect.placeholders(len(also_ids))})" if also_ids else ""
        late_c = f" OR {{c_id}} IN ({self.dialect.placeholders(len(also_ids))})" if also_ids else ""
        sql = self.sql(f"SELECT {{id}}, {{type}}, {{created}} FROM {{queue}}{{nolock}} WHERE {{id}} > ?{late} "
                       f"UNION ALL SELECT {{c_id}}, {{c_type}}, {{c_created}} FROM {{completed}}{{nolock}} "
                       f"WHERE {{c_id}} > ?{late_c}")
        return sql, (after_id, *also_ids, after_id, *also_ids)

    def completions_since(self, since: Any) -> Statement:
        """(id, type, created, claimed, completed, outcome) of jobs finished after `since`."""
        sql = self.sql("SELECT {c_id}, {c_type}, {c_created}, {c_claimed_at}, {c_completed}, {c_outcome} "
                       "FROM {completed}{nolock} WHERE {c_completed} > ?")
        return sql, (self.dialect.encode_time(since),)

    def row_states(self, table: str, settings: dict[str, Any] | None, low_id: int | None,
                   since_s: float | None) -> Statement:  # fmt: skip
        """(id, state) of a table's rows: from `low_id` on (identity layouts) or created in the last `since_s`
        seconds. The state is "done" where the shape's completion holds (on shapes that complete jobs), else the
        first of the layout's states of that table whose condition holds, else NULL (taken: a claim that is
        final, or a row in no state)."""
        prefix = "c_" if table == "completed" else ""

        def build(binds: list) -> str:
            case = self._state_case(table, binds)
            if low_id is not None:
                where = f"{self.col(prefix + 'id')} >= {self.dialect.param(self.layout.type_of(prefix + 'id'))}"
            else:
                binds.append(lambda s: self.dialect.shift_param(-float(s["__since_s"])))
                where = f"{self.col(prefix + 'created')} >= {self.dialect.shifted_now_sql(self.layout.clock)}"
            return f"SELECT {self.col(prefix + 'id')}, {case} FROM {self.table(table)} WHERE {where}"

        sql, params = self._bound(f"row_states:{table}:{low_id is not None}", build,
                                  {**(settings or {}), "__since_s": since_s or 0})  # fmt: skip
        return sql, (*params, *(() if low_id is None else (low_id,)))

    def _state_case(self, table: str, binds: list) -> str:
        """`CASE` naming a row's state: "done" where the shape's completion holds (on shapes that complete jobs),
        else the first of the layout's states of that table whose condition holds, else NULL."""
        spec, claim = self.layout.completions, self.layout.claim
        arms = []
        if claim is not None and claim.finish and spec is not None and spec.table == table:
            done = f"{self.col(spec.at)} IS NOT NULL"
            done += self._completion_filter(binds)
            arms.append(f"WHEN {done} THEN 'done'")
        arms += [f"WHEN {self.condition(state.condition, binds)} THEN '{name}'"
                 for name, state in self.layout.states.items() if state.table == table]  # fmt: skip
        return f"CASE {' '.join(arms)} ELSE NULL END" if arms else "NULL"

    def job_by_id(self, table: str, roles: Sequence[str], job_id: Any,
                  settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """One job by its id in one table: `roles`, then its state (`_state_case`). READPAST where the monitor
        reads so: a job a worker is changing right now is not waited for (it is read again a moment later)."""
        prefix = "c_" if table == "completed" else ""

        def build(binds: list) -> str:
            case = self._state_case(table, binds)
            id_param = self.dialect.param(self.layout.type_of(prefix + "id"))
            return (f"SELECT {', '.join(self.col(role) for role in roles)}, {case} FROM {self.table(table)}"
                    f"{self._row_hint()} WHERE {self.col(prefix + 'id')} = {id_param}{self._job_rows(table)}")

        sql, params = self._bound(f"job_by_id:{table}:{roles}", build, settings)
        return sql, (*params, self.dialect.encode_value(self.layout.type_of(prefix + "id"), job_id))

    # -- workers: who holds what, from the claims (issue 11) -----------------------------------------------
    def _claimer_filter(self, worker: str | None) -> str:
        """Rows of one claimer; None: rows whose claimer was not recorded."""
        if worker is None:
            return f" AND {self.col('claimed_by')} IS NULL"
        return f" AND {self.col('claimed_by')} = {self.dialect.param(self.layout.type_of('claimed_by'))}"

    def _claimer_param(self, worker: str | None) -> tuple[Any, ...]:
        return () if worker is None else (self.dialect.encode_value(self.layout.type_of("claimed_by"), worker),)

    def worker_claims(self, recent_s: float, seen_s: float, settings: dict[str, Any] | None = None) -> Statement:
        """Per claimer of the queue table: (claimer, claims held now, of them past their timeout, claims made in
        the last `recent_s`, last claim time). Rows held now or claimed in the last `seen_s` only; a count the
        shape cannot know (no claimed / timed-out state) is NULL. Where a finished job leaves the queue table (its
        completions are in the completed table: native), every row claimed there is held, and the read is the
        held states alone: one family, a range of the index filtered on its first term (IX_WorkQueue_Claimed)."""
        layout = self.layout
        rows_leave = layout.completions is not None and layout.completions.table == "completed"
        held_states = [name for name in ("claimed", "timed_out") if name in layout.states
                       and layout.states[name].table == "queue"]  # fmt: skip

        def build(binds: list) -> str:
            since = self.dialect.shifted_now_sql(layout.clock)
            columns = [self.col("claimed_by")]
            held = " OR ".join(f"({self.condition(layout.states[name].condition, binds)})" for name in held_states)
            columns.append(f"SUM(CASE WHEN {held} THEN 1 ELSE 0 END)" if held else NO_COUNT)
            if "timed_out" in held_states:
                timed_out = self.condition(layout.states["timed_out"].condition, binds)
                columns.append(f"SUM(CASE WHEN {timed_out} THEN 1 ELSE 0 END)")
            else:
                columns.append(NO_COUNT)
            binds.append(lambda s: self.dialect.shift_param(-float(s["__recent_s"])))
            columns.append(f"SUM(CASE WHEN {self.col('claimed_at')} >= {since} THEN 1 ELSE 0 END)")
            columns.append(f"MAX({self.col('claimed_at')})")
            conditions = [layout.states[name].condition for name in held_states]
            if rows_leave and conditions and len(self.families(held_states)) == 1:
                where = [self._family_where(conditions, binds)]
            else:
                where = [f"({self.condition(condition, binds)})" for condition in conditions]
            if not rows_leave or not where:  # a finished claim stays in the queue table: seen for a while
                binds.append(lambda s: self.dialect.shift_param(-float(s["__seen_s"])))
                where.append(f"{self.col('claimed_at')} >= {since}")
            return (f"SELECT {', '.join(columns)} FROM {self.table('queue')}{self._hint()} "
                    f"WHERE {' OR '.join(where)} GROUP BY {self.col('claimed_by')}")

        return self._bound("worker_claims", build, {**(settings or {}), "__recent_s": recent_s, "__seen_s": seen_s})

    def worker_completions(self, recent_s: float, limit: int, settings: dict[str, Any] | None = None) -> Statement:
        """(claimer, outcome or NULL, claimed at, claimed in the last `recent_s` (1/0), completed at) of up to `limit`
        jobs completed in the last `recent_s`, newest first, where the shape's completions record who processed
        the job (a claimer role on the completions' table): a range of the completion index, as the poll's own
        watermark read."""
        spec = self.layout.completions
        assert spec is not None and spec.processing is not None
        prefix = "c_" if spec.table == "completed" else ""

        def build(binds: list) -> str:
            since = self.dialect.shifted_now_sql(self.layout.clock)
            start, end = spec.processing
            outcome = self.col("c_outcome") if prefix and self.layout.has("c_outcome") else "NULL"
            binds.append(lambda s: self.dialect.shift_param(-float(s["__recent_s"])))
            recently = f"CASE WHEN {self.col(start)} >= {since} THEN 1 ELSE 0 END"
            binds.append(lambda s: self.dialect.shift_param(-float(s["__recent_s"])))
            where = f"{self.col(spec.at)} > {since}"
            where += self._completion_filter(binds)
            return self.dialect.first_rows_sql(
                f"SELECT {self.col(prefix + 'claimed_by')}, {outcome}, {self.col(start)}, {recently}, {self.col(end)} "
                f"FROM {self.table(spec.table)}{self._hint()} WHERE {where} ORDER BY {self.col(spec.at)} DESC")

        sql, params = self._bound("worker_completions", build, {**(settings or {}), "__recent_s": recent_s})
        return sql, self.dialect.first_rows_params(params, limit)

    def ids_of_claimer(self, state_name: str, worker: str | None, limit: int,
                       settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """(id, token) of up to `limit` rows in a state held by one claimer: what a worker's release clears. Read
        with the counts' hint (NOLOCK where SQL Server has no read-committed snapshot): each row is then changed by
        compare-and-set on its token, so a dirty read changes nothing it should not, and the read never waits on
        a worker's locks."""
        state = self.layout.states[state_name]

        def build(binds: list) -> str:
            return self.dialect.first_rows_sql(
                f"SELECT {self.col('id')}, {self.col('token')} FROM {self.table('queue')}{self._hint()} WHERE "
                f"{self.condition(state.condition, binds)}{self._claimer_filter(worker)} ORDER BY {self.col('id')}")

        sql, params = self._bound(f"ids_of_claimer:{state_name}:{worker is None}", build, settings)
        return sql, self.dialect.first_rows_params((*params, *self._claimer_param(worker)), limit)

