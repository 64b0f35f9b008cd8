"""SLO evaluation, pure: a Snapshot and limits in, verdicts out. Snapshots are built by hand here because the
evaluation reads nothing else (the real-queue checks are in test_check.py)."""

from __future__ import annotations

from datetime import timedelta
from types import MappingProxyType

import pytest

from queuetop.cli.config import slo_from_option
from queuetop.core.errors import UsageError
from queuetop.watch.slo import Limit, Slo, Slos, SloWatch, Verdict, breach_masks, breached_cells, evaluate
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats

from .helpers import BASE


def snap(*rows: TypeStats, at: float = 0.0, layout: str = "native", cannot: tuple[str, ...] = ()) -> Snapshot:
    figures = MappingProxyType(dict.fromkeys(cannot, False))
    return Snapshot(BASE + timedelta(seconds=at), "q.db", "sqlite", 1.0, 60.0, types=rows, layout=layout,
                    figures=figures)  # fmt: skip


def slos(*limits: tuple) -> Slos:
    return Slos(tuple(Limit(slo, value, job_type) for slo, value, job_type in limits))


def verdicts(evaluation) -> dict:
    return {(c.job_type, c.slo): c.verdict for c in evaluation.checks}


def test_each_limit_is_a_ceiling_and_a_type_s_own_limit_beats_the_default():
    rows = (TypeStats("email", depth=50, oldest_age_s=90.0), TypeStats("report", depth=5, oldest_age_s=30.0))
    result = evaluate(snap(*rows), slos((Slo.MAX_DEPTH, 10, None), (Slo.MAX_DEPTH, 100, "email"),
                                        (Slo.MAX_OLDEST_AGE, 60, None)))  # fmt: skip
    assert verdicts(result) == {
        ("email", Slo.MAX_DEPTH): Verdict.OK,  # 50 ≤ its own 100, though over the default 10
        ("report", Slo.MAX_DEPTH): Verdict.OK,
        ("email", Slo.MAX_OLDEST_AGE): Verdict.BREACH,
        ("report", Slo.MAX_OLDEST_AGE): Verdict.OK,
    }
    (breach,) = result.breaches
    assert (breach.value, breach.limit) == (90.0, 60.0)
    assert "oldest age 1m30s > 1m00s" in breach.describe()
    assert result.breached_cells() == {("email", "oldest")}


def test_a_limit_exactly_met_is_not_a_breach():
    result = evaluate(snap(TypeStats("a", depth=10, timed_out=0)), slos((Slo.MAX_DEPTH, 10, None),
                                                                      (Slo.MAX_TIMED_OUT, 0, None)))
    assert set(verdicts(result).values()) == {Verdict.OK}


def test_a_figure_the_shape_cannot_know_is_not_checkable_once_never_ok_nor_a_breach():
    rows = (TypeStats("a", depth=1, lost=None, claimed=None), TypeStats("b", depth=2))
    result = evaluate(snap(*rows, layout="work_queue", cannot=("lost", "wait")),
                      slos((Slo.MAX_LOST, 0, None), (Slo.MAX_WAIT_P95, 5, "a")))  # fmt: skip
    assert [(c.slo, c.verdict, c.job_type) for c in result.checks] == [
        (Slo.MAX_WAIT_P95, Verdict.NOT_CHECKABLE, None), (Slo.MAX_LOST, Verdict.NOT_CHECKABLE, None)]
    assert "layout work_queue cannot know" in result.not_checkable[0].reason
    assert result.breaches == ()


def test_no_value_this_poll_is_no_data_and_an_empty_queue_has_no_old_job():
    rows = (TypeStats("idle", depth=0, oldest_age_s=None, wait_p95_s=None),)
    result = evaluate(snap(*rows), slos((Slo.MAX_OLDEST_AGE, 1, None), (Slo.MAX_WAIT_P95, 1, None)))
    assert verdicts(result) == {("idle", Slo.MAX_OLDEST_AGE): Verdict.OK, ("idle", Slo.MAX_WAIT_P95): Verdict.NO_DATA}
    assert "no job was claimed and completed" in result.no_data[0].reason


def test_min_completions_is_breached_only_while_jobs_wait():
    limits = slos((Slo.MIN_COMPLETIONS, 2.0, None))
    rows = (TypeStats("busy", depth=30, completions_60s_per_s=0.5),
            TypeStats("idle", depth=0, completions_60s_per_s=0.0),
            TypeStats("fast", depth=30, completions_60s_per_s=5.0))  # fmt: skip
    assert verdicts(evaluate(snap(*rows), limits)) == {
        ("busy", Slo.MIN_COMPLETIONS): Verdict.BREACH, ("idle", Slo.MIN_COMPLETIONS): Verdict.OK,
        ("fast", Slo.MIN_COMPLETIONS): Verdict.OK}  # fmt: skip


def test_dead_rate_is_the_rise_of_dead_over_the_last_minute_of_polls():
    watch = SloWatch(slos((Slo.MAX_DEAD_RATE, 0.05, None)))
    first = watch.observe(snap(TypeStats("a", dead=10), at=0))
    assert verdicts(first.evaluation) == {("a", Slo.MAX_DEAD_RATE): Verdict.NO_DATA}  # one poll: no rate
    second = watch.observe(snap(TypeStats("a", dead=13), at=30))  # 3 in 30 s = 0.1/s
    (check,) = second.evaluation.checks
    assert check.verdict is Verdict.BREACH and check.value == pytest.approx(0.1)
    # 90 s on, the 0 s poll is out of the window: the rate is from the 30 s poll, 13 → 13.
    third = watch.observe(snap(TypeStats("a", dead=13), at=90))
    assert third.evaluation.checks[0].value == 0.0
    fourth = watch.observe(snap(TypeStats("a", dead=2), at=100))  # dead jobs retried: a fall counts as 0
    assert fourth.evaluation.checks[0].value == 0.0


def test_a_type_first_seen_has_no_dead_rate_rather_than_all_its_dead_at_once():
    watch = SloWatch(slos((Slo.MAX_DEAD_RATE, 0.01, None)))
    watch.observe(snap(TypeStats("a", dead=0), at=0))
    later = watch.observe(snap(TypeStats("a", dead=0), TypeStats("b", dead=500), at=10))
    assert verdicts(later.evaluation)[("b", Slo.MAX_DEAD_RATE)] is Verdict.NO_DATA


def test_a_watch_says_which_breaches_are_new_and_how_long_the_others_lasted():
    watch = SloWatch(slos((Slo.MAX_DEPTH, 10, None)), target="prod")
    one = watch.observe(snap(TypeStats("a", depth=11), at=0))
    assert [b.job_type for b in one.new] == ["a"] and one.breaches[0].lasted_s == 0
    two = watch.observe(snap(TypeStats("a", depth=12), TypeStats("b", depth=20), at=5))
    assert [b.job_type for b in two.new] == ["b"]
    assert {b.job_type: b.lasted_s for b in two.breaches} == {"a": 5.0, "b": 0.0}
    assert two.breaches[0].to_json()["since"] == BASE.isoformat(timespec="milliseconds") + "Z"
    three = watch.observe(snap(TypeStats("a", depth=3), TypeStats("b", depth=20), at=9))  # a recovered
    assert [b.job_type for b in three.breaches] == ["b"] and three.new == ()
    four = watch.observe(snap(TypeStats("a", depth=30), TypeStats("b", depth=20), at=12))  # a again: new again
    assert [b.job_type for b in four.new] == ["a"]


def test_breaches_become_one_bit_per_slo_per_type_for_the_history_file():
    watch = SloWatch(slos((Slo.MAX_DEPTH, 10, None), (Slo.MAX_TIMED_OUT, 0, None)), target="prod")
    watched = watch.observe(snap(TypeStats("a", depth=11, timed_out=2), TypeStats("b", depth=20), at=0))
    bit = {slo: 1 << list(Slo).index(slo) for slo in Slo}
    masks = breach_masks(watched.breaches)
    assert masks == {"a": bit[Slo.MAX_DEPTH] | bit[Slo.MAX_TIMED_OUT], "b": bit[Slo.MAX_DEPTH],
                     TOTAL: bit[Slo.MAX_DEPTH] | bit[Slo.MAX_TIMED_OUT]}  # the totals: any type's
    assert breach_masks(()) == {}
    # Back from the bits to the cells the table colours (the time cursor on a breached moment).
    assert breached_cells(masks) == {("a", "depth"), ("a", "timed_out"), ("b", "depth")}
    assert breached_cells({"a": None, TOTAL: 1}) == frozenset()


@pytest.mark.parametrize(("text", "expected"), [
    ("max_depth=100", (Slo.MAX_DEPTH, 100.0, None)),
    ("email:max_wait_p95_s=2.5", (Slo.MAX_WAIT_P95, 2.5, "email")),
    ("Acme.Billing:min_completions_per_s=0.5", (Slo.MIN_COMPLETIONS, 0.5, "Acme.Billing")),
])  # fmt: skip
def test_slo_options_from_the_command_line(text, expected):
    limit = slo_from_option(text)
    assert (limit.slo, limit.value, limit.job_type) == expected


@pytest.mark.parametrize(("text", "phrase"), [
    ("max_depht=1", "unknown SLO 'max_depht'"), ("max_depth", "needs NAME=VALUE"), ("max_depth=lots", "not a number"),
    ("max_depth=-1", "zero or more"),
])  # fmt: skip
def test_bad_slo_options_say_what_is_wrong(text, phrase):
    with pytest.raises(UsageError, match=phrase):
        slo_from_option(text)
