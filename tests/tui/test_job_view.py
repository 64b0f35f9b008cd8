"""Down to the job in the dashboard: Enter on a type, Enter on a job, and the job view shows it whole — its state,
its table, every column, the payload pretty-printed; Escape goes back to the drill-down. Real SQLite queue."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from queuetop.act.queue import Queue
from queuetop.tui.detail import DetailScreen
from queuetop.tui.job import JobScreen
from queuetop.tui.table import QueueTable
from tests.conftest import Backend
from tests.tui.conftest import SIZE, AppFactory, text, wait_for

PAYLOAD = '{"to": "ops@example.com", "invoice": 1047}'


@pytest.mark.parametrize("size", [(80, 24), SIZE, (200, 60)])
async def test_enter_on_a_job_shows_it_whole_and_escape_goes_back(sqlite_backend: Backend, make_app: AppFactory,
                                                                  size: tuple[int, int]) -> None:  # fmt: skip
    with sqlite_backend.open() as db:
        first = Queue(db, sqlite_backend.layout).enqueue("email", info=PAYLOAD)
        Queue(db, sqlite_backend.layout).enqueue("email")
    app = make_app(sqlite_backend)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.session.latest and app.session.latest.type_named("email"), "a poll")
        app.main.query_one(QueueTable).select_type("email")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.detail is not None,
                       "the drill-down with its lists")  # fmt: skip
        assert app.screen.query_one("#pending", DataTable).has_focus  # the oldest pending job, ready for Enter
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.loaded, "the job view")
        shown = text(app.screen.query_one("#job", Static))
        assert shown.startswith(f"job {first}  pending  in WorkQueue")
        assert '"invoice": 1047' in shown and "created" in shown  # the payload pretty-printed, every column
        await pilot.press("c")
        assert app.clipboard == str(first)
        await pilot.press("C")
        assert app.clipboard == PAYLOAD  # as stored, not as pretty-printed
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen), "back to the drill-down")


async def test_a_dead_job_is_retried_from_its_view_and_one_that_moved_on_is_left_alone(
        sqlite_backend: Backend, make_app: AppFactory) -> None:  # fmt: skip
    from queuetop.act.shape_queue import ShapeQueue
    from queuetop.tui.modals import DeadModal

    with sqlite_backend.open() as db:
        queue = Queue(db, sqlite_backend.layout, max_attempts=1)
        job_id = queue.enqueue("email", info=PAYLOAD)
        (job,) = queue.claim("w", ["email"], lease=30)
        assert queue.fail(job.id, job.token) == "dead"
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 1, "a poll")
        app.push_screen(JobScreen(job_id))
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.loaded, "the job view")
        assert app.screen.view.state == "dead"
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DeadModal) and app.screen.found == 1, "the count")
        await pilot.click("#retry")
        await wait_for(pilot, lambda: any(note == f"Job {job_id} back to pending." for note in app.notes), "done")
        await wait_for(pilot, lambda: f"job {job_id}: retried, as a new job" in str(
            app.screen.query_one("#job").render()), "the view saying where the job went")  # native: a new id
        with sqlite_backend.open() as db:
            (again,) = Queue(db, sqlite_backend.layout).claim("w", ["email"], lease=30)
            assert again.info == PAYLOAD  # the same job, its payload kept
            assert ShapeQueue(db, sqlite_backend.layout).dead_job("delete", job_id) == 0  # not dead now: untouched


async def test_the_drill_down_at_80x24_shows_eight_jobs_and_its_keys_and_g_brings_the_charts(
        sqlite_backend: Backend, make_app: AppFactory) -> None:  # fmt: skip
    from textual.widgets._footer import FooterKey

    with sqlite_backend.open() as db:
        queue = Queue(db, sqlite_backend.layout)
        for _ in range(12):
            queue.enqueue("email", info=PAYLOAD)
    app = make_app(sqlite_backend)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session.latest and app.session.latest.type_named("email"), "a poll")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.detail is not None,
                       "the drill-down with its lists")  # fmt: skip
        await pilot.pause()
        pending = app.screen.query_one("#pending", DataTable)
        assert pending.row_count == 12 and pending.scrollable_content_region.height - pending.header_height >= 5
        assert not app.screen.query_one("#detail-charts").display  # the lists have the room
        # (a key's last cell is its description's right padding: the words end one cell before its region does)
        def shown() -> set[str]:
            return {key.key for key in app.screen.query(FooterKey) if key.region.width and key.region.right - 1 <= 80}

        # The footer lays its keys out after the screen's first refresh: none had a region yet once, on a busy machine
        await wait_for(pilot, lambda: {"escape", "W", "x", "question_mark"} <= shown(),
                       "back, workers, export and help, all on the footer's line")  # fmt: skip
        await pilot.press("g")
        await pilot.pause()
        assert app.screen.query_one("#detail-charts").display
        assert app.screen.virtual_size.height <= 24  # the lists give way: the screen does not scroll


async def test_r_releases_a_timed_out_claim_from_its_view_and_not_one_in_its_lease(
        sqlite_backend: Backend, make_app: AppFactory) -> None:  # fmt: skip
    import time

    from queuetop.act.jobs import read_job
    from queuetop.tui.modals import CountConfirmModal

    with sqlite_backend.open() as db:
        queue = Queue(db, sqlite_backend.layout)
        gone = queue.enqueue("email", info=PAYLOAD)
        queue.claim("gone", ["email"], lease=0.1)
        busy = queue.enqueue("email")
        queue.claim("busy", ["email"], lease=300)
    time.sleep(0.3)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 1, "a poll")
        app.push_screen(JobScreen(busy))
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.loaded, "the busy job")
        assert app.screen.view.state == "claimed"
        await pilot.press("r")  # a claim in its lease: said, and not the dashboard's release of every type
        await wait_for(pilot, lambda: f"Job {busy} is claimed, not past its timeout: nothing to release." in app.notes,
                       "the notice")  # fmt: skip
        assert isinstance(app.screen, JobScreen)
        await pilot.press("escape")
        app.push_screen(JobScreen(gone))
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.view is not None
                       and app.screen.view.job_id == gone, "the timed-out job")  # fmt: skip
        assert app.screen.view.state == "timed_out"
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, CountConfirmModal) and app.screen.found == 1, "the count")
        await pilot.click("#confirm")
        await wait_for(pilot, lambda: f"Job {gone} released: back to pending." in app.notes, "released")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.view.state == "pending",
                       "the view read again")  # fmt: skip
    with sqlite_backend.open() as db:
        assert read_job(db, sqlite_backend.layout, busy).state == "claimed"  # the claim in its lease untouched


async def test_s_turns_the_first_list_to_scheduled_then_dead_jobs_and_enter_opens_one(
        sqlite_backend: Backend, make_app: AppFactory) -> None:  # fmt: skip
    with sqlite_backend.open() as db:
        queue = Queue(db, sqlite_backend.layout, max_attempts=1)
        doomed = queue.enqueue("email", info=PAYLOAD)
        (job,) = queue.claim("w", ["email"], lease=30)
        assert queue.fail(job.id, job.token) == "dead"
        later = queue.enqueue("email", delay_s=3600)
        pending = queue.enqueue("email")
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.latest and app.session.latest.type_named("email"), "a poll")
        app.main.query_one(QueueTable).select_type("email")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.first_ids == (pending,),
                       "the pending list")  # fmt: skip
        first = app.screen.query_one("#pending", DataTable)
        assert first.border_title == "oldest pending jobs  (s: scheduled, dead)"
        await pilot.press("s")
        await wait_for(pilot, lambda: app.screen.first_ids == (later,), "the scheduled list")
        assert first.border_title.startswith("scheduled for later") and "in 59m" in str(first.get_row_at(0)[1])
        await pilot.press("s")
        await wait_for(pilot, lambda: app.screen.first_ids == (doomed,), "the dead list")
        assert first.border_title.startswith("dead jobs") and [c.label.plain for c in first.columns.values()] == [
            "id", "dead for", "attempts", "info"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.loaded, "the dead job")
        assert app.screen.view.state == "dead" and app.screen.view.job_id == doomed
        await pilot.press("escape")
        await pilot.press("s")  # round again: pending
        await wait_for(pilot, lambda: app.screen.first_ids == (pending,), "pending again")
