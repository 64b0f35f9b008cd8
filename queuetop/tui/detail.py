"""The drill-down: one job type up close — its figures, oldest pending jobs, claims in flight, recent
completions, and its own charts; Enter on a job opens it (tui/job.py). Escape goes back to the table.

The figures and charts come with every poll; the three lists are read on the drill-down connection in a
worker after each poll (one read at a time), so a slow database slows this screen and nothing else. The first
list shows pending jobs, or with `s` those scheduled for later or dead (`queuetop jobs`' own read); the claims
list has the timed-out ones, marked overdue.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from queuetop.act.actions import TypeDetail
from queuetop.act.jobs import JobPage
from queuetop.core import format as fmt
from queuetop.db import QueuetopError
from queuetop.layouts import NATIVE
from queuetop.store.history_report import ScreenExport
from queuetop.tui.export import screen_export
from queuetop.tui.session import Dashboard
from queuetop.tui.table import ALERT, DIM, EST, WARN, shape_columns
from queuetop.tui.threads import HandlesThreadResults, in_thread
from queuetop.tui.widgets import Chart, ChartSpec, Line, StatusBar, StatusView
from queuetop.watch.snapshot import TypeStats

INFO_CHARS = 48
CHARTS_FROM_HEIGHT = 40  # rows: below, the charts start hidden (`g` shows them) and the lists have the room

PENDING_COLUMNS = (("id", 10), ("age", 8), ("available", 10), ("priority", 8), ("attempts", 8), ("info", INFO_CHARS))
SCHEDULED_COLUMNS = (("id", 10), ("due", 10), ("age", 8), ("priority", 8), ("attempts", 8), ("info", INFO_CHARS))
DEAD_COLUMNS = (("id", 10), ("dead for", 10), ("attempts", 8), ("info", INFO_CHARS))
# The first list's states, in the order `s` goes through those the layout has: its title and columns for each.
FIRST_LISTS = {"pending": ("oldest pending jobs", PENDING_COLUMNS),
               "scheduled": ("scheduled for later, soonest due first", SCHEDULED_COLUMNS),
               "dead": ("dead jobs, longest dead first", DEAD_COLUMNS)}  # fmt: skip
CLAIM_COLUMNS = (("id", 7), ("worker", 14), ("held for", 8), ("expires", 14), ("tries", 5))
COMPLETION_COLUMNS = (("id", 8), ("outcome", 9), ("wait", 7), ("processing", 10), ("ago", 7))


def _everything(figure: str) -> bool:
    return True


# queuetop's word for each state and for the rows that ended, as the summary says them, to set the library's beside
STATE_WORDS = {"pending": "pending", "scheduled": "later", "claimed": "claimed", "timed_out": "timed out",
               "dead": "dead", "lost": "lost", "ended": "ended"}  # fmt: skip


def summary_text(job_type: str, row: TypeStats | None, provides: Callable[[str], bool] = _everything) -> Text:
    """The type's figures in three lines: states, rates, latencies. A figure the shape cannot know
    (`Snapshot.provides`) is left out, as the table leaves out its column; one not measured yet is "—"."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(job_type, style="bold")
    if row is None:
        text.append("  no longer in the queue (nothing of this type is waiting or in flight)", style="dim")
        return text
    states = (
        (("depth",), f"depth {fmt.count(row.depth, row.depth_is_estimate)}", ""),
        (("oldest_age_s",), f"oldest {fmt.duration(row.oldest_age_s)}", ""),
        (("scheduled",), f"later {fmt.count(row.scheduled)}", ""),
        (("claimed",), f"claimed {fmt.count(row.claimed)}", ""),
        (("timed_out",), f"timed out {fmt.count(row.timed_out)}", ALERT if row.timed_out else ""),
        (("dead",), f"dead {fmt.count(row.dead)}", WARN if row.dead else ""),
        (("lost",), f"lost {fmt.count(row.lost)}", ALERT if row.lost else ""),
        *((((), f"in no state {fmt.count(row.in_no_state)}", WARN),) if row.in_no_state else ()),
        (("depth", "arrivals", "completions"), f"drain {fmt.drain(row.drain, row.drain_eta_s)}",
         WARN if row.drain == "never" else ""),
    )  # fmt: skip
    rates = (
        (("arrivals",), f"arrivals {fmt.rate(row.arrivals_10s_per_s)}/s over 10 s, "
                        f"{fmt.rate(row.arrivals_60s_per_s)}/s over 60 s", ""),
        (("completions",), f"completions {fmt.rate(row.completions_10s_per_s)}/s over 10 s, "
                           f"{fmt.rate(row.completions_60s_per_s)}/s over 60 s", ""),
    )  # fmt: skip
    latencies = (
        (("wait",), "wait p50/p95/p99 " + _three(row.wait_p50_s, row.wait_p95_s, row.wait_p99_s), ""),
        (("processing",), "processing p50/p95/p99 " + _three(row.processing_p50_s, row.processing_p95_s,
                                                              row.processing_p99_s), ""),
        *((((), f"≈ from a sample of {row.latency_sample:,} completions", EST),) if row.latency_is_sample
          and row.latency_sample else ()),
    )  # fmt: skip
    for start, parts in (("  ", states), ("\n", rates), ("\n", latencies)):
        known = [(said, style) for needs, said, style in parts if all(provides(f) for f in needs)]
        for i, (said, style) in enumerate(known):
            text.append(start if i == 0 else " · ")
            text.append(said, style=style)
    return text


def words_text(library: str | None, words: Mapping[str, str] | None) -> Text:
    """For a job library's tables, the library's own word for each state (`Snapshot.library_words`)."""
    if not library or not words:
        return Text()
    return Text(f"in {library}'s words: " + " · ".join(
        f"{ours} = {words[state]}" for state, ours in STATE_WORDS.items() if state in words), style=DIM)


def _three(*values: float | None) -> str:
    return " / ".join(fmt.duration(v) for v in values)


def _excerpt(info: str | None) -> Text:
    if info is None:
        return Text("—", style=DIM)
    flat = " ".join(info.split())
    return Text(flat if len(flat) <= INFO_CHARS else flat[: INFO_CHARS - 1] + "…", no_wrap=True)


def _right(value: str, style: str = "") -> Text:
    return Text(value, style=style, justify="right")


def pending_rows(detail: TypeDetail) -> list[tuple[Text, ...]]:
    return [(_right(str(job.id)), _right(fmt.duration(job.age_s)),
             _right("in " + fmt.duration(job.available_in_s) if job.available_in_s > 0 else "now",
                    DIM if job.available_in_s > 0 else ""),
             _right(_known(job.priority)), _right(_known(job.attempts)), _excerpt(job.info))
            for job in detail.pending]  # fmt: skip


def _known(value: object) -> str:
    """A value the shape keeps, or "—" where it keeps none (no priority column, no attempts)."""
    return "—" if value is None else str(value)


def page_rows(page: JobPage, now: datetime) -> list[tuple[Text, ...]]:
    """A scheduled or dead list's rows from `queuetop jobs`' page: each time as its distance from `now`."""
    def since(value: object) -> float | None:
        return (now - value).total_seconds() if isinstance(value, datetime) and value.tzinfo == now.tzinfo else None

    rows = []
    for job in page.jobs:
        if page.state == "scheduled":
            due = since(job.get("available"))
            rows.append((_right(str(job["id"])), _right("—" if due is None else "in " + fmt.duration(-due)),
                         _right(fmt.duration(since(job.get("created")))), _right(_known(job.get("priority"))),
                         _right(_known(job.get("attempts"))), _excerpt(_text(job.get("info")))))  # fmt: skip
        else:
            died = since(job.get("completed", job.get("finished")))
            rows.append((_right(str(job["id"])), _right(fmt.duration(died)), _right(_known(job.get("attempts"))),
                         _excerpt(_text(job.get("info")))))  # fmt: skip
    return rows


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def claim_rows(detail: TypeDetail) -> list[tuple[Text, ...]]:
    rows = []
    for job in detail.claims:
        if job.expires_in_s is None:
            expires = _right("—", DIM)
        elif job.expires_in_s < 0:
            expires = _right("overdue " + fmt.duration(-job.expires_in_s), ALERT)
        else:
            expires = _right("in " + fmt.duration(job.expires_in_s))
        worker = fmt.fit(job.worker, dict(CLAIM_COLUMNS)["worker"]) if job.worker else "—"  # names differ at the end
        rows.append((_right(str(job.id)), Text(worker, no_wrap=True),
                     _right(fmt.duration(job.claimed_for_s)), expires, _right(_known(job.attempts))))  # fmt: skip
    return rows


def completion_rows(detail: TypeDetail) -> list[tuple[Text, ...]]:
    styles = {"dead": ALERT, "failed": WARN}
    return [(_right(str(job.id)), Text(job.outcome, style=styles.get(job.outcome, "")),
             _right(fmt.duration(job.wait_s)), _right(fmt.duration(job.processing_s)), _right(fmt.duration(job.ago_s)))
            for job in detail.completions]  # fmt: skip


class DetailScreen(HandlesThreadResults, Screen):
    """One job type's drill-down."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="back to the table"),
        Binding("d", "app.dead_jobs", "Dead", tooltip="retry or delete this type's dead jobs"),
        Binding("a", "app.make_available", "Available",
                tooltip="make this type's jobs scheduled for later available now: dry-run count, confirm"),
        # Where the layout declares no such write, the key is not offered and says why (QueuetopApp.check_action).
        Binding("d", "app.refused('dead delete')", show=False),
        Binding("a", "app.refused('make available')", show=False),
        Binding("s", "next_list", "List", show=False, tooltip="the first list: pending, scheduled for later, dead "
                "(the states the layout has), in turn"),
        Binding("g", "charts", "Charts", tooltip="show or hide this type's charts (hidden at first on a screen "
                f"under {CHARTS_FROM_HEIGHT} rows, so that the lists have room)"),
        # At 80 columns the footer has room for the keys of this screen and the ones that look deeper (W, x, ?):
        # enqueue and quit still work here, as `?` says, without their place in the footer.
        Binding("e", "app.enqueue", "Enqueue", show=False),
        Binding("e", "app.refused('enqueue')", show=False),
        Binding("q", "app.quit", "Quit", show=False),
    ]

    def __init__(self, job_type: str) -> None:
        super().__init__()
        self.job_type = job_type
        self.detail: TypeDetail | None = None
        self._loading = False
        self.charts_chosen: bool | None = None  # shown or hidden by `g`; None: by the screen's height
        self.first_state = "pending"  # what the first list shows (`s`)
        self.first_ids: tuple[object, ...] = ()  # the ids of its jobs, in order, for Enter

    @property
    def dashboard(self) -> Dashboard:
        return cast("Dashboard", self.app)

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        yield Static(id="summary", markup=False)  # one line each, cut at the edge: the lists keep the room
        yield Static(id="summary-note", markup=False)  # the library's words, or why the lists could not be read
        yield self._table("pending", *FIRST_LISTS["pending"])
        with Horizontal(classes="detail-row"):
            yield self._table("claims", "claims in flight, soonest to time out first", CLAIM_COLUMNS)
            yield self._table("completions", "recent completions, newest first", COMPLETION_COLUMNS)
        with Horizontal(id="detail-charts"):
            yield Chart(self.dashboard.session.series, id="type-depth")
            yield Chart(self.dashboard.session.series, id="type-rates")
        yield Footer(show_command_palette=False)  # ctrl+p still opens it: at 80 columns the room is for W, x and ?

    def _table(self, key: str, title: str, columns: tuple[tuple[str, int], ...]) -> DataTable:
        table: DataTable = DataTable(id=key, cursor_type="row", zebra_stripes=True)
        self._columns(table, title, columns)
        return table

    def _columns(self, table: DataTable, title: str, columns: tuple[tuple[str, int], ...]) -> None:
        table.border_title = title + ("  (s: " + ", ".join(self._first_states()[1:]) + ")"
                                      if table.id == "pending" and len(self._first_states()) > 1 else "")  # fmt: skip
        for label, width in columns:
            table.add_column(label, width=width, key=label)

    def _first_states(self) -> list[str]:
        """The first list's states the layout has, the one shown first: `s` goes round them."""
        layout = getattr(self.dashboard.session.actions, "layout", None) or NATIVE  # a stand-in: the native schema
        shown = [state for state in FIRST_LISTS if state in layout.states]
        at = shown.index(self.first_state) if self.first_state in shown else 0
        return shown[at:] + shown[:at]

    def action_next_list(self) -> None:
        states = self._first_states()
        if len(states) < 2:
            self.notify("This layout has no scheduled or dead jobs: the first list shows pending ones only.",
                        markup=False)  # fmt: skip
            return
        self.first_state = states[1]
        table = self.query_one("#pending", DataTable)
        table.clear(columns=True)
        self._columns(table, *FIRST_LISTS[self.first_state])
        self.first_ids = ()
        self._load()

    def on_mount(self) -> None:
        self.query_one("#pending", DataTable).focus()
        self._place_charts()
        self.refresh_data()

    def on_resize(self) -> None:
        self._place_charts()

    def _place_charts(self) -> None:
        shown = self.charts_chosen if self.charts_chosen is not None else self.app.size.height >= CHARTS_FROM_HEIGHT
        self.query_one("#detail-charts").display = shown

    def action_charts(self) -> None:
        self.charts_chosen = not self.query_one("#detail-charts").display
        self._place_charts()

    def action_back(self) -> None:
        self.dismiss()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a job in a list: the job view (tui/job.py), read by its id wherever it is now."""
        from queuetop.tui.job import JobScreen

        detail = self.detail
        lists = {"pending": self.first_ids, "claims": tuple(job.id for job in detail.claims),
                 "completions": tuple(job.id for job in detail.completions)} if detail is not None else {}  # fmt: skip
        ids = lists.get(event.data_table.id or "", ())
        if 0 <= event.cursor_row < len(ids):
            self.app.push_screen(JobScreen(ids[event.cursor_row]))

    def on_screen_resume(self) -> None:
        self.dashboard.refresh_screen()  # shown again (a drill-down or dialog closed): catch up at once

    @property
    def selected_type(self) -> str:
        return self.job_type

    def show_status(self, view: StatusView) -> None:
        self.query_one("#status", StatusBar).show(view)

    def refresh_data(self) -> None:
        """A poll has finished: new figures and charts now, the lists in a moment."""
        app = self.dashboard
        snapshot = app.shown
        summary = self.query_one("#summary", Static)
        summary.update(self._summary(), layout=False)
        summary.set_class(app.session.past is not None, "past")
        self._note(words_text(snapshot.library, snapshot.library_words) if snapshot is not None else Text())
        window, cursor = app.window_s, app.cursor_x()
        self.query_one("#type-depth", Chart).show(ChartSpec(
            "depth", (Line("depth", self.job_type, "depth", "cyan"),), window, cursor, marks_of=self.job_type))
        rates = tuple(Line(figure, self.job_type, figure, color) for figure, color in (("arrivals", "magenta"),
                      ("completions", "green")) if snapshot is None or snapshot.provides(figure))  # fmt: skip
        self.query_one("#type-rates", Chart).show(ChartSpec("jobs/s", rates, window, cursor, marks_of=self.job_type))
        if app.connected:
            self._load()

    def export_view(self) -> ScreenExport:
        """What this screen shows, for `x`: the type's figures and its charts' points."""
        app = self.dashboard
        snapshot = app.shown
        assert snapshot is not None
        row = snapshot.type_named(self.job_type)
        return screen_export(app, snapshot, [row] if row is not None else [], shape_columns(snapshot.provides),
                             [self.query_one(f"#{name}", Chart) for name in ("type-depth", "type-rates")])

    def _summary(self) -> Text:
        snapshot = self.dashboard.shown
        if snapshot is None:
            return summary_text(self.job_type, None)
        return summary_text(self.job_type, snapshot.type_named(self.job_type), snapshot.provides)

    def _note(self, note: Text) -> None:
        widget = self.query_one("#summary-note", Static)
        widget.display = bool(note.plain)
        widget.update(note)

    def _load(self) -> None:
        if self._loading:
            return  # one read at a time; the next poll asks again
        self._loading = True
        # read here: the worker thread has no app
        actions, job_type, state = self.dashboard.session.actions, self.job_type, self.first_state

        def read() -> tuple[TypeDetail, JobPage | None]:
            return actions.type_detail(job_type), None if state == "pending" else actions.jobs(state, job_type)

        in_thread(self, read, self._loaded, self._failed, group="detail", bug=self._not_loaded)

    def _not_loaded(self, _error: Exception) -> None:
        self._loading = False  # the app reports the error; the next poll tries again

    def _loaded(self, read: tuple[TypeDetail, JobPage | None]) -> None:
        self._loading = False
        detail, page = read
        self.detail = detail
        if (page.state if page is not None else "pending") != self.first_state:
            return self._load()  # `s` switched the list while this was read: read what it shows now
        self.first_ids = tuple(job.id for job in detail.pending) if page is None else \
            tuple(job["id"] for job in page.jobs)  # fmt: skip
        first = pending_rows(detail) if page is None else page_rows(page, detail.taken_at)
        for key, rows in (("pending", first), ("claims", claim_rows(detail)),
                          ("completions", completion_rows(detail))):  # fmt: skip
            table = self.query_one(f"#{key}", DataTable)
            at = table.cursor_row
            table.clear()
            table.add_rows(rows)
            if rows:
                table.move_cursor(row=min(at, len(rows) - 1), animate=False)

    def _failed(self, error: QueuetopError) -> None:
        self._loading = False
        self._note(Text(f"could not read the job lists: {error}", style="red"))
