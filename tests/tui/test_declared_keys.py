"""The dashboard offers only the writes a layout declares: on a shape without `[enqueue]` the footer has no
`e Enqueue`, and pressing `e` says which section is missing; a shape that declares it keeps the key."""

from __future__ import annotations

from pathlib import Path

from queuetop.layouts import load_layout
from queuetop.tui.detail import DetailScreen
from queuetop.tui.main import MainScreen
from queuetop.tui.scenes import LIVE, FixedActions, scene_app
from tests.tui.conftest import RecordingApp

WATCH_ONLY = """
[tables]
queue = "procrastinate_jobs"
[queue_columns]
id = "id bigint"
type = "task_name varchar(128)"
finished = "status varchar(16)"
[states]
pending = "finished = 'todo'"
"""


def app_for(layout) -> RecordingApp:
    return RecordingApp(scene_app(LIVE).session.source, FixedActions(layout), poll_on_start=False)


def offered(app: RecordingApp) -> set[str]:
    """The actions the footer shows now."""
    return {active.binding.action.removeprefix("app.") for active in app.screen.active_bindings.values()
            if active.binding.show}


async def test_no_enqueue_key_on_a_layout_without_enqueue_and_a_notice_when_pressed(tmp_path: Path) -> None:
    path = tmp_path / "procrastinate.toml"
    path.write_text(WATCH_ONLY)
    app = app_for(load_layout(str(path)))
    async with app.run_test(size=(120, 30)) as pilot:
        app.apply(LIVE)
        await pilot.pause()
        assert {"enqueue", "release"}.isdisjoint(offered(app)) and "quit" in offered(app)
        assert not any(c.title.startswith("Enqueue") for c in app.get_system_commands(app.screen))  # nor the palette
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)  # no dialog opened
        assert app.notes == ["layout procrastinate declares no [enqueue] section, so queuetop does not know how to "
                             "write a job into its table."]


async def test_a_layout_that_declares_enqueue_keeps_the_key() -> None:
    app = app_for(load_layout("job_queue"))
    async with app.run_test(size=(120, 30)) as pilot:
        app.apply(LIVE)
        await pilot.pause()
        assert {"enqueue", "release"} <= offered(app)
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, MainScreen) and app.notes == []  # the enqueue dialog


async def test_the_drill_down_offers_dead_jobs_and_available_now_only_where_declared(tmp_path: Path) -> None:
    path = tmp_path / "procrastinate.toml"
    path.write_text(WATCH_ONLY + 'dead = "finished = \'failed\'"\n')  # dead jobs counted, no [dead_retry]
    app = app_for(load_layout(str(path)))
    async with app.run_test(size=(120, 30)) as pilot:
        app.apply(LIVE)
        await pilot.pause()
        app.push_screen(DetailScreen("report.render"))
        await pilot.pause()
        assert {"dead_jobs", "make_available"}.isdisjoint(offered(app)) and "back" in offered(app)
        await pilot.press("d")
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)  # no dialog opened
        assert app.notes == [
            "layout procrastinate declares no [dead_retry] section, so queuetop does not know how to delete its dead "
            "jobs.",
            "layout procrastinate has no scheduled jobs: its rows have no time before which a job may not be taken."]
    native = app_for(load_layout("job_queue"))
    async with native.run_test(size=(120, 30)) as pilot:
        native.apply(LIVE)
        await pilot.pause()
        native.push_screen(DetailScreen("report.render"))
        await pilot.pause()
        assert {"dead_jobs", "make_available"} <= offered(native)
