"""The job view: one job up close (Enter on a job in the drill-down), read by its id wherever it is now — its
state, the table it is in, every column the layout names, a JSON payload pretty-printed. Read on the drill-down's
connection off the UI thread, again every REREAD_S (ctrl+r at once); Escape goes back. The actions that make sense
on that one job, where the layout declares them: `d` a dead job retried or deleted, `a` a scheduled job made
available now, `r` a claim past its timeout released — each counted again while its dialog is open, and done only
while the job is still in that state (compare-and-set: a job that moved on meanwhile is left alone, and the notice
says so). `c` copies the id, `C` the payload."""

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

REREAD_S = 2.0  # the job view reads its job again this often


def job_text(job_id: Any, view: JobView | None, retried: bool = False) -> Text:
    """The job as the screen shows it: a title line, then each column and its value; `retried` from this view."""
    text = Text()
    if view is None and retried:  # the shape makes a retried dead job again (native: its type, payload, created)
        text.append(f"job {job_id}: retried, as a new job", style="bold")
        text.append("\n\nThis shape puts a dead job back into its queue table as a new row, with a new id: it is "
                    "among the pending jobs of its type (Esc: back to the lists).", style="dim")  # fmt: skip
        return text
    if view is None:
        text.append(f"job {job_id}: not found", style="bold")
        text.append("\n\nIt finished and was deleted (a shape that keeps no finished jobs), was retried as a new job "
                    "(a dead job put back into the queue table gets a new id there), or moved while it was read: "
                    "ctrl+r looks again.", style="dim")  # fmt: skip
        return text
    text.append(f"job {job_id}", style="bold")
    text.append(f"  {view.state}", style="bold cyan")
    text.append(f"  in {view.table}\n\n", style="dim")
    width = max(len(role) for role in view.columns)
    for role, value in view.columns.items():
        text.append(f"{role:<{width}}  ", style="bold")
        text.append(shown_value(value, " " * (width + 2), view.now) + "\n", style="dim" if value is None else "")
    return text


class JobScreen(HandlesThreadResults, Screen):
    """One job, by its id."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="back to the drill-down"),
        Binding("r", "release", "Release", tooltip="this claim past its timeout: back to pending (out of attempts: "
                "dead, where the shape buries them), only while it is still timed out"),
        Binding("ctrl+r", "reload", "Read again", show=False, tooltip=f"read the job again now (it is read every "
                f"{REREAD_S:g} s)"),
        Binding("d", "dead", "Retry or delete", tooltip="this dead job: back to pending, or deleted"),
        Binding("a", "available", "Available now", tooltip="this scheduled job: available now"),
        Binding("c", "copy('id')", "Copy id", tooltip="copy the job's id to the clipboard (through the terminal: "
                "OSC 52, which most terminals and tmux with set-clipboard on pass on)"),
        Binding("C", "copy('info')", "Copy payload", tooltip="copy the job's payload, as stored, to the clipboard"),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`d` on a dead job, `a` on a scheduled one, each only where the layout declares it. `r` wherever the
        layout declares a release, whatever the job's state (it says when there is nothing to release): were it
        not offered here, the key would fall through to the dashboard's `r`, every type's timed-out claims."""
        if action == "release":
            return self._release_state() is not None and self._app().refusal("release") is None
        wanted = {"dead": ("dead", "dead delete"), "available": ("scheduled", "make available")}.get(action)
        if wanted is None:
            return True
        state, write = wanted
        return self.view is not None and self.view.state == state and self._app().refusal(write) is None

    def __init__(self, job_id: Any) -> None:
        super().__init__()
        self.job_id = job_id
        self.view: JobView | None = None
        self.loaded = False
        self._reading = False
        self._retried = False  # retried from this view: a shape that makes it again gives it a new id

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text(f"job {self.job_id}: reading…", style="dim"), id="job")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()
        self.set_interval(REREAD_S, self.action_reload)  # a job moves on by itself: the view follows it

    def action_reload(self) -> None:
        if self._reading:
            return  # one read at a time: a slow database is not asked twice
        self._reading = True
        actions, job_id = cast("Dashboard", self.app).session.actions, self.job_id
        in_thread(self, lambda: actions.job(job_id), self._read, self._failed, group="job", bug=self._not_read)

    def _not_read(self, _error: Exception) -> None:
        self._reading = False

    def _release_state(self) -> str | None:
        """The state a release takes a claim from (`[release]`), or None where the layout declares none."""
        release = getattr(self._app().session.actions, "layout", None)
        release = getattr(release, "release", None)
        return release.state if release is not None else None

    def _read(self, view: JobView | None) -> None:
        self._reading = False
        self.view, self.loaded = view, True
        self.query_one("#job", Static).update(job_text(self.job_id, view, self._retried))
        self.refresh_bindings()  # d and a follow the job's state

    def action_copy(self, what: str) -> None:
        """The id, or the payload as the database holds it (not pretty-printed: what a script would get)."""
        if what == "id":
            self.app.copy_to_clipboard(str(self.job_id))
            self.notify(f"Copied the id {self.job_id}.", markup=False)
            return
        payload = None if self.view is None else self.view.columns.get("info")
        if payload is None:
            why = "it was not found" if self.view is None else "it has none" if "info" in self.view.columns \
                else "its layout names no payload column (role info)"  # fmt: skip
            self.notify(f"Nothing copied: job {self.job_id}'s payload is not here ({why}).", severity="warning",
                        markup=False)  # fmt: skip
            return
        text = payload if isinstance(payload, str) else str(payload)
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied the payload of job {self.job_id} ({len(text):,} characters).", markup=False)

    def _app(self) -> Dashboard:
        return cast("Dashboard", self.app)

    def _still(self, state: str) -> int:
        """1 while the job is in `state`, else 0: what a dialog over this one job counts."""
        view = cast("Dashboard", self.app).session.actions.job(self.job_id)
        return int(view is not None and view.state == state)

    def action_dead(self) -> None:
        from queuetop.tui.modals import DeadModal

        app = self._app()
        if not app.may_write(app.refusal("dead delete"), "retrying or deleting dead jobs"):
            return
        app.push_screen(DeadModal(None, lambda: self._still("dead"), title=f"Dead job {self.job_id}"), self._dead)

    def _dead(self, choice: Any) -> None:
        if choice is None:
            return
        actions, job_id = cast("Dashboard", self.app).session.actions, self.job_id
        done = "back to pending" if choice.action == "retry" else "deleted"

        def changed(count: int) -> None:
            self._retried = bool(count) and choice.action == "retry"
            self._done(count, done)

        in_thread(self, lambda: actions.dead_job(choice.action, job_id), changed, self._failed_action,
                  group="job-action")

    def action_available(self) -> None:
        from queuetop.tui.modals import CountConfirmModal

        app = self._app()
        if not app.may_write(app.refusal("make available"), "making scheduled jobs available"):
            return

        def verdict(found: int) -> str:
            return f"Job {self.job_id} is scheduled for later. Make it available now?" if found else \
                f"Job {self.job_id} is no longer scheduled: nothing to do."  # fmt: skip

        app.push_screen(CountConfirmModal(f"Make job {self.job_id} available now", lambda: self._still("scheduled"),
                                          verdict, "Its available time becomes now, only while it is still "
                                          "scheduled.", "Make available"), self._available)  # fmt: skip

    def action_release(self) -> None:
        from queuetop.tui.modals import CountConfirmModal

        app, state = self._app(), self._release_state()
        if not app.may_write(app.refusal("release"), "releasing claims") or state is None:
            return
        if self.view is None or self.view.state != state:
            now = "not found" if self.view is None else self.view.state
            self.notify(f"Job {self.job_id} is {now}, not past its timeout: nothing to release.", markup=False)
            return

        def verdict(found: int) -> str:
            return f"Job {self.job_id}'s claim is past its timeout. Release it?" if found else \
                f"Job {self.job_id} is no longer timed out (finished, released or claimed again): " \
                "nothing to do."  # fmt: skip

        app.push_screen(CountConfirmModal(f"Release job {self.job_id}", lambda: self._still(state), verdict,
                                          "Back to pending, only while it is still timed out; out of attempts, dead "
                                          "where the shape buries them.", "Release"), self._release)  # fmt: skip

    def _release(self, counted: int | None) -> None:
        if not counted:
            return
        actions, job_id = cast("Dashboard", self.app).session.actions, self.job_id

        def done(result: Any) -> None:
            self._done(result.released + result.dead, "dead: it was out of attempts" if result.dead else
                       "released: back to pending")  # fmt: skip

        in_thread(self, lambda: actions.release_job(job_id), done, self._failed_action, group="job-action")

    def _available(self, counted: int | None) -> None:
        if not counted:
            return
        actions, job_id = cast("Dashboard", self.app).session.actions, self.job_id
        in_thread(self, lambda: actions.make_job_available(job_id), lambda changed: self._done(changed, "available "
                  "now"), self._failed_action, group="job-action")  # fmt: skip

    def _done(self, changed: int, done: str) -> None:
        app = self._app()
        app.notify(f"Job {self.job_id} {done}." if changed else f"Job {self.job_id} had moved on meanwhile: nothing "
                   "changed.", markup=False)  # fmt: skip
        app.poll_soon()
        self.action_reload()

    def _failed_action(self, error: QueuetopError) -> None:
        self._app().notify(f"The action failed and changed nothing: {error}", severity="error", markup=False)

    def _failed(self, error: QueuetopError) -> None:
        self._reading = False
        self.query_one("#job", Static).update(Text(f"job {self.job_id}: could not read it: {error}", style="red"))

    def action_back(self) -> None:
        self.dismiss()
