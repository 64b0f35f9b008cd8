"""The statistics arithmetic: windows, rates over measured time, nearest-rank percentiles, drain ETA."""

from __future__ import annotations

import random

import pytest

from queuetop.core.history import (
    EventWindow,
    LatencyWindow,
    drain_eta,
    percentiles,
    rate_per_s,
    weighted_percentiles,
)


def test_rate_divides_by_the_time_actually_observed():
    window = EventWindow(60)
    for t in (101, 102, 103, 104, 105, 106):
        window.add(t)
    # watching since t=100: 6 events in 6 s, whatever the nominal window
    assert rate_per_s(window, now=106, span_s=60, observed_since=100) == pytest.approx(1.0)
    assert rate_per_s(window, now=106, span_s=2, observed_since=100) == pytest.approx(1.0)  # 105, 106 in (104, 106]
    assert rate_per_s(window, now=100, span_s=10, observed_since=100) is None


def test_window_keeps_late_events_in_order_and_forgets_old_ones():
    window = EventWindow(10)
    for t in (1, 5, 3, 12, 11):
        window.add(t)
    assert window.count_after(4) == 3
    window.prune(now=14)  # keeps (4, 14]
    assert len(window) == 3 and window.count_after(0) == 3


def test_percentiles_are_nearest_rank():
    assert percentiles([5, 1, 4, 2, 3]) == (3, 5, 5)
    assert percentiles(range(1, 101)) == (50, 95, 99)
    assert percentiles([]) == (None, None, None)
    assert percentiles([7.5]) == (7.5, 7.5, 7.5)


def values(pairs):
    return [round(value, 6) for value, _ in pairs]


def test_latency_window_is_bounded_in_age_and_size():
    window = LatencyWindow(span_s=60, max_samples=3)
    for t in range(5):
        window.add(t, wait_s=t, processing_s=None)
    assert values(window.waits()) == pytest.approx([2, 3, 4], rel=0.01) and window.processing() == []
    window.prune(now=63.5)
    assert values(window.waits()) == pytest.approx([4], rel=0.01) and len(window) == 1


def test_latency_window_reads_each_value_back_within_one_percent_and_forgets_what_leaves():
    window = LatencyWindow(span_s=10, max_samples=4)
    for t, wait in enumerate([5.0, 1.0, 5.0, 3.0, 2.0]):  # the first 5.0 falls out of the full window
        window.add(t, wait_s=wait, processing_s=10 - wait)
    assert values(window.waits()) == pytest.approx([1.0, 2.0, 3.0, 5.0], rel=0.01)
    assert values(window.processing()) == pytest.approx([5.0, 7.0, 8.0, 9.0], rel=0.01)
    window.prune(now=12.5)  # drops the samples at t = 1 and 2: waits 1.0 and 5.0
    assert values(window.waits()) == pytest.approx([2.0, 3.0], rel=0.01)
    assert window.wait_percentiles() == pytest.approx((2.0, 3.0, 3.0), rel=0.01)
    window.add(13, wait_s=0.0, processing_s=0.000_001)  # zero and a microsecond: one bucket of their own
    assert window.waits()[0] == (0.0, 1.0) and window.processing()[0] == (0.000_001, 1.0)


def test_weighted_percentiles_count_each_sample_as_the_completions_it_stands_for():
    window = LatencyWindow(span_s=60)
    for t in range(10):
        window.add(t, wait_s=1.0, processing_s=None)  # ten read one by one
    window.add(10, wait_s=9.0, processing_s=None, weight=90.0)  # one standing for ninety
    assert window.wait_percentiles((5, 10, 11, 50)) == pytest.approx((1.0, 1.0, 9.0, 9.0), rel=0.01)
    assert window.sampled and len(window) == 11
    window.prune(now=70.5)
    assert not window.sampled


def test_percentiles_read_again_follow_every_sample_added_and_forgotten():
    """A poll reads each type's percentiles whether or not its samples changed: what it read last is kept
    until one does, and the figures are always those of the samples in the window."""
    rng = random.Random(7)
    window = LatencyWindow(span_s=30, max_samples=200)
    for t in range(400):
        window.add_all(LatencyWindow.samples([(t / 4, rng.expovariate(1.0), rng.choice([None, rng.random()]))],
                                             weight=rng.choice([1.0, 1.0, 3.5])))  # fmt: skip
        if t % 7 == 0:
            window.prune(now=t / 4)
        if t % 3 == 0:
            points = (50, 95, 99) if t % 2 else (1, 50, 99.9)
            assert window.wait_percentiles(points) == weighted_percentiles(window.waits(), points)
            assert window.processing_percentiles(points) == weighted_percentiles(window.processing(), points)
            assert window.wait_percentiles(points) == weighted_percentiles(window.waits(), points)  # kept


@pytest.mark.parametrize(
    ("depth", "arrivals", "completions", "expected"),
    [
        (0, 5.0, 1.0, ("empty", 0.0)),
        (100, 1.0, 3.0, ("draining", 50.0)),
        (100, 3.0, 3.0, ("never", None)),
        (100, 0.0, 0.0, ("never", None)),
        (100, None, 3.0, ("unknown", None)),
    ],
)
def test_drain_eta(depth, arrivals, completions, expected):
    assert drain_eta(depth, arrivals, completions) == expected
