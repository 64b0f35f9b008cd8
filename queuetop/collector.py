"""One poll of the queue → one frozen `Snapshot`.

A poll reads little and holds nothing: each read is one short autocommit statement through an index that
holds only live rows (pending or claimed), or only what happened since the last poll — and no statement fetches
more than a fixed number of rows, however fast the queue moves (`Reads` counts them):

- depth and oldest age: per type, one seek into the pending-by-age index for the oldest, and an exact count
  that stops at DEPTH_EXACT_UP_TO. Deeper than that the depth is tracked, not counted: the jobs of a type in
  the queue table (pending or claimed) change only by arrivals and completions, which the poll reads anyway,
  so depth = queued − claimed, marked as an estimate (≈) because anything that bypasses those reads (a DELETE
  by hand, a completion committed later than the overlap) would go unseen;
- claimed and timed out: the claimed-only index (claims in flight are few);
- dead: tracked the same way, from the completions counted with outcome "dead";
- a full count of every pending and dead row corrects the tracked figures: on the first poll (so a one-shot
  `stats` is exact), then in the background, on a connection and a thread of its own, so it never delays the
  figures of a poll: every RECOUNT_EVERY_S, spaced out further if it is slow (at most RECOUNT_MAX_SHARE of the
  time), soon after a capped count shows a tracked figure has drifted, and once when the queue comes to rest
  (so the depth is exact again a poll or two after a load test stops). Its result is taken by the next poll,
  with what that poll saw move since the count began. A type whose oldest pending job is gone has no pending
  jobs at all, so a purge shows at the next poll;
- arrivals: identity deltas as counts per type and second (`watermarks.IdentityWatch`): ids above the highest
  one seen a few seconds ago are counted again, since identities commit out of order;
- completions: counts per type and second past a watermark on CompletedDate, with a re-counted overlap for
  late commits, and wait and processing percentiles from a bounded, weighted sample of the new completions
  (`watermarks.CompletionWatch`; `latency_sample` and `latency_is_sample` in the JSON).

So a poll's cost grows with the number of job types and the seconds since the last poll, not with the
throughput, the size of the history or of the backlog. The first poll looks back one window (60 s) so rates
are meaningful at once.

Round trips: after the first poll, the arrivals, the completion counts, the claims and the pending heads are
one statement (`Statements.native_poll`: one snapshot of both tables), and the latency sample, which needs the
counts, a second one. Under a load each statement waits for a slice of a busy server whatever it reads (on two
saturated cores, ~18 ms each), so the statements, not the rows, were a poll's time. The heads' question (count
this type, or only seek its oldest?) is asked from the figures of the last poll; a type it asked wrongly about
(new, or now shallow enough to count) is read again after it, which a steady load never needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from queuetop.db import Database
from queuetop.db.dialects.base import HEADS_PER_STATEMENT
from queuetop.history import EventWindow, LatencyWindow, drain_eta, rate_per_s
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.sql import Statements
from queuetop.recount import DEPTH_EXACT_UP_TO, Recounter
from queuetop.shape_collector import ShapeCollector
from queuetop.snapshot import TOTAL, Snapshot, TypeStats
from queuetop.watermarks import CompletionWatch, Counted, IdentityWatch, Reads, seconds

WINDOW_S = 60.0
SHORT_WINDOW_S = 10.0


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


def _native_recount(layout: Layout, marks: tuple[int, datetime]) -> Callable[[Database], dict]:
    """The native full count: pending, claimed and dead jobs per type in one statement, which also counts what
    had moved past the collector's marks (`after_id`, `after_completed`) at the moment it was taken, so the next
    poll can apply it as of that moment. Returns part → type → (jobs, dead, oldest)."""
    def count(db: Database) -> dict[str, dict[str, tuple[int, int, datetime | None]]]:
        counts: dict[str, dict[str, tuple[int, int, datetime | None]]] = {
            part: {} for part in ("pending", "claimed", "dead", "arrived", "completed")}
        for part, job_type, jobs, dead, oldest in db.fetchall(*Statements(db.dialect, layout).native_recount(*marks)):
            before = counts[part].get(job_type, (0, 0, None))
            counts[part][job_type] = (before[0] + int(jobs), before[1] + int(dead or 0), db.dialect.decode_time(oldest))
        return counts
    return count


class Collector:
    """Polls one queue; keeps the little state that makes the next poll cheap."""

    def __init__(self, db: Database, layout: Layout = NATIVE, *, job_types: Iterable[str] = (),
                 window_s: float = WINDOW_S) -> None:  # fmt: skip
        self.db = db
        self.layout = layout
        self.only_types = frozenset(job_types)
        self.window_s = window_s
        self.statements = Statements(db.dialect, layout)
        self._history: dict[str, _TypeHistory] = {}
        self._all_latency = LatencyWindow(window_s)  # every shown type's samples together, for the totals
        self._observed_since: float | None = None
        self._identities = IdentityWatch()
        self._completions = CompletionWatch(window_s)
        self._queued: dict[str, int] = {}  # per type, jobs in the queue table (pending or claimed): tracked
        self._dead: dict[str, int] = {}  # per type, dead jobs: tracked
        self._claimed_before: dict[str, int] = {}
        self._moved: dict[str, int] = {}  # per type, arrivals − completions since the running recount began
        self._moved_dead: dict[str, int] = {}  # per type, dead jobs since then
        self._counted_at_rest: set[str] = set()  # types that have not moved since their last full count
        self._just_counted: set[str] = set()  # ... and that count was taken by this poll: its depth is exact
        self._recount: Recounter[dict] = Recounter("the queue")
        self.reads = Reads()  # what the last poll fetched
        self.note: str | None = None

    def use(self, db: Database) -> None:
        """Carry on over a new connection (after a reconnect); the watermarks stay valid."""
        self.db = db
        self.statements = Statements(db.dialect, self.layout)

    def settle(self, timeout_s: float = 30.0) -> None:
        """Wait for a background full count in flight (tests, benchmarks); the next poll takes its result."""
        self._recount.settle(timeout_s)

    # -- polling -----------------------------------------------------------------------------------------
    def poll(self) -> Snapshot:
        """Read the queue once. Raises QueuetopError if the database cannot be read."""
        started = time.perf_counter()
        dialect, db, layout = self.db.dialect, self.db, self.layout
        self.reads = reads = Reads()
        now = db.now()
        moved: set[str] = set()
        first = self._observed_since is None
        if first:
            self._bootstrap(now)
            self._completions.read(db, self.statements, now, reads, str, self._completed(moved, True), self._sampled)
            claimed = {row[0]: (int(row[1]), int(row[2] or 0))
                       for row in reads.count(dialect.claimed_by_type(db, layout, now))}  # fmt: skip
        else:
            claimed, heads, asked = self._read_at_once(now, moved)
        moved |= {t for t in set(claimed) | set(self._claimed_before)
                  if claimed.get(t, (0,))[0] != self._claimed_before.get(t, 0)}  # fmt: skip
        self._claimed_before = {t: c for t, (c, _) in claimed.items()}
        self._counted_at_rest -= moved
        if first:
            pending = self._count_everything(now, claimed)
        else:
            self._just_counted = set()
            self._take_recount(claimed)
            pending, drifted = self._read_pending_heads(claimed, heads, asked)
            t = seconds(now)
            resting = not moved and any(p[2] and t not in self._counted_at_rest for t, p in pending.items())
            # Drift is put right at once (one count at a time, and never on the poll's time); the rest is spaced.
            if drifted or self._recount.schedule.due(t, resting):
                self._start_recount(t)
        types, totals = self._build(now, pending, claimed, dict(self._dead))
        return Snapshot(
            taken_at=now,
            target=db.target.display,
            dialect=dialect.name,
            poll_ms=(time.perf_counter() - started) * 1000,
            window_s=self.window_s,
            types=types,
            totals=totals,
            layout=layout.name,
            figures=dict(layout.provides),
            clock=layout.clock,
            note=self.note,
            reads=dialect.reads,
        )

    def _bootstrap(self, now: datetime) -> None:
        db, reads = self.db, self.reads
        since = now - timedelta(seconds=self.window_s)
        # The highest id first: anything above it is left to the next poll's delta, so none counts twice.
        highest = self.db.dialect.max_job_id(db, self.layout)
        reads.statements += 1
        self._identities.begin(highest)
        for job_type, second, jobs, _, _ in reads.fetch(db, self.statements.arrival_counts_since(since, highest)):
            at = db.dialect.decode_time(second)
            if at is not None:
                self._history_of(job_type).arrivals.add(seconds(at) + 0.5, int(jobs))
        self._observed_since = seconds(since)

    def _arrived(self, moved: set[str]) -> Counted:
        def arrived(job_type: str, at: float, jobs: int, _dead: int) -> None:
            self._history_of(job_type).arrivals.add(at, jobs)
            self._queued[job_type] = self._queued.get(job_type, 0) + jobs
            self._moved[job_type] = self._moved.get(job_type, 0) + jobs
            moved.add(job_type)
        return arrived

    def _completed(self, moved: set[str], first: bool) -> Counted:
        def completed(job_type: str, at: float, jobs: int, dead: int) -> None:
            self._history_of(job_type).completions.add(at, jobs)
            if first:  # the first poll's full count already holds these
                return
            self._queued[job_type] = self._queued.get(job_type, 0) - jobs
            self._dead[job_type] = self._dead.get(job_type, 0) + dead
            self._moved[job_type] = self._moved.get(job_type, 0) - jobs
            self._moved_dead[job_type] = self._moved_dead.get(job_type, 0) + dead
            moved.add(job_type)
        return completed

    def _sampled(self, job_type: str, at: float, wait: float | None, processing: float | None, weight: float) -> None:
        self._history_of(job_type).latency.add(at, wait, processing, weight)
        if not self.only_types or job_type in self.only_types:
            self._all_latency.add(at, wait, processing, weight)

    def _count_everything(self, now: datetime, claimed: dict) -> dict[str, tuple[int, datetime | None, bool]]:
        """Exact depth, oldest and dead for every type, on the first poll: reads every pending and dead row."""
        dialect, db, layout, reads = self.db.dialect, self.db, self.layout, self.reads
        started = time.perf_counter()
        pending = {row[0]: (int(row[1]), dialect.decode_time(row[2]), False)
                   for row in reads.count(dialect.pending_by_type(db, layout))}  # fmt: skip
        self._dead = {row[0]: int(row[1]) for row in reads.count(dialect.dead_by_type(db, layout))}
        self._queued = {job_type: pending.get(job_type, (0,))[0] + claimed.get(job_type, (0,))[0]
                        for job_type in set(pending) | set(claimed)}  # fmt: skip
        self._counted_at_rest = set(self._queued) | set(self._dead)
        self._recount.schedule.counted(seconds(now), time.perf_counter() - started)
        return pending

    def _start_recount(self, t: float) -> None:
        if self._recount.running:
            return
        self._moved, self._moved_dead = {}, {}
        assert self._completions.mark is not None
        self._recount.start(self.db, t, _native_recount(self.layout, (self._identities.highest,
                                                                      self._completions.mark)))

    def _take_recount(self, claimed: dict) -> None:
        """Put right the tracked figures with a finished full count and what moved since it began."""
        counts = self._recount.take()
        if counts is None:
            return

        def figure(part: str, job_type: str, which: int = 0) -> int:
            return counts[part].get(job_type, (0, 0, None))[which]

        # What moved since the marks and before the count is in the count already; only the rest is added.
        types = set().union(*(set(c) for c in counts.values()), self._moved, claimed)
        self._queued = {t: figure("pending", t) + figure("claimed", t) + self._moved.get(t, 0)
                        - figure("arrived", t) + figure("completed", t) for t in types}  # fmt: skip
        self._dead = {t: figure("dead", t) + self._moved_dead.get(t, 0) - figure("completed", t, 1)
                      for t in set(counts["dead"]) | set(self._moved_dead)}  # fmt: skip
        # A type that moved since the count began may be off by what moved in between: count it again at rest.
        self._counted_at_rest = {t for t in types | set(counts["dead"]) if t not in self._moved}
        self._just_counted = set(self._counted_at_rest)

    def _read_at_once(self, now: datetime, moved: set[str]) -> tuple[dict, list, dict[str, bool]]:
        """Arrivals, completions, claims and the pending heads in one statement (`Statements.native_poll`), then
        the latency sample of the new completions (which needs their counts): two round trips. Returns the claims
        per type, the heads read, and what was asked of them (type → count it?), as the tracked figures stood
        before this poll's counts."""
        db, decode = self.db, self.db.dialect.decode_time
        after, settle = self._identities.bounds(now)
        since = self._completions.prepare(now)
        asked = self._heads_request()
        rows = self.reads.fetch(db, self.statements.native_poll(after, settle, since, now, asked,
                                                                DEPTH_EXACT_UP_TO + 1))  # fmt: skip
        parts: dict[str, list[tuple[Any, ...]]] = {"completed": [], "arrived": [], "claimed": [], "pending": []}
        for part, *row in rows:
            parts[part.strip()].append(tuple(row))
        self._identities.take([(t, second, n1, n2, n3) for t, second, _, n1, n2, n3 in parts["arrived"]], now,
                              decode, str, self._arrived(moved))  # fmt: skip
        new = self._completions.take([(t, second, n1, n2, at) for t, second, at, n1, n2, _ in parts["completed"]],
                                     now, decode, str, self._completed(moved, False))  # fmt: skip
        self._completions.sample(db, self.statements, self.reads, str, self._sampled, new)
        claimed = {t: (int(n1), int(n2 or 0)) for t, _, _, n1, n2, _ in parts["claimed"]}
        heads = [(t, n1, oldest) for t, _, oldest, n1, _, _ in parts["pending"]]
        return claimed, heads, dict(asked)

    def _tracked(self, claimed: dict) -> dict[str, int]:
        """Per type, pending jobs as tracked: in the queue table less claimed."""
        for job_type, (in_flight, _) in claimed.items():
            self._queued[job_type] = max(self._queued.get(job_type, 0), in_flight)
        return {job_type: queued - claimed.get(job_type, (0,))[0] for job_type, queued in self._queued.items()}

    def _heads_request(self) -> list[tuple[str, bool]]:
        """The types whose head the poll's statement reads, and whether to count each (tracked ≤ DEPTH_EXACT_UP_TO
        as of the last poll; at most HEADS_PER_STATEMENT types: any others are read after it)."""
        tracked = {job_type: queued - min(queued, self._claimed_before.get(job_type, 0))
                   for job_type, queued in self._queued.items()}  # fmt: skip
        wanted = sorted(t for t in tracked if not self.only_types or t in self.only_types)
        return [(t, tracked[t] <= DEPTH_EXACT_UP_TO) for t in wanted[:HEADS_PER_STATEMENT]]

    def _read_pending_heads(self, claimed: dict, heads: list, asked: dict[str, bool]
                            ) -> tuple[dict[str, tuple[int, datetime | None, bool]], bool]:  # fmt: skip
        """Depth and oldest per type at a cost bounded by the number of types: exact up to DEPTH_EXACT_UP_TO,
        tracked (queued − claimed, an estimate) above it. Also whether a capped count found more than the tracked
        figure said (it drifted). `heads` were read with the poll's other counts, as `asked` (decided before
        them); a type asked about wrongly by what this poll counted (new, or now shallow enough to count) is
        read again here."""
        dialect = self.db.dialect
        tracked = self._tracked(claimed)
        wanted = sorted(t for t in tracked if not self.only_types or t in self.only_types)
        counted = {t: tracked[t] <= DEPTH_EXACT_UP_TO for t in wanted}
        again = [(t, counted[t]) for t in wanted if t not in asked or (counted[t] and not asked[t])]
        asked = {**asked, **dict(again)}
        redone = {t for t, _ in again}
        rows = [row for row in heads if row[0] in counted and row[0] not in redone]
        if again:
            rows += self.reads.count(dialect.pending_heads(self.db, self.layout, again, DEPTH_EXACT_UP_TO + 1))
        pending: dict[str, tuple[int, datetime | None, bool]] = {}
        drifted = False
        for job_type, depth_read, oldest_read in rows:
            oldest, in_flight = dialect.decode_time(oldest_read), claimed.get(job_type, (0,))[0]
            if oldest is None or (asked[job_type] and int(depth_read) <= DEPTH_EXACT_UP_TO):
                depth, estimate = (0 if oldest is None else int(depth_read)), False  # exact: nothing, or counted
                self._queued[job_type] = depth + in_flight
            elif counted[job_type]:  # more than the tracked figure said: it drifted; count everything soon
                depth, estimate = DEPTH_EXACT_UP_TO + 1, True
                self._queued[job_type] = depth + in_flight
                self._counted_at_rest.discard(job_type)
                drifted = True
            else:  # not counted, or past the cap where the tracked figure says it is that deep now: tracked
                depth, estimate = tracked[job_type], job_type not in self._just_counted
            if depth:
                pending[job_type] = (depth, oldest, estimate)
        self._queued = {t: queued for t, queued in self._queued.items() if queued > 0 or t in claimed}
        return pending, drifted

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
        self._all_latency.prune(t)
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
                                    timed_out, dead.get(job_type, 0), [history] if history else [],
                                    history.latency if history else None, estimate))  # fmt: skip
        ages = [row.oldest_age_s for row in rows if row.oldest_age_s is not None]
        totals = self._stats(TOTAL, t, sum(r.depth for r in rows), max(ages) if ages else None,
                             sum(r.claimed for r in rows), sum(r.timed_out for r in rows), sum(r.dead for r in rows),
                             [self._history[r.job_type] for r in rows if r.job_type in self._history],
                             self._all_latency, any(r.depth_is_estimate for r in rows))  # fmt: skip
        return tuple(rows), totals

    def _stats(self, job_type: str, t: float, depth: int, oldest_age_s: float | None, claimed: int,
               timed_out: int, dead: int, histories: list[_TypeHistory], latency: LatencyWindow | None,
               depth_is_estimate: bool = False) -> TypeStats:  # fmt: skip
        observed = self._observed_since if self._observed_since is not None else t

        def rate(kind: str, span: float) -> float | None:
            if not histories:
                return 0.0 if t > observed else None
            values = [rate_per_s(getattr(h, kind), t, span, observed) for h in histories]
            return None if any(v is None for v in values) else sum(values)

        wait_p = latency.wait_percentiles() if latency else (None, None, None)
        work_p = latency.processing_percentiles() if latency else (None, None, None)
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
            latency_sample=len(latency) if latency else None, latency_is_sample=bool(latency and latency.sampled),
        )  # fmt: skip
