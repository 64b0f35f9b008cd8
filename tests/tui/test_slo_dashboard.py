"""SLO breaches on the dashboard, driven by Pilot on a real SQLite queue: the breached cell in red, the breach
and how long it has lasted in the status line, the bell once per new breach (and never with --no-bell)."""

from __future__ import annotations

import re
from typing import Any

from queuetop.act.queue import Queue
from queuetop.tui.table import QueueTable
from queuetop.watch.slo import Limit, Slo, Slos
from tests.conftest import Backend
from tests.helpers import enqueue
from tests.tui.conftest import SIZE, AppFactory, RecordingApp, status, wait_for


class BellCounting(RecordingApp):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rings = 0

    def bell(self) -> None:
        self.rings += 1


def take(backend: Backend, job_type: str, count: int) -> None:
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        for job in queue.claim("w", [job_type], batch=count, lease=30):
            queue.complete(job.id, job.token)


def cell_styles(table: QueueTable, job_type: str) -> dict[str, str]:
    """column key -> the background colour of the cell as drawn on the line of the job type (one segment is
    one cell: see QueueTable._strip)."""
    strip = table.render_line(table.shown_types.index(job_type) + 1 - round(table.scroll_y))
    return {column.key: segment.style.bgcolor.name if segment.style and segment.style.bgcolor else ""
            for column, segment in zip(table.shown, list(strip), strict=False)}


async def test_a_breached_cell_is_red_the_status_line_names_it_and_the_bell_rings_once(
        sqlite_backend, make_app: AppFactory) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 5)
    enqueue(sqlite_backend, "report", 1)
    slos = Slos((Limit(Slo.MAX_DEPTH, 2),))
    monitor_app = make_app(sqlite_backend, slos=slos)
    app = BellCounting(monitor_app.session.source, monitor_app.session.actions, interval=0.1, slos=slos)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.breaches and app.polls >= 3, "three polls with the breach")
        table = app.main.query_one(QueueTable)
        assert ("email", "depth") in table.breached
        styles = cell_styles(table, "email")
        assert styles["depth"] == "red" and styles["oldest"] != "red"
        assert cell_styles(table, "report")["depth"] != "red"
        line = status(app)
        assert "SLO email depth 5 > 2" in line
        assert app.rings == 1  # three polls, one breach: one ring
        polls = app.polls
        await wait_for(pilot, lambda: app.polls >= polls + 12, "about a second more of polls")
        lasted = re.search(r"SLO email depth 5 > 2 for (\d+\.\d)s", status(app))  # how long it has lasted
        assert lasted and float(lasted.group(1)) >= 1.0, status(app)
        take(sqlite_backend, "email", 5)  # recovered ...
        await wait_for(pilot, lambda: not app.session.breaches, "the breach to end")
        assert "SLO" not in status(app) and not app.main.query_one(QueueTable).breached
        enqueue(sqlite_backend, "report", 5)  # ... and a new one, on another type
        await wait_for(pilot, lambda: app.session.breaches, "the new breach")
        await pilot.pause(0.3)
        assert app.rings == 2


async def test_no_bell_keeps_the_colours_but_rings_nothing(sqlite_backend, make_app: AppFactory) -> None:
    enqueue(sqlite_backend, "email", 5)
    slos = Slos((Limit(Slo.MAX_DEPTH, 2),))
    base = make_app(sqlite_backend)
    app = BellCounting(base.session.source, base.session.actions, interval=0.1, slos=slos, bell=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.breaches, "the breach")
        await pilot.pause(0.2)
        assert app.rings == 0 and "SLO email depth 5 > 2" in status(app)
