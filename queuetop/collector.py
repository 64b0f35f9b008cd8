"""One poll of the queue → one frozen `Snapshot`.

A poll reads little and holds nothing: each read is one short autocommit statement through an index that
holds only live rows (pending or claimed), or only what happened since the last poll.

- depth and oldest age: the pending-only index, grouped by type;
- claimed and timed out: the claimed-only index (claims in flight are few);
- dead: the dead-only index on the completed table;
- arrivals: identity deltas. Ids above the highest one seen, in either table, plus the few lower ids that
  were missing last time (identities commit out of order, so a gap may fill in later);
- completions, wait and processing times: a watermark on the completed table's CompletedDate. A completion
  may commit after a later one, so each poll also counts the rows of a short overlap before the watermark
  and re-reads it (dropping ids already seen) only when that count says something arrived late.

So a poll's cost grows with the number of job types and the work done since the last poll, not with the
size of the history. The first poll looks back one window (60 s) so rates are meaningful at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from queuetop.db import Database
from queuetop.history import EventWindow, LatencyWindow, drain_eta, percentiles, rate_per_s
from queuetop.layouts import NATIVE, Layout
from queuetop.snapshot import TOTAL, Snapshot, TypeStats

WINDOW_S = 60.0
SHORT_WINDOW_S = 10.0
COMPLETION_OVERLAP_S = 3.0  # how late a completion may commit and still be counted
MAX_TRACKED_GAPS = 256  # missing ids re-checked on later polls
GAP_PATIENCE_S = 30.0  # after this a missing id is taken as rolled back
EPOCH = datetime(1970, 1, 1)


def seconds(moment: datetime) -> float:
    return (moment - EPOCH).total_seconds()


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
        pending = {row[0]: (int(row[1]), dialect.decode_time(row[2])) for row in dialect.pending_by_type(db, layout)}
        claimed = {row[0]: (int(row[1]), int(row[2] or 0)) for row in dialect.claimed_by_type(db, layout, now)}
        dead = {row[0]: int(row[1]) for row in dialect.dead_by_type(db, layout)}
        snapshot = self._build(now, pending, claimed, dead)
        return Snapshot(
            taken_at=now,
            target=db.target.display,
            dialect=dialect.name,
            poll_ms=(time.perf_counter() - started) * 1000,
            window_s=self.window_s,
            types=snapshot[0],
            totals=snapshot[1],
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
            depth, oldest = pending.get(job_type, (0, None))
            in_flight, timed_out = claimed.get(job_type, (0, 0))
            history = self._history.get(job_type)
            rows.append(self._stats(job_type, t, depth, oldest and (now - oldest).total_seconds(), in_flight,
                                    timed_out, dead.get(job_type, 0), [history] if history else []))
        ages = [row.oldest_age_s for row in rows if row.oldest_age_s is not None]
        totals = self._stats(TOTAL, t, sum(r.depth for r in rows), max(ages) if ages else None,
                             sum(r.claimed for r in rows), sum(r.timed_out for r in rows), sum(r.dead for r in rows),
                             [self._history[r.job_type] for r in rows if r.job_type in self._history])
        return tuple(rows), totals

    def _stats(self, job_type: str, t: float, depth: int, oldest_age_s: float | None, claimed: int,
               timed_out: int, dead: int, histories: list[_TypeHistory]) -> TypeStats:  # fmt: skip
        observed = self._observed_since if self._observed_since is not None else t

        def rate(kind: str, span: float) -> float | None:
            if not histories:
                return 0.0 if t > observed else None
            values = [rate_per_s(getattr(h, kind), t, span, observed) for h in histories]
            return None if any(v is None for v in values) else sum(values)

        waits = [w for h in histories for w in h.latency.waits()]
        work = [p for h in histories for p in h.latency.processing()]
        wait_p = percentiles(waits)
        work_p = percentiles(work)
        arrivals_60, completions_60 = rate("arrivals", self.window_s), rate("completions", self.window_s)
        drain, eta = drain_eta(depth, arrivals_60, completions_60)
        return TypeStats(
            job_type=job_type, depth=depth, oldest_age_s=oldest_age_s, claimed=claimed, timed_out=timed_out,
            dead=dead, arrivals_10s_per_s=rate("arrivals", SHORT_WINDOW_S), arrivals_60s_per_s=arrivals_60,
            completions_10s_per_s=rate("completions", SHORT_WINDOW_S), completions_60s_per_s=completions_60,
            wait_p50_s=wait_p[0], wait_p95_s=wait_p[1], wait_p99_s=wait_p[2],
            processing_p50_s=work_p[0], processing_p95_s=work_p[1], processing_p99_s=work_p[2],
            drain=drain, drain_eta_s=eta,
        )  # fmt: skip
