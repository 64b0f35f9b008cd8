"""The blocking panel, through Pilot on a real PostgreSQL server: hidden while nothing holds claims, shown with
the worker's application name and host when one sits idle in a transaction holding a claim, and hidden again
once it lets go."""

from __future__ import annotations

import time

from textual.widgets import Static

from queuetop.act.queue import Queue
from queuetop.tui.blocking import BlockingPanel
from tests.conftest import Backend
from tests.tui.conftest import SIZE, AppFactory, text, wait_for


async def test_a_worker_idle_in_a_transaction_holding_a_claim_shows_in_the_panel(pg_backend: Backend,
                                                                                   make_app: AppFactory) -> None:
    with pg_backend.open() as db:
        Queue(db, pg_backend.layout).enqueue_many("email", 2)
    worker = pg_backend.open()
    worker.execute("SET application_name = 'worker-idle'")
    try:
        with worker.transaction():
            Queue(worker, pg_backend.layout).claim("worker-idle", ["email"])
            time.sleep(5.5)  # idle long enough to count as a holder (blocking.IDLE_HOLDER_S)
            app = make_app(pg_backend)
            async with app.run_test(size=SIZE) as pilot:
                panel = app.main.query_one(BlockingPanel)
                await wait_for(pilot, lambda: panel.display, "the blocking panel")
                shown = text(panel)
                assert "1 session(s) idle in a transaction holding claims" in shown
                assert "worker-idle @ 127.0.0.1" in shown
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    finally:
        worker.close()


async def test_the_panel_stays_hidden_when_nothing_blocks(sqlite_backend: Backend, make_app: AppFactory) -> None:
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 2, "two polls")
        assert not app.main.query_one(BlockingPanel).display
        assert isinstance(app.main.query_one("#blocking"), Static)
