"""`W`: the workers panel — one line per claimer, from the claims: what it holds now, how many of those are past
their timeout, what it claimed, completed and failed in the last minute, its p95 processing time and when it
last claimed. A worker whose claims all timed out is marked probably dead; `r` releases its timed-out claims
(dry-run count, confirm, compare-and-set), leaving every other worker's alone.

The panel reads on the Actions' workers connection in a worker thread, every REFRESH_S while it is the screen
on top (one read at a time), and renders the frozen `WorkersView` it gets back. A shape whose rows name no
claimer shows why instead of a table.
"""

from __future__ import annotations

from typing import ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker, WorkerState

from queuetop.act.workers import RECENT_S, WorkerStats, WorkersView
from queuetop.core import format as fmt
from queuetop.db import QueuetopError
from queuetop.tui.session import Dashboard
from queuetop.tui.table import ALERT, DIM, WARN
from queuetop.tui.threads import HandlesThreadResults, in_thread
from queuetop.tui.widgets import StatusBar, StatusView

REFRESH_S = 2.0  # a modest rate: the panel reads only while it is shown
NAME_WIDTH = 22
STATE_WIDTH = 13

# (key, label, width, the figure it shows)
COLUMNS = (
    ("held", "held", 6, "held"), ("timed_out", "timed out", 9, "timed_out"), ("claims", "claims/1m", 9, "claims_1m"),
    ("done", "done/1m", 8, "completed_1m"), ("failed", "failed/1m", 9, "failed_1m"),
    ("p95", "proc p95", 8, "processing_p95_s"), ("last", "last claim", 10, "last_claim_ago_s"),
)  # fmt: skip
WIDTHS = {key: width for key, _, width, _ in COLUMNS}


def worker_cells(worker: WorkerStats) -> dict[str, Text]:
    """The cells of one worker's line, trouble in colour: timed-out claims, failures, a probably dead worker."""

    def right(value: str, style: str = "", key: str = "") -> Text:
        return Text(fmt.pad(value, WIDTHS[key], right=True), style=style)

    dead = worker.probably_dead
    return {
        "worker": Text(fmt.fit(worker.name, NAME_WIDTH), style=ALERT if dead else DIM if worker.worker is None else ""),
        "held": right(fmt.count(worker.held), key="held"),
        "timed_out": right(fmt.count(worker.timed_out), ALERT if worker.timed_out else "", "timed_out"),
        "claims": right(fmt.count(worker.claims_1m), key="claims"),
        "done": right(fmt.count(worker.completed_1m), key="done"),
        "failed": right(fmt.count(worker.failed_1m), WARN if worker.failed_1m else "", "failed"),
        "p95": right(fmt.duration(worker.processing_p95_s), key="p95"),
        "last": right("—" if worker.last_claim_ago_s is None else fmt.duration(worker.last_claim_ago_s) + " ago",
                      key="last"),
        "state": Text("probably dead" if dead else "", style=ALERT),
    }


def summary(view: WorkersView | None, error: str | None = None) -> Text:
    """The line above the table: by which column, how many workers, how many probably dead, what `r` does."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if view is None:
        text.append("Reading the claims…" if error is None else f"could not read the workers: {error}",
                    style="" if error is None else "red")  # fmt: skip
        return text
    if view.reason is not None:
        text.append(view.reason, style=WARN)
        return text
    dead = sum(worker.probably_dead for worker in view.workers)
    text.append(f"workers by {view.claimer_column}", style="bold")
    text.append(f": {len(view.workers)} holding claims or claiming in the last 5 min; figures over the last "
                f"{RECENT_S:.0f} s")  # fmt: skip
    if dead:
        text.append(f"\n{dead} probably dead (every claim it holds is past its timeout): select it and press r to "
                    "release its claims", style=ALERT)
    if error is not None:
        text.append(f"\ncould not read the workers again: {error}", style="red")
    return text


class WorkersScreen(HandlesThreadResults, Screen):
    """The workers panel."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,W", "back", "Back", tooltip="back to the table"),
        Binding("r", "release_worker", "Release its claims",
                tooltip="release the selected worker's timed-out claims: dry-run count, confirm, compare-and-set"),
    ]  # fmt: skip

    def __init__(self) -> None:
        super().__init__()
        self.view: WorkersView | None = None
        self._loading = False

    @property
    def dashboard(self) -> Dashboard:
        return cast("Dashboard", self.app)

    @property
    def selected_type(self) -> None:
        return None  # e and r of the app act on all types here

    @property
    def selected_worker(self) -> WorkerStats | None:
        table = self.query_one("#workers", DataTable)
        if self.view is None or not self.view.workers or table.row_count == 0:
            return None
        return self.view.workers[min(table.cursor_row, len(self.view.workers) - 1)]

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        yield Static(summary(None), id="workers-summary", markup=False)
        table: DataTable = DataTable(id="workers", cursor_type="row", zebra_stripes=True)
        table.border_title = "workers, probably dead first"
        table.add_column("worker", width=NAME_WIDTH, key="worker")
        for key, label, width, _ in COLUMNS:
            table.add_column(label, width=width, key=key)
        table.add_column("", width=STATE_WIDTH, key="state")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#workers", DataTable).focus()
        self.set_interval(REFRESH_S, self._read)
        self._read()

    def on_screen_resume(self) -> None:
        self.dashboard.refresh_screen()
        self._read()  # a dialog closed (a release, say): show its effect at once

    def action_back(self) -> None:
        self.dismiss()

    def action_release_worker(self) -> None:
        worker = self.selected_worker
        if worker is None:
            self.notify("No worker to release: the table is empty.", severity="warning")
            return
        self.dashboard.release_worker(worker)

    def show_status(self, view: StatusView) -> None:
        self.query_one("#status", StatusBar).show(view)

    def refresh_data(self) -> None:
        """A poll finished: the panel keeps its own pace (REFRESH_S) instead of the poll's."""

    def _read(self) -> None:
        if self._loading or not self.is_current or not self.dashboard.connected:
            return
        self._loading = True
        actions = self.dashboard.session.actions  # read here: the worker thread has no app
        in_thread(self, actions.workers, self._loaded, self._failed, group="workers")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "workers" and event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self._loading = False  # the app reports the error; the next tick tries again

    def _loaded(self, view: WorkersView) -> None:
        self._loading = False
        self.query_one("#workers-summary", Static).update(summary(view), layout=False)
        table = self.query_one("#workers", DataTable)
        table.display = view.reason is None
        before = self.selected_worker  # the cursor stays on its worker while the order changes
        names = [worker.name for worker in view.workers]
        keep = names.index(before.name) if before is not None and before.name in names else table.cursor_row
        self.view = view
        table.clear()
        known = view.figures
        for worker in view.workers:
            cells = worker_cells(worker)
            table.add_row(cells["worker"], *(cells[key] if known.get(figure) else Text(fmt.pad("—", width, right=True),
                                                                                      style=DIM)
                                             for key, _, width, figure in COLUMNS), cells["state"])  # fmt: skip
        if view.workers:
            table.move_cursor(row=min(keep, len(view.workers) - 1), animate=False)

    def _failed(self, error: QueuetopError) -> None:
        self._loading = False
        self.query_one("#workers-summary", Static).update(summary(self.view, str(error)), layout=False)
