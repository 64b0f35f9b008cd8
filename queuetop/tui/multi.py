"""One dashboard over several targets (`queuetop -t prod -t staging`, `queuetop watch --all`).

Each target is a `Session`: its own Monitor (one connection, its own back-off), its own Actions, chart history,
history file and SLO watch, polled by its own thread worker on its own timer, so a slow or dead target only
slows its own section. A poll's result reaches the UI thread as a `TargetPolled` message: the target's name and
its frozen PollOutcome.

The screen has one section per target (a header line with the link state, poll age and layout; when the link is
down, a line with the error, how long it has been down and how old the data is; then the target's table). The
selected section is the one whose table has the focus (Tab moves on): the app's `session` is the selected
target's, so every key that acts on a job type — drill-down, enqueue, release, workers, the time cursor, export —
acts on the selected row's target through the single-target code, unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, Static

from queuetop.core import format as fmt
from queuetop.store.history_report import ScreenExport
from queuetop.tui.app import Breached, QueuetopApp
from queuetop.tui.export import screen_export
from queuetop.tui.headline import HeadlineWatch
from queuetop.tui.help import Section
from queuetop.tui.main import TOP_TYPES, TYPE_COLORS, MainScreen
from queuetop.tui.panes import TargetHistoryLoaded, TargetPolled, link_words
from queuetop.tui.session import PaneSpec, Session
from queuetop.tui.table import QueueTable, ordered, repeats, shape_columns
from queuetop.tui.threads import ThreadResult
from queuetop.tui.widgets import Chart, ChartSpec, Line, StatusView, chart_lines, status_lines
from queuetop.watch.ahead import CallThread
from queuetop.watch.monitor import NO_SCHEMA, RECONNECTING, PollOutcome
from queuetop.watch.slo import breach_masks, worst
from queuetop.watch.snapshot import TOTAL


class MultiApp(QueuetopApp):
    """The dashboard over several targets: one Session each, one poll loop each; see the module's docstring."""

    def __init__(self, panes: Sequence[PaneSpec], **kwargs: Any) -> None:
        if len({spec.name for spec in panes}) != len(panes) or not panes:
            raise ValueError("a multi-target dashboard needs targets with distinct names")
        self.panes: dict[str, Session] = {spec.name: Session(spec) for spec in panes}
        first = panes[0]
        super().__init__(first.source, first.actions, interval=first.interval, read_only=first.read_only,
                         series=self.panes[first.name].series, recorder=first.recorder, **kwargs)  # fmt: skip
        self.session = self.panes[first.name]  # the keys act on the selected target's session
        for spec in panes:
            pane = self.panes[spec.name]
            # Each series' wide-window reads come back named after their target (the base class wired only the
            # first one's, to the selected target's series).
            pane.series.deliver = lambda charts, name=spec.name: self.post_message(TargetHistoryLoaded(name, charts))
        self.main = MultiScreen(list(self.panes))

    # -- choosing the target the keys act on -----------------------------------------------------------------
    @property
    def selected(self) -> Session:
        """The target the keys act on."""
        return self.session

    def select_target(self, name: str) -> None:
        pane = self.panes.get(name)
        if pane is None or pane is self.selected:
            return
        self.session = pane
        self.refresh_screen()
        self.refresh_bindings()  # the keys offered follow the selected target's layout (`e` where it declares it)

    def status_view(self) -> StatusView:
        view = super().status_view()
        return replace(view, target=f"{self.selected.name}: {view.target}")

    def summary(self) -> Text:
        """The status bar's first line: "● 2 targets: prod ok, staging unreachable (retrying in 8 s)"."""
        now = self._clock()
        words = [(pane.name, *link_words(pane, now)) for pane in self.panes.values()]
        styles = {style for _, _, style in words}
        dot = "bold red" if "bold red" in styles else "bold yellow" if "bold yellow" in styles else "bold green"
        line = Text()
        line.append(f"● {len(words)} targets: ", style=dot)
        for i, (name, said, style) in enumerate(words):
            if i:
                line.append(", ")
            line.append(name, style="bold")
            line.append(" ")
            line.append(said, style=style)
        if self.paused:
            line.append("  ")
            line.append(" PAUSED ", style="bold black on yellow")
        return line

    # -- the poll loops: one per target ----------------------------------------------------------------------
    def _start_poll(self) -> None:
        """Start every target's poll that is not running (at start, after a pause, after an action)."""
        for pane in self.panes.values():
            self._start_pane(pane)

    def _start_pane(self, pane: Session) -> None:
        pane.next_poll = None
        if pane.polling or self.paused:
            return
        pane.polling = True
        pane.poll_started = self._clock()
        source, name, needle = pane.ahead or pane.source, pane.name, self.main.needle  # handed to the thread
        fresh, pane.changed = pane.changed, False

        def poll() -> None:  # on the target's own poll thread (a daemon); the Monitor keeps its connection
            try:
                outcome = source.poll(needle, fresh)
            except Exception as exc:  # Monitor.poll never raises: a bug (or a scene's source)
                self.post_message(ThreadResult(lambda error: self._pane_poll_failed(name, error), exc))
                return
            self.post_message(TargetPolled(name, outcome))

        if pane.poll_thread is None:
            pane.poll_thread = CallThread(f"queuetop-poll-{name}")
        pane.poll_thread.submit(poll)

    def _pane_poll_failed(self, name: str, error: Exception) -> None:
        self.report_unexpected(error, f"running poll {name}")
        pane = self.panes.get(name)
        if pane is not None:
            pane.polling = False
            self._schedule_pane(pane, pane.link)

    def on_target_polled(self, message: TargetPolled) -> None:
        pane = self.panes.get(message.target)
        if pane is None:
            return
        pane.polling = False
        pane.pace.took(message.outcome.poll_s)
        try:
            self.apply_to(pane, message.outcome)
        except Exception as exc:  # a bug in drawing: report it, keep polling
            self.report_unexpected(exc, f"showing a poll of {pane.name}")
        snapshot, recorder = message.outcome.snapshot, pane.recorder
        if recorder is not None and snapshot is not None:
            self.call_after_refresh(recorder.record, snapshot, breach_masks(pane.breaches) or None)
        self._schedule_pane(pane, message.outcome)

    def on_target_history_loaded(self, message: TargetHistoryLoaded) -> None:
        pane = self.panes.get(message.target)
        if pane is not None and pane.series.take(message.charts):
            self.refresh_screen()

    def _schedule(self, outcome: PollOutcome | None) -> None:
        """(The base class's call, after `+` or `-`: the selected target's next poll.)"""
        self._schedule_pane(self.selected, outcome)

    def _schedule_pane(self, pane: Session, outcome: PollOutcome | None) -> None:
        if self.paused or pane.polling or pane.next_poll is not None:
            return
        delay = pane.every_s
        if outcome is not None and not outcome.connected and outcome.retry_in_s is not None:
            delay = max(0.05, outcome.retry_in_s)
        pane.next_poll = self.set_timer(delay, lambda: self._start_pane(pane))

    def poll_soon(self) -> None:
        """After an action: poll every target not polling now (a dead one only asks its back-off, in no time)."""
        for pane in self.panes.values():
            pane.changed = True  # its next poll counts what a deep queue's spaced counts would keep (`fresh`)
        if self.paused:
            return
        for pane in self.panes.values():
            if pane.polling:
                continue
            if pane.next_poll is not None:
                pane.next_poll.stop()
            self._start_pane(pane)

    def action_pause(self) -> None:
        self.paused = not self.paused
        for pane in self.panes.values():
            if self.paused and pane.next_poll is not None:
                pane.next_poll.stop()
                pane.next_poll = None
        if not self.paused:
            self._start_poll()
        self._tick()

    # -- taking in a poll ------------------------------------------------------------------------------------
    def apply(self, outcome: PollOutcome) -> None:
        """The selected target's outcome (as scenes put fixed data on screen)."""
        self.apply_to(self.selected, outcome)

    def apply_to(self, pane: Session, outcome: PollOutcome) -> None:
        """Take in one target's poll and redraw."""
        before, now = pane.link, self._clock()
        pane.link, pane.link_at = outcome, now
        if outcome.connected:
            pane.down_since = None
        elif pane.down_since is None:
            pane.down_since = now
        if outcome.snapshot is not None:
            pane.latest = outcome.snapshot
            pane.last_success = now
            if pane.slo_watch is not None:
                watched = pane.slo_watch.observe(outcome.snapshot)
                pane.breaches = watched.breaches
                if watched.new:
                    self.post_message(Breached(watched))
            pane.series.add(outcome.snapshot, breach_masks(pane.breaches))
        self._announce_target(pane, before, outcome)
        self.refresh_screen()

    def _announce_target(self, pane: Session, before: PollOutcome | None, now: PollOutcome) -> None:
        """As the single-target dashboard's notifications, named after the target."""
        name = pane.name
        if now.unexpected:
            self.notify(f"{name}: unexpected error while polling: {now.error}.{self._see_log()}", severity="error",
                        timeout=10, markup=False)  # fmt: skip
        elif now.connected:
            if before is not None and before.link_lost and before.state != NO_SCHEMA:
                self.notify(f"{name}: connected to the database again.", timeout=4, markup=False)
        elif not now.link_lost:
            if before is None or before.connected:
                self.notify(f"{name}: the poll did not finish: {now.error}. The connection is kept.",
                            severity="warning", timeout=8, markup=False)  # fmt: skip
        elif (before is None or before.connected) and not (now.state == NO_SCHEMA and pane.latest is None):
            lost = "lost the database" if pane.latest is not None else "cannot read the database"
            kept = " Its last data stays on screen, marked stale." if pane.latest is not None else ""
            self.notify(f"{name}: {lost}: {now.error}. Reconnecting by itself, with back-off; the other targets "
                        f"go on.{kept}", severity="warning", timeout=8, markup=False)  # fmt: skip

    # -- what cannot be done on this target ------------------------------------------------------------------
    def _may_change_queue(self, verb: str) -> bool:
        from queuetop.tui.detail import DetailScreen
        from queuetop.tui.workers import WorkersScreen

        if self.session.read_only and isinstance(self.screen, MainScreen | DetailScreen | WorkersScreen):
            self.notify(f"Target {self.selected.name} is read-only: {verb} is disabled there (read_only in its "
                        "config section, or --read-only).", severity="warning", markup=False)  # fmt: skip
            return False
        return super()._may_change_queue(verb)

    def key_sections(self) -> list[Section]:
        sections = super().key_sections()
        name, rows = sections[1]
        tab = ("Tab  Shift+Tab", "the next or previous target's table: the keys act on its selected row")
        return [sections[0], (name, [*rows, tab]), *sections[2:]]

    def breaches_of(self, pane: Session) -> frozenset[tuple[str, str]]:
        """The cells in breach in a target's table: at the time cursor, as its history file kept them."""
        if pane.past is not None:
            return pane.past_breached
        return frozenset((b.job_type, b.slo.spec.column) for b in pane.breaches)


CHARTS_MIN_HEIGHT = 12  # below this, the charts would be unreadable: the sections keep the room


def share_out(needed: Sequence[int], available: int) -> list[int]:
    """Heights for sections that need `needed` lines in `available`: each gets what it needs when everything
    fits, else the smallest are served first and the rest share what is left evenly (at least one line each)."""
    heights = [0] * len(needed)
    left = available
    order = sorted(range(len(needed)), key=lambda i: needed[i])
    for served, i in enumerate(order):
        fair = max(1, left // (len(needed) - served))
        heights[i] = min(needed[i], fair)
        left -= heights[i]
    return heights


class MultiScreen(MainScreen):
    """One section per target: a header line, a line saying what is wrong (its link down, or its headline: claims
    timed out, a queue backing up, ...) only while something is, and its table."""

    SCOPED_CSS = False  # the rules name MultiScreen themselves
    DEFAULT_CSS: ClassVar[str] = """
    MultiScreen #multi-body { height: 1fr; }
    MultiScreen #sections { height: auto; }
    MultiScreen #multi-charts { height: 1fr; }
    MultiScreen .section-head { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis;
                                background: $boost; }
    MultiScreen .section.selected .section-head { background: $primary 40%; }
    MultiScreen .section-error { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    MultiScreen .section QueueTable { height: 1fr; max-height: 100%; }
    MultiScreen .section.stale QueueTable { text-opacity: 55%; }
    MultiScreen .section.past QueueTable { background: $secondary 20%; border-left: thick $secondary; }
    MultiScreen #status { height: auto; padding: 0 1; background: $panel; }
    MultiScreen #status > Static { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__()
        self.names = list(names)
        self._headlines: dict[str, HeadlineWatch] = {}  # per target: since when each of its troubles lasts

    @property
    def multi(self) -> MultiApp:
        app = self.app
        assert isinstance(app, MultiApp)
        return app

    def compose(self) -> ComposeResult:
        with Vertical(id="status"):
            yield Static(id="link")
            yield Static(id="freshness")
            yield Static(id="load")
        yield Input(id="filter", placeholder="filter job types: type part of a name, Enter to keep, Escape to clear")
        with Vertical(id="multi-body"):
            with Vertical(id="sections"):
                for i, _ in enumerate(self.names):
                    with Vertical(classes="section", id=f"section-{i}"):
                        yield Static(classes="section-head", id=f"head-{i}")
                        yield Static(classes="section-error", id=f"error-{i}")
                        yield QueueTable(id=f"table-{i}")
            with Horizontal(id="multi-charts"):  # the selected target's, where the height allows
                yield Chart(self.dashboard.session.series, id="depth-chart")
                yield Chart(self.dashboard.session.series, id="rate-chart")
        yield Footer()

    def on_mount(self, event: events.Mount) -> None:
        event.prevent_default()  # MainScreen's own on_mount looks for widgets this screen does not have
        self._show_filter(False)
        self.query_one("#load").display = False
        self.query_one("#table-0", QueueTable).focus()

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _index(self, name: str) -> int:
        return self.names.index(name)

    def table_of(self, name: str) -> QueueTable:
        return self.query_one(f"#table-{self._index(name)}", QueueTable)

    @property
    def selected_type(self) -> str | None:
        return self.table_of(self.multi.selected.name).selected_type

    def watch_focused(self, widget: object) -> None:
        """The section whose table has the focus is the selected target, however the focus got there."""
        if isinstance(widget, QueueTable) and widget.id and widget.id.startswith("table-"):
            self.multi.select_target(self.names[int(widget.id.removeprefix("table-"))])

    # -- drawing ---------------------------------------------------------------------------------------------
    def show_status(self, view: StatusView) -> None:
        app = self.multi
        if not self.is_mounted or not self.query("#status"):
            return
        self.query_one("#link", Static).update(app.summary(), layout=False)
        second = Text()
        second.append(f"▸ {app.selected.name}: ", style="bold")
        second.append_text(status_lines(view)[1])
        self.query_one("#freshness", Static).update(second, layout=False)
        for name in self.names:
            self._show_head(app.panes[name])

    def _show_head(self, pane: Session) -> None:
        app, i = self.multi, self._index(pane.name)
        now = app._clock()
        said, style = link_words(pane, now)
        head = Text(no_wrap=True, overflow="ellipsis")
        selected = pane is app.selected
        head.append(("▸ " if selected else "  ") + pane.name, style="bold reverse" if selected else "bold")
        head.append("  ● " + said, style=style)
        if pane.read_only:
            head.append("  ")
            head.append(" READ-ONLY ", style="bold black on cyan")
        first = worst(pane.breaches)
        if first is not None:
            more = f" (+{len(pane.breaches) - 1} more)" if len(pane.breaches) > 1 else ""
            head.append("  ")
            head.append(f" SLO {first.describe()}{more} ", style="bold white on red")
        snapshot, every_s = pane.latest, pane.every_s
        if pane.connected and pane.last_success is not None and snapshot is not None:
            age = now - pane.last_success
            late = age > 2 * every_s and not app.paused
            head.append("  polled " + ("just now" if age < 1 else f"{fmt.duration(age)} ago"),
                        style="bold yellow" if late else "")  # fmt: skip
            head.append(f" · {snapshot.poll_ms:.1f} ms")
        head.append(f" · every {every_s:.3g} s")
        if every_s > pane.interval:
            head.append(" (paced: dear polls)", style="yellow")
        if snapshot is not None and snapshot.layout != "native":
            head.append(f" · layout {snapshot.layout}", style="bold")
        if snapshot is not None:
            head.append(f"  {snapshot.dialect}", style="cyan")
        head.append(f" {pane.source.target.display}", style="cyan")
        self.query_one(f"#head-{i}", Static).update(head, layout=False)

        error = self.query_one(f"#error-{i}", Static)
        down = pane.link is not None and not pane.link.connected
        said = None
        if not down and pane.shown is not None:  # the headline, on the error's line: a line only when wrong
            watch = HeadlineWatch() if pane.past is not None else self._headlines.setdefault(pane.name,
                                                                                              HeadlineWatch())
            said = watch.observe(pane.shown)
        error.display = down or (said is not None and said.style != "")
        if said is not None and said.style:
            error.update(Text(said.text, style=said.style, no_wrap=True, overflow="ellipsis"), layout=False)
        if down:
            assert pane.link is not None
            line = Text(no_wrap=True, overflow="ellipsis")
            if pane.down_since is not None:
                line.append(f"down for {fmt.duration(now - pane.down_since)}", style="bold")
            if pane.last_success is not None:
                line.append(f" · STALE: data from {fmt.duration(now - pane.last_success)} ago", style="bold yellow")
            else:
                line.append(" · no data yet", style="dim")
            if pane.link.error:
                line.append(" · ")
                line.append(pane.link.error, style="red" if pane.link.state == RECONNECTING else "yellow")
            error.update(line, layout=False)

    def refresh_data(self) -> None:
        app = self.multi
        self.query_one("#load").display = False
        for name in self.names:
            pane = app.panes[name]
            i = self._index(name)
            section = self.query_one(f"#section-{i}")
            section.set_class(pane is app.selected, "selected")
            table = self.query_one(f"#table-{i}", QueueTable)
            snapshot = pane.shown
            section.set_class(snapshot is None, "no-data")
            table.display = snapshot is not None
            if snapshot is None:
                continue
            section.set_class(not pane.connected, "stale")
            section.set_class(pane.past is not None, "past")
            columns = shape_columns(snapshot.provides, snapshot.totals.in_no_state)
            keys = [column.key for column in columns]
            sort_key, descending = self.sort_key, self.descending
            if sort_key not in keys:  # a column this target's shape cannot fill sorts nothing there
                sort_key, descending = ("depth", True) if "depth" in keys else ("type", False)
            rows = ordered(snapshot.types, sort_key, descending, self.needle)
            table.show(rows, snapshot.totals, sort_key, descending, columns, app.breaches_of(pane), snapshot.other,
                       snapshot.folded)
            if pane is app.selected:
                self.columns, self._rows = columns, rows
        self._fit()
        self._show_charts()
        focused = self.focused
        if focused is None or not focused.display:  # no data to show in the focused section: focus one with data
            for i in range(len(self.names)):
                table = self.query_one(f"#table-{i}", QueueTable)
                if table.display:
                    table.focus()
                    break

    def _fit(self) -> None:
        """Each section as tall as its lines, as far as the screen allows: the height is shared out evenly, a
        section that needs less than its share giving the rest to the others. What is left shows the selected
        target's charts, when there is room for them."""
        body = self.query_one("#multi-body")
        available = body.size.height or max(0, self.size.height - 3)
        needed = []
        for i in range(len(self.names)):
            table = self.query_one(f"#table-{i}", QueueTable)
            lines = 1 + (1 if self.query_one(f"#error-{i}").display else 0)
            if table.display:
                lines += 1 + len(table.rows) + (1 if table.totals is not None else 0)
            needed.append(lines)
        heights = share_out(needed, available)
        for i, height in enumerate(heights):
            section = self.query_one(f"#section-{i}")
            if section.styles.height is None or section.styles.height.value != height:
                section.styles.height = height
        self.query_one("#multi-charts").display = available - sum(heights) >= CHARTS_MIN_HEIGHT

    def _show_charts(self) -> None:
        app = self.multi
        area = self.query_one("#multi-charts")
        if not area.display:
            return
        pane, window = app.selected, app.window_s
        depth_chart, rate_chart = self.query_one("#depth-chart", Chart), self.query_one("#rate-chart", Chart)
        for chart in (depth_chart, rate_chart):
            if chart.series is not pane.series:  # another target selected: its own history
                chart.series = pane.series
                chart.points, chart.marks = (), ()
        snapshot = pane.shown
        among = list(self._rows and [row.job_type for row in self._rows])
        top = [] if snapshot is None or repeats(self._rows, snapshot.totals) else pane.series.top_types(
            window, TOP_TYPES, among=among)  # fmt: skip
        depth_lines = (Line("all", TOTAL, "depth", "cyan"),
                       *chart_lines([(name, name) for name in top], "depth", TYPE_COLORS))  # fmt: skip
        cursor = app.cursor_x()
        depth_chart.show(ChartSpec(f"{pane.name}: depth", depth_lines, window, cursor, marks_of=TOTAL))
        rates = tuple(Line(figure, TOTAL, figure, color) for figure, color in (("arrivals", "magenta"),
                      ("completions", "green")) if snapshot is None or snapshot.provides(figure))  # fmt: skip
        rate_chart.show(ChartSpec(f"{pane.name}: jobs/s", rates, window, cursor, marks_of=TOTAL))

    def export_view(self) -> ScreenExport:
        """`x` on this screen: the selected target's table, and its charts when they are on screen."""
        app = self.multi
        snapshot = app.shown
        assert snapshot is not None
        charts = [self.query_one(f"#{name}", Chart) for name in ("depth-chart", "rate-chart")]
        shown = charts if self.query_one("#multi-charts").display else []
        return screen_export(app, snapshot, [*self._rows, snapshot.totals], self.columns, shown)
