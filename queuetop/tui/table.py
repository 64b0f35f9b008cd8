"""The main table: one row per job type plus the totals, sortable, filterable, with trouble in colour.

A refresh touches only what changed: cells whose text or style differ are updated in place, and the rows are
rebuilt only when the set or the order of rows changes. The cursor follows the job type, not the row number,
so the selection survives re-sorting and types appearing or disappearing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import DataTable

from queuetop import format as fmt
from queuetop.snapshot import TOTAL, TypeStats

OLD_WARN_S = 60.0  # oldest pending job older than this: yellow
OLD_ALERT_S = 600.0  # … and this: red
TOTAL_LABEL = "all types"

WARN, ALERT, DIM, EST = "yellow", "bold red", "dim", "italic"


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int
    cell: Callable[[TypeStats], str]
    sort_value: Callable[[TypeStats], float | str]
    style: Callable[[TypeStats], str] = lambda row: ""

    @property
    def numeric(self) -> bool:
        return self.key != "type"


def _none_last(value: float | None) -> float:
    return float("-inf") if value is None else value


def outpaced(row: TypeStats) -> bool:
    """Arrivals outpace completions with work waiting: the queue is growing."""
    arrivals, completions = row.arrivals_10s_per_s, row.completions_10s_per_s
    return row.depth > 0 and arrivals is not None and completions is not None and arrivals > completions * 1.05


def trouble(row: TypeStats) -> str:
    """The worst problem of a row as a style: red for stuck work, yellow for a queue falling behind."""
    if row.timed_out or (row.oldest_age_s or 0) > OLD_ALERT_S:
        return ALERT
    if (row.oldest_age_s or 0) > OLD_WARN_S or row.drain == "never" or outpaced(row):
        return WARN
    return ""


def _age_style(row: TypeStats) -> str:
    age = row.oldest_age_s or 0
    return ALERT if age > OLD_ALERT_S else WARN if age > OLD_WARN_S else ""


COLUMNS: tuple[Column, ...] = (
    Column("type", "type", 18, lambda r: TOTAL_LABEL if r.job_type == TOTAL else r.job_type,
           lambda r: r.job_type.lower(), trouble),
    Column("depth", "depth", 9, lambda r: fmt.count(r.depth, r.depth_is_estimate), lambda r: r.depth,
           lambda r: EST if r.depth_is_estimate else ""),
    Column("oldest", "oldest", 7, lambda r: fmt.duration(r.oldest_age_s), lambda r: _none_last(r.oldest_age_s),
           _age_style),
    Column("claimed", "claimed", 8, lambda r: fmt.count(r.claimed), lambda r: r.claimed),
    Column("timed_out", "timed-out", 10, lambda r: fmt.count(r.timed_out), lambda r: r.timed_out,
           lambda r: ALERT if r.timed_out else ""),
    Column("dead", "dead", 6, lambda r: fmt.count(r.dead), lambda r: r.dead, lambda r: WARN if r.dead else ""),
    Column("arrivals", "in/s", 6, lambda r: fmt.rate(r.arrivals_10s_per_s),
           lambda r: _none_last(r.arrivals_10s_per_s), lambda r: WARN if outpaced(r) else ""),
    Column("completions", "out/s", 6, lambda r: fmt.rate(r.completions_10s_per_s),
           lambda r: _none_last(r.completions_10s_per_s)),
    Column("wait", "wait p95", 9, lambda r: fmt.duration(r.wait_p95_s), lambda r: _none_last(r.wait_p95_s)),
    Column("processing", "proc p95", 9, lambda r: fmt.duration(r.processing_p95_s),
           lambda r: _none_last(r.processing_p95_s)),
    Column("drain", "drain", 7, lambda r: fmt.drain(r.drain, r.drain_eta_s), lambda r: _drain_order(r),
           lambda r: WARN if r.drain == "never" else ""),
)  # fmt: skip
COLUMN_KEYS = tuple(column.key for column in COLUMNS)


def _drain_order(row: TypeStats) -> float:
    """Sorting by drain puts "never" after the longest ETA, and empty queues first."""
    return {"empty": -1.0, "never": float("inf"), "unknown": float("-inf")}.get(row.drain, row.drain_eta_s or 0.0)


Cell = tuple[str, str]  # (text, style): compared to decide what to redraw


def cells(row: TypeStats) -> tuple[Cell, ...]:
    """The row's cells as (text, style); the totals row in bold."""
    bold = " bold" if row.job_type == TOTAL else ""
    return tuple((column.cell(row), (column.style(row) + bold).strip()) for column in COLUMNS)


def _text(column: Column, cell: Cell) -> Text:
    return Text(cell[0], style=cell[1], justify="right" if column.numeric else "left", no_wrap=True,
                overflow="ellipsis")


def ordered(rows: Sequence[TypeStats], sort_key: str, descending: bool, needle: str = "") -> list[TypeStats]:
    """Filter by a case-insensitive substring of the type, then sort; ties by type name."""
    column = COLUMNS[COLUMN_KEYS.index(sort_key)]
    needle = needle.strip().lower()
    kept = [row for row in rows if needle in row.job_type.lower()] if needle else list(rows)
    kept.sort(key=lambda r: r.job_type)
    kept.sort(key=column.sort_value, reverse=descending)
    return kept


class QueueTable(DataTable):
    """Job types and their figures; the row key is the job type."""

    DEFAULT_CSS = """
    QueueTable { height: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)  # type: ignore[arg-type]
        self._order: list[str] = []
        self._shown: dict[str, tuple[Cell, ...]] = {}
        self._headers: tuple[str, ...] = ()

    def on_mount(self) -> None:
        for column in COLUMNS:
            self.add_column(column.label, width=column.width, key=column.key)

    @property
    def selected_type(self) -> str | None:
        """The job type under the cursor; None for the totals row or an empty table."""
        if not self._order or not 0 <= self.cursor_row < len(self._order):
            return None
        name = self._order[self.cursor_row]
        return None if name == TOTAL else name

    def show(self, rows: Sequence[TypeStats], totals: TypeStats, sort_key: str, descending: bool) -> None:
        """Display rows in the given order (already filtered and sorted), the totals last."""
        self._set_headers(sort_key, descending)
        wanted = [row.job_type for row in rows] + [TOTAL]
        fresh = {row.job_type: cells(row) for row in (*rows, totals)}
        if wanted != self._order:
            self._rebuild(wanted, fresh)
            return
        for name in wanted:
            new, old = fresh[name], self._shown[name]
            if new != old:
                for column, before, after in zip(COLUMNS, old, new, strict=True):
                    if before != after:
                        self.update_cell(name, column.key, _text(column, after))
                self._shown[name] = new

    def _rebuild(self, wanted: list[str], fresh: dict[str, tuple[Cell, ...]]) -> None:
        keep = self.selected_type if self._order else None
        at = self.cursor_row
        self.clear()
        for name in wanted:
            self.add_row(*(_text(column, cell) for column, cell in zip(COLUMNS, fresh[name], strict=True)), key=name)
        self._order = wanted
        self._shown = fresh
        if keep in wanted:
            at = wanted.index(keep)  # the selection follows the type, wherever it moved
        self.move_cursor(row=min(max(at, 0), len(wanted) - 1), animate=False, scroll=keep in wanted)

    def _set_headers(self, sort_key: str, descending: bool) -> None:
        labels = tuple(column.label + (("▼" if descending else "▲") if column.key == sort_key else "")
                       for column in COLUMNS)  # fmt: skip
        if labels == self._headers:
            return
        for column, label in zip(COLUMNS, labels, strict=True):
            self.columns[column.key].label = Text(label, justify="right" if column.numeric else "left")
        self._headers = labels
        self.refresh()

    def select_type(self, job_type: str) -> None:
        if job_type in self._order:
            self.move_cursor(row=self._order.index(job_type), animate=False)
