"""The dashboard on the seeds' own tables (made by their own DDL, driven by their own dequeue), through Pilot:
the columns a shape can know, the enqueue form with the shape's fields, release worded or refused per shape,
and the columns dropped for width with a visible marker."""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual.widgets import Input

from queuetop.act.actions import Actions
from queuetop.db import Database, Target, parse_target
from queuetop.layouts import Layout, load_layout, with_tables
from queuetop.tui.main import MainScreen
from queuetop.tui.modals import EnqueueModal, ReleaseModal
from queuetop.tui.table import QueueTable
from queuetop.watch.monitor import Monitor
from tests.seedshapes import SeedTables, create_seed, pop, push
from tests.tui.conftest import SIZE, RecordingApp, status, wait_for


@dataclass
class Seed:
    target: Target
    tables: SeedTables
    layout: Layout

    def count(self, sql: str) -> int:
        with Database.open(self.target) as db:
            return int(db.fetchone(sql)[0])


def seeded(tmp_path, preset: str) -> Seed:
    target = parse_target(str(tmp_path / f"{preset}.db"))
    with Database.open(target, create=True) as db:
        tables = create_seed(db, preset)
    return Seed(target, tables, with_tables(load_layout(preset), tables.queue, tables.completed))


def app_for(seed: Seed, settings: dict | None = None, size_note: str | None = None) -> RecordingApp:
    monitor = Monitor(seed.target, seed.layout, backoff=(0.2, 0.4), settings=settings, note=size_note)
    return RecordingApp(monitor, Actions(seed.target, seed.layout, settings=settings), interval=0.1)


def headers(app: RecordingApp) -> str:
    return " ".join(app.main.query_one(QueueTable)._headers)


async def test_job_queue_shows_its_columns_and_enqueues_the_seeds_row(tmp_path) -> None:
    seed = seeded(tmp_path, "job_queue")
    with Database.open(seed.target) as db:
        for i in range(4):
            push(db, seed.tables, payload=f"job {i}")
        push(db, seed.tables, payload="later", available_in_s=600)
    app = app_for(seed, size_note="found Job_Queue: layout job_queue")
    async with app.run_test(size=(160, 40)) as pilot:  # wide enough for every column of this shape
        await wait_for(pilot, lambda: app.session.latest is not None and app.session.latest.totals.depth == 4,
                       "the first poll")
        assert "later" in headers(app) and "lost" not in headers(app) and "timed-out" in headers(app)
        assert "layout job_queue (server local time)" in status(app) and "found Job_Queue" in status(app)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EnqueueModal), "the enqueue dialog")
        assert not app.screen.query("#job_type")  # the shape has no job type column: no field for one
        app.screen.query_one("#count", Input).value = "3"
        app.screen.query_one("#priority", Input).value = "7"
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(n.startswith("enqueued 3 jobs") for n in app.notes), "the notification")
        assert seed.count('SELECT COUNT(*) FROM "Job_Queue" WHERE "Priority" = 7 AND "Attempts" = 0') == 3
        await wait_for(pilot, lambda: app.session.latest.totals.depth == 7, "the new jobs in the table")


async def test_work_queue_shows_no_claim_columns_and_says_why_nothing_can_be_released(tmp_path) -> None:
    seed = seeded(tmp_path, "work_queue")
    with Database.open(seed.target) as db:
        for i in range(5):
            push(db, seed.tables, payload=f"item {i}")
        pop(db, seed.tables, "w")
    app = app_for(seed)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.latest is not None and app.session.latest.totals.depth == 4,
                       "the first poll")
        shown = headers(app)
        assert "depth" in shown and "claimed" not in shown and "dead" not in shown and "oldest" not in shown
        await pilot.press("r")
        await wait_for(pilot, lambda: any("nothing to release: the processed flag is final" in n for n in app.notes),
                       "the reason")  # fmt: skip
        assert isinstance(app.screen, MainScreen)
        assert seed.count('SELECT COUNT(*) FROM "work_queue" WHERE "processed_flag" = 0') == 4  # unchanged


async def test_requests_release_puts_lost_requests_back_into_the_queue(tmp_path) -> None:
    seed = seeded(tmp_path, "requests")
    with Database.open(seed.target) as db:
        for i in range(3):
            push(db, seed.tables, payload=f"request {i}")
        pop(db, seed.tables, "w")
        pop(db, seed.tables, "w")
    time.sleep(0.3)
    app = app_for(seed, settings={"lost_after": 0.1})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.latest is not None and app.session.latest.totals.lost == 2,
                       "two lost requests")
        assert "lost" in headers(app) and "timed-out" not in headers(app)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReleaseModal), "the release dialog")
        await wait_for(pilot, lambda: app.screen.found is not None, "the dry-run count")
        assert app.screen.found.timed_out == 2
        await pilot.click("#confirm")
        await wait_for(pilot, lambda: any(n.startswith("Released 2 of 2 lost requests") for n in app.notes),
                       "the notification")  # fmt: skip
    assert seed.count('SELECT COUNT(*) FROM "RequestsQueue"') == 3
    assert seed.count('SELECT COUNT(*) FROM "RequestsCompleted"') == 0


async def test_a_narrow_terminal_drops_the_least_important_columns_and_says_so(tmp_path) -> None:
    seed = seeded(tmp_path, "job_queue")
    with Database.open(seed.target) as db:
        push(db, seed.tables, payload="x")
    app = app_for(seed)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session.latest is not None, "the first poll")
        await pilot.pause(0.2)
        table = app.main.query_one(QueueTable)
        assert table.hidden and table.width_needed <= 80
        hidden = {column.key for column in table.hidden}
        assert "depth" not in hidden and "timed_out" not in hidden and "later" not in headers(app)
        line = "".join(segment.text for segment in table.render_line(0))
        assert f"+{len(table.hidden)} ›" in line
    wide = app_for(seed)
    async with wide.run_test(size=(200, 60)) as pilot:
        await wait_for(pilot, lambda: wide.session.latest is not None, "the first poll")
        await pilot.pause(0.2)
        assert not wide.main.query_one(QueueTable).hidden


async def test_dead_jobs_are_retried_from_the_drill_down(tmp_path) -> None:
    seed = seeded(tmp_path, "job_queue")
    with Database.open(seed.target) as db:
        for i in range(2):
            push(db, seed.tables, payload=f"job {i}")
        for _ in range(3):  # three attempts, each timing out: dead
            pop(db, seed.tables, "w", batch=2, lease_s=0.1)
            time.sleep(0.2)
    app = app_for(seed)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.latest is not None and app.session.latest.totals.dead == 2,
                       "two dead jobs")
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "DetailScreen", "the drill-down")
        await pilot.press("d")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "DeadModal", "the dead-jobs dialog")
        await wait_for(pilot, lambda: app.screen.found == 2, "the count")
        await pilot.click("#retry")
        await wait_for(pilot, lambda: any(n.startswith("2 dead job(s) back to pending") for n in app.notes),
                       "the notification")  # fmt: skip
        await wait_for(pilot, lambda: app.session.latest.totals.dead == 0 and app.session.latest.totals.depth == 2,
                       "the retry")
    assert seed.count('SELECT COUNT(*) FROM "Job_Queue" WHERE "Attempts" = 0 AND "Processing_Mark" IS NULL') == 2
