"""What every statement builder shares: a layout's quoted names, its conditions rendered as SQL with their
parameters, and the cache that renders each statement once per layout and dialect."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from queuetop.layouts import Layout, State
from queuetop.layouts.model import Joined
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
    Values,
)

if TYPE_CHECKING:
    from queuetop.db.dialects import Dialect

TAG = "/* queuetop */ "
Statement = tuple[str, tuple[Any, ...]]
Bind = Callable[[dict[str, Any]], Any]  # makes one `?` parameter from the settings of the moment
NO_COUNT = "CAST(NULL AS bigint)"  # typed, so PostgreSQL can match the UNION's columns


class StatementsBase:
    """The statements of one layout in one dialect. Settings ($max_attempts, $lost_after) are bound at run time."""

    def __init__(self, dialect: Dialect, layout: Layout) -> None:
        self.dialect = dialect
        self.layout = layout
        self._cache: dict[str, tuple[str, tuple[Bind, ...]]] = {}
        # Each type's oldest pending job read in one pass over the pending rows, grouped by type, rather than a
        # read per type: where no index begins with (type, created), a read per type reads all of that type's
        # pending rows on its own (pgqueuer at 10^6: 20 × 63 ms where one pass takes ~150 ms). The collector sets
        # it from the catalog (`Diagnostics.index_leads_with`); a seek per type where the database cannot say.
        self.oldest_grouped = False

    def through_table(self, sql: str, output: str, roles: Sequence[str | None]) -> str:
        """`sql`, which says `OUTPUT {output}` on the queue table, as SQL Server takes it from a table with an
        enabled trigger (error 334 otherwise): the same rows `INTO` a table variable, then selected from it, one
        batch (`Database.fetchall` reads past the statements before the rows). `roles`: each output column's role,
        for its type (None: a NULL it returns). Unchanged elsewhere."""
        layout = self.layout
        if not self.dialect.has_triggers(self.dialect.schema_for(layout.schema), layout.queue_table):
            return sql
        types = [self.dialect.sql_type(layout.type_of(role) or "") if role else "sql_variant" for role in roles]
        columns = ", ".join(f"qt_{n} {sql_type or 'sql_variant'}" for n, sql_type in enumerate(types))
        changed = sql.replace(f"OUTPUT {output}", f"OUTPUT {output} INTO @qt_out", 1)
        assert changed != sql, "the statement has no such OUTPUT"
        return f"DECLARE @qt_out TABLE ({columns}); {changed}; SELECT * FROM @qt_out"

    # -- names -------------------------------------------------------------------------------------------
    def table(self, which: str) -> str:
        layout = self.layout
        name = layout.queue_table if which == "queue" else layout.completed_table
        assert name is not None, which
        return self.dialect.qualify(layout.schema, name)

    def col(self, role: str) -> str:
        """The role's column, quoted; for a role read from JSON, the text at its path in that column; for a pair,
        its two columns as one text; for a joined column, the subquery that reads it."""
        if role in self.layout.joined:
            return self._joined(role)
        column = self.dialect.quote(self.layout.columns[role])
        if role in self.layout.pairs:
            return self.dialect.pair_sql(column, self.dialect.quote(self.layout.pairs[role]))
        path = self.layout.json_paths.get(role)
        return self.dialect.json_text_sql(column, path) if path else column

    def _from_low_id(self) -> str:
        """` AND` the queue's rows from a low id on (its parameter bound by the caller): a range of its key."""
        return f" AND {self.col('id')} >= {self.dialect.param(self.layout.type_of('id'))}"

    def _completions_from_low(self) -> str:
        """` AND` the completions' rows from a low id on (its parameter bound by the caller): the queue's id where
        they are its rows (`ranged`), the log's line where they are a log's (`Layout.log_lines`)."""
        if self.layout.completions is not None and self.layout.completions.table == "completed":
            assert self.layout.log_lines, "a completed table's rows are read from a low line only where it has one"
            return f" AND {self.col('c_line')} >= {self.dialect.param(self.layout.type_of('c_line'))}"
        return self._from_low_id()

    @property
    def oldest_by_min_id(self) -> bool:
        """The creation time is read from another table (a joined `created`: procrastinate's 'deferred' line) and
        ids grow with time: the oldest of some rows is then the creation of the one with the lowest id, one lookup
        where a MIN over the times would make one for every row (10^5 at a 10^6-job procrastinate table)."""
        return "created" in self.layout.joined and self.layout.arrivals == "identity"

    def _oldest_of(self, ids: str) -> str:
        """The creation time of the row whose id is `ids` (an aggregate of the rows in scope: `MIN("id")`), where
        `oldest_by_min_id`. The lookup reads a derived table that shows only its key and value, so the aggregate's
        unqualified columns can only be the rows' in scope (procrastinate_events has an `id` of its own), and the
        aggregate sits in a select list of its own (PostgreSQL takes an outer aggregate there, not in a WHERE)."""
        layout, dialect = self.layout, self.dialect
        joined = layout.joined["created"]
        when = " AND ".join(self._when(joined, ""))
        lines = (f"SELECT {dialect.quote(joined.key)} AS qt_key, {dialect.quote(joined.column)} AS qt_value FROM "
                 f"{dialect.qualify(layout.schema, joined.table)}{self._hint()}{' WHERE ' + when if when else ''}")
        return f"(SELECT MAX(qt_joined.qt_value) FROM ({lines}) AS qt_joined WHERE qt_joined.qt_key = (SELECT {ids}))"

    def _joined(self, name: str) -> str:
        """A joined column (`Layout.joined`) as a scalar subquery on the row in scope (of the queue table, or of the
        completed one where `by` is its role): its table qualified, the row's column by its table's own name (a
        statement never aliases it, and the innermost FROM of that table is the row a condition is about; the
        subquery's own table is aliased, so the same table can be read: a log's earlier line of the same job).
        MAX: one row by a unique key, the latest of several (the job's last pick), NULL where none matches."""
        layout, dialect = self.layout, self.dialect
        joined = layout.joined[name]
        table = layout.completed_table if joined.on_completed else layout.queue_table
        row = f"{dialect.quote(table)}.{dialect.quote(layout.columns[joined.by])}"
        when = "".join(f" AND {condition}" for condition in self._when(joined, "qt_joined."))
        return (f"(SELECT MAX(qt_joined.{dialect.quote(joined.column)}) FROM "
                f"{dialect.qualify(layout.schema, joined.table)} AS qt_joined{self._hint()} "
                f"WHERE qt_joined.{dialect.quote(joined.key)} = {row}{when})")

    def _when(self, joined: Joined, qualifier: str) -> list[str]:
        """A joined column's `when`, one condition per column (= one text, IN several): its texts the layout
        grammar's (checked as the layout is read: no quote), written as literals, as a condition's texts are."""
        conditions = []
        for column, values in joined.when:
            texts = ", ".join(f"'{value}'" for value in values)
            conditions.append(f"{qualifier}{self.dialect.quote(column)} " + (f"= {texts}" if len(values) == 1 else
                                                                             f"IN ({texts})"))
        return conditions

    def _job_rows(self, which: str) -> str:
        """` AND` the layout's `completed_rows` in the completed table (a log: only the line that ended each job
        stands for it), else nothing. Its texts are literals: no parameter to bind."""
        rows = self.layout.completed_rows
        return f" AND {self.condition(rows.condition, [])}" if which == "completed" and rows is not None else ""

    def _completion_filter(self, binds: list) -> str:
        """` AND` which rows of the completions' table are completions (`Layout.completion_where`: the completions'
        `where` and, in the completed table, `completed_rows`), else nothing; its getters appended to `binds`."""
        where = self.layout.completion_where
        return "" if where is None else " AND " + self.condition(where, binds)

    def now(self) -> str:
        return self.dialect.now_sql(self.layout.clock)

    def _hint(self) -> str:
        return self.dialect.nolock

    def _row_hint(self) -> str:
        """The drill-down reads rows, not counts: never a dirty one (READPAST on SQL Server without RCSI)."""
        return self.dialect.row_hint

    def names(self) -> dict[str, str]:
        """Every role of the layout as `col` renders it (a quoted column, or the text at a role's JSON path), its
        tables and its hints, for filling templates written with role names (`{queue}`, `{claimed_at}`,
        `{nolock}`): identifiers and checked paths only, never values."""
        layout, dialect = self.layout, self.dialect
        names = {role: self.col(role) for role in layout.columns}
        names["queue"] = dialect.qualify(layout.schema, layout.queue_table)
        if layout.pending_view:
            names["pending_view"] = dialect.qualify(layout.schema, layout.pending_view)
        if layout.completed_table:
            names["completed"] = dialect.qualify(layout.schema, layout.completed_table)
        names["nolock"], names["row_hint"] = self._hint(), self._row_hint()
        return names

    def fill(self, template: str) -> str:
        """A piece of a statement written with role names, filled with the layout's quoted names (no tag)."""
        return template.format_map(self.names())

    def sql(self, template: str) -> str:
        """A whole statement written with role names: filled, tagged, rendered once."""
        return self._render(f"sql:{template}", lambda binds: self.fill(template))[0]

    # -- conditions --------------------------------------------------------------------------------------
    def condition(self, node: Node, binds: list[Callable[[dict[str, Any]], Any]], fixed_now: bool = False,
                  once: bool = False) -> str:  # fmt: skip
        """SQL for a parsed condition; appends to `binds` one getter per `?`, in order. `fixed_now`: "now" is a
        parameter (`__now`), so that several statements of one transaction agree on which rows they touch.
        `once`: "now" is worked out once for the statement (`Dialect.once`), for a condition tested on every row
        a WHERE has already chosen (a count's CASE); never in a WHERE, whose planner must see the time itself."""
        if isinstance(node, Bool):
            return "1 = 1" if node.value else "1 = 0"
        if isinstance(node, Not):
            return f"NOT ({self.condition(node.inner, binds, fixed_now, once)})"
        if isinstance(node, Junction):
            joiner = " AND " if node.kind == "and" else " OR "
            return "(" + joiner.join(self.condition(part, binds, fixed_now, once) for part in node.parts) + ")"
        assert isinstance(node, Compare)
        if node.right is None:
            return f"{self._operand(node.left, None, binds, fixed_now, once)} {node.op.upper()}"
        if isinstance(node.right, Values):
            left_type = self.layout.type_of(node.left.name) if isinstance(node.left, Role) else None
            listed = ", ".join(self._operand(item, left_type, binds) for item in node.right.items)
            return f"{self._operand(node.left, None, binds, fixed_now, once)} {node.op.upper()} ({listed})"
        left_type = self.layout.type_of(node.left.name) if isinstance(node.left, Role) else None
        right_type = self.layout.type_of(node.right.name) if isinstance(node.right, Role) else None
        left = self._operand(node.left, right_type, binds, fixed_now, once)
        right = self._operand(node.right, left_type, binds, fixed_now, once)
        return f"{left} {node.op} {right}"

    def _operand(self, operand: Operand, other_type: str | None, binds: list, fixed_now: bool = False,
                 once: bool = False) -> str:  # fmt: skip
        if isinstance(operand, Role):
            return self.col(operand.name)
        if isinstance(operand, Now):
            if operand.by is not None:  # each row's own shift: a column of seconds, or of intervals
                interval = self.layout.type_of(operand.by) == "interval"
                return self.dialect.now_by_column_sql(self.layout.clock, self.col(operand.by), operand.sign, interval)
            if operand.offset is None and fixed_now:
                binds.append(lambda s: s["__now"])
                return "?"
            if operand.offset is None:
                return self.dialect.once(self.now()) if once else self.now()
            name, sign = operand.offset, operand.sign
            binds.append(lambda s: self.dialect.shift_param(sign * float(s[name])))
            shifted = self.dialect.shifted_now_sql(self.layout.clock)
            return self.dialect.once(shifted) if once else shifted
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

    def _pending_where(self, binds: list) -> str:
        """The pending state as the monitor's reads of pending rows say it: with the layout's `monitor_guard`, so
        that the index filtered on it serves them (see Layout)."""
        where = self.condition(self.layout.states["pending"].condition, binds)
        if self.layout.monitor_guard is not None:
            where += " AND " + self.condition(self.layout.monitor_guard.condition, binds)
        return where

    def _later(self, binds: list, seconds_of: Callable[[dict[str, Any]], float]) -> str:
        """The database's now plus `seconds_of(settings)` seconds, which may be many (a lease, a delay)."""
        sql = self.dialect.later_sql(self.layout.clock)
        for index in range(sql.count("?")):
            binds.append(lambda s, i=index: self.dialect.later_params(seconds_of(s))[i])
        return sql

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

    # -- a state's rows, of one job type -----------------------------------------------------------
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

    def _where(self, state: State, job_type: str | None, binds: list) -> str:
        return f"WHERE {self.condition(state.condition, binds)}{self._type_filter(state, job_type)}"

