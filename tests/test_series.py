"""The chart history: bounded by time and by count, bucketed for drawing, types ranked by depth."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest

from queuetop.series import KEEP_S, Series
from queuetop.snapshot import TOTAL, Snapshot, TypeStats

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
