"""A full count of a queue's states, where a poll cannot read them cheaply: off the poll, on a connection and a
thread of its own, so that counting a deep backlog never delays the figures a poll shows (`Recounter`: both
collectors track their depth from arrivals and completions between such counts, and correct it with each one);
or, for a shape whose depth cannot be tracked (`Layout.depth_tracked`: its arrivals or its completions cannot be
read, or a finished row leaves with nothing to read its end from: graphile-worker, django-q2, Celery, dramatiq-pg,
huey), on the poll but spaced by its cost (`SpacedCount`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from queuetop.db import Database, QueuetopError

DEPTH_EXACT_UP_TO = 200  # pending jobs per type counted on every poll; deeper ones are tracked between counts
RECOUNT_EVERY_S = 60.0  # a full count corrects the tracked figures this often ...
RECOUNT_MAX_SHARE = 0.01  # ... spaced out so it takes at most this share of the time (0.5 s → every 50 s)
SPACED_PAST_JOBS = 20_000  # an untracked shape's count of more jobs than this is spaced out ...
SPACED_MAX_SHARE = 0.02  # ... so that counting takes at most this share of the time: a warm poll's budget, 20 ms a
# second at a dashboard's interval (0.2 s, graphile-worker's 10⁶ jobs → every 10 s; 80 ms, Celery's → every 4 s) ...
SPACED_AT_MOST_S = 30.0  # ... but never further apart than half the rates' minute: a shape that deletes a finished
# row has its completions counted at a count, and a minute without one would read as a queue with nothing completed

Counts = TypeVar("Counts")

log = logging.getLogger("queuetop")


class BackgroundCount(threading.Thread, Generic[Counts]):
    """Runs `count` once on a new connection to the same target; `counts` (or `error`) and `spent_s` are set
    when the thread has ended. `begun_at` is the poll's server time when it was started."""

    def __init__(self, db: Database, begun_at: float | None, count: Callable[[Database], Counts]) -> None:
        super().__init__(name="queuetop-recount", daemon=True)
        self.target, self.opener, self.begun_at = db.target, type(db).open, begun_at
        self._count = count
        self.counts: Counts | None = None
        self.spent_s = 0.0
        self.error: str | None = None

    def run(self) -> None:
        started = time.perf_counter()
        try:
            with self.opener(self.target, purpose="monitor") as db:
                # the count's own time, not the connection's: the share bounds what the counts cost the database,
                # and a slow connect (a busy client, a far server's handshake) would space them for nothing
                started = time.perf_counter()
                self.counts = self._count(db)
        except QueuetopError as exc:  # the poll carries on with tracked figures; the next count tries again
            self.error = str(exc)
        self.spent_s = time.perf_counter() - started


class RecountSchedule:
    """When the next full count may start: every `every_s`, and never more than `max_share` of the time."""

    def __init__(self, every_s: float = RECOUNT_EVERY_S, max_share: float = RECOUNT_MAX_SHARE) -> None:
        self.every_s, self.max_share = every_s, max_share
        self.next_at = 0.0  # server seconds: a full count is due from then on
        self.earliest_at = 0.0  # ... and never before this

    def counted(self, begun_at: float, spent_s: float) -> None:
        """A count begun at `begun_at` took `spent_s`."""
        self.next_at = begun_at + max(self.every_s, spent_s / self.max_share)
        self.earliest_at = begun_at + spent_s / self.max_share

    def due(self, t: float, resting: bool) -> bool:
        """Is a count due at `t`? Sooner when the queue is `resting` (the count will be exact), but still spaced."""
        return t >= self.earliest_at and (resting or t >= self.next_at)


class Recounter(Generic[Counts]):
    """One full count at a time, off the poll, for one collector; `what` names the queue in a failure's log line."""

    def __init__(self, what: str, every_s: float = RECOUNT_EVERY_S, max_share: float = RECOUNT_MAX_SHARE) -> None:
        self.what = what
        self.schedule = RecountSchedule(every_s, max_share)
        self.job: BackgroundCount[Counts] | None = None

    @property
    def running(self) -> bool:
        """Started and not yet taken."""
        return self.job is not None

    def start(self, db: Database, t: float | None, count: Callable[[Database], Counts]) -> None:
        """Start `count` (unless one is running) at the poll's server time `t` (None: begun before the poll knew
        it; `date` gives it before the count is taken)."""
        if self.job is None:
            self.job = BackgroundCount(db, t, count)
            self.job.start()

    def date(self, t: float) -> None:
        """The server time of the poll that started the count running, where `start` could not say it."""
        if self.job is not None and self.job.begun_at is None:
            self.job.begun_at = t

    def take(self) -> Counts | None:
        """The counts of a count that has ended (once), or None: none ended, or it failed (logged; the next one
        is scheduled all the same, and the tracked figures carry on)."""
        job = self.job
        if job is None or job.is_alive():
            return None
        self.job = None
        assert job.begun_at is not None, "date a count started before its poll's time"
        self.schedule.counted(job.begun_at, job.spent_s)
        if job.counts is None:
            log.warning("the background count of %s failed: %s", self.what, job.error)
        return job.counts

    def settle(self, timeout_s: float = 30.0) -> None:
        """Wait for a count in flight (tests, benchmarks); the next poll takes its result."""
        if self.job is not None:
            self.job.join(timeout_s)


class SpacedCount(Generic[Counts]):
    """When an untracked shape's poll counts its states again. Nothing but a count tells such a shape's depth,
    so a poll counts every row; where that is many rows (more than SPACED_PAST_JOBS: a count of 10⁶ jobs took
    0.06-0.2 s on PostgreSQL, every second: 0.8 to 8 times what the library's own count of its queues costs,
    bench/README), the count is spaced so that it takes at most `max_share` of the time, and the polls between
    show its figures as they were, every type's depth marked as an estimate (≈); arrivals, read past their
    watermark, stay exact on every poll, and so do completions where the shape keeps them (a shape that deletes a
    finished row has them counted at the next count: what arrived less what the rows grew by). A shallow queue is
    counted on every poll, as before; so is a deep one after the user changed it (`fresh`)."""

    def __init__(self, max_share: float | None = None, past_jobs: int | None = None,
                 at_most_s: float | None = None) -> None:  # fmt: skip
        # the module's figures as they are now (not when this was defined): a test may set them
        self.schedule = RecountSchedule(every_s=0.0, max_share=max_share or SPACED_MAX_SHARE)
        self.past_jobs = SPACED_PAST_JOBS if past_jobs is None else past_jobs
        self.at_most_s = SPACED_AT_MOST_S if at_most_s is None else at_most_s
        self.kept: Counts | None = None  # the last count's, while the next one is not due
        self.begun_at = 0.0  # monotonic seconds: when the poll that made the last count began

    def due(self, t: float, fresh: bool = False) -> bool:
        """Must the poll at `t` (monotonic seconds) count? `fresh`: the user just changed the queue."""
        return (fresh or self.kept is None or self.schedule.due(t, resting=False)
                or t >= self.begun_at + self.at_most_s)

    def counted(self, counts: Counts, jobs: int, begun_at: float, spent_s: float) -> None:
        """A poll begun at `begun_at` counted `jobs` in all (`counts`) in `spent_s`."""
        self.kept = counts if jobs > self.past_jobs else None
        self.schedule.counted(begun_at, spent_s)
        self.begun_at = begun_at
