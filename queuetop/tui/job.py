"""The job view: one job up close (Enter on a job in the drill-down), read by its id wherever it is now — its
state, the table it is in, every column the layout names, a JSON payload pretty-printed. Read on the drill-down's
connection off the UI thread; `r` reads it again, Escape goes back."""

from __future__ import annotations

from typing import Any, ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from queuetop.act.jobs import JobView, shown_value
from queuetop.db import QueuetopError
from queuetop.tui.session import Dashboard
from queuetop.tui.threads import HandlesThreadResults, in_thread


def job_text(job_id: Any, view: JobView | None) -> Text:
    """The job as the screen shows it: a title line, then each column and its value."""
    text = Text()
    if view is None:
        text.append(f"job {job_id}: not found", style="bold")
        text.append("\n\nIt finished and was deleted (a shape that keeps no finished jobs), or was moved again "
                    "while it was read: press r to look again.", style="dim")  # fmt: skip
        return text
    text.append(f"job {job_id}", style="bold")
    text.append(f"  {view.state}", style="bold cyan")
    text.append(f"  in {view.table}\n\n", style="dim")
    width = max(len(role) for role in view.columns)
    for role, value in view.columns.items():
        text.append(f"{role:<{width}}  ", style="bold")
        text.append(shown_value(value, " " * (width + 2)) + "\n", style="dim" if value is None else "")
    return text


class JobScreen(HandlesThreadResults, Screen):
    """One job, by its id."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="back to the drill-down"),
        Binding("r", "reload", "Read again", tooltip="read the job again: it may have moved on"),
    ]

    def __init__(self, job_id: Any) -> None:
        super().__init__()
        self.job_id = job_id
        self.view: JobView | None = None
        self.loaded = False

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text(f"job {self.job_id}: reading…", style="dim"), id="job")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        actions, job_id = cast("Dashboard", self.app).session.actions, self.job_id
        in_thread(self, lambda: actions.job(job_id), self._read, self._failed, group="job")

    def _read(self, view: JobView | None) -> None:
        self.view, self.loaded = view, True
        self.query_one("#job", Static).update(job_text(self.job_id, view))

    def _failed(self, error: QueuetopError) -> None:
        self.query_one("#job", Static).update(Text(f"job {self.job_id}: could not read it: {error}", style="red"))

    def action_back(self) -> None:
        self.dismiss()
