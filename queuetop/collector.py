"""One poll of the queue → one frozen `Snapshot`.

A poll reads little and holds nothing: each read is one short autocommit statement through an index that
holds only live rows (pending or claimed), or only what happened since the last poll.

- depth and oldest age: per type, one seek into the pending-by-age index for the oldest, and an exact count
  that stops at DEPTH_EXACT_UP_TO. Deeper than that the depth is tracked, not counted: the jobs of a type in
  the queue table (pending or claimed) change only by arrivals and completions, which the poll reads anyway,
  so depth = queued − claimed, marked as an estimate (≈) because anything that bypasses those reads (a DELETE
  by hand, a completion committed later than the overlap) would go unseen;
- claimed and timed out: the claimed-only index (claims in flight are few);
- dead: tracked the same way, from the completions read with outcome "dead";
- a full count of every pending and dead row corrects the tracked figures: on the first poll, then every
  RECOUNT_EVERY_S, spaced out further if it is slow (at most RECOUNT_MAX_SHARE of the time), and at once when
  a capped count shows a tracked figure has drifted. A type whose oldest pending job is gone has no pending
  jobs at all, so a purge shows at the next poll;
- arrivals: identity deltas. Ids above the highest one seen, in either table, plus the few lower ids that
  were missing last time (identities commit out of order, so a gap may fill in later);
- completions, wait and processing times: a watermark on the completed table's CompletedDate. A completion
  may commit after a later one, so each poll also counts the rows of a short overlap before the watermark
  and re-reads it (dropping ids already seen) only when that count says something arrived late.

So a poll's cost grows with the number of job types and the work done since the last poll, not with the
size of the history or of the backlog. The first poll looks back one window (60 s) so rates are meaningful at
once. The full count runs as statements apart from the tracked deltas (the monitor never holds a
transaction), so a job that moves in the milliseconds between them can leave an estimate off by one until the
next count; exact figures are never affected.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import chain
from typing import Any

from queuetop.db import Database
from queuetop.history import EventWindow, LatencyWindow, drain_eta, percentiles, rate_per_s
from queuetop.layouts import NATIVE, Layout
from queuetop.shape_collector import ShapeCollector
from queuetop.snapshot import TOTAL, Snapshot, TypeStats

WINDOW_S = 60.0
SHORT_WINDOW_S = 10.0
COMPLETION_OVERLAP_S = 3.0  # how late a completion may commit and still be counted
MAX_TRACKED_GAPS = 256  # missing ids re-checked on later polls
GAP_PATIENCE_S = 30.0  # after this a missing id is taken as rolled back
DEPTH_EXACT_UP_TO = 200  # pending jobs per type counted exactly on every poll; deeper ones are tracked
RECOUNT_EVERY_S = 60.0  # a full count of depth and dead this often corrects the tracked figures ...
RECOUNT_MAX_SHARE = 0.01  # ... spaced out so it takes at most this share of the time (0.5 s → every 50 s)
EPOCH = datetime(1970, 1, 1)


def seconds(moment: datetime) -> float:
    return (moment - EPOCH).total_seconds()


def collector_for(db: Database, layout: Layout = NATIVE, *, job_types: Iterable[str] = (),
                  settings: dict[str, Any] | None = None, note: str | None = None) -> Collector | ShapeCollector:
    """The collector for a layout: the incremental one for the native schema, the state reader for any other."""
    if layout.native:
        collector = Collector(db, layout, job_types=job_types)
        collector.note = note
        return collector
    return ShapeCollector(db, layout, job_types=job_types, settings=settings, note=note)


@dataclass
class _TypeHistory:
    arrivals: EventWindow
    completions: EventWindow
    latency: LatencyWindow


class Collector:
    """Polls one queue; keeps the little state that makes the next poll cheap."""

    def __init__(self, db: Database, layout: Layout = NATIVE, *, job_types: Iterable[str] = (),
                 window_s: float = WINDOW_S) -> None:  # fmt: skip
        self.db = db
        self.layout = layout
        self.only_types = frozenset(job_types)
        self.window_s = window_s
        self._history: dict[str, _TypeHistory] = {}
        self._observed_since: float | None = None
        self._highest_id = 0
        self._gaps: dict[int, float] = {}  # id -> when first seen missing
        self._completion_mark: datetime | None = None
        self._recent_completions: dict[int, datetime] = {}
        self._queued: dict[str, int] = {}  # per type, jobs in the queue table (pending or claimed): tracked
        self._dead: dict[str, int] = {}  # per type, dead jobs: tracked
        self._next_count_at: float | None = None  # server seconds; None: count everything at the next poll
        self.note: str | None = None

    def use(self, db: Database) -> None:
        """Carry on over a new connection (after a reconnect); the watermarks stay valid."""
        self.db = db

    # -- polling -----------------------------------------------------------------------------------------
    def poll(self) -> Snapshot:
        """Read the queue once. Raises QueuetopError if the database cannot be read."""
        started = time.perf_counter()
        dialect, db, layout = self.db.dialect, self.db, self.layout
        now = db.now()
        if self._observed_since is None:
            self._bootstrap(now)
        else:
            self._read_arrivals(now)
            self._read_completions(now)
        claimed = {row[0]: (int(row[1]), int(row[2] or 0)) for row in dialect.claimed_by_type(db, layout, now)}
        if self._next_count_at is None or seconds(now) >= self._next_count_at:
            pending = self._count_everything(now, claimed)
        else:
            pending = self._read_pending_heads(claimed)
        snapshot = self._build(now, pending, claimed, dict(self._dead))
        return Snapshot(
            taken_at=now,
            target=db.target.display,
            dialect=dialect.name,
            poll_ms=(time.perf_counter() - started) * 1000,
            window_s=self.window_s,
            types=snapshot[0],
            totals=snapshot[1],
            layout=layout.name,
            figures=dict(layout.provides),
            clock=layout.clock,
            note=self.note,
            reads=dialect.reads,
        )

    def _bootstrap(self, now: datetime) -> None:
        dialect, db, layout = self.db.dialect, self.db, self.layout
        since = now - timedelta(seconds=self.window_s)
        # The highest id first: anything above it is left to the next poll's delta, so none counts twice.
        self._highest_id = dialect.max_job_id(db, layout)
        for job_id, job_type, created in dialect.arrivals_since(db, layout, since):
            if job_id <= self._highest_id:
                self._history_of(job_type).arrivals.add(seconds(dialect.decode_time(created)))
        self._completion_mark = since
        self._read_completions(now)
        self._observed_since = seconds(since)

    def _count_everything(self, now: datetime, claimed: dict) -> dict[str, tuple[int, datetime | None, bool]]:
        """Exact depth, oldest and dead for every type: reads every pending and every dead row, so it runs on the
        first poll and then rarely, resetting the tracked figures."""
        dialect, db, layout = self.db.dialect, self.db, self.layout
        started = time.perf_counter()
        pending = {row[0]: (int(row[1]), dialect.decode_time(row[2]), False)
                   for row in dialect.pending_by_type(db, layout)}  # fmt: skip
        self._dead = {row[0]: int(row[1]) for row in dialect.dead_by_type(db, layout)}
        spent = time.perf_counter() - started
        self._next_count_at = seconds(now) + max(RECOUNT_EVERY_S, spent / RECOUNT_MAX_SHARE)
        self._queued = {job_type: pending.get(job_type, (0,))[0] + claimed.get(job_type, (0,))[0]
                        for job_type in set(pending) | set(claimed)}  # fmt: skip
        return pending

    def _read_pending_heads(self, claimed: dict) -> dict[str, tuple[int, datetime | None, bool]]:
        """Depth and oldest per type at a cost bounded by the number of types: exact up to DEPTH_EXACT_UP_TO,
        tracked (queued − claimed, an estimate) above it."""
        dialect = self.db.dialect
        for job_type, (in_flight, _) in claimed.items():
            self._queued[job_type] = max(self._queued.get(job_type, 0), in_flight)
        tracked = {job_type: queued - claimed.get(job_type, (0,))[0] for job_type, queued in self._queued.items()}
        wanted = sorted(t for t in tracked if not self.only_types or t in self.only_types)
        counted = {t: tracked[t] <= DEPTH_EXACT_UP_TO for t in wanted}
        rows = dialect.pending_heads(self.db, self.layout, [(t, counted[t]) for t in wanted],
                                     DEPTH_EXACT_UP_TO + 1) if wanted else []  # fmt: skip
        pending: dict[str, tuple[int, datetime | None, bool]] = {}
        for job_type, depth_read, oldest_read in rows:
            oldest, in_flight = dialect.decode_time(oldest_read), claimed.get(job_type, (0,))[0]
            if oldest is None or (counted[job_type] and int(depth_read) <= DEPTH_EXACT_UP_TO):
                depth, estimate = (0 if oldest is None else int(depth_read)), False  # exact: nothing, or counted
                self._queued[job_type] = depth + in_flight
            elif counted[job_type]:  # more than the tracked figure said: it drifted; count everything next poll
                depth, estimate = DEPTH_EXACT_UP_TO + 1, True
                self._queued[job_type] = depth + in_flight
                self._next_count_at = None
            else:
                depth, estimate = tracked[job_type], True
            if depth:
                pending[job_type] = (depth, oldest, estimate)
        self._queued = {t: queued for t, queued in self._queued.items() if queued > 0 or t in claimed}
        return pending

    def _read_arrivals(self, now: datetime) -> None:
        dialect = self.db.dialect
        rows = dialect.arrivals_after(self.db, self.layout, self._highest_id, sorted(self._gaps))
        seen: set[int] = set()
        for job_id, job_type, created in rows:
            if job_id in seen or (job_id <= self._highest_id and job_id not in self._gaps):
                continue  # a job may sit in both tables for an instant while it moves
            seen.add(job_id)
            self._gaps.pop(job_id, None)
            self._history_of(job_type).arrivals.add(seconds(dialect.decode_time(created)))
            self._queued[job_type] = self._queued.get(job_type, 0) + 1
        above = sorted(i for i in seen if i > self._highest_id)
        if above:
            missing = set(range(self._highest_id + 1, above[-1])) - seen
            if len(missing) + len(self._gaps) <= MAX_TRACKED_GAPS:  # an identity jump is not a gap
                stamp = seconds(now)
                self._gaps.update(dict.fromkeys(missing, stamp))
            self._highest_id = above[-1]
        expired = seconds(now) - GAP_PATIENCE_S
        self._gaps = {i: t for i, t in self._gaps.items() if t > expired}

    def _read_completions(self, now: datetime) -> None:
        dialect = self.db.dialect
        assert self._completion_mark is not None
        mark = self._completion_mark
        overlap_start = mark - timedelta(seconds=COMPLETION_OVERLAP_S)
        # Re-read the overlap only when a completion stamped in it committed after we last looked: counting
        # it is one index range scan; fetching it every poll would cost seconds' worth of rows.
        seen = sum(1 for t in self._recent_completions.values() if overlap_start < t <= mark)
        late = dialect.count_completed_between(self.db, self.layout, overlap_start, mark) != seen
        since = overlap_start if late else mark
        for job_id, job_type, created, claimed, completed, outcome in dialect.completions_since(
            self.db, self.layout, since
        ):
            if job_id in self._recent_completions:
                continue
            created, claimed, completed = (dialect.decode_time(v) for v in (created, claimed, completed))
            self._recent_completions[job_id] = completed
            mark = max(mark, completed)
            self._queued[job_type] = self._queued.get(job_type, 0) - 1
            if outcome == "dead":
                self._dead[job_type] = self._dead.get(job_type, 0) + 1
            history = self._history_of(job_type)
            history.completions.add(seconds(completed))
            if outcome != "dead":  # a dead job's "processing" is its timeout, not work
                wait = (claimed - created).total_seconds() if claimed and created else None
                processing = (completed - claimed).total_seconds() if claimed else None
                history.latency.add(seconds(completed), wait, processing)
        self._completion_mark = min(mark, now)
        forget_before = self._completion_mark - timedelta(seconds=COMPLETION_OVERLAP_S)
        self._recent_completions = {i: t for i, t in self._recent_completions.items() if t > forget_before}

    def _history_of(self, job_type: str) -> _TypeHistory:
        history = self._history.get(job_type)
        if history is None:
            history = _TypeHistory(EventWindow(self.window_s), EventWindow(self.window_s),
                                   LatencyWindow(self.window_s))  # fmt: skip
            self._history[job_type] = history
        return history

    # -- turning readings into figures -------------------------------------------------------------------
    def _build(
        self, now: datetime, pending: dict, claimed: dict, dead: dict
    ) -> tuple[tuple[TypeStats, ...], TypeStats]:
        t = seconds(now)
        for history in self._history.values():
            history.arrivals.prune(t)
            history.completions.prune(t)
            history.latency.prune(t)
        # Types with nothing left anywhere drop out of the history.
        for job_type in [jt for jt, h in self._history.items() if not (len(h.arrivals) or len(h.completions))]:
            if job_type not in pending and job_type not in claimed:
                del self._history[job_type]
        names = set(pending) | set(claimed) | set(dead) | set(self._history)
        if self.only_types:
            names &= self.only_types
        rows = []
        for job_type in sorted(names):
            depth, oldest, estimate = pending.get(job_type, (0, None, False))
            in_flight, timed_out = claimed.get(job_type, (0, 0))
            history = self._history.get(job_type)
            rows.append(self._stats(job_type, t, depth, oldest and (now - oldest).total_seconds(), in_flight,
                                    timed_out, dead.get(job_type, 0), [history] if history else [], estimate))
        ages = [row.oldest_age_s for row in rows if row.oldest_age_s is not None]
        totals = self._stats(TOTAL, t, sum(r.depth for r in rows), max(ages) if ages else None,
                             sum(r.claimed for r in rows), sum(r.timed_out for r in rows), sum(r.dead for r in rows),
                             [self._history[r.job_type] for r in rows if r.job_type in self._history],
                             any(r.depth_is_estimate for r in rows))
        return tuple(rows), totals

    def _stats(self, job_type: str, t: float, depth: int, oldest_age_s: float | None, claimed: int,
               timed_out: int, dead: int, histories: list[_TypeHistory],
               depth_is_estimate: bool = False) -> TypeStats:  # fmt: skip
        observed = self._observed_since if self._observed_since is not None else t

        def rate(kind: str, span: float) -> float | None:
            if not histories:
                return 0.0 if t > observed else None
            values = [rate_per_s(getattr(h, kind), t, span, observed) for h in histories]
            return None if any(v is None for v in values) else sum(values)

        # Each window is sorted already: sorting them together only merges the runs.
        wait_p = percentiles(chain.from_iterable(h.latency.waits() for h in histories))
        work_p = percentiles(chain.from_iterable(h.latency.processing() for h in histories))
        arrivals_60, completions_60 = rate("arrivals", self.window_s), rate("completions", self.window_s)
        drain, eta = drain_eta(depth, arrivals_60, completions_60)
        return TypeStats(
            job_type=job_type, depth=depth, oldest_age_s=oldest_age_s, claimed=claimed, timed_out=timed_out,
            dead=dead, arrivals_10s_per_s=rate("arrivals", SHORT_WINDOW_S), arrivals_60s_per_s=arrivals_60,
            completions_10s_per_s=rate("completions", SHORT_WINDOW_S), completions_60s_per_s=completions_60,
            wait_p50_s=wait_p[0], wait_p95_s=wait_p[1], wait_p99_s=wait_p[2],
            processing_p50_s=work_p[0], processing_p95_s=work_p[1], processing_p99_s=work_p[2],
            drain=drain, drain_eta_s=eta, depth_is_estimate=depth_is_estimate,
            arrivals_total=sum(h.arrivals.total for h in histories),
            completions_total=sum(h.completions.total for h in histories),
        )  # fmt: skip
