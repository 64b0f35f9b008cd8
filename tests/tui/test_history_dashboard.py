"""The dashboard with its history file, on a real SQLite queue: the charts full after a restart, the time cursor
showing past figures marked as past, `x` writing what is on screen, `w` up to 7 days."""

from __future__ import annotations

import csv
from pathlib import Path

from queuetop.store.series import WINDOWS_S
from queuetop.tui.main import MainScreen
from queuetop.tui.table import QueueTable
from queuetop.tui.widgets import Chart
from queuetop.watch.snapshot import TOTAL
from tests.conftest import Backend
from tests.helpers import enqueue
from tests.tui.conftest import SIZE, AppFactory, status, wait_for


def depth_shown(app, job_type: str) -> int | None:
    shown = app.shown
    row = shown.type_named(job_type) if shown is not None else None
    return row.depth if row is not None else None


async def test_the_charts_have_the_earlier_points_at_once_after_a_restart(sqlite_backend: Backend,
                                                                          make_app: AppFactory) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 3)
    first = make_app(sqlite_backend, history=True, interval=0.1)
    async with first.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: first.polls >= 25, "25 polls")
        kept = [round(t, 3) for t in first.session.series.tracks[TOTAL].times]  # the file keeps milliseconds
    first.session.recorder.flush()  # the writer thread has everything (the app's close does this too)

    second = make_app(sqlite_backend, history=True, interval=60.0)  # one poll, then none for a minute
    assert list(second.session.series.tracks[TOTAL].times) == kept  # read from the file before the app starts
    second.window_s = 60.0
    async with second.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: second.polls == 1, "the first poll after the restart")
        chart = second.main.query_one("#depth-chart", Chart)
        await wait_for(pilot, lambda: chart.points, "the depth chart")
        line, xs, ys = chart.points[0]
        # The earlier run's seconds, drawn at once: buckets before the one this poll is in (which is not drawn yet).
        assert line.job_type == TOTAL and len(xs) >= 2 and set(ys) == {3.0}
        assert second.polls == 1


async def test_the_time_cursor_shows_past_figures_marked_as_past(sqlite_backend: Backend,
                                                                 make_app: AppFactory) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 2)
    app = make_app(sqlite_backend, history=True, interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 30, "3 s of polls with depth 2")
        enqueue(sqlite_backend, "email", 7)
        await wait_for(pilot, lambda: depth_shown(app, "email") == 9, "the live depth 9")
        polls = app.polls
        await wait_for(pilot, lambda: app.polls >= polls + 5, "a few polls at depth 9")
        app.session.recorder.flush()
        app.window_s = 60.0
        await pilot.press("left_square_bracket", "left_square_bracket")  # 2 × 2 s back: before the enqueue
        await wait_for(pilot, lambda: app.session.past is not None and depth_shown(app, "email") == 2,
                       "the past figure, read by the history reader")  # fmt: skip
        assert app.session.latest.type_named("email").depth == 9
        body = app.main.query_one("#body")
        assert body.has_class("past")
        assert "PAST" in status(app) and "n: live" in status(app)
        await pilot.press("n")
        assert app.session.past is None and depth_shown(app, "email") == 9
        assert not body.has_class("past") and "PAST" not in status(app)


async def test_x_writes_the_screen_to_markdown_and_csv(sqlite_backend: Backend, make_app: AppFactory,
                                                       tmp_path: Path) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 4)
    enqueue(sqlite_backend, "report", 11)
    app = make_app(sqlite_backend, history=True, interval=0.1, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 15, "15 polls")
        app.window_s = 60.0
        app.refresh_screen()
        chart = app.main.query_one("#depth-chart", Chart)
        await wait_for(pilot, lambda: chart.points, "the depth chart")
        await pilot.press("x")
        await wait_for(pilot, lambda: any(note.startswith("Wrote what is on screen") for note in app.notes),
                       "the notification naming the files")  # fmt: skip
    markdown, table = sorted(tmp_path.glob("queuetop-*.md")), sorted(tmp_path.glob("queuetop-*.csv"))
    assert len(markdown) == 1 and len(table) == 1
    note = next(note for note in app.notes if note.startswith("Wrote"))
    assert str(markdown[0]) in note and str(table[0]) in note
    text = markdown[0].read_text()
    assert "| report | 11 |" in text and "| email | 4 |" in text and "| all types | 15 |" in text
    assert "## Chart: depth" in text and "live figures" in text
    rows = list(csv.DictReader(table[0].open()))
    figures = {(r["section"], r["job_type"], r["figure"]): r["value"] for r in rows}
    assert figures[("table", "report", "depth")] == "11" and figures[("table", TOTAL, "depth")] == "15"
    chart_depths = {float(r["value"]) for r in rows if r["section"] == "chart:depth" and r["job_type"] == TOTAL}
    assert chart_depths == {15.0}


async def test_w_cycles_every_window_up_to_seven_days(sqlite_backend: Backend, make_app: AppFactory) -> None:
    app = make_app(sqlite_backend, history=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 2, "two polls")
        seen = []
        for _ in WINDOWS_S:
            await pilot.press("w")
            seen.append(app.window_s)
        assert sorted(seen) == sorted(WINDOWS_S) and isinstance(app.screen, MainScreen)
        assert "chart 5 min" in status(app)


async def test_without_history_w_stays_in_memory_and_the_cursor_says_why(sqlite_backend: Backend,
                                                                         make_app: AppFactory) -> None:  # fmt: skip
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 3, "three polls")
        windows = set()
        for _ in range(5):
            await pilot.press("w")
            windows.add(app.window_s)
        assert windows == {60.0, 300.0, 900.0}
        await pilot.press("left_square_bracket")
        assert app.session.past is None and any("--no-history" in note for note in app.notes)


async def test_a_click_on_a_chart_puts_the_time_cursor_there(sqlite_backend: Backend, make_app: AppFactory) -> None:
    enqueue(sqlite_backend, "email", 2)
    app = make_app(sqlite_backend, history=True, interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 10, "ten polls")
        app.window_s = 60.0
        app.refresh_screen()
        plot = app.main.query_one("#depth-chart Plot")
        await pilot.click(plot, offset=(9 + (plot.size.width - 10) // 2, 3))  # the middle of the x axis: -30 s
        session = app.session
        await wait_for(pilot, lambda: session.past is not None and app.cursor_x() is not None, "the cursor's figures")
        oldest = min(app.session.series.tracks[TOTAL].times)  # the cursor stops at the oldest poll kept
        assert -33.0 <= app.cursor_x() <= -27.0 or abs(app.session.cursor_t - oldest) < 0.001
        assert app.main.query_one("#body").has_class("past")
        await pilot.press("p")  # polls paused: the newest poll stays where it is while a loaded machine dawdles
        app.scrub_to(app.session.series.latest - 1.0)  # a second back …
        await wait_for(pilot, lambda: session.past is not None and session.cursor_t > session.series.latest - 2.0,
                       "a second back")
        await pilot.press("right_square_bracket")  # … and 2 s forward: past the newest poll, live again
        assert app.session.past is None and app.cursor_x() is None


async def test_s_writes_a_picture_of_the_screen_where_x_writes_and_says_why_when_it_cannot(
        sqlite_backend: Backend, make_app: AppFactory, tmp_path: Path) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 4)
    app = make_app(sqlite_backend, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        # the table drawn with the type, not only polled: the picture is of what the screen shows
        await wait_for(pilot, lambda: "email" in app.main.query_one(QueueTable).shown_types,
                       "the type in the table")
        await pilot.pause()
        await pilot.press("S")
        await wait_for(pilot, lambda: any(note.startswith("Wrote a picture") for note in app.notes), "the notice")
        (picture,) = tmp_path.glob("*.svg")
        assert str(picture) in app.notes[-1] and "email" in picture.read_text()
        app.export_dir = tmp_path / "not-a-folder"
        app.export_dir.write_text("a file where the folder should be")
        app.action_screenshot()  # the command palette's Screenshot comes here too (deliver_screenshot)
        await wait_for(pilot, lambda: any(note.startswith("Could not write the screenshot") for note in app.notes),
                       "the notice saying why")  # fmt: skip
    assert len(list(tmp_path.glob("*.svg"))) == 1
