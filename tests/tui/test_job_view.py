"""Down to the job in the dashboard: Enter on a type, Enter on a job, and the job view shows it whole — its state,
its table, every column, the payload pretty-printed; Escape goes back to the drill-down. Real SQLite queue."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from queuetop.act.queue import Queue
from queuetop.tui.detail import DetailScreen
from queuetop.tui.job import JobScreen
from queuetop.tui.table import QueueTable
from tests.conftest import Backend
from tests.tui.conftest import SIZE, AppFactory, text, wait_for

PAYLOAD = '{"to": "ops@example.com", "invoice": 1047}'


async def test_enter_on_a_job_shows_it_whole_and_escape_goes_back(sqlite_backend: Backend,
                                                                  make_app: AppFactory) -> None:  # fmt: skip
    with sqlite_backend.open() as db:
        first = Queue(db, sqlite_backend.layout).enqueue("email", info=PAYLOAD)
        Queue(db, sqlite_backend.layout).enqueue("email")
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
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
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen), "back to the drill-down")
