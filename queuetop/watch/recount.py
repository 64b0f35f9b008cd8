"""A full count of a queue, off the poll: one statement on a connection and a thread of its own, so that counting
a deep backlog never delays the figures a poll shows. Both collectors track their depth from arrivals and
completions between such counts, and correct it with each one (`Recounter`: one count at a time, and when the
next one is due).
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

Counts = TypeVar("Counts")

log = logging.getLogger("queuetop")


class BackgroundCount(threading.Thread, Generic[Counts]):
    """Runs `count` once on a new connection to the same target; `counts` (or `error`) and `spent_s` are set
    when the thread has ended. `begun_at` is the poll's server time when it was started."""

    def __init__(self, db: Database, begun_at: float, count: Callable[[Database], Counts]) -> None:
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

    def start(self, db: Database, t: float, count: Callable[[Database], Counts]) -> None:
        """Start `count` (unless one is running) at the poll's server time `t`."""
        if self.job is None:
            self.job = BackgroundCount(db, t, count)
            self.job.start()

    def take(self) -> Counts | None:
        """The counts of a count that has ended (once), or None: none ended, or it failed (logged; the next one
        is scheduled all the same, and the tracked figures carry on)."""
        job = self.job
        if job is None or job.is_alive():
            return None
        self.job = None
        self.schedule.counted(job.begun_at, job.spent_s)
        if job.counts is None:
            log.warning("the background count of %s failed: %s", self.what, job.error)
        return job.counts

    def settle(self, timeout_s: float = 30.0) -> None:
        """Wait for a count in flight (tests, benchmarks); the next poll takes its result."""
        if self.job is not None:
            self.job.join(timeout_s)
