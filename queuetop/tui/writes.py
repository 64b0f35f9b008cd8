"""The dashboard's writes, each asked in a dialog and run on the Actions' own connection: enqueue, release, dead
jobs, one worker's release, scheduled jobs made available. A write the layout does not declare is refused
before any SQL is sent (`refusal`), and read-only targets refuse them all (`_may_change_queue`).
"""

from __future__ import annotations

import logging
from typing import ClassVar

from queuetop.act.actions import EnqueueRequest, EnqueueResult, ReleaseResult, describe_release
from queuetop.act.shape_queue import release_refusal
from queuetop.act.workers import ScheduledResult, WorkerStats, can_release_worker, no_scheduled_state
from queuetop.db import QueuetopError
from queuetop.layouts import NATIVE, Layout
from queuetop.tui.detail import DetailScreen
from queuetop.tui.job import JobScreen
from queuetop.tui.main import MainScreen
from queuetop.tui.modals import (
    CountConfirmModal,
    DeadChoice,
    DeadModal,
    EnqueueModal,
    ReleaseChoice,
    ReleaseModal,
)
from queuetop.tui.threads import in_thread
from queuetop.tui.workers import WorkersScreen

log = logging.getLogger("queuetop")


class Writes:
    """The write actions of `QueuetopApp` (a mixin: it reads the app's actions, layout and screens)."""

    # -- actions ---------------------------------------------------------------------------------------------
    def _selected_type(self) -> str | None:
        screen = self.dashboard_screen()
        return screen.selected_type if screen is not None else None

    def _may_change_queue(self, verb: str) -> bool:
        if not isinstance(self.screen, MainScreen | DetailScreen | WorkersScreen | JobScreen):
            return False  # a dialog or the help is open
        if self.session.read_only:
            self.notify(f"This dashboard is read-only (--read-only): {verb} is disabled.", severity="warning")
            return False
        if not self.connected:
            why = f": {self.session.link.error}" if self.session.link is not None and self.session.link.error else ""
            self.notify(f"Not connected to the database{why}. {verb.capitalize()} is disabled until it is back.",
                        severity="warning", markup=False)  # fmt: skip
            return False
        return True

    def may_write(self, refusal: str | None, verb: str) -> bool:
        """Whether a write may go ahead: not where the layout refuses it (the sentence why is shown), nor where the
        dashboard may not change the queue now (`_may_change_queue`)."""
        if refusal is not None:
            self.notify(refusal, severity="warning", markup=False)
            return False
        return self._may_change_queue(verb)

    # The keys of writes, and the action of ACTIONS each is: offered only where the layout declares it.
    WRITE_KEYS: ClassVar[dict[str, str]] = {"enqueue": "enqueue", "release": "release", "dead_jobs": "dead delete",
                                            "make_available": "make available"}  # fmt: skip

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.WRITE_KEYS:
            return self.refusal(self.WRITE_KEYS[action]) is None
        if action == "refused":  # the hidden twin of a write's key: there where the write is not
            return self.refusal(str(parameters[0])) is not None
        return True

    def refusal(self, action: str) -> str | None:
        """Why this queue's layout may not do `action` (one of layouts.ACTIONS), in a sentence; None when it may."""
        layout = self._layout()
        if action.startswith("dead") and "dead" not in layout.states:
            return f"layout {layout.name} has no dead jobs: only shapes with an attempt limit do."
        if action == "make available":
            reason = no_scheduled_state(layout)
            return None if reason is None else f"{reason}."
        reason = release_refusal(layout) if action == "release" else layout.refusal(action)
        return None if reason is None else f"{reason}."

    def action_refused(self, action: str) -> None:
        self.notify(self.refusal(action) or f"{action} is not offered here.", severity="warning", markup=False)

    def action_enqueue(self) -> None:
        # (refused: the command palette, or a binding shown before the layout was known)
        if not self.may_write(self.refusal("enqueue"), "enqueue"):
            return
        known = [row.job_type for row in self.session.latest.types] if self.session.latest else []
        self.push_screen(EnqueueModal(self._selected_type(), known, self._layout()), self._enqueue)

    def _layout(self) -> Layout:
        """The queue's shape, from the actions (a stand-in without one is the native schema)."""
        layout = getattr(self.session.actions, "layout", None)
        return layout if layout is not None else NATIVE

    def _enqueue(self, request: EnqueueRequest | None) -> None:
        if request is None:
            return
        actions = self.session.actions
        in_thread(self, lambda: actions.enqueue(request), self._enqueued, self._action_failed, group="enqueue")

    def _enqueued(self, result: EnqueueResult) -> None:
        self.notify(result.describe(), markup=False)
        self.poll_soon()

    def action_release(self) -> None:
        # (refused: the command palette, or a binding shown before the layout was known)
        layout = self._layout()
        if not self.may_write(self.refusal("release"), "release"):
            return
        job_type = self._selected_type() if layout.has_job_type else None
        what = None if layout.release is None or layout.release_buries else layout.release.what
        hint = None if what is None or layout.release.action == "clear" else (
            "Each goes back into the queue table, in one transaction with its removal from the completed table; "
            "one completed meanwhile is left alone.")  # fmt: skip
        self.push_screen(ReleaseModal(job_type, self.session.actions.count_timed_out, what, hint), self._release)

    def _release(self, choice: ReleaseChoice | None) -> None:
        if choice is None:
            return
        actions, job_type = self.session.actions, choice.job_type
        in_thread(self, lambda: actions.release(job_type),
                  lambda result: self._released(job_type, choice.counted, result), self._action_failed,
                  group="release")  # fmt: skip

    def _released(self, job_type: str | None, counted: int, result: ReleaseResult) -> None:
        layout = self._layout()
        what = None if layout.release is None or layout.release_buries else layout.release.what
        self.notify(describe_release(result, job_type, what) + meanwhile(counted, result.released + result.dead,
                    "finished or were claimed again", "more timed out"), markup=False)  # fmt: skip
        self.poll_soon()

    def _detail_type(self, layout: Layout) -> str | None:
        """The drill-down's job type, where the screen is one and the shape has job types."""
        return self.screen.job_type if isinstance(self.screen, DetailScreen) and layout.has_job_type else None

    def action_dead_jobs(self) -> None:
        """From the drill-down: the type's dead jobs, counted, then retried or deleted."""
        layout = self._layout()
        if not self.may_write(self.refusal("dead delete"), "retrying or deleting dead jobs"):
            return
        job_type = self._detail_type(layout)
        actions = self.session.actions
        self.push_screen(DeadModal(job_type, lambda: actions.dead("count", job_type)),
                         lambda choice: self._dead(job_type, choice))  # fmt: skip

    def _dead(self, job_type: str | None, choice: DeadChoice | None) -> None:
        if choice is None:
            return
        actions, scope = self.session.actions, f" of type {job_type!r}" if job_type else ""
        done = "back to pending" if choice.action == "retry" else "deleted"

        def changed(count: int) -> None:
            self.notify(f"{count:,} dead job(s){scope} {done}." + meanwhile(
                choice.counted, count, "were retried or deleted", "more died"), markup=False)
            self.poll_soon()

        in_thread(self, lambda: actions.dead(choice.action, job_type), changed, self._action_failed, group="dead")

    # -- workers and scheduled jobs --------------------------------------------------------------------------
    def action_workers(self) -> None:
        if isinstance(self.screen, WorkersScreen):
            self.screen.dismiss()
        elif isinstance(self.screen, MainScreen | DetailScreen):
            self.push_screen(WorkersScreen())

    def release_worker(self, worker: WorkerStats) -> None:
        """From the workers panel: one worker's timed-out claims, counted, then released on confirmation."""
        if not self.may_write(can_release_worker(self._layout()), "release"):
            return
        actions, name = self.session.actions, worker.worker

        def verdict(found: int) -> str:
            if found == 0:
                return f"Nothing to release: no claim of {worker.name} is past its timeout."
            return f"{found:,} claim(s) of {worker.name} are past their timeout. Release them?"

        hint = ("Each goes back to pending by compare-and-set on its claim token: a claim completed or taken again "
                "meanwhile is left alone, and no other worker's claim is touched. Out of attempts: dead.")
        self.push_screen(CountConfirmModal(f"Release the timed-out claims of {worker.name}",
                                           lambda: actions.release_worker(name, dry_run=True).timed_out, verdict,
                                           hint, "Release"),
                         lambda confirmed: self._release_worker(worker, confirmed))  # fmt: skip

    def _release_worker(self, worker: WorkerStats, counted: int | None) -> None:
        if not counted:
            return
        actions, name = self.session.actions, worker.worker
        in_thread(self, lambda: actions.release_worker(name),
                  lambda result: self._worker_released(worker, counted, result), self._action_failed,
                  group="release")  # fmt: skip

    def _worker_released(self, worker: WorkerStats, counted: int, result: ReleaseResult) -> None:
        dead = f"; {result.dead:,} out of attempts moved to dead" if result.dead else ""
        self.notify(f"Released {result.released:,} of {result.timed_out:,} timed-out claim(s) of {worker.name} back "
                    f"to pending{dead}." + meanwhile(counted, result.released + result.dead,
                                                     "completed or were released", "more timed out"),
                    markup=False)  # fmt: skip
        self.poll_soon()

    def action_make_available(self) -> None:
        """From the drill-down: the type's jobs scheduled for later, counted, then made available now."""
        layout = self._layout()
        if not self.may_write(no_scheduled_state(layout), "making scheduled jobs available"):
            return
        job_type = self._detail_type(layout)
        actions = self.session.actions

        def verdict(found: int) -> str:
            return ScheduledResult(found, dry_run=True).describe(job_type) + (" Make them available now?" if found
                                                                              else "")  # fmt: skip

        scope = f" of type {job_type!r}" if job_type else ""
        hint = ("Their available time becomes now, only where a job is still scheduled when it runs: a job claimed "
                "meanwhile is left alone.")
        self.push_screen(CountConfirmModal(f"Make scheduled jobs{scope} available now",
                                           lambda: actions.make_available(job_type, dry_run=True).scheduled, verdict,
                                           hint, "Make available"),
                         lambda confirmed: self._make_available(job_type, confirmed))  # fmt: skip

    def _make_available(self, job_type: str | None, counted: int | None) -> None:
        if not counted:
            return
        actions = self.session.actions

        def made(result: ScheduledResult) -> None:
            self.notify(result.describe(job_type) + meanwhile(counted, result.made_available,
                                                              "were claimed or made available", "more were "
                                                              "scheduled"), markup=False)  # fmt: skip
            self.poll_soon()

        in_thread(self, lambda: actions.make_available(job_type), made, self._action_failed, group="make-available")

    def _action_failed(self, error: QueuetopError) -> None:
        self.notify(f"The action failed and changed nothing: {error}", severity="error", timeout=10, markup=False)



def meanwhile(counted: int, done: int, fewer: str, more: str) -> str:
    """What changed between the count a dialog showed and the action: "" when it did exactly that many, else
    " 8 were counted: 5 finished or were claimed again meanwhile." (or "3 more timed out")."""
    if done == counted:
        return ""
    if done < counted:
        return f" {counted:,} were counted: {counted - done:,} {fewer} meanwhile."
    return f" {counted:,} were counted: {done - counted:,} {more} meanwhile."
