"""`serve --max-types`: the busiest types by name, the rest summed into job_type="(other)", whose counters never
go down (Prometheus would read a reset and `rate()` a burst) however types come, go, move in or out of the
fold, or start their own counters again; end to end, a real queue served with a cap and scraped."""

from __future__ import annotations

import pytest

from queuetop.act.queue import Queue
from queuetop.serve.exporter import TargetPoller
from queuetop.serve.typecap import OTHER, TypeCap
from queuetop.watch.monitor import Monitor
from queuetop.watch.slo import Limit, Slo, Slos
from queuetop.watch.snapshot import TypeStats

from .test_cli import assert_clean_failure, queuetop
from .test_exporter import exporters, scrape, value, wait_until  # noqa: F401 (a fixture)


def row(name: str, depth: int = 0, arrived: int | None = 0, oldest: float | None = None, **more) -> TypeStats:
    return TypeStats(name, depth=depth, arrivals_total=arrived, completions_total=0, oldest_age_s=oldest, **more)


def names(types) -> list[str]:
    return [t.job_type for t in types]


def test_under_the_cap_every_type_is_exported_as_it_is():
    types = (row("a", 1), row("b", 2))
    capped = TypeCap(2).cap(types)
    assert capped.types == types and capped.folded == 0


def test_past_the_cap_the_busiest_keep_their_names_and_the_rest_are_summed():
    cap = TypeCap(2)
    capped = cap.cap((row("a", 1, 5, oldest=3.0, wait_p95_s=1.0), row("b", 9, 7), row("c", 4, 2),
                      row("d", 2, 1, oldest=8.0, claimed=1)))  # fmt: skip
    assert names(capped.types) == ["b", "c", OTHER] and capped.folded == 2
    other = capped.types[-1]
    assert (other.depth, other.claimed, other.arrivals_total, other.oldest_age_s) == (3, 1, 6, 8.0)
    assert other.wait_p95_s is None  # a quantile of a sum of types is no one's: absent
    # a: now the busiest, keeps no name a named one still holds: the names do not flicker
    assert names(cap.cap((row("a", 50, 6), row("b", 1, 8), row("c", 1, 2), row("d", 2, 1))).types) == \
        ["b", "c", OTHER]  # fmt: skip


def test_the_folds_counters_never_go_down_as_types_leave_it_move_out_of_it_or_begin_again():
    cap = TypeCap(1)
    seen = []
    for types in [
        (row("big", 9, 100), row("a", 1, 10), row("b", 1, 20)),  # other: 30
        (row("big", 9, 101), row("a", 1, 12), row("b", 1, 25)),  # 37
        (row("a", 1, 13), row("b", 1, 26)),  # big is gone: a takes its place, its 13 must not leave the fold's count
        (row("a", 1, 14), row("b", 1, 2)),  # b went quiet and began again from 0
        (row("a", 1, 15), row("b", 1, 3), row("c", 0, None)),  # c has no counter at all
    ]:
        other = next(t for t in cap.cap(types).types if t.job_type == OTHER)
        seen.append(other.arrivals_total)
    assert seen == [30, 37, 38, 40, 41]
    assert seen == sorted(seen)


def test_a_type_with_an_slo_of_its_own_is_always_named():
    capped = TypeCap(1, pinned={"quiet"}).cap((row("busy", 9), row("quiet", 0), row("idle", 0)))
    assert names(capped.types) == ["busy", "quiet", OTHER]


def test_serve_with_a_cap_exports_the_busiest_the_pinned_and_their_fold(sqlite_backend, exporters):  # noqa: F811
    with sqlite_backend.open() as db:
        queue = Queue(db, sqlite_backend.layout)
        for job_type, jobs in (("email", 5), ("report", 4), ("sms", 2), ("push", 1)):
            queue.enqueue_many(job_type, jobs)
    slos = Slos((Limit(Slo.MAX_DEPTH, 1, job_type="push"),))  # push has a limit of its own: named, and besides
    exporter = exporters(TargetPoller("main", Monitor(sqlite_backend.target), 0.2, slos=slos, max_types=2))
    wait_until(lambda: exporter.pollers[0].state.snapshot is not None, "the first poll")
    samples, _, _ = scrape(exporter.url)
    q = {"target": "main", "layout": "native"}
    assert value(samples, "queuetop_depth", **q, job_type="email") == 5.0  # the two busiest
    assert value(samples, "queuetop_depth", **q, job_type="report") == 4.0
    assert value(samples, "queuetop_depth", **q, job_type="push") == 1.0
    assert value(samples, "queuetop_depth", **q, job_type="sms") is None
    assert value(samples, "queuetop_depth", **q, job_type=OTHER) == 2.0
    assert value(samples, "queuetop_arrivals_total", **q, job_type=OTHER) == 2.0
    assert value(samples, "queuetop_folded_types", target="main") == 1.0


@pytest.mark.parametrize("bad", ["0", "-3"])
def test_a_cap_below_one_is_one_clear_line(bad):
    assert_clean_failure(queuetop("serve", "--max-types", bad, "--listen", "127.0.0.1:0"), "--max-types")
