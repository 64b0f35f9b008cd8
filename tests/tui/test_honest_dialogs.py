"""A write dialog counts again while it is open, so what it offers is what is there now, and the outcome is told
against the count it showed: "8 were counted: 5 finished or were claimed again meanwhile". Real SQLite queue,
real dashboard; the jobs finish from another connection, as a worker's would."""

from __future__ import annotations

import time

import pytest
from textual.widgets import Static

from queuetop.act.queue import Queue
from queuetop.tui import modals
from queuetop.tui.modals import ReleaseModal
from queuetop.tui.table import QueueTable
from queuetop.tui.writes import meanwhile
from tests.conftest import Backend
from tests.tui.conftest import SIZE, AppFactory, wait_for


def timed_out_claims(backend: Backend, count: int) -> list:
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("email", count)
        jobs = queue.claim("w", ["email"], batch=count, lease=0.05)
    time.sleep(0.1)
    return jobs


def finish(backend: Backend, jobs: list) -> None:
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        for job in jobs:
            queue.complete(job.id, job.token)


def verdict(app) -> str:
    return str(app.screen.query_one("#verdict", Static).visual)


async def open_release(app, pilot) -> None:
    await wait_for(pilot, lambda: app.session.latest and app.session.latest.type_named("email"), "a poll")
    app.main.query_one(QueueTable).select_type("email")
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(app.screen, ReleaseModal) and app.screen.found is not None, "the count")


async def test_the_dialog_counts_again_while_it_is_open(sqlite_backend: Backend, make_app: AppFactory,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(modals, "RECOUNT_S", 0.2)
    jobs = timed_out_claims(sqlite_backend, 8)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await open_release(app, pilot)
        assert verdict(app).startswith("8 claims of type 'email' are past their timeout")
        finish(sqlite_backend, jobs[:5])  # a worker finishes five of them while the dialog is open
        await wait_for(pilot, lambda: verdict(app).startswith("3 claims"), "the dialog's count to follow")
        await pilot.click("#confirm")
        await wait_for(pilot, lambda: any(note.startswith("Released 3") for note in app.notes), "the outcome")
        assert "were counted" not in app.notes[-1]  # it did what the dialog showed


async def test_the_outcome_says_what_changed_since_the_count_it_showed(
        sqlite_backend: Backend, make_app: AppFactory, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(modals, "RECOUNT_S", 3600.0)  # no recount: the change comes between count and confirm
    jobs = timed_out_claims(sqlite_backend, 8)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await open_release(app, pilot)
        finish(sqlite_backend, jobs[:5])
        await pilot.click("#confirm")
        await wait_for(pilot, lambda: any(note.startswith("Released 3") for note in app.notes), "the outcome")
        assert app.notes[-1].endswith(" 8 were counted: 5 finished or were claimed again meanwhile.")


def test_meanwhile_says_fewer_or_more_and_nothing_when_it_did_what_it_showed():
    assert meanwhile(8, 8, "finished", "more timed out") == ""
    assert meanwhile(8, 3, "finished", "more timed out") == " 8 were counted: 5 finished meanwhile."
    assert meanwhile(8, 11, "finished", "more timed out") == " 8 were counted: 3 more timed out meanwhile."
