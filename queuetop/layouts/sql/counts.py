"""The monitor's state counts: one pass per family of states, the shape poll, the pending heads, the recount."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from queuetop.layouts.predicate import (
    Bool,
    Compare,
    Junction,
    Node,
)
from queuetop.layouts.sql.base import NO_COUNT, Statement, StatementsBase

# The family of states read from a low id of its own on a ranged layout: dead jobs leave their state only by hand
# (retried, deleted), so old ones would otherwise hold every poll's read down to their ids.
DEAD_APART = ["dead"]


class CountSQL(StatementsBase):
    """How many rows each state holds, per job type, in as few index ranges as the layout allows."""

    def state_counts(self, states: Sequence[str], settings: dict[str, Any] | None = None,
                     low_id: int | None = None, finished: bool = False, dead_low: int | None = None) -> Statement:
        """One round trip, one pass per family of states (`families`). Columns: (part, job type, oldest pending
        created, then one count per state in the order given). The first row is ('now', NULL, the database's
        clock, NULLs); then one row per family and job type, its counts NULL for the states of the other families
        (part: the family's table).

        On a layout whose rows never leave the queue table (`ranged`), a last column gives the lowest id in any
        state, and `low_id` limits the read to ids from there on: a range of the primary key, so the poll reads
        the live end of the table, not its finished history. Dead jobs, a family of their own, are read from
        `dead_low` where given (`DEAD_APART`): they never leave that state by themselves, so the oldest of them
        need not hold every other state's read down to its id.

        `finished` (a layout with `done`, no low id) adds, in the same snapshot, ('finished', type, NULL, the rows
        done from the lowest id in any state on, NULLs): where `FinishedWatch` starts its count."""
        ranged = self.ranged
        width = len(states) + ranged

        def build(binds: list) -> str:
            arms = self._state_arms(states, binds, low_id is not None)
            if finished:
                live = " OR ".join(f"({self.condition(self.layout.states[name].condition, binds)})" for name in states)
                lowest = f"(SELECT MIN({self.col('id')}) FROM {self.table('queue')}{self._hint()} WHERE {live})"
                arms.append(self._count_arm("finished", "queue", self._done_from(binds, lowest),
                                            pad=width - 1))  # its binds follow the states': the text's order
            return " UNION ALL ".join(arms)

        assert not (finished and low_id is not None), "the finished rows are counted from the whole table's low id"
        sql, params = self._bound(f"state_counts:{','.join(states)}:{low_id is not None}:{finished}", build,
                                  {**(settings or {}), "__low": low_id, "__dead_low": dead_low})
        return sql, params

    def _state_arms(self, states: Sequence[str], binds: list, from_low: bool) -> list[str]:
        """`state_counts`' arms: the 'now' row, then one per family of `states`."""
        nulls = ", ".join([NO_COUNT] * (len(states) + self.ranged))
        arms = [f"SELECT 'now' AS qt_part, NULL AS qt_type, {self.now()} AS qt_oldest, {nulls}"]
        return arms + self._family_arms(states, binds, from_low)

    def _family_arms(self, states: Sequence[str], binds: list, from_low: bool, times: str = "",
                     pad: int = 0) -> list[str]:  # fmt: skip
        """One `_table_arm` per family of `states`, each followed by its low id's bind where read from it: the
        dead jobs' own (`__dead_low`) where they are a family of their own and it is given, else `__low`."""
        arms = []
        for table, mine in self.families(states):
            arms.append(self._table_arm(table, states, mine, binds, from_low, times, pad))
            if from_low:
                apart = mine == DEAD_APART
                binds.append(lambda v, apart=apart: v["__low"] if not apart or v.get("__dead_low") is None
                             else v["__dead_low"])  # fmt: skip
        return arms

    def dead_apart(self, states: Sequence[str]) -> int | None:
        """Where a ranged layout's dead jobs are a family of their own among `states` (`DEAD_APART`), the index of
        dead among them: `state_counts` reads those from `dead_low` (their rows: `in_dead_family`); else None."""
        if not self.ranged or "dead" not in states:
            return None
        return list(states).index("dead") if any(mine == DEAD_APART for _, mine in self.families(states)) else None

    @staticmethod
    def in_dead_family(per_state: Sequence[Any], dead_at: int | None) -> bool:
        """Whether a `state_counts` row, by its counts per state (`per_state`), is the dead family's, read from its
        own low id (`dead_at`: `dead_apart`'s answer): a family's row has NULL for the other families' states."""
        return dead_at is not None and per_state[dead_at] is not None

    def families(self, states: Sequence[str]) -> list[tuple[str, list[str]]]:
        """(table, states) read in one pass: the states of a table that begin with the same condition (`claimed_at
        is null and …`, `claimed_at is not null and …`). Each such beginning is what a filtered index says (the
        native schema's, most libraries'), so each pass is a range of one index, read from the index alone; a
        table with no index is scanned once per family, not once per state."""
        grouped: dict[tuple[str, Node], list[str]] = {}
        for name in states:
            state = self.layout.states[name]
            grouped.setdefault((state.table, _first_term(state.condition)), []).append(name)
        return [(table, names) for (table, _), names in grouped.items()]

    def _count_arm(self, part: str, table: str, where: str, prefix: str = "", times: str = "NULL",
                   more: str = "", pad: int = 0) -> str:  # fmt: skip
        """(`part`, job type, `times`, the rows of `table` WHERE `where`, `more` columns, `pad` NULL counts) per
        job type: the full count's moves past the marks, and the finished rows of a layout with `done`."""
        job_type = self.col(prefix + "type") if self.layout.has(prefix + "type") else None
        nulls = "".join(f", {NO_COUNT}" for _ in range(pad))
        return (f"SELECT '{part}', {job_type or 'NULL'}, {times}, COUNT(*){more}{nulls} FROM {self.table(table)}"
                f"{self._hint()} WHERE {where}{' GROUP BY ' + job_type if job_type else ''}")

    def _done_from(self, binds: list, base: str) -> str:
        """The rows in the layout's `done` state with ids from `base` on: with an index that leads with the done
        flag (seed 003's (PROCESSED, ID)), a seek of the rows finished since the base."""
        assert self.layout.done is not None
        return f"{self.condition(self.layout.done.condition, binds)} AND {self.col('id')} >= {base}"

    @property
    def ranged(self) -> bool:
        """Rows stay in the queue table for good and carry an identity: the live ones are its newest ids. Their
        completions are rows of the queue table, or lines of a log about jobs whose rows stay (`completed_ids_kept`),
        read from a low id of their own (`StatementsBase._completions_from_low`)."""
        layout = self.layout
        return layout.arrivals == "identity" and all(state.table == "queue" for state in layout.states.values()) \
            and (layout.completions is None or layout.completions.table == "queue" or layout.completed_ids_kept)

    def _table_arm(self, table: str, states: Sequence[str], mine: Sequence[str], binds: list, from_low: bool,
                   times: str = "", pad: int = 0) -> str:  # fmt: skip
        """One table's arm of `state_counts`; `times` and `pad` (typed NULL counts) are the shape poll's extra
        columns, after the oldest and at the end."""
        prefix = "c_" if table == "completed" else ""
        type_role, created_role = prefix + "type", prefix + "created"
        has_type = self.layout.has(type_role)
        columns = [self.col(type_role) if has_type else "NULL"]
        # An arm of one state reads only its rows: a plain COUNT(*) and MIN, which an index can give alone. In an
        # arm of several, each count says only what follows the first term the WHERE already says (so the count
        # does not name the filtered index's filter column, which the index does not hold).
        alone = len(mine) == 1

        def rest(name: str) -> str:  # tested on every row the WHERE chose: its now worked out once
            return self.condition(_after_first_term(self.layout.states[name].condition), binds, once=True)

        if "pending" in mine and self.layout.has(created_role):
            pending = "" if alone else rest("pending")
            # where the time is another table's, that of the lowest id (`oldest_by_min_id`): one lookup per group
            by_id = self.oldest_by_min_id and not prefix
            at = self.col("id") if by_id else self.col(created_role)
            oldest = f"MIN({at})" if alone else f"MIN(CASE WHEN {pending} THEN {at} END)"
            columns.append(self._oldest_of(oldest) if by_id else oldest)
        else:
            columns.append("NULL")
        columns[-1] += times
        for name in states:
            if name in mine and alone:
                columns.append("COUNT(*)")
            elif name in mine:
                columns.append(f"SUM(CASE WHEN {rest(name)} THEN 1 ELSE 0 END)")
            else:
                columns.append(NO_COUNT)
        if self.ranged:
            columns.append(f"MIN({self.col('id')})")
        columns += [NO_COUNT] * pad
        where = self._family_where([self.layout.states[name].condition for name in mine], binds)
        if from_low:
            where += self._from_low_id()  # its parameter is bound by the caller, after the arm's own
        group = f" GROUP BY {self.dialect.state_group(self.col(type_role))}" if has_type else ""
        return (f"SELECT '{table}', {', '.join(columns)} FROM {self.table(table)}{self._hint()} "
                f"WHERE {where}{group}")

    def _family_where(self, conditions: Sequence[Node], binds: list, loose: bool = True) -> str:
        """Any of a family's conditions (their first term the same), with the terms they all begin with said once
        and first (`a AND b AND (c OR d)`, not `(a AND b AND c) OR (a AND b AND d)`, the same in SQL's logic of
        three values): so SQLite, which matches a partial index's filter to a term of the WHERE, and any planner,
        sees that only the index's rows are read; and a term shared past the first (seed 004's claims: `finished
        is null or finished < claimed_at`) is tested once a row, not once per state (SQLite's first pass of those
        claims over 10⁶ rows: 147 -> 108 ms). `loose`: where what is left is one comparison and its negation, the
        shared terms alone (a count's WHERE: each state's count tests its own condition again)."""
        if len(conditions) == 1:
            return self.condition(conditions[0], binds)
        terms = [_terms(node) for node in conditions]
        shared = 1  # the first term, which made them a family
        while all(len(mine) > shared for mine in terms) and len({mine[shared] for mine in terms}) == 1:
            shared += 1
        rests = [_all_of(mine[shared:]) for mine in terms]
        head = self.condition(_all_of(terms[0][:shared]), binds)
        if loose and _complementary(rests):  # `timeout >= now` / `timeout < now`: the head alone reads the same
            return head  # rows (but those with a NULL there, counted in neither), from the index alone
        return f"{head} AND ({' OR '.join(f'({self.condition(rest, binds)})' for rest in rests)})"

    def shape_poll(self, states: Sequence[str], settings: dict[str, Any] | None, low_id: int | None,
                   identity: tuple[int, int] | None, created_since: Any, completed: tuple[Any, int | None] | None,
                   heads: tuple[Sequence[Any], int] | None = None, finished: tuple[int, int] | None = None,
                   dead_low: int | None = None) -> Statement:  # fmt: skip
        """A shape's poll but the latency sample, in one round trip: `state_counts` (with its 'now' row), the
        arrivals (`identity`: (after id, settle id) of `arrival_counts`; or `created_since` for
        `arrival_counts_since`), `completed`: (since, low id) of `completion_counts`, and `heads`: (job types, cap)
        of `shape_heads`, the pending state read capped (then `states` leaves "pending" out). Rows of (part, type,
        time, latest, then counts): 'now' (the clock as time); the tables' state rows as in `state_counts` (time
        = oldest pending, latest NULL, one count per state, the lowest id where ranged); 'arrived' and 'done'
        (time = the second, latest = the latest created / completed, then rows, rows above settle / dead, highest
        id; NULL where the read has none); 'heads' as `shape_heads` gives them; 'finished' (a layout with `done`):
        `finished` = (old base, new base), the rows done from each base on (`FinishedWatch`); padded with NULL
        counts to the widest. `dead_low`: as `state_counts`'."""
        layout = self.layout
        width = max(len(states) + self.ranged, 3)
        no_time = self._no_time()
        values = {**(settings or {}), "__low": low_id, "__identity": identity, "__since": created_since,
                  "__completed": completed, "__heads": heads, "__finished": finished, "__dead_low": dead_low}

        def build(binds: list) -> str:
            nulls = ", ".join([NO_COUNT] * width)
            arms = [f"SELECT 'now' AS qt_part, NULL AS qt_type, {self.now()} AS qt_time, {no_time} AS qt_latest, "
                    f"{nulls}"]
            arms += self._family_arms(states, binds, low_id is not None, f", {no_time}",
                                      width - len(states) - self.ranged)
            if heads is not None and self.heads_by_type_list:
                arms.append(self._heads_by_list(binds, len(heads[0]), width))
            elif heads is not None:
                arms += [self._heads_arm(binds, n, low_id is not None, width) for n in range(len(heads[0]))]
            if identity is not None:
                for prefix, which in self.identity_tables():
                    arms.append(self._arrival_arm(prefix, which, "'arrived', ", f"{no_time}, ",
                                                  "".join([f", {NO_COUNT}"] * (width - 3))))  # fmt: skip
                    binds += [lambda v: v["__identity"][1], lambda v: v["__identity"][0]]
            elif created_since is not None:
                for prefix, which in self._arrival_tables():
                    arms.append(self._arrival_since_arm(prefix, which, False, "'arrived', ", width - 3))
                    binds.append(lambda v, p=prefix: self._typed(p + "created", v["__since"]))
            if completed is not None:
                at = self._completion_parts()[1]
                binds.append(lambda v: self._typed(at, v["__completed"][0]))
                arms.append(self._completion_counts_sql(binds, completed[1], "'done', ",
                                                        "".join([f", {NO_COUNT}"] * (width - 2)), True))
                if completed[1] is not None:
                    binds.append(lambda v: v["__completed"][1])
            if finished is not None:
                id_param = self.dialect.param(layout.type_of("id"))
                binds.append(lambda v: v["__finished"][1])
                from_new = f", SUM(CASE WHEN {self.col('id')} >= {id_param} THEN 1 ELSE 0 END)"
                arms.append(self._count_arm("finished", "queue", self._done_from(binds, id_param),
                                            times=f"{no_time}, {no_time}", more=from_new, pad=width - 2))
                binds.append(lambda v: v["__finished"][0])
            return " UNION ALL ".join(arms)

        key = (f"shape_poll:{','.join(states)}:{low_id is not None}:{identity is not None}:"
               f"{created_since is not None}:{completed is not None and completed[1] is not None}:{completed is None}:"
               f"{len(heads[0]) if heads is not None else None}:{finished is not None}:{self.oldest_grouped}")
        return self._bound(key, build, values)

    def _no_time(self) -> str:
        """A typed NULL time: the polls' UNION ALL arms must agree on their columns' types (PostgreSQL)."""
        layout = self.layout
        at_role = layout.completions.at if layout.completions is not None else "created"
        return f"CAST(NULL AS {self.dialect.sql_type(layout.type_of(at_role) or 'datetime2')})"

    def shape_heads(self, job_types: Sequence[Any], cap: int, low_id: int | None,
                    settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """The pending state read capped, per job type (or once, for a shape without one: `job_types` = [None]):
        rows of ('heads', type, oldest created among the rows read, NULL, pending rows counted up to `cap`, their
        lowest id where ranged, NULL). Each arm reads at most `cap` rows in the queue's own order (the id where
        ranged, from `low_id` on; else the created time), so its cost does not grow with the backlog: a count of
        `cap` says "at least", and the oldest is then the oldest of the rows read, which is the oldest where ids
        grow with time."""
        values = {**(settings or {}), "__low": low_id, "__heads": (job_types, cap)}

        def build(binds: list) -> str:
            if self.heads_by_type_list:
                return self._heads_by_list(binds, len(job_types), 3)
            return " UNION ALL ".join(self._heads_arm(binds, n, low_id is not None, 3) for n in range(len(job_types)))

        return self._bound(f"shape_heads:{len(job_types)}:{low_id is not None}:{self.oldest_grouped}", build, values)

    def created_of(self, ids: Sequence[int]) -> Statement:
        """(id, created) of these rows. Where the creation time is another table's (`oldest_by_min_id`), that
        table's lines by key, one probe each: the heads give each type's lowest waiting id, and this its age, in a
        statement of its own (a lookup inside each type's arm cost the planner ~0.4 ms a type). Else the rows' own."""
        layout, dialect = self.layout, self.dialect
        marks = dialect.placeholders(len(ids))

        def build(binds: list) -> str:
            if not self.oldest_by_min_id:
                created = self.col("created") if layout.has("created") else self._no_time()
                return f"SELECT {self.col('id')}, {created} FROM {self.table('queue')}{self._hint()} " \
                       f"WHERE {self.col('id')} IN ({marks})"
            joined = layout.joined["created"]
            key = dialect.quote(joined.key)
            where = " AND ".join([f"{key} IN ({marks})", *self._when(joined, "")])
            return (f"SELECT {key}, MAX({dialect.quote(joined.column)}) FROM "
                    f"{dialect.qualify(layout.schema, joined.table)}{self._hint()} WHERE {where} GROUP BY {key}")

        sql, _ = self._render(f"created_of:{len(ids)}", build)
        return sql, tuple(self.dialect.encode_value(layout.type_of("id"), value) for value in ids)

    @property
    def heads_by_type_list(self) -> bool:
        """The capped pending read is one arm over a list of the types (`_heads_by_list`): a typed shape whose
        rows leave the queue when done (not `ranged`), where the oldest job is found by its time (not another
        table's: `oldest_by_min_id`, the arms read by id)."""
        return self.layout.has("type", "created") and not self.ranged and not self.oldest_by_min_id

    def _heads_by_list(self, binds: list, count: int, width: int) -> str:
        """`count` types' capped pending reads in one arm, over the list of types given as parameters (one plan
        whatever the number of types, where an arm per type costs the planner more than the reads): per type,
        its oldest pending job (a seek where an index on (type, created) holds the pending rows) and, where
        `__heads`' third item says so (default: every type), the pending rows counted up to the cap; NULL where
        not counted (a deep type, tracked)."""
        layout, dialect = self.layout, self.dialect

        def pending(inner_binds: list) -> str:
            return f"{self._pending_where(inner_binds)} AND {self.col('type')} = qt_heads.job_type"

        cap = lambda v: v["__heads"][1]  # noqa: E731 - bound where the dialect puts its limit
        oldest = "qt_oldest.qt_at"  # from the grouped pass joined after the list (`oldest_grouped`)
        if not self.oldest_grouped:
            oldest = (f"(SELECT MIN({self.col('created')}) FROM {self.table('queue')}{self._hint()} "
                      f"WHERE {pending(binds)})")
        if self._tsql():
            binds.append(cap)
        capped = dialect.first_rows_sql(f"SELECT 1 AS qt_one FROM {self.table('queue')}{self._hint()} "
                                        f"WHERE {pending(binds)}")
        if not self._tsql():
            binds.append(cap)
        rows = dialect.rows_of_params("qt_heads", [("job_type", layout.type_of("type")), ("counted", "int")], count)
        for n in range(count):
            binds.append(lambda v, n=n: self._typed("type", v["__heads"][0][n]))
            binds.append(lambda v, n=n: 1 if len(v["__heads"]) < 3 else int(v["__heads"][2][n]))
        pad = "".join(f", {NO_COUNT}" for _ in range(width - 2))
        if self.oldest_grouped:
            job_type = self.col("type")
            rows += (f" LEFT JOIN (SELECT {job_type} AS qt_type, MIN({self.col('created')}) AS qt_at FROM "
                     f"{self.table('queue')}{self._hint()} WHERE {self._pending_where(binds)} GROUP BY "
                     f"{self.dialect.state_group(job_type)}) AS qt_oldest ON qt_oldest.qt_type = qt_heads.job_type")
        return (f"SELECT 'heads', qt_heads.job_type, {oldest}, {self._no_time()}, CASE WHEN qt_heads.counted = 1 "
                f"THEN (SELECT COUNT(*) FROM ({capped}) AS qt_capped) END, {NO_COUNT}{pad} FROM {rows}")

    def _heads_arm(self, binds: list, n: int, from_low: bool, width: int) -> str:
        """The `n`th arm of the capped pending read (see `shape_heads`); its binds read `__heads` and `__low`."""
        layout, dialect = self.layout, self.dialect
        typed = layout.has("type")
        type_param = dialect.param(layout.type_of("type")) if typed else "NULL"
        if typed:  # the arm names its type, so a type with nothing pending still has its row
            binds.append(lambda v: self._typed("type", v["__heads"][0][n]))
        cap = lambda v: v["__heads"][1]  # noqa: E731 - one getter, bound where the dialect puts its limit
        if self._tsql():
            binds.append(cap)
        at = self.col("created") if layout.has("created") else self._no_time()
        where = self._pending_where(binds)
        if typed:
            where += f" AND {self.col('type')} = {type_param}"
            binds.append(lambda v: self._typed("type", v["__heads"][0][n]))
        if from_low:
            where += self._from_low_id()
            binds.append(lambda v: v["__low"])
        # Ranged: the lowest ids, which are the oldest. Else the oldest by time alone (ids that are not an identity
        # say nothing of the age; a tie at the cap changes neither the count nor the oldest), so an index on
        # (type, created) gives the rows in order and, where it carries the state's columns, alone.
        order, read_id = self.col("id"), f", {self.col('id')} AS qt_id"
        if not self.ranged and layout.has("created") and not self.oldest_by_min_id:
            order, read_id = self.col("created"), ""
        oldest = "MIN(qt_at)"
        if self.oldest_by_min_id:  # the rows are read by id: the time of the lowest, looked up after (`created_of`)
            at, oldest = "NULL", self._no_time()
        inner = dialect.first_rows_sql(f"SELECT {at} AS qt_at{read_id} FROM {self.table('queue')}"
                                       f"{self._hint()} WHERE {where} ORDER BY {order}")
        if not self._tsql():
            binds.append(cap)
        low = "MIN(qt_id)" if self.ranged or self.oldest_by_min_id else NO_COUNT
        pad = "".join(f", {NO_COUNT}" for _ in range(width - 2))
        return (f"SELECT 'heads', {type_param}, {oldest}, {self._no_time()}, COUNT(*), {low}{pad} "
                f"FROM ({inner}) AS qt_capped")

    def id_span(self) -> Statement:
        """(lowest id, highest id) of the queue table: the two ends of its primary key, one row (two subqueries:
        SQLite seeks an index's end only for a MIN or a MAX alone). Where the layout names the table whose
        identity hands out the ids (`[tables] sequence`), that table's: a view's rows are some of its rows, so its
        ends bound the view's, and are two seeks where the view's MIN and MAX read every row through its join
        (graphile-worker's `jobs` at 10⁶ rows: 170 ms)."""
        def build(binds: list) -> str:
            table, column = f"{self.table('queue')}{self._hint()}", self.col("id")
            if (sequence := self.layout.sequence) is not None:
                table = f"{self.dialect.qualify(self.layout.schema, sequence[0])}{self._hint()}"
                column = self.dialect.quote(sequence[1])
            ends = (f"(SELECT {end}({column}) FROM {table})" for end in ("MIN", "MAX"))
            return f"SELECT {', '.join(ends)}"

        return self._bound("id_span", build, None)

    def pending_sample(self, windows: Sequence[tuple[int, int]], settings: dict[str, Any] | None = None) -> Statement:
        """(job type, pending rows) among the queue table's rows whose ids lie in `windows`, (first, last) ranges
        of its primary key: a deep queue's first look (`watch/firstlook.py`). Each window is a range of the key,
        so the read costs the windows' width in rows, however deep the queue. The ranges are read first, in a
        derived table limited to the windows' width in rows (a limit that never cuts, and that keeps a planner
        from flattening the two: SQLite, without statistics, would otherwise read a state's index whole); the
        pending condition is tested on those rows only."""
        layout, dialect = self.layout, self.dialect
        width = sum(last - first + 1 for first, last in windows)
        values = {**(settings or {}), "__windows": tuple(windows), "__width": width}

        def build(binds: list) -> str:
            id_param = dialect.param(layout.type_of("id"))
            if self._tsql():
                binds.append(lambda v: v["__width"])
            ranges = []
            for n in range(len(windows)):
                ranges.append(f"{self.col('id')} BETWEEN {id_param} AND {id_param}")
                binds += [lambda v, n=n: v["__windows"][n][0], lambda v, n=n: v["__windows"][n][1]]
            read = dialect.first_rows_sql(f"SELECT * FROM {self.table('queue')}{self._hint()} "
                                          f"WHERE {' OR '.join(ranges)}")
            if not self._tsql():
                binds.append(lambda v: v["__width"])
            job_type = self.col("type") if layout.has("type") else "NULL"
            group = f" GROUP BY {dialect.state_group(job_type)}" if layout.has("type") else ""
            # named as the queue table, so a joined column's subquery, which names the row in scope by the table's
            # name, finds it in the window
            return (f"SELECT {job_type}, COUNT(*) FROM ({read}) AS {self.dialect.quote(layout.queue_table)} "
                    f"WHERE {self._pending_where(binds)}{group}")

        return self._bound(f"pending_sample:{len(windows)}", build, values)

    def shape_recount(self, states: Sequence[str], settings: dict[str, Any] | None, after_id: int | None,
                      created_after: Any, completed_after: Any,
                      finished_from: int | None = None) -> Statement:  # fmt: skip
        """A shape's full count, off the poll (`recount.py`): every state of every row, as `state_counts` with no
        low id, and, in the same snapshot, what had already moved past the collector's marks when it was taken:
        'arrived' rows (ids above `after_id`, or created after `created_after`) and 'done' rows (completed after
        `completed_after`; a layout with `done`: 'finished', the rows done with ids from `finished_from` on), per job
        type: (part, type, NULL, then the count)."""
        layout = self.layout
        width = len(states) + self.ranged
        values = {**(settings or {}), "__after_id": after_id, "__created": created_after, "__done": completed_after,
                  "__finished": finished_from}  # fmt: skip

        def moved(part: str, table: str, prefix: str, where: str) -> str:
            return self._count_arm(part, table, where, prefix, pad=width - 1)

        def build(binds: list) -> str:
            arms = self._state_arms(states, binds, False)
            if after_id is not None:  # wherever they are now (native: some already in the completed table)
                for prefix, which in self.identity_tables():
                    newer = (f"{self.col(prefix + 'id')} > {self.dialect.param(layout.type_of(prefix + 'id'))}"
                             f"{self._job_rows(which)}")
                    arms.append(moved("arrived", which, prefix, newer))
                    binds.append(lambda v: v["__after_id"])
            elif created_after is not None:  # wherever they are now: seed 001 moves its requests on
                for prefix, which in self._arrival_tables():
                    created = prefix + "created"
                    arms.append(moved("arrived", which, prefix, f"{self.col(created)} > "
                                      f"{self.dialect.param(layout.type_of(created))}{self._job_rows(which)}"))
                    binds.append(lambda v, role=created: self._typed(role, v["__created"]))
            if completed_after is not None:
                table, at, _, dead, prefix = self._completion_parts()
                binds.append(lambda v: self._typed(at, v["__done"]))
                condition = f"{self.col(at)} > {self.dialect.param(layout.type_of(at))}{self._completion_filter(binds)}"
                if dead:  # a job that went dead is still in a state (dead): it did not leave the count
                    condition += f" AND NOT ({dead})"
                arms.append(moved("done", table, prefix, condition))
            if finished_from is not None:
                id_param = self.dialect.param(layout.type_of("id"))
                arms.append(moved("finished", "queue", "", self._done_from(binds, id_param)))
                binds.append(lambda v: v["__finished"])
            return " UNION ALL ".join(arms)

        key = f"shape_recount:{','.join(states)}:{after_id is not None}:{created_after is not None}:" \
              f"{completed_after is not None}:{finished_from is not None}"
        return self._bound(key, build, values)

    def in_no_state(self, settings: dict[str, Any] | None = None) -> Statement:
        """(job type, rows) of the queue table's rows that no condition of `Layout.accounted` holds for — a value
        the states do not name (procrastinate's legacy 'aborting'), a row a claim left half-written. The whole
        table: a row in no state can be anywhere in it, so this is read off the poll (`watch/unaccounted.py`). A
        condition that is NULL for a row (a NULL time) does not account for it either."""
        layout = self.layout

        def build(binds: list) -> str:
            # the conditions that begin alike said as one family each (`_family_where`): a row is tested against
            # them until one holds, a finished row (most of a table) against nearly all (seed 004's 10⁶ rows on
            # SQLite: 235 -> 179 ms)
            families: dict[Node, list[Node]] = {}
            for node in layout.accounted:
                families.setdefault(_first_term(node), []).append(node)
            accounted = " OR ".join(f"({self._family_where(alike, binds, loose=False)})" for alike in families.values())
            job_type = self.col("type") if layout.has("type") else "NULL"
            group = f" GROUP BY {self.dialect.state_group(job_type)}" if layout.has("type") else ""
            return (f"SELECT {job_type}, COUNT(*) FROM {self.table('queue')}{self._hint()} "
                    f"WHERE (CASE WHEN {accounted} THEN 1 ELSE 0 END) = 0{group}")

        return self._bound("in_no_state", build, settings)



def _terms(node: Node) -> tuple[Node, ...]:
    """A condition's terms: the parts of an AND, or the condition alone."""
    return node.parts if isinstance(node, Junction) and node.kind == "and" else (node,)


def _all_of(terms: Sequence[Node]) -> Node:
    """The AND of these terms (`true` for none)."""
    return Bool(True) if not terms else terms[0] if len(terms) == 1 else Junction("and", tuple(terms))


def _first_term(node: Node) -> Node:
    """A condition's first term: what a family of states shares (`Statements.families`)."""
    return _terms(node)[0]


def _after_first_term(node: Node) -> Node:
    """The rest of a condition after its first term (`true` when it is that term alone)."""
    return _all_of(_terms(node)[1:])


_OPPOSITE = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "=": "<>", "<>": "=", "!=": "="}


def _complementary(rests: Sequence[Node]) -> bool:
    """Two comparisons of the same operands, one the other's negation: between them every row where neither
    operand is NULL. A family's WHERE may then be its first term alone: each state's count keeps its condition."""
    if len(rests) != 2 or not all(isinstance(node, Compare) for node in rests):
        return False
    a, b = rests
    assert isinstance(a, Compare) and isinstance(b, Compare)
    return (a.left, a.right) == (b.left, b.right) and _OPPOSITE.get(a.op) == b.op
