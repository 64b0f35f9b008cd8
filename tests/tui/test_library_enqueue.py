"""`e` on a job library's dashboard: graphile-worker's test jobs go through its own graphile_worker.add_job(), the
dialog asks only for what that function takes and says where the payload goes; a payload that is not JSON is a
notice, and nothing is written."""

from __future__ import annotations

from types import SimpleNamespace

from textual.widgets import Input, Label

from queuetop.db import Database, parse_target
from queuetop.layouts.detect import detect
from queuetop.tui.modals import EnqueueModal
from tests.conftest import PG_TARGET
from tests.libraries import made_by
from tests.tui.conftest import SIZE, AppFactory, wait_for


def added(schema: str) -> list[tuple]:
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        return [tuple(r) for r in db.fetchall(
            f"SELECT j.task_identifier, p.payload::text FROM {schema}.jobs j "
            f"JOIN {schema}._private_jobs p ON p.id = j.id WHERE j.task_identifier = 'fast' "
            "ORDER BY j.id")]  # fmt: skip


async def fill(pilot, count: str, payload: str) -> None:
    for selector, value in (("#job_type", "fast"), ("#count", count), ("#payload", payload)):
        box = pilot.app.screen.query_one(selector, Input)
        box.focus()
        box.value = value
        await pilot.pause()
    await pilot.press("enter")


async def test_e_adds_graphile_worker_jobs_through_add_job(make_app: AppFactory) -> None:
    with made_by("graphile_worker") as library:
        library.run("defer", "orphan=1")
        with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
            (found,) = [c for c in detect(db) if c.table.schema == library.schema]
        app = make_app(SimpleNamespace(target=parse_target(PG_TARGET), layout=found.layout))
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.session.latest is not None, "the first poll")
            await pilot.press("e")
            await wait_for(pilot, lambda: isinstance(app.screen, EnqueueModal), "the enqueue dialog")
            labels = " ".join(str(label.content) for label in app.screen.query(Label))
            assert "stored in add_job(payload)" in labels, labels
            await fill(pilot, "1", "not json")
            await wait_for(pilot, lambda: any("--info must be JSON" in note for note in app.notes), "the notice")
            assert added(library.schema) == []
            if not isinstance(app.screen, EnqueueModal):
                await pilot.press("e")
                await wait_for(pilot, lambda: isinstance(app.screen, EnqueueModal), "the enqueue dialog")
            await fill(pilot, "2", '{"from": "the dashboard"}')
            await wait_for(pilot, lambda: added(library.schema) == [("fast", '{"from": "the dashboard"}')] * 2,
                           "the two jobs, added by add_job()")  # fmt: skip
