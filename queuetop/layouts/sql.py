"""Every statement of a state-machine layout, built from the layout and a dialect's primitives.

Every shape's monitor reads come from here, the native schema's included (its queue operations are still the dialect
modules' own, until issue 19's step 3); the seeds' tables and users' own files are served whole: the monitor's reads
(states counted per job type, arrivals past an identity or a time watermark, completions past a watermark) and the
actions (enqueue the way the seed's insert does, release by compare-and-set, dead retry/delete). Roles become quoted
column names, conditions come from `predicate.py`, values always travel as typed `?` parameters, and times are the
database's own clock of the layout's kind (`GETDATE()` / `LOCALTIMESTAMP` / SQLite 'localtime' for the seeds, UTC
for native) — never the client's. Each statement starts with `/* queuetop */` and is rendered once per layout and
dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from queuetop.layouts import Layout, State
from queuetop.layouts.predicate import (
    Bool,
    Compare,
    Junction,
    Node,
    Not,
    Now,
    Number,
    Operand,
    Role,
    Setting,
    Text,
    settings_of,
)

if TYPE_CHECKING:
    from queuetop.db.dialects import Dialect

TAG = "/* queuetop */ "
Statement = tuple[str, tuple[Any, ...]]
Bind = Callable[[dict[str, Any]], Any]  # makes one `?` parameter from the settings of the moment
NO_COUNT = "CAST(NULL AS bigint)"  # typed, so PostgreSQL can match the UNION's columns


class Statements:
    """The statements of one layout in one dialect. Settings ($max_attempts, $lost_after) are bound at run time."""

    def __init__(self, dialect: Dialect, layout: Layout) -> None:
        self.dialect = dialect
        self.layout = layout
        self._cache: dict[str, tuple[str, tuple[Bind, ...]]] = {}

    # -- names -------------------------------------------------------------------------------------------
    def table(self, which: str) -> str:
        layout = self.layout
        name = layout.queue_table if which == "queue" else layout.completed_table
        assert name is not None, which
        return self.dialect.qualify(layout.schema, name)

    def col(self, role: str) -> str:
        return self.dialect.quote(self.layout.columns[role])

    def now(self) -> str:
        return self.dialect.now_sql(self.layout.clock)

    def _hint(self) -> str:
        return self.dialect.nolock

    def _row_hint(self) -> str:
        """The drill-down reads rows, not counts: never a dirty one (READPAST on SQL Server without RCSI)."""
        return self.dialect.row_hint

    # -- conditions --------------------------------------------------------------------------------------
    def condition(self, node: Node, binds: list[Callable[[dict[str, Any]], Any]]) -> str:
        """SQL for a parsed condition; appends to `binds` one getter per `?`, in order."""
        if isinstance(node, Bool):
            return "1 = 1" if node.value else "1 = 0"
        if isinstance(node, Not):
            return f"NOT ({self.condition(node.inner, binds)})"
        if isinstance(node, Junction):
            joiner = " AND " if node.kind == "and" else " OR "
            return "(" + joiner.join(self.condition(part, binds) for part in node.parts) + ")"
        assert isinstance(node, Compare)
        if node.right is None:
            return f"{self._operand(node.left, None, binds)} {node.op.upper()}"
        left_type = self.layout.type_of(node.left.name) if isinstance(node.left, Role) else None
        right_type = self.layout.type_of(node.right.name) if isinstance(node.right, Role) else None
        left = self._operand(node.left, right_type, binds)
        right = self._operand(node.right, left_type, binds)
        return f"{left} {node.op} {right}"

    def _operand(self, operand: Operand, other_type: str | None, binds: list) -> str:
        if isinstance(operand, Role):
            return self.col(operand.name)
        if isinstance(operand, Now):
            if operand.offset is None:
                return self.now()
            name, sign = operand.offset, operand.sign
            binds.append(lambda s: self.dialect.shift_param(sign * float(s[name])))
            return self.dialect.shifted_now_sql(self.layout.clock)
        if isinstance(operand, Number):
            if other_type == "bit":
                return self.dialect.bit_literal(operand.value)
            return str(operand.value)
        if isinstance(operand, Text):
            # Written as a literal, so a filtered index on it (Outcome = 'dead') can serve the statement; the
            # grammar admits no quote in it, so it cannot end the literal early.
            return f"'{operand.value}'"
        assert isinstance(operand, Setting)
        name = operand.name
        binds.append(lambda s: int(s[name]))
        return self.dialect.param("int")

    def _render(self, key: str, build: Callable[[list], str]) -> tuple[str, tuple[Bind, ...]]:
        cached = self._cache.get(key)
        if cached is None:
            binds: list[Bind] = []
            cached = (TAG + build(binds), tuple(binds))
            self._cache[key] = cached
        return cached

    def _bound(self, key: str, build: Callable[[list], str], settings: dict[str, Any] | None,
               tail: Sequence[Any] = ()) -> Statement:  # fmt: skip
        sql, binds = self._render(key, build)
        values = {**self.layout.settings, **(settings or {})}
        return sql, (*(bind(values) for bind in binds), *tail)

    # -- monitor reads -----------------------------------------------------------------------------------
    def state_counts(self, states: Sequence[str], settings: dict[str, Any] | None = None,
                     low_id: int | None = None, finished: bool = False) -> Statement:
        """One round trip, one pass per family of states (`families`). Columns: (part, job type, oldest pending
        created, then one count per state in the order given). The first row is ('now', NULL, the database's
        clock, NULLs); then one row per family and job type, its counts NULL for the states of the other families
        (part: the family's table).

        On a layout whose rows never leave the queue table (`ranged`), a last column gives the lowest id in any
        state, and `low_id` limits the read to ids from there on: a range of the primary key, so the poll reads
        the live end of the table, not its finished history.

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
                                  {**(settings or {}), "__low": low_id})
        return sql, params

    def _state_arms(self, states: Sequence[str], binds: list, from_low: bool) -> list[str]:
        """`state_counts`' arms: the 'now' row, then one per family of `states`."""
        nulls = ", ".join([NO_COUNT] * (len(states) + self.ranged))
        arms = [f"SELECT 'now' AS qt_part, NULL AS qt_type, {self.now()} AS qt_oldest, {nulls}"]
        return arms + self._family_arms(states, binds, from_low)

    def _family_arms(self, states: Sequence[str], binds: list, from_low: bool, times: str = "",
                     pad: int = 0) -> list[str]:  # fmt: skip
        """One `_table_arm` per family of `states`, each followed by its low id's bind where read from it."""
        arms = []
        for table, mine in self.families(states):
            arms.append(self._table_arm(table, states, mine, binds, from_low, times, pad))
            if from_low:
                binds.append(lambda v: v["__low"])
        return arms

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
        """Rows stay in the queue table for good and carry an identity: the live ones are its newest ids."""
        layout = self.layout
        return layout.arrivals == "identity" and all(state.table == "queue" for state in layout.states.values()) \
            and (layout.completions is None or layout.completions.table == "queue")

    def _from_low_id(self) -> str:
        return f" AND {self.col('id')} >= {self.dialect.param(self.layout.type_of('id'))}"

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

        def rest(name: str) -> str:
            return self.condition(_after_first_term(self.layout.states[name].condition), binds)

        if "pending" in mine and self.layout.has(created_role):
            pending = "" if alone else rest("pending")
            columns.append(f"MIN({self.col(created_role)})" if alone else
                           f"MIN(CASE WHEN {pending} THEN {self.col(created_role)} END)")
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

    def _family_where(self, conditions: Sequence[Node], binds: list) -> str:
        """Any of a family's conditions, with the beginning they share said once and first (`a AND (b OR c)`,
        not `(a AND b) OR (a AND c)`): so SQLite, which matches a partial index's filter to a term of the WHERE,
        and any planner, sees that only the index's rows are read."""
        if len(conditions) == 1:
            return self.condition(conditions[0], binds)
        first = _first_term(conditions[0])
        rests = [_after_first_term(node) for node in conditions]
        head = self.condition(first, binds)
        if _complementary(rests):  # `timeout >= now` / `timeout < now`: the head alone reads the same rows
            return head           # (but those with a NULL there, counted in neither), from the index alone
        return f"{head} AND ({' OR '.join(f'({self.condition(rest, binds)})' for rest in rests)})"

    def clock(self) -> Statement:
        """The database's current time in the layout's clock."""
        return self._bound("clock", lambda b: f"SELECT {self.now()}", None)

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
            if spec.where is not None:
                where += " AND " + self.condition(spec.where.condition, binds)
            if low_id is not None:
                where += self._from_low_id()
            return f"SELECT {', '.join(cols)} FROM {self.table(spec.table)}{self._hint()} WHERE {where}"

        sql, params = self._bound(f"completions_after:{low_id is not None}", build, settings)
        return sql, (since, *params, *(() if low_id is None else (low_id,)))

    # -- bounded monitor reads: counts per job type and second, and a capped sample of completions -----------
    # Whatever the throughput, a poll fetches one row per job type and second of its range, plus at most a fixed
    # number of sampled completions for the percentiles.
    def _completion_parts(self) -> tuple[str, str, list[str | None], Node | None, str | None, str]:
        """(table, completed-at role, [wait from, wait to, processing from, processing to], extra condition, the
        dead condition or None, the role prefix of the table). The dead condition is the layout's dead state where it
        is a state of the completions' own table (native: Outcome 'dead') and needs no setting: those completions
        are counted apart ("dead among them") and kept out of the wait and processing sample — a job that ran out
        of attempts says nothing of how long the work takes."""
        spec = self.layout.completions
        assert spec is not None, "a shape without completions has no completion reads"
        pairs: list[str | None] = [*(spec.wait or (None, None)), *(spec.processing or (None, None))]
        where = spec.where.condition if spec.where is not None else None
        dead_state, dead = self.layout.states.get("dead"), None
        if dead_state is not None and dead_state.table == spec.table and not settings_of(dead_state.condition):
            dead = self.condition(dead_state.condition, [])
        return spec.table, spec.at, pairs, where, dead, "c_" if spec.table == "completed" else ""

    def _typed(self, role: str, value: Any) -> Any:
        return self.dialect.encode_value(self.layout.type_of(role), value)

    def _integer_id(self, role: str) -> bool:
        return (self.layout.type_of(role) or "").lower() in ("bigint", "int", "integer", "smallint", "tinyint")

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
        still an arrival, and the highest id is the highest of both."""
        moves = self.layout.completed_table is not None and self.layout.has("c_id")
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
                f"WHERE {id_col} > {param}{' GROUP BY ' + group if group else ''}")

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
        table, at, _, where_node, dead, prefix = self._completion_parts()
        type_role = prefix + "type"
        second = self.dialect.second_sql(self.col(at))
        keys = [self.col(type_role) if self.layout.has(type_role) else None, second]
        where = f"{self.col(at)} > {self.dialect.param(self.layout.type_of(at))}"
        if where_node is not None:
            where += " AND " + self.condition(where_node, binds)
        if low_id is not None:
            where += self._from_low_id()
        dead_count = f"SUM(CASE WHEN {dead} THEN 1 ELSE 0 END)" if dead else "0"
        latest = f"MAX({self.col(at)})"
        counts = f"{latest}, COUNT(*), {dead_count}" if latest_first else f"COUNT(*), {dead_count}, {latest}"
        return (f"SELECT {part}{keys[0] or 'NULL'}, {second}, {counts}{tail} "
                f"FROM {self.table(table)}{self._hint()} WHERE {where} "
                f"GROUP BY {', '.join(k for k in keys if k)}")

    def arrival_counts_since(self, since: Any, upto_id: int | None) -> Statement:
        """(job type, second created, rows, NULL, latest created) per job type and second of the rows created after
        `since` (and with id <= upto_id, when given), in the queue table and the completed one: the first poll's
        look back over one window, or (shapes whose ids are not an identity) every poll's arrivals, as counts."""
        with_ids = upto_id is not None

        def build(binds: list) -> str:
            return " UNION ALL ".join(self._arrival_since_arm(prefix, which, with_ids) for prefix, which in
                                      self._arrival_tables())  # fmt: skip

        sql, _ = self._render(f"arrival_counts_since:{with_ids}", build)
        params: list[Any] = []
        for prefix in ("", "c_")[: sql.count(" UNION ALL ") + 1]:
            params += [self._typed(prefix + "created", since), *((upto_id,) if with_ids else ())]
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
        where = f"{created} > {self.dialect.param(layout.type_of(prefix + 'created'))}"
        if with_ids:
            where += f" AND {id_col} <= {self.dialect.param(layout.type_of(prefix + 'id'))}"
        counts = f"COUNT(*), {NO_COUNT}, MAX({created})"
        if part:
            counts = f"MAX({created}), COUNT(*), {', '.join([NO_COUNT] * (2 + pad))}"
        return (f"SELECT {part}{keys[0] or 'NULL'}, {keys[1]}, {counts} FROM {self.table(which)}{self._hint()} "
                f"WHERE {where} GROUP BY {', '.join(k for k in keys if k)}")

    def shape_poll(self, states: Sequence[str], settings: dict[str, Any] | None, low_id: int | None,
                   identity: tuple[int, int] | None, created_since: Any, completed: tuple[Any, int | None] | None,
                   heads: tuple[Sequence[Any], int] | None = None,
                   finished: tuple[int, int] | None = None) -> Statement:  # fmt: skip
        """A shape's poll but the latency sample, in one round trip: `state_counts` (with its 'now' row), the
        arrivals (`identity`: (after id, settle id) of `arrival_counts`; or `created_since` for
        `arrival_counts_since`), `completed`: (since, low id) of `completion_counts`, and `heads`: (job types, cap)
        of `shape_heads`, the pending state read capped (then `states` leaves "pending" out). Rows of (part, type,
        time, latest, then counts): 'now' (the clock as time); the tables' state rows as in `state_counts` (time
        = oldest pending, latest NULL, one count per state, the lowest id where ranged); 'arrived' and 'done'
        (time = the second, latest = the latest created / completed, then rows, rows above settle / dead, highest
        id; NULL where the read has none); 'heads' as `shape_heads` gives them; 'finished' (a layout with `done`):
        `finished` = (old base, new base), the rows done from each base on (`FinishedWatch`); padded with NULL
        counts to the widest."""
        layout = self.layout
        width = max(len(states) + self.ranged, 3)
        no_time = self._no_time()
        values = {**(settings or {}), "__low": low_id, "__identity": identity, "__since": created_since,
                  "__completed": completed, "__heads": heads, "__finished": finished}  # fmt: skip

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
               f"{len(heads[0]) if heads is not None else None}:{finished is not None}")
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

        return self._bound(f"shape_heads:{len(job_types)}:{low_id is not None}", build, values)

    @property
    def heads_by_type_list(self) -> bool:
        """The capped pending read is one arm over a list of the types (`_heads_by_list`): a typed shape whose
        rows leave the queue when done (not `ranged`), where the oldest job is found by its time."""
        return self.layout.has("type", "created") and not self.ranged

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
        return (f"SELECT 'heads', qt_heads.job_type, {oldest}, {self._no_time()}, CASE WHEN qt_heads.counted = 1 "
                f"THEN (SELECT COUNT(*) FROM ({capped}) AS qt_capped) END, {NO_COUNT}{pad} FROM {rows}")

    def _pending_where(self, binds: list) -> str:
        """The pending state as the capped reads say it: with the layout's `monitor_guard`, so that the index
        filtered on it serves them (see Layout)."""
        where = self.condition(self.layout.states["pending"].condition, binds)
        if self.layout.monitor_guard is not None:
            where += " AND " + self.condition(self.layout.monitor_guard.condition, binds)
        return where

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
        if not self.ranged and layout.has("created"):
            order, read_id = self.col("created"), ""
        inner = dialect.first_rows_sql(f"SELECT {at} AS qt_at{read_id} FROM {self.table('queue')}"
                                       f"{self._hint()} WHERE {where} ORDER BY {order}")
        if not self._tsql():
            binds.append(cap)
        low = "MIN(qt_id)" if self.ranged else NO_COUNT
        pad = "".join(f", {NO_COUNT}" for _ in range(width - 2))
        return (f"SELECT 'heads', {type_param}, MIN(qt_at), {self._no_time()}, COUNT(*), {low}{pad} "
                f"FROM ({inner}) AS qt_capped")

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
                    newer = f"{self.col(prefix + 'id')} > {self.dialect.param(layout.type_of(prefix + 'id'))}"
                    arms.append(moved("arrived", which, prefix, newer))
                    binds.append(lambda v: v["__after_id"])
            elif created_after is not None:  # wherever they are now: seed 001 moves its requests on
                for prefix, which in self._arrival_tables():
                    created = prefix + "created"
                    arms.append(moved("arrived", which, prefix,
                                      f"{self.col(created)} > {self.dialect.param(layout.type_of(created))}"))
                    binds.append(lambda v, role=created: self._typed(role, v["__created"]))
            if completed_after is not None:
                table, at, _, where_node, dead, prefix = self._completion_parts()
                binds.append(lambda v: self._typed(at, v["__done"]))
                condition = f"{self.col(at)} > {self.dialect.param(layout.type_of(at))}"
                if where_node is not None:
                    condition += " AND " + self.condition(where_node, binds)
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

    SAMPLE_SCALE = 65536  # a sampled row's id hashes to 0 … SAMPLE_SCALE − 1; it is taken below the threshold

    def completion_sample(self, after: Any, upto: Any, share: float, limit: int,
                          settings: dict[str, Any] | None = None, low_id: int | None = None) -> Statement:
        """(job type, completed at, wait from, wait to, processing from, processing to) of at most `limit`
        completions in (after, upto], dead jobs left out: about `share` of them, picked by a hash of the id that
        spreads over job types and time alike (ids that are not integers: the first `limit` rows)."""
        table, at, pairs, where_node, dead, prefix = self._completion_parts()
        hashed = self._integer_id(prefix + "id")

        def build(binds: list) -> str:
            type_role = prefix + "type"
            cols = ", ".join([self.col(type_role) if self.layout.has(type_role) else "NULL", self.col(at),
                              *(self.col(role) if role else "NULL" for role in pairs)])
            at_param = self.dialect.param(self.layout.type_of(at))
            where = f"{self.col(at)} > {at_param} AND {self.col(at)} <= {at_param}"
            if where_node is not None:
                where += " AND " + self.condition(where_node, binds)
            if dead:
                where += f" AND NOT ({dead})"
            if low_id is not None:
                where += self._from_low_id()
            if hashed:  # a multiplicative hash of the id: consecutive ids land far apart, so no type is favoured
                where += f" AND (({self.col(prefix + 'id')} % 65521) * 40503) % {self.SAMPLE_SCALE} < ?"
            return self.dialect.first_rows_sql(f"SELECT {cols} FROM {self.table(table)}{self._hint()} WHERE {where}")

        sql, params = self._bound(f"completion_sample:{low_id is not None}", build, settings)
        threshold = (max(1, min(self.SAMPLE_SCALE, round(share * self.SAMPLE_SCALE))),) if hashed else ()
        return sql, self.dialect.first_rows_params(
            (self._typed(at, after), self._typed(at, upto), *params, *(() if low_id is None else (low_id,)),
             *threshold), limit)

    # -- actions -----------------------------------------------------------------------------------------
    def _type_filter(self, state: State, job_type: str | None) -> str:
        if job_type is None:
            return ""
        role = ("c_" if state.table == "completed" else "") + "type"
        return f" AND {self.col(role)} = {self.dialect.param(self.layout.type_of(role))}"

    def _type_param(self, state: State, job_type: str | None) -> tuple[Any, ...]:
        if job_type is None:
            return ()
        role = ("c_" if state.table == "completed" else "") + "type"
        return (self.dialect.encode_value(self.layout.type_of(role), job_type),)

    def count_state(self, state_name: str, job_type: str | None = None,
                    settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """How many rows are in a state (of one job type)."""
        state = self.layout.states[state_name]

        def build(binds: list) -> str:
            return f"SELECT COUNT(*) FROM {self.table(state.table)}{self._hint()} {self._where(state, job_type, binds)}"

        sql, params = self._bound(f"count:{state_name}:{job_type is not None}", build, settings)
        return sql, (*params, *self._type_param(state, job_type))

    def _where(self, state: State, job_type: str | None, binds: list) -> str:
        return f"WHERE {self.condition(state.condition, binds)}{self._type_filter(state, job_type)}"

    def ids_in_state(self, state_name: str, job_type: str | None, limit: int,
                     settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """(id, token or NULL) of up to `limit` rows in a state: the rows an action then changes one by one."""
        state = self.layout.states[state_name]
        prefix = "c_" if state.table == "completed" else ""

        def build(binds: list) -> str:
            token = self.col("token") if not prefix and self.layout.has("token") else "NULL"
            return self.dialect.first_rows_sql(
                f"SELECT {self.col(prefix + 'id')}, {token} FROM {self.table(state.table)} WHERE "
                f"{self.condition(state.condition, binds)}{self._type_filter(state, job_type)} "
                f"ORDER BY {self.col(prefix + 'id')}")

        sql, params = self._bound(f"ids:{state_name}:{job_type is not None}", build, settings)
        return sql, self.dialect.first_rows_params((*params, *self._type_param(state, job_type)), limit)

    def clear_claim(self, state_name: str, settings: dict[str, Any] | None, job_id: Any, token: Any) -> Statement:
        """Clear one row's claim token, only while it still holds `token` and is still in the state: a job claimed
        again meanwhile (a new token) is never stolen."""
        state = self.layout.states[state_name]

        def build(binds: list) -> str:
            head = (f"UPDATE {self.table('queue')} SET {self.col('token')} = NULL WHERE {self.col('id')} = "
                    f"{self.dialect.param(self.layout.type_of('id'))} AND {self.col('token')} = "
                    f"{self.dialect.param(self.layout.type_of('token'))} AND ")
            binds.append(lambda s: s["__id"])
            binds.append(lambda s: s["__token"])
            return head + self.condition(state.condition, binds)

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

    def retry_dead(self, job_type: str | None, settings: dict[str, Any] | None = None) -> Statement:
        """Every dead job (of one type) back to pending, as the layout's dead_retry says."""
        state = self.layout.states["dead"]

        def build(binds: list) -> str:
            sets = ", ".join(f"{self.col(role)} = {'NULL' if value is None else int(value)}"
                             for role, value in self.layout.dead_retry.items())  # fmt: skip
            return f"UPDATE {self.table('queue')} SET {sets} {self._where(state, job_type, binds)}"

        sql, params = self._bound(f"retry_dead:{job_type is not None}", build, settings)
        return sql, (*params, *self._type_param(state, job_type))

    def delete_state(self, state_name: str, job_type: str | None, settings: dict[str, Any] | None = None) -> Statement:
        state = self.layout.states[state_name]

        def build(binds: list) -> str:
            return f"DELETE FROM {self.table(state.table)} {self._where(state, job_type, binds)}"

        sql, params = self._bound(f"delete:{state_name}:{job_type is not None}", build, settings)
        return sql, (*params, *self._type_param(state, job_type))

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
            return self.dialect.insert_returning_sql(self.table("queue"), columns, values, self.col("id"))

        return self._render(f"insert:{','.join(fields)}:{delayed}", build)[0]

    # -- drill-down --------------------------------------------------------------------------------------
    def rows_in_states(self, state_names: Sequence[str], job_type: str | None, roles: Sequence[str | None],
                       order: Sequence[str], limit: int, settings: dict[str, Any] | None = None,
                       descending: bool = False) -> Statement:  # fmt: skip
        """The given roles (None: NULL) of up to `limit` rows in any of the states (all on one table), ordered."""
        states = [self.layout.states[name] for name in state_names]

        def build(binds: list) -> str:
            columns = ", ".join(self.col(role) if role and self.layout.has(role) else "NULL" for role in roles)
            where = " OR ".join(f"({self.condition(state.condition, binds)})" for state in states)
            direction = " DESC" if descending else ""
            ordering = ", ".join(self.col(role) + direction for role in order if self.layout.has(role))
            return self.dialect.first_rows_sql(
                f"SELECT {columns} FROM {self.table(states[0].table)}{self._row_hint()} WHERE ({where})"
                f"{self._type_filter(states[0], job_type)} ORDER BY {ordering}")

        key = f"rows:{','.join(state_names)}:{job_type is not None}:{roles}:{order}:{descending}"
        sql, params = self._bound(key, build, settings)
        return sql, self.dialect.first_rows_params((*params, *self._type_param(states[0], job_type)), limit)

    def recent_completions(self, job_type: str | None, since: Any, limit: int,
                           settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """(id, completed at, wait from, wait to, processing from, processing to) newest first, after `since`."""
        spec = self.layout.completions
        assert spec is not None
        prefix = "c_" if spec.table == "completed" else ""
        type_role = prefix + "type"

        def build(binds: list) -> str:
            pairs = [*(spec.wait or (None, None)), *(spec.processing or (None, None))]
            cols = ", ".join([self.col(prefix + "id"), self.col(spec.at),
                              *(self.col(role) if role else "NULL" for role in pairs)])
            where = f"{self.col(spec.at)} > {self.dialect.param(self.layout.type_of(spec.at))}"
            if spec.where is not None:
                where += " AND " + self.condition(spec.where.condition, binds)
            if job_type is not None:
                where += f" AND {self.col(type_role)} = {self.dialect.param(self.layout.type_of(type_role))}"
            return self.dialect.first_rows_sql(f"SELECT {cols} FROM {self.table(spec.table)}{self._row_hint()} WHERE "
                                               f"{where} ORDER BY {self.col(spec.at)} DESC")

        sql, params = self._bound(f"recent:{job_type is not None}", build, settings)
        typed = (self.dialect.encode_value(self.layout.type_of(type_role), job_type),) if job_type is not None else ()
        return sql, self.dialect.first_rows_params((since, *params, *typed), limit)

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
            binds.append(lambda s: self.dialect.shift_param(float(s["__lease"])))
            return self.dialect.shifted_now_sql(layout.clock)
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

    def _claim_statement(self, key: str, build: Callable[[list], str], values: dict[str, Any]) -> Statement:
        return self._bound(key, build, {**values, "__lease": values.get("__lease", 0)})

    def claim_one(self, form: str, values: dict[str, Any]) -> Statement:
        """`update_top` / `cte`: one statement that takes one row and returns CLAIM_COLUMNS."""
        claim, typed = self._claim_spec(), "__type" in values
        table = self.table("queue")

        def build(binds: list) -> str:
            if self._tsql():
                if form == "update_top":
                    target = self.dialect.qualify(self.layout.schema, self.layout.pending_view) \
                        if claim.through_view and self.layout.pending_view else table
                    sets = self._sets(claim.sets, binds)
                    return (f"UPDATE TOP (1) {target} WITH (READPAST) SET {sets} "
                            f"OUTPUT {self._claim_output('inserted.')} WHERE {self._claimable(binds, typed)}")
                pick = f"SELECT TOP (1) * FROM {table} WITH (READPAST) WHERE {self._claimable(binds, typed)}"
                return (f"WITH qt_next AS ({pick}{self._order()}) UPDATE qt_next SET {self._sets(claim.sets, binds)} "
                        f"OUTPUT {self._claim_output('inserted.')}")
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

    # -- where a load run's jobs ended up (the load report) --------------------------------------------------
    def row_states(self, table: str, settings: dict[str, Any] | None, low_id: int | None,
                   since_s: float | None) -> Statement:  # fmt: skip
        """(id, state) of a table's rows: from `low_id` on (identity layouts) or created in the last `since_s`
        seconds. The state is "done" where the shape's completion holds (on shapes that complete jobs), else the
        first of the layout's states of that table whose condition holds, else NULL (taken: a claim that is
        final, or a row in no state)."""
        prefix = "c_" if table == "completed" else ""
        states = [name for name, state in self.layout.states.items() if state.table == table]
        spec, claim = self.layout.completions, self.layout.claim

        def build(binds: list) -> str:
            arms = []
            if claim is not None and claim.finish and spec is not None and spec.table == table:
                done = f"{self.col(spec.at)} IS NOT NULL"
                if spec.where is not None:
                    done += f" AND {self.condition(spec.where.condition, binds)}"
                arms.append(f"WHEN {done} THEN 'done'")
            arms += [f"WHEN {self.condition(self.layout.states[name].condition, binds)} THEN '{name}'"
                     for name in states]  # fmt: skip
            case = f"CASE {' '.join(arms)} ELSE NULL END" if arms else "NULL"
            if low_id is not None:
                where = f"{self.col(prefix + 'id')} >= {self.dialect.param(self.layout.type_of(prefix + 'id'))}"
            else:
                binds.append(lambda s: self.dialect.shift_param(-float(s["__since_s"])))
                where = f"{self.col(prefix + 'created')} >= {self.dialect.shifted_now_sql(self.layout.clock)}"
            return f"SELECT {self.col(prefix + 'id')}, {case} FROM {self.table(table)} WHERE {where}"

        sql, params = self._bound(f"row_states:{table}:{low_id is not None}", build,
                                  {**(settings or {}), "__since_s": since_s or 0})  # fmt: skip
        return sql, (*params, *(() if low_id is None else (low_id,)))

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
        shape cannot know (no claimed / timed-out state) is NULL."""
        layout = self.layout
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
            where = [f"({self.condition(layout.states[name].condition, binds)})" for name in held_states]
            binds.append(lambda s: self.dialect.shift_param(-float(s["__seen_s"])))
            where.append(f"{self.col('claimed_at')} >= {since}")
            return (f"SELECT {', '.join(columns)} FROM {self.table('queue')}{self._hint()} "
                    f"WHERE {' OR '.join(where)} GROUP BY {self.col('claimed_by')}")

        return self._bound("worker_claims", build, {**(settings or {}), "__recent_s": recent_s, "__seen_s": seen_s})

    def worker_completions(self, recent_s: float, limit: int, settings: dict[str, Any] | None = None) -> Statement:
        """(claimer, claimed at, completed at) of up to `limit` jobs completed in the last `recent_s`, newest first,
        where the shape's completions record who processed the job (a claimer role on the completions' table)."""
        spec = self.layout.completions
        assert spec is not None and spec.processing is not None
        prefix = "c_" if spec.table == "completed" else ""

        def build(binds: list) -> str:
            binds.append(lambda s: self.dialect.shift_param(-float(s["__recent_s"])))
            where = f"{self.col(spec.at)} > {self.dialect.shifted_now_sql(self.layout.clock)}"
            if spec.where is not None:
                where += " AND " + self.condition(spec.where.condition, binds)
            start, end = spec.processing
            return self.dialect.first_rows_sql(
                f"SELECT {self.col(prefix + 'claimed_by')}, {self.col(start)}, {self.col(end)} "
                f"FROM {self.table(spec.table)}{self._hint()} WHERE {where} ORDER BY {self.col(spec.at)} DESC")

        sql, params = self._bound("worker_completions", build, {**(settings or {}), "__recent_s": recent_s})
        return sql, self.dialect.first_rows_params(params, limit)

    def ids_of_claimer(self, state_name: str, worker: str | None, limit: int,
                       settings: dict[str, Any] | None = None) -> Statement:  # fmt: skip
        """(id, token) of up to `limit` rows in a state held by one claimer: what a worker's release clears."""
        state = self.layout.states[state_name]

        def build(binds: list) -> str:
            return self.dialect.first_rows_sql(
                f"SELECT {self.col('id')}, {self.col('token')} FROM {self.table('queue')} WHERE "
                f"{self.condition(state.condition, binds)}{self._claimer_filter(worker)} ORDER BY {self.col('id')}")

        sql, params = self._bound(f"ids_of_claimer:{state_name}:{worker is None}", build, settings)
        return sql, self.dialect.first_rows_params((*params, *self._claimer_param(worker)), limit)

    def make_available(self, job_type: str | None, settings: dict[str, Any] | None = None) -> Statement:
        """Scheduled jobs (of one type) available now: their available time set to the database's now, only where
        a row is still scheduled when the statement runs (a job claimed meanwhile is left alone)."""
        state = self.layout.states["scheduled"]

        def build(binds: list) -> str:
            return (f"UPDATE {self.table('queue')} SET {self.col('available')} = {self.now()} "
                    f"{self._where(state, job_type, binds)}")

        sql, params = self._bound(f"make_available:{job_type is not None}", build, settings)
        return sql, (*params, *self._type_param(state, job_type))


# newid() on SQLite: a version-4 GUID as upper-case canonical text, as SQL Server shows one.
SQLITE_NEWID = ("hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' "
                "|| substr('89AB', 1 + (random() & 3), 1) || substr(hex(randomblob(2)), 2) || '-' "
                "|| hex(randomblob(6))")  # fmt: skip


def _first_term(node: Node) -> Node:
    """A condition's first term: what a family of states shares (`Statements.families`)."""
    return node.parts[0] if isinstance(node, Junction) and node.kind == "and" else node


def _after_first_term(node: Node) -> Node:
    """The rest of a condition after its first term (`true` when it is that term alone)."""
    if not (isinstance(node, Junction) and node.kind == "and"):
        return Bool(True)
    return node.parts[1] if len(node.parts) == 2 else Junction("and", node.parts[1:])


_OPPOSITE = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "=": "<>", "<>": "=", "!=": "="}


def _complementary(rests: Sequence[Node]) -> bool:
    """Two comparisons of the same operands, one the other's negation: between them every row where neither
    operand is NULL. A family's WHERE may then be its first term alone: each state's count keeps its condition."""
    if len(rests) != 2 or not all(isinstance(node, Compare) for node in rests):
        return False
    a, b = rests
    assert isinstance(a, Compare) and isinstance(b, Compare)
    return (a.left, a.right) == (b.left, b.right) and _OPPOSITE.get(a.op) == b.op
