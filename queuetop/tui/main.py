"""The main screen: status bar, the per-type table with its totals, the two charts, or the empty-state panel.

It keeps only how the user looks at the data (sort column and order, the type filter); the data itself is the
app's latest snapshot and chart history, re-read at every poll.
"""

from __future__ import annotations

from typing import ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from queuetop.store.history_report import ScreenExport
from queuetop.tui.blocking import BlockingPanel
from queuetop.tui.export import screen_export
from queuetop.tui.headline import HeadlineWatch
from queuetop.tui.session import Dashboard
from queuetop.tui.table import COLUMNS, Column, QueueTable, ordered, repeats, shape_columns
from queuetop.tui.widgets import (
    CONNECTING,
    Chart,
    ChartSpec,
    EmptyState,
    Line,
    StatusBar,
    StatusView,
    chart_lines,
)
from queuetop.watch.snapshot import TOTAL, TypeStats

SORT = Binding.Group("Sort")
TOP_TYPES = 3  # job types drawn beside the total on the depth chart
TYPE_COLORS = ("orange", "magenta", "green")


class MainScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        # In the help, not the footer: 80 columns show the keys that act and look deeper first (app.BINDINGS)
        Binding("slash", "filter", "Filter", show=False,
                tooltip="filter job types by name (Enter keeps it, Escape clears it)"),
        Binding("less_than_sign", "sort_by(-1)", "Sort", key_display="<", group=SORT, show=False,
                tooltip="sort by the column to the left"),
        Binding("greater_than_sign", "sort_by(1)", "Sort", key_display=">", group=SORT, show=False,
                tooltip="sort by the column to the right"),
        Binding("i", "invert_sort", "Invert", show=False, tooltip="invert the sort order"),
        Binding("escape", "clear_filter", "Clear filter", show=False, tooltip="clear the filter"),
    ]  # fmt: skip

    def __init__(self) -> None:
        super().__init__()
        self.sort_key = "depth"
        self.descending = True
        self.needle = ""
        self.columns: tuple[Column, ...] = COLUMNS  # the columns the queue's shape can fill, once it is known
        self._rows: list[TypeStats] = []  # the rows shown, in their order
        self._headline = HeadlineWatch()  # what is wrong now, from the latest snapshots

    @property
    def dashboard(self) -> Dashboard:
        return cast("Dashboard", self.app)

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        yield Static(id="headline", markup=False)
        yield Input(id="filter", placeholder="filter job types: type part of a name, Enter to keep, Escape to clear")
        yield BlockingPanel(id="blocking")
        with Vertical(id="body"):
            yield QueueTable(id="table")
            with Horizontal(id="charts"):
                yield Chart(self.dashboard.session.series, id="depth-chart")
                yield Chart(self.dashboard.session.series, id="rate-chart")
        with Container(id="empty-area"):
            yield EmptyState(id="empty")
        yield Footer()

    def on_mount(self) -> None:
        self._show_filter(False)
        self.query_one("#empty-area").display = False
        self.query_one(QueueTable).focus()

    def _show_filter(self, shown: bool) -> None:
        box = self.query_one("#filter", Input)
        box.display = shown
        box.can_focus = shown  # hidden, it must not take the focus (and the letter keys) back after a dialog

    @property
    def selected_type(self) -> str | None:
        return self.query_one(QueueTable).selected_type

    def on_screen_resume(self) -> None:
        self.dashboard.refresh_screen()  # shown again (a drill-down or dialog closed): catch up at once

    def show_status(self, view: StatusView) -> None:
        self.query_one("#status", StatusBar).show(view)

    # -- redrawing -----------------------------------------------------------------------------------------
    def refresh_data(self) -> None:
        app = self.dashboard
        snapshot, link = app.shown, app.session.link
        self.query_one(BlockingPanel).show(link.blocking if link is not None else None)
        empty_kind = None
        if snapshot is None:
            empty_kind = link.state if link is not None else CONNECTING
        elif not snapshot.types and not self.needle:
            empty_kind = "empty"
        body, empty = self.query_one("#body"), self.query_one("#empty", EmptyState)
        headline = self.query_one("#headline", Static)
        body.display = headline.display = empty_kind is None
        self.query_one("#empty-area").display = empty_kind is not None
        if empty_kind is not None:
            empty.show(empty_kind, app.db_option, app.session.read_only, link.error if link is not None else None)
            return
        body.set_class(snapshot is not None and not app.connected, "stale")
        body.set_class(app.session.past is not None, "past")
        if self.focused is None:
            self.query_one(QueueTable).focus()  # the table was hidden behind the empty state until now
        if snapshot is None:
            return
        # the past (a scrubbed-back moment) gets its own line, without touching how long the present's troubles last
        said = (self._headline if app.session.past is None else HeadlineWatch()).observe(snapshot)
        headline.update(Text(said.text, style=said.style, no_wrap=True, overflow="ellipsis"), layout=False)
        self.columns = shape_columns(snapshot.provides, snapshot.totals.in_no_state)
        keys = [column.key for column in self.columns]
        if self.sort_key not in keys:  # a column this shape cannot fill sorts nothing
            self.sort_key, self.descending = ("depth", True) if "depth" in keys else ("type", False)
        rows = ordered(snapshot.types, self.sort_key, self.descending, self.needle)
        self.query_one(QueueTable).show(rows, snapshot.totals, self.sort_key, self.descending, self.columns,
                                        app.breached_cells, snapshot.other, snapshot.folded)  # fmt: skip
        window = app.window_s
        among = [row.job_type for row in rows]
        # One row that is the whole queue (a shape without job types): its line would only repeat "all".
        top = [] if repeats(rows, snapshot.totals) else app.session.series.top_types(window, TOP_TYPES, among=among)
        depth_lines = (Line("all" if not self.needle else "all types", TOTAL, "depth", "cyan"),
                       *chart_lines([(name, name) for name in top], "depth", TYPE_COLORS))  # fmt: skip
        cursor = app.cursor_x()
        self.query_one("#depth-chart", Chart).show(ChartSpec("depth", depth_lines, window, cursor, marks_of=TOTAL))
        rates = tuple(Line(figure, TOTAL, figure, color) for figure, color in (("arrivals", "magenta"),
                      ("completions", "green")) if snapshot.provides(figure))  # fmt: skip
        self.query_one("#rate-chart", Chart).show(ChartSpec("jobs/s", rates, window, cursor, marks_of=TOTAL))
        self._rows = rows

    def export_view(self) -> ScreenExport:
        """What this screen shows, for `x`: the table's rows in their order (every column of the shape, also those
        hidden for width), its totals, and the charts' points."""
        app = self.dashboard
        snapshot = app.shown
        assert snapshot is not None
        return screen_export(app, snapshot, [*self._rows, snapshot.totals], self.columns,
                             [self.query_one(f"#{name}", Chart) for name in ("depth-chart", "rate-chart")])

    # -- sorting and filtering -----------------------------------------------------------------------------
    def action_sort_by(self, step: int) -> None:
        """The next column of this shape, even one hidden for width: the sort column is always shown."""
        keys = [column.key for column in self.columns]
        at = keys.index(self.sort_key) if self.sort_key in keys else 0
        self.sort_key = keys[(at + step) % len(keys)]
        self.descending = self.sort_key != "type"  # biggest first, names A to Z
        self.refresh_data()

    def sort_on(self, key: str) -> None:
        if key == self.sort_key:
            self.descending = not self.descending
        else:
            self.sort_key, self.descending = key, key != "type"
        self.refresh_data()

    def action_invert_sort(self) -> None:
        self.descending = not self.descending
        self.refresh_data()

    @on(QueueTable.HeaderClicked)
    def _header_clicked(self, event: QueueTable.HeaderClicked) -> None:
        self.sort_on(event.column_key)

    def action_filter(self) -> None:
        self._show_filter(True)
        self.query_one("#filter", Input).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if not box.display and not self.needle:
            return
        box.value = ""
        self._show_filter(False)
        self.needle = ""
        self.query_one(QueueTable).focus()
        self.refresh_data()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.needle = event.value
        self.refresh_data()

    @on(Input.Submitted, "#filter")
    def _filter_kept(self) -> None:
        self.query_one(QueueTable).focus()
        if not self.needle:
            self._show_filter(False)

    @on(QueueTable.Selected)
    def _drill_down(self) -> None:
        self.dashboard.action_drill_down()
