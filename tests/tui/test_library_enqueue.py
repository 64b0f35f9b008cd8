"""`e` on a job library's dashboard: graphile-worker's test jobs go through its own graphile_worker.add_job(), the
dialog asks only for what that function takes and says where the payload goes; a payload that is not JSON is a
notice, and nothing is written. The poll after the jobs are added counts them, also where a deep queue's counts are
spaced (`SpacedCount`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest
from textual.widgets import Input, Label

from queuetop.db import Database, parse_target
from queuetop.layouts import Layout
from queuetop.layouts.detect import detect
from queuetop.tui.modals import EnqueueModal
from queuetop.watch import recount
from tests.conftest import PG_TARGET
from tests.libraries import LibraryApp, made_by
from tests.tui.conftest import SIZE, AppFactory, MultiFactory, status, wait_for


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


def depths(app_or_pane: Any) -> dict[str, tuple[int, bool]]:
    """Per type shown, (depth, marked ≈); of the dashboard (an app) or of one target of the multi-target one."""
    snapshot = getattr(app_or_pane, "session", app_or_pane).latest
    return {t.job_type: (t.depth, t.depth_is_estimate) for t in snapshot.types} if snapshot is not None else {}


@pytest.fixture
def counted_only_when_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every queue counts as deep, and its first count's cost spaces the next one for ever: only a fresh poll
    counts its states again."""
    monkeypatch.setattr(recount, "SPACED_PAST_JOBS", 0)
    monkeypatch.setattr(recount, "SPACED_MAX_SHARE", 1e-9)


@contextmanager
def graphile_with_an_orphan() -> Iterator[tuple[LibraryApp, Layout]]:
    """graphile-worker's tables, made by the library, one job of a task no worker knows waiting; the layout
    detection picks for them."""
    with made_by("graphile_worker") as library:
        library.run("defer", "orphan=1")
        with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
            (found,) = [c for c in detect(db) if c.table.schema == library.schema]
        yield library, found.layout


@pytest.mark.usefixtures("counted_only_when_fresh")
async def test_e_adds_graphile_worker_jobs_through_add_job(make_app: AppFactory) -> None:
    with graphile_with_an_orphan() as (library, layout):
        app = make_app(SimpleNamespace(target=parse_target(PG_TARGET), layout=layout))
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.polls >= 2, "a poll after the first")
            assert depths(app) == {"orphan": (1, True)}  # the first count's, kept
            await wait_for(pilot, lambda: "≈ states counted" in status(app), "the status line saying why ≈")
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
            # counted by the poll after the action (and kept, ≈, by the polls after it)
            await wait_for(pilot, lambda: {name: depth for name, (depth, _) in depths(app).items()} == {
                "orphan": 1, "fast": 2}, "the poll after the action, counting them")  # fmt: skip


@pytest.mark.usefixtures("counted_only_when_fresh")
async def test_the_multi_target_dashboard_counts_what_an_action_added_as_well(make_multi: MultiFactory) -> None:
    with graphile_with_an_orphan() as (_, layout):
        app = make_multi(("graphile", parse_target(PG_TARGET), layout, False))
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.polls["graphile"] >= 2, "a poll after the first")
            assert depths(app.panes["graphile"]) == {"orphan": (1, True)}
            await pilot.press("e")
            await wait_for(pilot, lambda: isinstance(app.screen, EnqueueModal), "the enqueue dialog")
            await fill(pilot, "2", "{}")
            await wait_for(pilot, lambda: {name: depth for name, (depth, _) in depths(app.panes["graphile"]).items()}
                           == {"orphan": 1, "fast": 2}, "the poll after the action, counting them")  # fmt: skip
