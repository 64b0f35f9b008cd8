"""Stats correctness: a scripted scenario with known timestamps gives exact figures, on real databases.

Every figure is the server's clock against the server's clock (the poll's statement reads its own `now`), so the
timeline is laid out backwards from the server's time: BASE is 10 s before the fixture starts, the first poll comes
at once (t=10, give or take the milliseconds it takes to write the rows: ages are compared to a tenth of a
second), the second when the server's clock says t=15.

The timeline (seconds after BASE; the monitor polls at t=10 and again at t=15):
  t=-100  3 "old" jobs          (before the 60 s window)
  t=1     10 "email", 4 "report" (priority 5), 5 "resize"
  t=2     claim 3 email (lease 30)        t=2..6  claim resize one by one (waits 1..5 s)
  t=3, 4  complete 2 of the email claims (processing 1 s and 2 s)
  t=5     claim 2 report (lease 1)        t=7     release report with max_attempts=1: both dead
  t=7     complete the 5 resize jobs (processing 5..1 s)
  t=8     claim 1 report (lease 1, so timed out by t=10); claim 2 old, complete them at t=9
  t=12    6 more email                    t=13    complete the third email claim
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import pytest

from queuetop.db import Database
from queuetop.layouts.sql import Statements
from queuetop.watch.collector import collector_for

from .conftest import BACKENDS, drop_backend, make_backend


def approx(value):
    return pytest.approx(value, abs=1e-9)


class Script:
    """Writes the rows the queue's operations leave, at the times the timeline says. The operations themselves
    take the database's own clock, which a test cannot set; what is checked here is the collector's arithmetic
    over rows with known times (the operations have their own tests)."""

    def __init__(self, db: Database, layout) -> None:
        self.db, self.layout, d = db, layout, db.dialect
        # t=0 five seconds ago: the rows up to t=9 are written within the five seconds left before the first poll
        # at t=10 (on a loaded machine the writes alone once took more than the one second left when t=0 was ten
        # seconds back, and the poll's 10 s window no longer held t=1)
        self.base: datetime = d.decode_time(db.fetchone(d.server_now_sql())[0]) - timedelta(seconds=5)
        t, s = d.param("datetime2"), Statements(d, layout)
        self._insert = s.sql(f"INSERT INTO {{queue}} ({{type}}, {{priority}}, {{created}}, {{available}}) "
                             f"VALUES (?, ?, {t}, {t})")
        self._ids = s.sql(f"SELECT {{id}} FROM {{queue}} WHERE {{type}} = ? AND {{created}} = {t} "
                          "ORDER BY {id}")
        self._pending = s.sql("SELECT {id} FROM {queue} WHERE {type} = ? AND {claimed_at} IS NULL "
                              "ORDER BY {priority}, {available}, {id}")
        self._claim = s.sql(f"UPDATE {{queue}} SET {{claimed_at}} = {t}, {{claimed_by}} = ?, "
                            f"{{timeout}} = {t}, {{attempts}} = {{attempts}} + 1 WHERE {{id}} = ?")
        into = "{c_id}, {c_type}, {c_created}, {c_claimed_at}, {c_completed}, {c_claimed_by}, {c_attempts}, {c_outcome}"
        self._move = s.sql(f"INSERT INTO {{completed}} ({into}) SELECT {{id}}, {{type}}, "
                           f"{{created}}, {{claimed_at}}, {t}, {{claimed_by}}, {{attempts}}, "
                           f"{d.param('varchar(16)')} FROM {{queue}} WHERE {{id}} = ?")
        self._delete = s.sql("DELETE FROM {queue} WHERE {id} = ?")

    def time(self, t: float):
        return self.db.dialect.encode_time(self.base + timedelta(seconds=t))

    def wait_until(self, t: float) -> None:
        """Sleep until the server's clock says `t`."""
        d = self.db.dialect
        now = d.decode_time(self.db.fetchone(d.server_now_sql())[0])
        time.sleep(max(0.0, (self.base + timedelta(seconds=t) - now).total_seconds()))

    def enqueue(self, job_type: str, count: int, t: float, priority: int = 128) -> list[int]:
        for _ in range(count):
            self.db.execute(self._insert, (job_type, priority, self.time(t), self.time(t)))
        return [row[0] for row in self.db.fetchall(self._ids, (job_type, self.time(t)))]

    def claim(self, worker: str, job_type: str, t: float, batch: int = 1, lease: float = 30) -> list[int]:
        ids = [row[0] for row in self.db.fetchall(self._pending, (job_type,))][:batch]
        for job_id in ids:
            self.db.execute(self._claim, (self.time(t), worker, self.time(t + lease), job_id))
        return ids

    def complete(self, job_id: int, t: float, outcome: str = "succeeded") -> None:
        self.db.execute(self._move, (self.time(t), outcome, job_id))
        self.db.execute(self._delete, (job_id,))


@pytest.fixture(scope="module", params=BACKENDS)
def scenario(request, tmp_path_factory):
    """Played once per database for the module's tests (it waits for the server's t=15)."""
    backend = make_backend(request.param, tmp_path_factory.mktemp("stats"))
    try:
        yield play(backend)
    finally:
        drop_backend(backend)


def play(backend):
    q = Script(Database.open(backend.target), backend.layout)
    monitor = collector_for(Database.open(backend.target, purpose="monitor"), backend.layout)

    q.enqueue("old", 3, -100)
    q.enqueue("email", 10, 1)
    q.enqueue("report", 4, 1, priority=5)
    q.enqueue("resize", 5, 1)
    emails = q.claim("a", "email", 2, batch=3, lease=30)
    resizes = []
    for t in range(2, 7):
        resizes += q.claim("b", "resize", t)
    q.complete(emails[0], 3)
    q.complete(emails[1], 4)
    reports = q.claim("c", "report", 5, batch=2, lease=1)
    for job_id in reports:  # release at t=7 with max_attempts=1: both timed out and out of attempts
        q.complete(job_id, 7, "dead")
    for job_id in resizes:
        q.complete(job_id, 7)
    q.claim("c", "report", 8, lease=1)
    olds = q.claim("d", "old", 8, batch=2)
    for job_id in olds:
        q.complete(job_id, 9)
    q.wait_until(10)
    first = monitor.poll()
    q.enqueue("email", 6, 12)
    q.complete(emails[2], 13)
    q.wait_until(15)
    second = monitor.poll()
    q.db.close()
    monitor.db.close()
    return first, second, q.base


def test_first_poll_counts_depth_age_claims_timeouts_and_dead(scenario):
    snap, base = scenario[0], scenario[2]
    # The poll's own moment, on the timeline: t=10 give or take the time the rows took to write (a third of a
    # second on a loaded machine), so each age is measured from it, to the millisecond.
    polled_at = (snap.taken_at - base).total_seconds()
    assert polled_at == pytest.approx(10.0, abs=2.0)
    rows = {row.job_type: row for row in snap.types}
    assert sorted(rows) == ["email", "old", "report", "resize"]
    expected = {  # depth, enqueued at (the oldest), claimed (held and not timed out), timed out, dead
        "email": (7, 1, 1, 0, 0),
        "report": (1, 1, 0, 1, 2),  # its one claim is past its timeout: timed out, not claimed
        "resize": (0, None, 0, 0, 0),
        "old": (1, -100, 0, 0, 0),
    }
    for job_type, (depth, enqueued_t, claimed, timed_out, dead) in expected.items():
        row = rows[job_type]
        assert (row.depth, row.claimed, row.timed_out, row.dead) == (depth, claimed, timed_out, dead), job_type
        age = None if enqueued_t is None else pytest.approx(polled_at - enqueued_t, abs=0.01)
        assert row.oldest_age_s == age, job_type
    totals = snap.totals
    assert (totals.depth, totals.claimed, totals.timed_out, totals.dead) == (9, 1, 1, 2)
    assert totals.oldest_age_s == pytest.approx(polled_at + 100, abs=0.01)


def test_first_poll_rates_look_back_one_window(scenario):
    rows = {row.job_type: row for row in scenario[0].types}
    # arrivals, completions: (per s over 10 s, per s over 60 s)
    assert (rows["email"].arrivals_10s_per_s, rows["email"].arrivals_60s_per_s) == (approx(1.0), approx(10 / 60))
    assert (rows["email"].completions_10s_per_s, rows["email"].completions_60s_per_s) == (approx(0.2), approx(2 / 60))
    assert rows["report"].completions_10s_per_s == approx(0.2)  # the two dead jobs finished too
    assert rows["old"].arrivals_60s_per_s == 0  # created before the window
    assert rows["old"].completions_60s_per_s == approx(2 / 60)
    totals = scenario[0].totals
    assert (totals.arrivals_10s_per_s, totals.arrivals_60s_per_s) == (approx(1.9), approx(19 / 60))
    assert (totals.completions_10s_per_s, totals.completions_60s_per_s) == (approx(1.1), approx(11 / 60))


def test_first_poll_percentiles_and_drain(scenario):
    rows = {row.job_type: row for row in scenario[0].types}
    resize = rows["resize"]
    assert (resize.wait_p50_s, resize.wait_p95_s, resize.wait_p99_s) == (3.0, 5.0, 5.0)
    assert (resize.processing_p50_s, resize.processing_p95_s, resize.processing_p99_s) == (3.0, 5.0, 5.0)
    assert (rows["email"].wait_p50_s, rows["email"].processing_p95_s) == (1.0, 2.0)
    assert rows["report"].wait_p50_s is None  # dead jobs carry no latency
    totals = scenario[0].totals
    # waits 1,1,1,2,3,4,5,108,108 and processing 1,1,1,1,2,2,3,4,5 (nearest rank)
    assert (totals.wait_p50_s, totals.wait_p95_s, totals.wait_p99_s) == (3.0, 108.0, 108.0)
    assert (totals.processing_p50_s, totals.processing_p95_s) == (2.0, 5.0)
    assert (resize.drain, resize.drain_eta_s) == ("empty", 0.0)
    assert (rows["old"].drain, rows["old"].drain_eta_s) == ("draining", approx(30.0))  # 1 job at 2/60 per s
    assert (rows["email"].drain, rows["email"].drain_eta_s) == ("never", None)
    assert totals.drain == "never"


def test_second_poll_reads_only_what_changed_since(scenario):
    snap = scenario[1]
    email = snap.type_named("email")
    assert (email.depth, email.claimed) == (13, 0)
    assert (email.arrivals_10s_per_s, email.arrivals_60s_per_s) == (approx(0.6), approx(16 / 60))
    assert (email.completions_10s_per_s, email.completions_60s_per_s) == (approx(0.1), approx(3 / 60))
    assert (email.wait_p99_s, email.processing_p99_s) == (1.0, 11.0)
    resize = snap.type_named("resize")
    assert resize.completions_10s_per_s == approx(0.5)  # t=7 is still inside (5, 15]
    assert snap.totals.arrivals_60s_per_s == approx(25 / 60)
