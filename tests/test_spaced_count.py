"""When an untracked shape's poll counts its states again (`watch/recount.SpacedCount`): a shallow queue on every
poll, a deep one at most a share of the time, never more than SPACED_AT_MOST_S apart, and at once when fresh."""

from __future__ import annotations

from queuetop.watch.recount import SpacedCount

COUNTS = {"pending": {"a": (50_000, None)}}


def test_a_shallow_queue_is_counted_on_every_poll_however_long_its_count() -> None:
    spaced = SpacedCount(max_share=0.02, past_jobs=20_000)
    assert spaced.due(0.0)  # nothing counted yet
    spaced.counted(COUNTS, 20_000, begun_at=0.0, spent_s=5.0)
    assert spaced.kept is None and spaced.due(0.1)


def test_a_deep_queues_count_is_spaced_by_its_cost_and_fresh_counts_at_once() -> None:
    spaced = SpacedCount(max_share=0.02, past_jobs=20_000, at_most_s=30.0)
    spaced.counted(COUNTS, 50_000, begun_at=100.0, spent_s=0.2)  # 0.2 s at 2 %: the next one 10 s later
    assert spaced.kept is COUNTS
    assert [spaced.due(t) for t in (101.0, 109.9, 110.0)] == [False, False, True]
    assert spaced.due(101.0, fresh=True)


def test_counts_are_never_further_apart_than_at_most_s() -> None:
    """A 2-second count at 2 % would wait 100 s; a deleted row's completions are counted at a count, so a minute
    without one would read as nothing completed: 30 s at most."""
    spaced = SpacedCount(max_share=0.02, past_jobs=20_000, at_most_s=30.0)
    spaced.counted(COUNTS, 50_000, begun_at=100.0, spent_s=2.0)
    assert [spaced.due(t) for t in (129.9, 130.0)] == [False, True]
