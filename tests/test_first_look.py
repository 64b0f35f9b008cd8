"""A deep queue's first look (issue 24; watch/firstlook.py), on a real SQLite file and a real PostgreSQL server:
the first poll of a queue too deep to count at once estimates each type's depth from a sample of its primary key
(marked ≈), counts the other states, the oldest job and the shallow types exactly, and starts the full count off
the poll; the poll after that count is exact. A small queue, a wide span of ids holding few rows, `stats --exact`
and a collector told not to (`check`) count every row on the first poll, as before."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from queuetop.act.queue import Queue
from queuetop.cli import main
from queuetop.watch import collector as shape_collector
from queuetop.watch import recount
from queuetop.watch.collector import collector_for
from queuetop.watch.firstlook import EXACT_UP_TO, sample_windows

from .helpers import layout_sql

ROWS = 3 * EXACT_UP_TO // 2  # deep enough to be sampled: 30,000
BULK, MID = ROWS * 9 // 10, ROWS // 10  # every tenth id is 'mid', the rest 'bulk'
RARE, HELD = 50, 1_000


def fill(db, layout, rows: int = ROWS) -> None:
    """`rows` pending jobs in one statement, 'bulk' and 'mid' interleaved by id."""
    if db.dialect.name == "mssql":
        pytest.skip("the fill is a recursive CTE INSERT of PostgreSQL and SQLite")
    db.execute(layout_sql(db, layout, f"WITH RECURSIVE qt_n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM qt_n "
                                      f"WHERE i < {rows}) INSERT INTO {{queue}} ({{type}}, {{info}}) SELECT CASE "
                                      f"WHEN i % 10 = 9 THEN 'mid' ELSE 'bulk' END, 'p' FROM qt_n"))  # fmt: skip


def oldest_pending_created(db, layout, job_type: str):
    row = db.fetchone(layout_sql(db, layout, "SELECT MIN({created}) FROM {queue} WHERE {type} = ? AND "
                                             "{claimed_at} IS NULL"), (job_type,))  # fmt: skip
    return db.dialect.decode_time(row[0])


def test_sample_windows_spread_evenly_over_the_span():
    windows = sample_windows(1, 1_000_000, rows=10_000, windows=20)
    assert len(windows) == 20 and all(last - first + 1 == 500 for first, last in windows)
    assert windows[0][0] == 1 and windows[-1][0] == 1 + 19 * 50_000 and windows[-1][1] <= 1_000_000


def test_a_deep_queues_first_poll_estimates_then_the_full_count_makes_it_exact(backend):
    with backend.open() as db:
        fill(db, backend.layout)
        queue = Queue(db, backend.layout)
        queue.enqueue_many("rare", RARE)
        held = queue.claim("w1", ["mid"], batch=HELD)
        assert len(held) == HELD
        collector = collector_for(db, backend.layout)
        first = collector.poll()
        bulk, mid, rare = (first.type_named(name) for name in ("bulk", "mid", "rare"))
        # estimated from a third of the ids: within 5 %, and said to be an estimate
        assert bulk.depth_is_estimate and abs(bulk.depth - BULK) <= BULK * 0.05
        assert mid.depth_is_estimate and abs(mid.depth - (MID - HELD)) <= MID * 0.05
        assert first.totals.depth_is_estimate
        # exact: a shallow type (it arrived in the look-back; its heads are counted), the claims, the oldest job
        assert (rare.depth, rare.depth_is_estimate) == (RARE, False)
        assert (mid.claimed, bulk.claimed, first.totals.claimed) == (HELD, 0, HELD)
        oldest = oldest_pending_created(db, backend.layout, "bulk")
        assert abs(bulk.oldest_age_s - (first.taken_at - oldest).total_seconds()) < 0.002
        assert first.totals.in_no_state is None  # not counted yet: never a 0 it did not count
        collector.settle()
        assert not collector._recount.running  # the first poll's figures first: the counts begin with the next
        assert collector.poll().totals.depth_is_estimate
        collector.settle()
        exact = collector.poll()
        assert [(row.job_type, row.depth, row.depth_is_estimate) for row in exact.types] == [
            ("bulk", BULK, False), ("mid", MID - HELD, False), ("rare", RARE, False)]
        assert (exact.totals.depth, exact.totals.depth_is_estimate) == (BULK + MID - HELD + RARE, False)


def test_told_not_to_the_first_poll_counts_every_row(backend):
    with backend.open() as db:
        fill(db, backend.layout)
        first = collector_for(db, backend.layout, first_look=False).poll()
        assert [(row.job_type, row.depth, row.depth_is_estimate) for row in first.types] == [
            ("bulk", BULK, False), ("mid", MID, False)]
        assert first.totals.in_no_state == 0


def test_a_wide_span_of_ids_with_few_rows_is_counted_whole(sqlite_backend):
    with sqlite_backend.open() as db:
        layout = sqlite_backend.layout
        fill(db, layout)
        db.execute(layout_sql(db, layout, "DELETE FROM {queue} WHERE {id} > 1 AND {id} < ?"), (ROWS - 5,))
        an_hour_ago = db.dialect.encode_value(layout.type_of("created"), datetime.utcnow() - timedelta(hours=1))
        db.execute(layout_sql(db, layout, "UPDATE {queue} SET {created} = ?"), (an_hour_ago,))  # no look-back
        first = collector_for(db, layout).poll()  # ids 1 and 29,995..30,000: the sample would find none
        assert [(row.job_type, row.depth, row.depth_is_estimate) for row in first.types] == [
            ("bulk", 6, False), ("mid", 1, False)]


def test_stats_says_its_estimate_and_exact_counts_every_row(sqlite_backend, capsys):
    with sqlite_backend.open() as db:
        fill(db, sqlite_backend.layout)
    db_path = sqlite_backend.target.value
    assert main(["stats", "--db", str(db_path)]) == 0
    estimated = capsys.readouterr().out
    assert "≈" in estimated and "`queuetop stats --exact` counts every row first" in estimated
    missed = "a type the sample missed (none of its jobs in it, in another state or arrived in the last minute)"
    assert f"{missed} is not listed" in estimated  # stats exits before the full count that would list it
    assert main(["stats", "--db", str(db_path), "--exact"]) == 0
    exact = capsys.readouterr().out
    assert "≈" not in exact and f"{BULK:,}" in exact and f"{MID:,}" in exact


def test_the_look_back_reads_the_newest_ids_and_rates_them_over_the_time_they_cover(sqlite_backend, monkeypatch):
    """The first poll's look back over arrivals reads the newest LOOK_BACK_IDS ids only (a range of the key, not a
    scan of the creation times); when they all arrived within the window, the rate is over the seconds they span,
    not the whole minute (here 20 jobs a second for 50 s: the newest 200 cover 10 s of it)."""
    monkeypatch.setattr(shape_collector, "LOOK_BACK_IDS", 200)
    with sqlite_backend.open() as db:
        layout = sqlite_backend.layout
        fill(db, layout, rows=1_000)
        db.execute(layout_sql(db, layout, "UPDATE {queue} SET {created} = strftime('%Y-%m-%d %H:%M:%f', 'now', "
                                          "'-' || ((1000 - {id}) * 0.05) || ' seconds')"))  # fmt: skip
        totals = collector_for(db, layout).poll().totals
    assert 180 <= totals.arrivals_total < 200  # the earliest second's jobs left out: the range may have cut it
    assert 17 <= totals.arrivals_60s_per_s <= 23  # ~180 jobs over the ~9 s they span (not 200 / 60 = 3.3)


def test_the_look_back_leaves_out_the_second_it_cut(sqlite_backend, monkeypatch):
    """A burst larger than the look back, then a trickle: the newest ids hold the trickle and the burst's last
    few. Its second was read in part (100 of its 1,000 jobs): counted over the time since, the rate would be the
    trickle's and a tenth of the burst over 30 s (6.7 a second); it is the trickle's over the seconds read whole."""
    monkeypatch.setattr(shape_collector, "LOOK_BACK_IDS", 200)
    with sqlite_backend.open() as db:
        layout = sqlite_backend.layout
        fill(db, layout, rows=1_100)
        db.execute(layout_sql(db, layout, "UPDATE {queue} SET {created} = CASE WHEN {id} <= 1000 "
                                          "THEN strftime('%Y-%m-%d %H:%M:%f', 'now', '-30 seconds') "
                                          "ELSE strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || ((1100 - {id}) * 0.1) "
                                          "|| ' seconds') END"))  # fmt: skip
        totals = collector_for(db, layout).poll().totals
    assert totals.arrivals_total == 100  # the trickle: 10 a second over the last 10 s
    assert 2.9 <= totals.arrivals_60s_per_s <= 3.9  # 100 over the ~29 s since the burst's second (not 200 / 30)
    assert 8 <= totals.arrivals_10s_per_s <= 12


def test_a_one_shot_look_starts_no_count_it_would_not_wait_for(sqlite_backend, monkeypatch):
    """`stats` polls once and exits: on a deep queue it must not leave full counts running on the server (a cron
    job running it every few seconds would pile them up). The dashboard's collector starts both with its second poll."""
    started = []
    monkeypatch.setattr(recount.BackgroundCount, "start", lambda job: started.append(job))
    with sqlite_backend.open() as db:
        fill(db, sqlite_backend.layout)
    assert main(["stats", "--db", sqlite_backend.target.value]) == 0
    assert started == []
    with sqlite_backend.open() as db:
        collector = collector_for(db, sqlite_backend.layout)
        collector.poll()
        assert started == []  # the first poll's figures first
        collector.poll()
    assert len(started) == 2  # the full count that makes the depth exact, and the rows in no state

