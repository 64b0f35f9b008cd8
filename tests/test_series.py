"""The chart history: bounded by time and by count, bucketed for drawing, types ranked by depth."""

from __future__ import annotations

import math
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from queuetop.store.history_store import HistoryStore
from queuetop.store.series import KEEP_S, Series
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats
from queuetop.watch.watermarks import seconds

START = datetime(2026, 1, 1, 12, 0, 0)


def snap(t: float, **depths: int) -> Snapshot:
    rows = tuple(TypeStats(name, depth=d, arrivals_10s_per_s=float(d), completions_10s_per_s=None)
                 for name, d in sorted(depths.items()))  # fmt: skip
    return Snapshot(taken_at=START + timedelta(seconds=t), target="t", dialect="sqlite", poll_ms=1.0, window_s=60.0,
                    types=rows, totals=TypeStats(TOTAL, depth=sum(depths.values())))  # fmt: skip


def test_points_are_means_of_completed_buckets() -> None:
    series = Series()
    for t, depth in enumerate([10, 20, 30, 40, 50]):
        series.add(snap(float(t), email=depth))
    xs, ys = series.points("email", "depth", window_s=60.0, buckets=30)  # 2 s buckets
    # aligned to the clock (START is on an even second): t=0,1 | t=2,3 | t=4 is still filling, not drawn yet
    assert ys == [15.0, 35.0]
    assert xs == [-4.0, -2.0]  # seconds before the bucket in progress


def test_unknown_figures_are_left_out_not_drawn_as_zero() -> None:
    series = Series()
    for t in range(6):
        series.add(snap(float(t), email=t))
    assert series.points("email", "completions", 60.0, 60) == ([], [])
    assert len(series.points("email", "arrivals", 60.0, 60)[0]) == 5


def test_window_limits_the_points() -> None:
    series = Series()
    for t in range(0, 400):
        series.add(snap(float(t), email=t))
    xs, ys = series.points("email", "depth", 60.0, 60)
    assert min(xs) >= -60.0 and ys == [float(t) for t in range(339, 399)]


def test_a_snapshot_not_newer_than_the_last_is_ignored() -> None:
    series = Series()
    assert series.add(snap(5.0, email=1))
    assert not series.add(snap(5.0, email=2))
    assert not series.add(snap(4.0, email=3))
    series.add(snap(6.0, email=1))
    assert series.points("email", "depth", 60.0, 60)[1] == [1.0]


def test_an_hour_of_polls_keeps_only_the_widest_window() -> None:
    series = Series()
    for t in range(3600):
        series.add(snap(float(t), email=1, report=2))
    for track in series.tracks.values():
        span = track.times[-1] - track.times[0]
        assert KEEP_S <= span <= KEEP_S + 64  # pruned in chunks of at most 64 points
    assert series.point_count() <= 3 * (KEEP_S + 65)


def test_fast_polls_are_capped_by_count() -> None:
    series = Series(max_points=500)
    for i in range(5000):
        series.add(snap(i * 0.1, email=1))
    assert len(series.tracks["email"]) <= 500 + 64


def test_a_type_gone_for_the_widest_window_is_forgotten() -> None:
    series = Series()
    series.add(snap(0.0, email=1, report=1))
    series.add(snap(KEEP_S + 1, email=1))
    assert "report" not in series.tracks and "email" in series.tracks


def test_top_types_rank_by_greatest_depth_in_the_window() -> None:
    series = Series()
    series.add(snap(0.0, a=50, b=5, c=1))
    assert series.top_types(300.0, 2) == ["a", "b"]
    series.add(snap(1.0, a=1, b=1, c=60))
    assert series.top_types(300.0, 2) == ["a", "b"]  # ranked again every 5 s, not at every poll
    series.add(snap(100.0, a=1, b=10, c=20))
    assert series.top_types(300.0, 2) == ["c", "a"]
    assert series.top_types(60.0, 2) == ["c", "b"]  # only the last point is in the window
    assert series.top_types(300.0, 5, among=["b", "c"]) == ["c", "b"]


def test_points_change_only_when_a_bucket_completes() -> None:
    series = Series()
    series.add(snap(0.0, email=5))
    assert series.points("email", "depth", 300.0, 50) == ([], [])  # 6 s buckets: the first is still filling
    series.add(snap(3.0, email=9))
    assert series.points("email", "depth", 300.0, 50) == ([], [])
    series.add(snap(6.0, email=1))  # the first bucket is complete
    assert series.points("email", "depth", 300.0, 50) == ([-6.0], [7.0])
    series.add(snap(7.0, email=100))
    assert series.points("email", "depth", 300.0, 50) == ([-6.0], [7.0])


@pytest.mark.parametrize("buckets", [1, 7, 120])
def test_bucket_count_bounds_the_points(buckets: int) -> None:
    series = Series()
    for t in range(900):
        series.add(snap(float(t), email=int(100 + 50 * math.sin(t / 30))))
    xs, _ = series.points("email", "depth", 900.0, buckets)
    assert len(xs) <= buckets


# -- SLO breach marks ------------------------------------------------------------------------------------------------
def test_marks_are_the_buckets_with_a_breached_poll_and_no_other() -> None:
    series = Series()
    breached = {7.0: {"email": 2, TOTAL: 2}, 8.0: {"email": 2, TOTAL: 2}, 31.0: {"report": 1, TOTAL: 1}}
    for t in range(0, 61):
        series.add(snap(float(t), email=5, report=1), breached.get(float(t)))
    # Buckets of 6 s before the one in progress (60 … 66): 7 and 8 are in the bucket at -54, 31 at -30.
    assert series.marks("email", 300.0, 50) == [-54.0]
    assert series.marks("report", 300.0, 50) == [-30.0]
    assert series.marks(TOTAL, 300.0, 50) == [-54.0, -30.0]
    assert series.marks("nobody", 300.0, 50) == []


def wide_window_series(tmp_path: Path, file_until: float) -> tuple[Series, list]:
    """A Series over a history file that holds the polls up to `file_until` only (the file lags), its memory every
    poll of the last 15 minutes; the file's answers are collected, as the dashboard's messages would carry them."""
    store_path = tmp_path / "h.sqlite3"
    writer = HistoryStore(store_path)
    series = Series(store=HistoryStore(store_path, create=False))
    for t in range(0, 3000):
        snapshot = snap(float(t), email=t)
        flags = {"email": 1, TOTAL: 1} if t in (100, 2990) else None
        if t <= file_until:
            writer.write(snapshot, flags)
        if t >= 3000 - KEEP_S:
            series.add(snapshot, flags)
    writer.close()
    answers: list = []
    series.deliver = answers.append
    return series, answers


def answered(series: Series, answers: list, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not answers:
        assert time.monotonic() < deadline, "no answer from the history reader"
        time.sleep(0.01)
    while answers:
        series.take(answers.pop(0))


def test_a_wide_window_has_its_newest_buckets_from_memory_and_the_older_from_the_file(tmp_path: Path) -> None:
    series, answers = wide_window_series(tmp_path, file_until=2900.0)  # the file lacks the last 100 s
    try:
        width = 3600.0 / 60
        first = series.points("email", "depth", 3600.0, 60)  # at once: the memory's buckets; the file is asked
        assert first[0] and first[0][0] >= -KEEP_S
        answered(series, answers)
        xs, ys = series.points("email", "depth", 3600.0, 60)
        current = math.floor(series.latest / width)
        starts = [(current + round(x / width)) * width - seconds(START) for x in xs]
        assert starts == [60.0 * b for b in range(0, 49)]  # every minute to the newest complete one (2880 … 2940)
        assert ys[-1] == pytest.approx(sum(range(2880, 2940)) / 60)  # that one from memory: all its polls
        assert ys[0] == pytest.approx(sum(range(0, 60)) / 60)  # the oldest from the file
        series.marks("email", 3600.0, 60)
        answered(series, answers)
        marks = [(current + round(x / width)) * width - seconds(START) for x in series.marks("email", 3600.0, 60)]
        assert marks == [60.0]  # (2990 is in the bucket in progress)
    finally:
        series.close()


def test_the_file_is_asked_once_per_bucket_whatever_the_redraws(tmp_path: Path) -> None:
    series, answers = wide_window_series(tmp_path, file_until=2999.0)
    asked: list = []
    ask = series._ask
    series._ask = lambda request: (asked.append(request), ask(request))  # type: ignore[method-assign]
    try:
        for _ in range(5):
            series.points(TOTAL, "depth", 3600.0, 60)
            series.points("email", "depth", 3600.0, 60)
            series.marks(TOTAL, 3600.0, 60)
        # One request per line wanted as it first comes (each a superset of the one before), then none.
        assert [len(request.wants) for request in asked] == [1, 2, 3]
        answered(series, answers)
        for _ in range(5):
            series.points("email", "depth", 3600.0, 60)
        assert len(asked) == 3
        series.add(snap(3000.0, email=1))  # the next bucket: asked again, for everything wanted
        series.points("email", "depth", 3600.0, 60)
        assert len(asked) == 4 and len(asked[-1].wants) == 3
    finally:
        series.close()


def test_a_wide_window_ranks_with_the_memory_until_the_file_answers(tmp_path: Path) -> None:
    series, answers = wide_window_series(tmp_path, file_until=2999.0)
    try:
        assert series.top_types(3600.0, 3) == ["email"]  # from memory: the file's ranking is being read
        answered(series, answers)
        assert series.top_types(3600.0, 3) == ["email"]
        wanted = [request.wants for request in series._sent.values()]
        assert answers == [] and wanted == [frozenset({("rank", 3, None)})]
    finally:
        series.close()
