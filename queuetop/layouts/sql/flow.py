"""The monitor's flows: arrivals past an identity or time watermark, completions past theirs, a capped sample."""

from __future__ import annotations

from typing import Any

from queuetop.layouts.model import INTEGER_TYPES
from queuetop.layouts.predicate import settings_of
from queuetop.layouts.sql.base import NO_COUNT, Statement, StatementsBase


class FlowSQL(StatementsBase):
    """What arrived and what finished since the last poll, read from a watermark, never from the start."""

    def clock(self) -> Statement:
        """The database's current time in the layout's clock."""
        return self._bound("clock", lambda b: f"SELECT {self.now()}", None)

    def sequence_value(self) -> Statement:
        """The last id the identity behind the layout's ids handed out (`[tables] sequence`), NULL before the
        first: one row, one column."""
        sequence = self.layout.sequence
        assert sequence is not None, "a layout with [tables] sequence"
        table, column = sequence
        return self._bound("sequence", lambda binds: self.dialect.sequence_sql(), None,
                           self.dialect.sequence_names(self.layout.schema, table, column))

    def max_id(self) -> Statement:
        """The highest id of the tables a job may be in (`identity_tables`), one row, one column."""
        def build(binds: list) -> str:
            tables = self.identity_tables()
            named = " AS qt_id" if len(tables) > 1 else ""
            highest = [f"SELECT MAX({self.col(prefix + 'id')}){named} FROM {self.table(which)}{self._hint()}"
                       for prefix, which in tables]
            if len(highest) == 1:
                return highest[0]
            return f"SELECT MAX(qt_id) FROM ({' UNION ALL '.join(highest)}) AS qt_highest"

        return self._bound("max_id", build, None)

    def arrivals_by_id(self, after_id: int, limit: int) -> Statement:
        """(id, type, created) of rows with id > after_id, lowest first, at most `limit`."""
        def build(binds: list) -> str:
            layout = self.layout
            cols = ", ".join([self.col("id"), self.col("type") if layout.has("type") else "NULL",
                              self.col("created") if layout.has("created") else "NULL"])
            return self.dialect.first_rows_sql(
                f"SELECT {cols} FROM {self.table('queue')}{self._hint()} WHERE {self.col('id')} > "
                f"{self.dialect.param(layout.type_of('id'))} ORDER BY {self.col('id')}")

        sql, _ = self._render("arrivals_by_id", build)
        return sql, self.dialect.first_rows_params((after_id,), limit)

    def arrivals_by_time(self, since: Any) -> Statement:
        """(id, type, created) of rows created after `since`, in the queue table and the completed one."""
        def build(binds: list) -> str:
            arms = []
            for prefix, which in (("", "queue"), ("c_", "completed")):
                if which == "completed" and not self.layout.completed_table:
                    continue
                job_type = self.col(prefix + "type") if self.layout.has(prefix + "type") else "NULL"
                arms.append(f"SELECT {self.col(prefix + 'id')}, {job_type}, {self.col(prefix + 'created')} "
                            f"FROM {self.table(which)}{self._hint()} WHERE {self.col(prefix + 'created')} > "
                            f"{self.dialect.param(self.layout.type_of(prefix + 'created'))}")
            return " UNION ALL ".join(arms)

        sql, _ = self._render("arrivals_by_time", build)
        return sql, (since,) * sql.count(" UNION ALL ") + (since,)

    def completions_after(self, since: Any, settings: dict[str, Any] | None = None,
                          low_id: int | None = None) -> Statement:
        """(id, type, completed at, wait from, wait to, processing from, processing to) of jobs completed after
        `since`, by the layout's completion rule."""
        spec = self.layout.completions
        assert spec is not None

        def build(binds: list) -> str:
            prefix = "c_" if spec.table == "completed" else ""
            pairs = [*(spec.wait or (None, None)), *(spec.processing or (None, None))]
            type_role = prefix + "type"
            cols = [self.col(prefix + "id"), self.col(type_role) if self.layout.has(type_role) else "NULL",
                    self.col(spec.at), *(self.col(role) if role else "NULL" for role in pairs)]
            # `since` is the first parameter, before any of the condition's
            where = f"{self.col(spec.at)} > {self.dialect.param(self.layout.type_of(spec.at))}"
            where += self._completion_filter(binds)
            if low_id is not None:
                where += self._completions_from_low()
            return f"SELECT {', '.join(cols)} FROM {self.table(spec.table)}{self._hint()} WHERE {where}"

        sql, params = self._bound(f"completions_after:{low_id is not None}", build, settings)
        return sql, (since, *params, *(() if low_id is None else (low_id,)))

    # -- bounded monitor reads: counts per job type and second, and a capped sample of completions -----------
    # Whatever the throughput, a poll fetches one row per job type and second of its range, plus at most a fixed
    # number of sampled completions for the percentiles.
    def _completion_parts(self) -> tuple[str, str, list[str | None], str | None, str]:
        """(table, completed-at role, [wait from, wait to, processing from, processing to], the dead condition or
        None, the role prefix of the table); which rows are completions is `_completion_filter`. The dead condition
        is the layout's dead state where it is a state of the completions' own table (native: Outcome 'dead') and
        needs no setting: those completions are counted apart ("dead among them") and kept out of the wait and
        processing sample — a job that ran out of attempts says nothing of how long the work takes."""
        spec = self.layout.completions
        assert spec is not None, "a shape without completions has no completion reads"
        pairs: list[str | None] = [*(spec.wait or (None, None)), *(spec.processing or (None, None))]
        dead_state, dead = self.layout.states.get("dead"), None
        if dead_state is not None and dead_state.table == spec.table and not settings_of(dead_state.condition):
            dead = self.condition(dead_state.condition, [])
        return spec.table, spec.at, pairs, dead, "c_" if spec.table == "completed" else ""

    def last_line(self) -> Statement:
        """The highest line of the completions' log (`Layout.log_lines`), NULL while it is empty. Ids are handed
        out in order, so a line made after this read has a higher one: a later poll reads the log from it on."""
        return self._bound("last_line", lambda binds: f"SELECT MAX({self.col('c_line')}) FROM "
                                                      f"{self.table('completed')}{self._hint()}", None)

    def line_at(self, upto: Any) -> Statement:
        """The highest line of the completions' log stamped at or before `upto`, if any: walked down from the
        newest line (the log's key), so it reads the lines made since, not the whole log."""
        spec = self.layout.completions
        assert spec is not None and self.layout.log_lines

        def build(binds: list) -> str:
            line = self.col("c_line")
            return self.dialect.first_rows_sql(
                f"SELECT {line} FROM {self.table('completed')}{self._hint()} WHERE {self.col(spec.at)} <= "
                f"{self.dialect.param(self.layout.type_of(spec.at))} ORDER BY {line} DESC")

        sql, _ = self._render("line_at", build)
        return sql, self.dialect.first_rows_params((self._typed(spec.at, upto),), 1)

    def _typed(self, role: str, value: Any) -> Any:
        return self.dialect.encode_value(self.layout.type_of(role), value)

    def _integer_id(self, role: str) -> bool:
        return (self.layout.type_of(role) or "").lower() in INTEGER_TYPES

    def arrival_counts(self, after_id: int, settle_id: int) -> Statement:
        """(job type, second created, rows, rows with id > settle_id, highest id) per job type and second, of the
        rows with id > after_id, in the tables a job's id may be in (`identity_tables`):
        arrivals by identity as counts, never one row per job. No `created` role: the second is NULL."""
        def build(binds: list) -> str:
            return " UNION ALL ".join(self._arrival_arm(prefix, which) for prefix, which in self.identity_tables())

        sql, _ = self._render("arrival_counts", build)
        return sql, (settle_id, after_id) * (sql.count(" UNION ALL ") + 1)

    def identity_tables(self) -> list[tuple[str, str]]:
        """(role prefix, table) of the tables a job's id may be in: the queue, and the completed table where a
        finished job moves with its id (native), so that one that arrived and finished between two polls is
        still an arrival, and the highest id is the highest of both. Not where the completed table's ids are its
        own (`completed_ids_own`), nor where it logs the steps of jobs whose rows stay (`completed_ids_kept`)."""
        layout = self.layout
        moves = layout.completed_table is not None and layout.has("c_id") and not layout.completed_ids_own \
            and not layout.completed_ids_kept
        return [("", "queue"), *((("c_", "completed"),) if moves else ())]

    def _arrival_arm(self, prefix: str, which: str, part: str = "", between: str = "", tail: str = "") -> str:
        """One table's arm of `arrival_counts`; `part`, `between` and `tail` are columns put before it, after the
        second and at the end (the one-statement polls')."""
        layout = self.layout
        id_col = self.col(prefix + "id")
        keys = [self.col(prefix + "type") if layout.has(prefix + "type") else None,
                self.dialect.second_sql(self.col(prefix + "created")) if layout.has(prefix + "created") else None]
        group = ", ".join(k for k in keys if k)
        param = self.dialect.param(layout.type_of(prefix + "id"))
        return (f"SELECT {part}{keys[0] or 'NULL'}, {keys[1] or 'NULL'}, {between}COUNT(*), SUM(CASE WHEN {id_col} > "
                f"{param} THEN 1 ELSE 0 END), MAX({id_col}){tail} FROM {self.table(which)}{self._hint()} "
                f"WHERE {id_col} > {param}{self._job_rows(which)}{' GROUP BY ' + group if group else ''}")

    def completion_counts(self, since: Any, settings: dict[str, Any] | None = None,
                          low_id: int | None = None) -> Statement:  # fmt: skip
        """(job type, second completed, completions, dead among them, latest completion) per job type and second
        of the completions after `since`: throughput as counts. `dead` is 0 where the layout counts dead jobs as
        a state rather than as an outcome."""
        at = self._completion_parts()[1]
        sql, params = self._bound(f"completion_counts:{low_id is not None}",
                                  lambda binds: self._completion_counts_sql(binds, low_id), settings)
        return sql, (self._typed(at, since), *params, *(() if low_id is None else (low_id,)))

    def _completion_counts_sql(self, binds: list, low_id: int | None, part: str = "", tail: str = "",
                               latest_first: bool = False) -> str:  # fmt: skip
        """`completion_counts`' statement; `part` and `tail` are columns put before and after its own, and
        `latest_first` puts the latest completion right after the second (the shape poll's order)."""
        table, at, _, dead, prefix = self._completion_parts()
        type_role = prefix + "type"
        second = self.dialect.second_sql(self.col(at))
        keys = [self.col(type_role) if self.layout.has(type_role) else None, second]
        where = f"{self.col(at)} > {self.dialect.param(self.layout.type_of(at))}{self._completion_filter(binds)}"
        if low_id is not None:
            where += self._completions_from_low()
        dead_count = f"SUM(CASE WHEN {dead} THEN 1 ELSE 0 END)" if dead else "0"
        latest = f"MAX({self.col(at)})"
        counts = f"{latest}, COUNT(*), {dead_count}" if latest_first else f"COUNT(*), {dead_count}, {latest}"
        return (f"SELECT {part}{keys[0] or 'NULL'}, {second}, {counts}{tail} "
                f"FROM {self.table(table)}{self._hint()} WHERE {where} "
                f"GROUP BY {', '.join(k for k in keys if k)}")

    def arrival_counts_since(self, since: Any, ids: tuple[int, int] | None) -> Statement:
        """(job type, second created, rows, NULL, latest created) per job type and second of the rows created after
        `since` (and, when `ids` = (after, upto) are given, with after < id <= upto: a range of the key, however
        the times are indexed), in the queue table and the completed one: the first poll's look back over one
        window, or (shapes whose ids are not an identity) every poll's arrivals, as counts."""
        with_ids = ids is not None

        def build(binds: list) -> str:
            return " UNION ALL ".join(self._arrival_since_arm(prefix, which, with_ids) for prefix, which in
                                      self._arrival_tables())  # fmt: skip

        sql, _ = self._render(f"arrival_counts_since:{with_ids}", build)
        params: list[Any] = []
        for prefix in ("", "c_")[: sql.count(" UNION ALL ") + 1]:
            params += [self._typed(prefix + "created", since), *(ids or ())]
        return sql, tuple(params)

    def _arrival_tables(self) -> list[tuple[str, str]]:
        """(role prefix, table) of the tables `arrival_counts_since` reads: those a job's id may be in
        (`identity_tables`) that also keep its creation time."""
        return [(prefix, which) for prefix, which in self.identity_tables()
                if self.layout.has(prefix + "created") or which == "queue"]

    def _arrival_since_arm(self, prefix: str, which: str, with_ids: bool, part: str = "", pad: int = 0) -> str:
        """One table's arm of `arrival_counts_since`; with a `part`, the shape poll's order: (part, type, second,
        latest created, rows, NULL, NULL, `pad` NULLs)."""
        layout = self.layout
        created, id_col = self.col(prefix + "created"), self.col(prefix + "id")
        keys = [self.col(prefix + "type") if layout.has(prefix + "type") else None, self.dialect.second_sql(created)]
        where = f"{created} > {self.dialect.param(layout.type_of(prefix + 'created'))}{self._job_rows(which)}"
        if with_ids:
            id_param = self.dialect.param(layout.type_of(prefix + "id"))
            where += f" AND {id_col} > {id_param} AND {id_col} <= {id_param}"
        counts = f"COUNT(*), {NO_COUNT}, MAX({created})"
        if part:
            counts = f"MAX({created}), COUNT(*), {', '.join([NO_COUNT] * (2 + pad))}"
        return (f"SELECT {part}{keys[0] or 'NULL'}, {keys[1]}, {counts} FROM {self.table(which)}{self._hint()} "
                f"WHERE {where} GROUP BY {', '.join(k for k in keys if k)}")

    SAMPLE_SCALE = 65536  # a sampled row's id hashes to 0 … SAMPLE_SCALE − 1; it is taken below the threshold

    def completion_sample(self, after: Any, upto: Any, share: float, limit: int,
                          settings: dict[str, Any] | None = None, low_id: int | None = None) -> Statement:
        """(job type, completed at, wait from, wait to, processing from, processing to) of at most `limit`
        completions in (after, upto], dead jobs left out: about `share` of them, picked by a hash of the id that
        spreads over job types and time alike (ids that are not integers: the first `limit` rows)."""
        table, at, pairs, dead, prefix = self._completion_parts()
        hashed = self._integer_id(prefix + "id")

        def build(binds: list) -> str:
            type_role = prefix + "type"
            cols = ", ".join([self.col(type_role) if self.layout.has(type_role) else "NULL", self.col(at),
                              *(self.col(role) if role else "NULL" for role in pairs)])
            at_param = self.dialect.param(self.layout.type_of(at))
            where = f"{self.col(at)} > {at_param} AND {self.col(at)} <= {at_param}{self._completion_filter(binds)}"
            if dead:
                where += f" AND NOT ({dead})"
            if low_id is not None:
                where += self._completions_from_low()
            if hashed:  # a multiplicative hash of the id: consecutive ids land far apart, so no type is favoured
                where += f" AND (({self.col(prefix + 'id')} % 65521) * 40503) % {self.SAMPLE_SCALE} < ?"
            return self.dialect.first_rows_sql(f"SELECT {cols} FROM {self.table(table)}{self._hint()} WHERE {where}")

        sql, params = self._bound(f"completion_sample:{low_id is not None}", build, settings)
        threshold = (max(1, min(self.SAMPLE_SCALE, round(share * self.SAMPLE_SCALE))),) if hashed else ()
        return sql, self.dialect.first_rows_params(
            (self._typed(at, after), self._typed(at, upto), *params, *(() if low_id is None else (low_id,)),
             *threshold), limit)

