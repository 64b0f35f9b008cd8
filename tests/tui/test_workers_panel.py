"""The workers panel (W) and make-available (a, in the drill-down), driven by Pilot against real queues: the
probably dead worker found from its claims, its timed-out claims released from the panel and no one else's,
scheduled jobs made available from the drill-down, and shapes without a claimer or a schedule saying so."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from queuetop.act.queue import Queue
from queuetop.tui.detail import DetailScreen
from queuetop.tui.main import MainScreen
from queuetop.tui.modals import CountConfirmModal
from queuetop.tui.scenes import SCENES
from queuetop.tui.workers import WorkersScreen
from tests.conftest import Backend
from tests.helpers import queue_rows, travel
from tests.tui.conftest import SIZE, AppFactory, RecordingApp, wait_for


def two_workers(backend: Backend) -> dict[str, list]:
    """`crashed` holds three claims whose one-minute lease ended a minute ago; `alive` holds two with eight minutes
    to go: two minutes pass on the database's clock, which the queue's times follow (`travel`)."""
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many("email", 5)
        crashed = queue.claim("crashed", batch=3, lease=60)
        alive = queue.claim("alive", batch=2, lease=600)
        travel(db, backend.layout, 120)
    return {"crashed": crashed, "alive": alive}


def claims(backend: Backend) -> dict[int, tuple]:
    with backend.open() as db:
        return queue_rows(db, backend.layout)


async def release_the_dead_worker_from_the_panel(app: RecordingApp, backend: Backend, pilot) -> None:
    jobs = two_workers(backend)
    before = claims(backend)
    await wait_for(pilot, lambda: app.session.latest is not None, "the first poll")
    await pilot.press("W")
    await wait_for(pilot, lambda: isinstance(app.screen, WorkersScreen) and app.screen.view is not None,
                   "the workers panel and its first read")  # fmt: skip
    screen = app.screen
    assert isinstance(screen, WorkersScreen)
    first = screen.view.workers[0]
    assert (first.worker, first.held, first.timed_out, first.probably_dead) == ("crashed", 3, 3, True)
    assert {w.worker: w.probably_dead for w in screen.view.workers} == {"crashed": True, "alive": False}
    assert screen.selected_worker == first and screen.query_one(DataTable).row_count == 2
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(app.screen, CountConfirmModal) and app.screen.found is not None,
                   "the dry-run count")  # fmt: skip
    assert app.screen.found == 3 and claims(backend) == before  # counting changed nothing
    await pilot.click("#confirm")
    await wait_for(pilot, lambda: any(n.startswith("Released 3 of 3 timed-out claim(s) of crashed") for n in app.notes),
                   "the release's notification")  # fmt: skip
    after = claims(backend)
    for job in jobs["crashed"]:
        assert after[job.id][1] is None and after[job.id][2] is None  # back to pending
    for job in jobs["alive"]:
        assert after[job.id] == before[job.id]  # the live worker keeps its claims
    await wait_for(pilot, lambda: isinstance(app.screen, WorkersScreen) and app.screen.view is not None
                   and [w.worker for w in app.screen.view.workers] == ["alive"], "the panel to show the release")


async def test_the_panel_finds_the_dead_worker_and_releases_only_its_claims(sqlite_backend: Backend,
                                                                            make_app: AppFactory) -> None:  # fmt: skip
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await release_the_dead_worker_from_the_panel(app, sqlite_backend, pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "back to the table")


@pytest.mark.postgres
async def test_the_same_release_from_the_panel_on_postgres(pg_backend: Backend, make_app: AppFactory) -> None:
    app = make_app(pg_backend)
    async with app.run_test(size=SIZE) as pilot:
        await release_the_dead_worker_from_the_panel(app, pg_backend, pilot)


async def test_read_only_refuses_the_release_from_the_panel(sqlite_backend: Backend, make_app: AppFactory) -> None:
    two_workers(sqlite_backend)
    before = claims(sqlite_backend)
    app = make_app(sqlite_backend, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.latest is not None, "the first poll")
        await pilot.press("W")
        await wait_for(pilot, lambda: isinstance(app.screen, WorkersScreen) and app.screen.view is not None,
                       "the workers panel")  # fmt: skip
        await pilot.press("r")
        await wait_for(pilot, lambda: any("read-only" in n for n in app.notes), "the refusal")
        assert isinstance(app.screen, WorkersScreen)
    assert claims(sqlite_backend) == before


async def test_make_available_from_the_drill_down(sqlite_backend: Backend, make_app: AppFactory) -> None:
    with sqlite_backend.open() as db:
        queue = Queue(db, sqlite_backend.layout)
        later = queue.enqueue_many("report", 3, delay_s=3600)
        queue.enqueue_many("report", 1)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.latest is not None and app.session.latest.type_named("report"),
                       "the first poll")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen), "the drill-down")
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, CountConfirmModal) and app.screen.found is not None,
                       "the dry-run count")  # fmt: skip
        assert app.screen.found == 3
        await pilot.click("#confirm")
        await wait_for(pilot, lambda: "Made 3 scheduled job(s) of type 'report' available now." in app.notes,
                       "the notification")  # fmt: skip
    with sqlite_backend.open() as db:
        taken = Queue(db, sqlite_backend.layout).claim("w", ["report"], batch=10)
    assert set(later) <= {job.id for job in taken}  # claimable now


@pytest.mark.parametrize(("scene", "keys", "said"), [
    ("work-queue", ("W",), "layout work_queue has no claimer column"),
    ("work-queue", ("enter", "a"), "layout work_queue has no scheduled jobs"),
])  # fmt: skip
async def test_shapes_without_a_claimer_or_a_schedule_say_so(scene: str, keys: tuple[str, ...], said: str) -> None:
    chosen = SCENES[scene]
    app = chosen.make()
    notes: list[str] = []
    async with app.run_test(size=chosen.size) as pilot:
        await chosen.prepare(pilot)
        app.notify = lambda message, **kwargs: notes.append(message)  # type: ignore[method-assign]
        await pilot.press(*keys)
        await pilot.pause()
        for worker in list(app.workers):
            await worker.wait()
        await pilot.pause()
        if keys == ("W",):
            assert isinstance(app.screen, WorkersScreen)
            await wait_for(pilot, lambda: app.screen.view is not None, "the panel's read")
            assert said in str(app.screen.query_one("#workers-summary").visual)
            assert not app.screen.query_one(DataTable).display
        else:
            assert any(said in note for note in notes), notes
