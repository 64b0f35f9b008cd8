"""Dear polls come further apart (`watch/pace.py`): the pace itself, and each watcher that follows it — the
exporter (its wait and its gauge), `check --for`, `stats --watch` (its wait and its line on stderr) and the status
line. The dashboards' own loops are driven in tests/tui/test_paced_dashboard.py."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from queuetop.cli import main, queue_commands
from queuetop.serve.check import run_check
from queuetop.serve.exporter import TargetPoller, TargetState, families
from queuetop.tui.scenes import EMPTY
from queuetop.tui.widgets import StatusView, status_lines
from queuetop.watch import pace
from queuetop.watch.monitor import CONNECTED, RECONNECTING, PollOutcome
from queuetop.watch.pace import Pace
from queuetop.watch.slo import Limit, Slo, Slos


def costing(poll_ms: float) -> PollOutcome:
    assert EMPTY.snapshot is not None
    return PollOutcome(CONNECTED, replace(EMPTY.snapshot, poll_ms=poll_ms))


def paced_after(*polls: float | None, interval_s: float = 1.0) -> float:
    watch = Pace()
    for poll_s in polls:
        watch.took(poll_s)
    return watch.wait_s(interval_s)


def test_two_dear_polls_in_a_row_stretch_the_wait_so_polls_take_a_tenth_of_the_time():
    assert paced_after(1.2, 1.2) == pytest.approx(12.0)
    assert paced_after(0.5, 0.3) == pytest.approx(3.0)  # the cheaper of the two
    assert paced_after(0.3, 0.5) == pytest.approx(3.0)


def test_one_dear_poll_alone_is_not_the_tables_size():
    assert paced_after(1.2) == 1.0  # a first poll counts every row, once
    assert paced_after(0.01, 1.2) == 1.0  # a moment's load on a busy machine
    assert paced_after(1.2, 0.01) == 1.0
    assert paced_after(1.2, None, 1.2) == 1.0  # a failed poll read nothing: the two before it are not "in a row"


def test_cheap_polls_keep_the_interval_even_a_short_one():
    assert paced_after(pace.PACED_PAST_S, pace.PACED_PAST_S, interval_s=0.1) == 0.1
    assert paced_after(0.05, 0.05, interval_s=0.1) == 0.1  # half the time, but a small queue's poll is never paced
    assert paced_after(0.15, 0.15, interval_s=0.1) == pytest.approx(1.5)


def test_a_pace_starts_at_half_again_the_interval_and_holds_while_it_stretches_it_at_all():
    """Polls costing about a tenth of the interval must not make the pace (and the dashboard's note of it) come and
    go from poll to poll."""
    watch = Pace()
    waits = []
    for poll_s in (0.12, 0.12, 0.16, 0.16, 0.12, 0.12, 0.11, 0.09, 0.09, 0.12, 0.12):
        watch.took(poll_s)
        waits.append(round(watch.wait_s(1.0), 2))
        assert round(watch.wait_s(1.0), 2) == waits[-1]  # asked again (the status line, every second): the same
    # (the cheaper of the last two polls: 0.12 0.12 0.12 0.16 0.12 0.12 0.11 0.09 ...)
    assert waits == [1.0, 1.0, 1.0, 1.6, 1.2, 1.2, 1.1, 1.0, 1.0, 1.0, 1.0]


def test_the_pace_has_a_ceiling_and_a_longer_interval_stays_the_users():
    assert paced_after(60.0, 60.0) == pace.PACED_AT_MOST_S
    assert paced_after(0.5, 0.5, interval_s=10.0) == 10.0
    assert paced_after(60.0, 60.0, interval_s=120.0) == 120.0
    watch = Pace()
    watch.took(2.0)
    watch.took(2.0)
    assert watch.wait_s(1.0) > 1.0 and watch.wait_s(30.0) == 30.0 and watch.dear_s == 2.0


def test_the_exporter_waits_as_the_pace_says_and_exports_the_wait(monkeypatch):
    outcomes = iter([costing(800.0), costing(900.0), PollOutcome(RECONNECTING, error="gone", retry_in_s=0.0)])
    waits: list[float] = []
    poller = TargetPoller("main", SimpleNamespace(poll=lambda: next(outcomes)), interval_s=1.0)  # type: ignore[arg-type]
    states: list[TargetState] = []

    def wait(seconds: float) -> bool:
        waits.append(seconds)
        if len(waits) == 3:  # stop after the third poll
            poller._stop.set()
        return poller._stop.is_set()

    poller.on_state = states.append
    monkeypatch.setattr(poller._stop, "wait", wait)
    poller._run()
    assert waits[0] == 1.0 and waits[1] == pytest.approx(8.0) and waits[2] == 1.0  # the third failed: not paced
    assert [state.paced_s for state in states] == [None, pytest.approx(8.0), None]
    exported = {family.name: family for family in families(states[1:2])}
    assert exported["queuetop_poll_paced_seconds"].samples[0].value == pytest.approx(8.0)
    assert not {family.name: family for family in families(states[:1])}["queuetop_poll_paced_seconds"].samples


def test_check_for_a_while_waits_as_the_pace_says():
    elapsed, slept = [0.0], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        elapsed[0] += seconds

    def session():
        return (lambda: costing(500.0).snapshot), (lambda: None)

    result = run_check("t", "q", session, Slos((Limit(Slo.MAX_DEPTH, 2),)), for_s=30.0, interval_s=1.0, sleep=sleep,
                       clock=lambda: elapsed[0])  # fmt: skip
    assert slept == [1.0, *[pytest.approx(5.0)] * 5] and result.polls == 7  # 31 polls, were every poll 1 s apart


def test_stats_watch_waits_as_the_pace_says_and_says_so_once(seed_file, monkeypatch, capsys):
    # every real poll of the small queue deemed dear: the pace then stretches the wait to its ceiling
    monkeypatch.setattr(pace, "PACED_PAST_S", 0.0)
    monkeypatch.setattr(pace, "PACED_AT_MOST_S", 7.0)
    monkeypatch.setattr(pace, "POLL_MAX_SHARE", 1e-9)
    clock = iter(float(n) / 100 for n in range(10_000))
    slept: list[float] = []
    monkeypatch.setattr(queue_commands, "time", SimpleNamespace(monotonic=lambda: next(clock), sleep=slept.append))
    code = main(["stats", "--db", str(seed_file), "--layout", "processed", "--table", "work_items",
                 "--watch", "0.5", "--count", "4"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert len(slept) == 3 and slept[0] < 0.5 and slept[1] > 6.0 and slept[2] > 6.0  # paced from the second poll
    assert err.count("one every 7 s, not every 0.5") == 1 and "queuetop doctor" in err


def status_text(**view: object) -> str:
    base = {"target": "q.db", "dialect": "sqlite", "state": CONNECTED, "error": None, "retry_in_s": None,
            "since_success_s": 3.0, "poll_ms": 900.0, "interval_s": 1.0, "window_s": 60.0, "paused": False,
            "read_only": False}  # fmt: skip
    return "\n".join(str(line) for line in status_lines(StatusView(**(base | view))) if line is not None)


def test_the_status_line_says_when_and_why_polls_come_further_apart():
    paced = status_text(every_s=9.0)
    assert "every 9 s, not 1: polls are dear (doctor names the index they lack)" in paced
    assert "STALE" not in paced and "polled 3.0s ago" in paced
    assert "every 1 s ·" in status_text(every_s=1.0) and "dear" not in status_text(every_s=1.0)

