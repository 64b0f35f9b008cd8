"""Every statement of a state-machine layout, built from the layout and a dialect's primitives.

The native schema keeps its hand-tuned statements in the dialect modules; every other shape (the seeds' tables
and users' own files) is served from here: the monitor's reads (states counted per job type, arrivals past an
identity or a time watermark, completions past a watermark) and the actions (enqueue the way the seed's insert
does, release by compare-and-set, dead retry/delete). Roles become quoted column names, conditions come from
`predicate.py`, values always travel as typed `?` parameters, and times are the database's own clock of the
layout's kind (`GETDATE()` / `LOCALTIMESTAMP` / SQLite 'localtime' for the seeds, UTC for native) — never the
client's. Each statement starts with `/* queuetop */` and is rendered once per layout and dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from queuetop.layouts import Layout, State
from queuetop.layouts.predicate import Bool, Compare, Junction, Node, Not, Now, Number, Operand, Role, Setting

if TYPE_CHECKING:
    from queuetop.db.dialects import Dialect

TAG = "/* queuetop */ "
Statement = tuple[str, tuple[Any, ...]]


class Statements:
    """The statements of one layout in one dialect. Settings ($max_attempts, $lost_after) are bound at run time."""

    def __init__(self, dialect: Dialect, layout: Layout) -> None:
        self.dialect = dialect
        self.layout = layout
        self._cache: dict[str, tuple[str, tuple[Callable[[dict[str, Any]], Any], ...]]] = {}

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
        assert isinstance(operand, Setting)
        name = operand.name
        binds.append(lambda s: int(s[name]))
        return self.dialect.param("int")

    def _render(self, key: str, build: Callable[[list], str]) -> tuple[str, tuple[Callable[[dict[str, Any]], Any], ...]]:
        cached = self._cache.get(key)
        if cached is None:
            binds: list[Callable[[dict[str, Any]], Any]] = []
            cached = (TAG + build(binds), tuple(binds))
            self._cache[key] = cached
        return cached

    def _bound(self, key: str, build: Callable[[list], str], settings: dict[str, Any] | None,
               tail: Sequence[Any] = ()) -> Statement:  # fmt: skip
        sql, binds = self._render(key, build)
        values = {**self.layout.settings, **(settings or {})}
        return sql, (*(bind(values) for bind in binds), *tail)

    # -- monitor reads -----------------------------------------------------------------------------------
    def state_counts(self, states: Sequence[str], settings: dict[str, Any] | None = None) -> Statement:
        """One round trip: a first row ('now', NULL, 0, the database's clock), then per state and job type
        (state, type, rows, oldest created). Each arm has its own WHERE, so each can seek its own index."""
        def build(binds: list) -> str:
            arms = [f"SELECT 'now' AS qt_state, NULL AS qt_type, 0 AS qt_rows, {self.now()} AS qt_oldest"]
            for name in states:
                state = self.layout.states[name]
                arms.append(self._state_arm(name, state, binds))
            return " UNION ALL ".join(arms)

        return self._bound("state_counts:" + ",".join(states), build, settings)

    def _state_arm(self, name: str, state: State, binds: list) -> str:
        prefix = "c_" if state.table == "completed" else ""
        type_role, created_role = prefix + "type", prefix + "created"
        has_type = self.layout.has(type_role)
        type_sql = self.col(type_role) if has_type else "NULL"
        oldest = f"MIN({self.col(created_role)})" if name == "pending" and self.layout.has(created_role) else "NULL"
        where = self.condition(state.condition, binds)
        group = f" GROUP BY {self.col(type_role)}" if has_type else ""
        return (f"SELECT '{name}', {type_sql}, COUNT(*), {oldest} FROM {self.table(state.table)}{self._hint()} "
                f"WHERE {where}{group}")

    def max_id(self) -> Statement:
        return self._bound("max_id", lambda b: f"SELECT MAX({self.col('id')}) FROM {self.table('queue')}"
                                               f"{self._hint()}", None)

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

    def completions_after(self, since: Any, settings: dict[str, Any] | None = None) -> Statement:
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
            where = f"{self.col(spec.at)} > {self.dialect.param(self.layout.type_of(spec.at))}"  # the first parameter: `since`
            if spec.where is not None:
                where += " AND " + self.condition(spec.where.condition, binds)
            return f"SELECT {', '.join(cols)} FROM {self.table(spec.table)}{self._hint()} WHERE {where}"

        sql, params = self._bound("completions_after", build, settings)
        return sql, (since, *params)
