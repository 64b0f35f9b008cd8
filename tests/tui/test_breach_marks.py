"""SLO breaches as marks on the charts, and the wide windows read off the UI thread, driven by Pilot on a real
SQLite queue with a real history file: marks at the breach and nowhere else (also after a restart, from the
file), the time cursor on a breached moment colouring the cells breached then, no history read on the UI thread
for the hour window, and the hour window's newest bucket there although the file's roll-ups lag behind."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from queuetop.store.history_store import HistoryStore
from queuetop.tui.table import QueueTable
from queuetop.tui.widgets import BREACH_LEGEND, Chart, mark_runs
from queuetop.watch.slo import Limit, Slo, Slos
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats
from tests.conftest import Backend
from tests.tui.conftest import SIZE, AppFactory, RecordingApp, wait_for
from tests.tui.test_slo_dashboard import cell_styles, enqueue, take

LIMIT = Slos((Limit(Slo.MAX_DEPTH, 2),))  # email breaches it above 2 pending jobs


def breached_times(app: RecordingApp) -> list[float]:
    """The server times of the polls that saw email above the limit, from the figures (not from any mark)."""
    track = app.session.series.tracks["email"]
    return [t for t, depth in zip(track.times, track.values("depth"), strict=True) if depth > 2]


def chart_buckets(app: RecordingApp, chart: Chart) -> tuple[float, int, int]:
    """The chart's bucket width, the number of its bucket in progress and of its first bucket."""
    assert chart.bucket_s is not None and chart.spec is not None and app.session.series.latest is not None
    current = math.floor(app.session.series.latest / chart.bucket_s)
    return chart.bucket_s, current, current - round(chart.spec.window_s / chart.bucket_s)


def marked(app: RecordingApp, chart: Chart) -> set[int]:
    """The numbers of the buckets the chart marks, from the data it draws."""
    width, current, _ = chart_buckets(app, chart)
    return {current + round(x / width) for x in chart.marks}


def expected(app: RecordingApp, chart: Chart, times: list[float]) -> set[int]:
    width, current, first = chart_buckets(app, chart)
    return {b for b in (math.floor(t / width) for t in times) if first <= b < current}


async def breach_and_recover(pilot: Any, app: RecordingApp, backend: Backend) -> None:
    """Half a second under the limit, a breach for about a second, then two seconds recovered."""
    await wait_for(pilot, lambda: app.polls >= 5, "polls under the limit")
    enqueue(backend, "email", 4)
    await wait_for(pilot, lambda: app.session.breaches, "the breach")
    polls = app.polls
    await wait_for(pilot, lambda: app.polls >= polls + 8, "polls in breach")
    take(backend, "email", 5)
    await wait_for(pilot, lambda: not app.session.breaches, "the recovery")
    polls = app.polls
    await wait_for(pilot, lambda: app.polls >= polls + 20, "polls after the recovery")


async def test_breaches_are_marked_where_they_were_and_nowhere_else_also_after_a_restart(
        sqlite_backend: Backend, make_app: AppFactory) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 1)
    first = make_app(sqlite_backend, history=True, interval=0.1, slos=LIMIT)
    first.window_s = 60.0
    async with first.run_test(size=SIZE) as pilot:
        await breach_and_recover(pilot, first, sqlite_backend)
        breached = breached_times(first)
        depth = first.main.query_one("#depth-chart", Chart)
        rates = first.main.query_one("#rate-chart", Chart)
        await wait_for(pilot, lambda: marked(first, depth) == expected(first, depth, breached), "the marks")
        marks = marked(first, depth)
        width, current, _ = chart_buckets(first, depth)
        drawn = {current + round(x / width) for x in depth.points[0][1]}
        assert marks and drawn - marks  # the breach is marked, the time before and after it is not
        assert marked(first, rates) == marks  # both charts of the whole queue
        assert BREACH_LEGEND in str(depth.query_one(".legend").visual)
    first.session.recorder.flush()
    kept = [round(t, 3) for t in breached]  # the file keeps milliseconds

    # After a restart, with one second in memory: the minute's marks come from the history file, read on the
    # history reader's thread.
    second = make_app(sqlite_backend, history=True, interval=60.0, slos=LIMIT, keep_s=1.0)
    second.window_s = 60.0
    async with second.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: second.polls == 1, "the first poll after the restart")
        chart = second.main.query_one("#depth-chart", Chart)
        await wait_for(pilot, lambda: chart.marks, "the marks read from the file")
        assert not second.session.breaches  # nothing in breach now: the marks are the earlier run's
        assert marked(second, chart) == expected(second, chart, kept)
        width, current, _ = chart_buckets(second, chart)
        assert {current + round(x / width) for x in chart.points[0][1]} - marked(second, chart)  # unmarked time too


async def test_the_time_cursor_on_a_breach_colours_the_cells_breached_then(sqlite_backend: Backend,
                                                                          make_app: AppFactory) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 1)
    app = make_app(sqlite_backend, history=True, interval=0.1, slos=LIMIT)
    app.window_s = 60.0
    async with app.run_test(size=SIZE) as pilot:
        await breach_and_recover(pilot, app, sqlite_backend)
        app.session.recorder.flush()
        table = app.main.query_one(QueueTable)
        assert not table.breached  # live: recovered
        breached = breached_times(app)
        app.scrub_to(breached[len(breached) // 2])  # as a click on the chart does
        await wait_for(pilot, lambda: app.session.past is not None, "the figures at the cursor")
        assert app.session.past.type_named("email").depth > 2
        assert table.breached == {("email", "depth")}
        assert cell_styles(table, "email")["depth"] == "red"
        app.scrub_to(breached[-1] + 1.0)  # recovered by then
        session = app.session
        await wait_for(pilot, lambda: session.past is not None and session.cursor_t >= breached[-1] + 0.5,
                       "after the breach")
        assert app.session.past.type_named("email").depth <= 2
        assert not table.breached and cell_styles(table, "email")["depth"] != "red"


def spy_on_history_reads(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """The thread of every read of a history file from now on."""
    threads: list[threading.Thread] = []
    for name in ("bucket_means", "bucket_breaches", "deepest", "records", "latest", "at", "level_for"):
        method = getattr(HistoryStore, name)

        def spy(self: HistoryStore, *args: Any, _method: Callable = method, **kwargs: Any) -> Any:
            threads.append(threading.current_thread())
            return _method(self, *args, **kwargs)

        monkeypatch.setattr(HistoryStore, name, spy)
    return threads


async def test_the_hour_window_is_read_off_the_ui_thread(sqlite_backend: Backend, make_app: AppFactory,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 3)
    app = make_app(sqlite_backend, history=True, interval=0.1)
    threads = spy_on_history_reads(monkeypatch)  # after the start's load(), which runs before the app
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 3, "a few polls")
        await pilot.press("w", "w")  # 5 min → 15 min → 1 h
        assert app.window_s == 3600.0
        await wait_for(pilot, lambda: threads, "a read of the history file")
        polls = app.polls
        await wait_for(pilot, lambda: app.polls >= polls + 5, "more polls on the hour window")
    assert threads and all(thread is not threading.main_thread() for thread in threads)
    assert {thread.name for thread in threads} == {"queuetop-history-reader"}


async def test_the_time_cursor_is_read_off_the_ui_thread(sqlite_backend: Backend, make_app: AppFactory,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 3)
    app = make_app(sqlite_backend, history=True, interval=0.1)
    threads = spy_on_history_reads(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 20, "two seconds of polls")
        app.session.recorder.flush()
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: app.session.past is not None, "the figures at the cursor")
        assert app.session.past.type_named("email").depth == 3
    assert threads and {thread.name for thread in threads} == {"queuetop-history-reader"}


def prefill(app: RecordingApp, until: datetime) -> list[tuple[float, int]]:
    """An hour of polls, one a second up to `until`, through the app's recorder as a running dashboard would
    have written them (its roll-ups written once a minute, so the newest are raw polls only); the depth grows by
    one each second, so a bucket missing any of its polls has a lower mean. (server time, depth) of each."""
    polls = []
    for i in range(3600):
        taken = until - timedelta(seconds=3599 - i)
        snapshot = Snapshot(taken_at=taken, target="t", dialect="sqlite", poll_ms=1.0, window_s=60.0,
                            types=(TypeStats("email", depth=i),), totals=TypeStats(TOTAL, depth=i))  # fmt: skip
        app.session.recorder.record(snapshot)
        polls.append(((taken - datetime(1970, 1, 1)).total_seconds(), i))
    app.session.recorder.flush()
    return polls


async def test_the_hour_window_shows_its_newest_bucket_although_the_roll_ups_lag(
        sqlite_backend: Backend, make_app: AppFactory) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 1)
    app = make_app(sqlite_backend, history=True, interval=60.0)  # one poll: every bucket before it is the file's
    polls = prefill(app, datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=1))
    app.window_s = 3600.0
    async with app.run_test(size=(200, 40)) as pilot:  # buckets of about 40 s, shorter than the roll-ups' lag
        await wait_for(pilot, lambda: app.polls == 1, "the poll")
        chart = app.main.query_one("#depth-chart", Chart)
        await wait_for(pilot, lambda: chart.points and len(chart.points[0][1]) > 10, "the hour read from the file")
        width, current, _ = chart_buckets(app, chart)
        line, xs, ys = chart.points[0]
        assert line.job_type == TOTAL
        newest = [depth for t, depth in polls if math.floor(t / width) == current - 1]
        assert newest and round(xs[-1] / width) == -1  # the bucket just before the one in progress ...
        # ... with its newest polls (raw in the file: the roll-ups were last written a minute before the end). A
        # bucket is made of the 10 s roll-ups that start in it, then the raw polls: the first few seconds of it may
        # be counted in the bucket before, which raises the mean by at most 5, and a roll-up keeps its mean rounded
        # to a whole job (4.5 kept as 5: up to 0.5 more); the newest polls missing would lower it by 10 or more.
        exact = sum(newest) / len(newest)
        assert exact - 0.05 <= ys[-1] <= exact + 5.55


def test_adjacent_marked_buckets_are_drawn_as_one_unbroken_run() -> None:
    assert mark_runs((), 6.0) == ()
    assert mark_runs((-60.0,), 6.0) == ((-60.0, -60.0),)  # one bucket: one marker
    assert mark_runs((-54.0, -60.0, -48.0, -18.0, -12.0), 6.0) == ((-60.0, -45.0), (-18.0, -9.0))
