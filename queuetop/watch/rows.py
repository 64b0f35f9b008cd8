"""The figures of a poll: from the counts its statements read and each job type's event windows, one row per type
shown, the totals, and past a watcher's `--max-types` one `(other)` row for the rest (`fold.py`).

A poll makes a row for every type it shows, so this is the part of a poll that grows with the types: what is the
same for every type (the rates' cutoffs and the time observed, the states the shape has) is worked out once a
poll, and each row is made with `TypeStats.of`. `TypeRows` is that part of `ShapeCollector`, whose state it reads.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from datetime import datetime
from operator import itemgetter
from typing import TYPE_CHECKING

from queuetop.core.history import EventWindow, LatencyWindow, Sample, drain_eta
from queuetop.watch.fold import InNameOrder, busiest
from queuetop.watch.snapshot import OTHER, TOTAL, TypeStats
from queuetop.watch.watermarks import seconds

if TYPE_CHECKING:
    from queuetop.layouts import Layout
    from queuetop.watch.tracking import Counts
    from queuetop.watch.unaccounted import InNoState

SHORT_WINDOW_S = 10.0  # the short rate's span; the long one is the whole window


class TypeHistory:
    """One job type's events over the window: arrivals, completions, and the latencies of a sample."""

    def __init__(self, window_s: float, feeds: TypeHistory | None = None) -> None:
        """`feeds`: every shown type's events together (the totals'), which each event and each latency added here
        is added to too; None for a type not shown (`--type` chose others)."""
        self.feeds = feeds
        self.arrivals = EventWindow(window_s, feeds.arrivals if feeds is not None else None)
        self.completions = EventWindow(window_s, feeds.completions if feeds is not None else None)
        self.latency = LatencyWindow(window_s)
        self.due: float | None = None  # its earliest event's or sample's moment, as `TypeRows._expiring` holds it

    def sample(self, samples: list[Sample]) -> None:
        """Completions' waits and processing times (`LatencyWindow.samples`), here and in `feeds`."""
        self.latency.add_all(samples)
        if self.feeds is not None:
            self.feeds.latency.add_all(samples)

    def empty(self) -> bool:
        return not (len(self.arrivals) or len(self.completions))

    def prune(self, now: float) -> None:
        """Drop what has left the window at `now`."""
        self.arrivals.prune(now)
        self.completions.prune(now)
        self.latency.prune(now)

    def earliest(self) -> float | None:
        """The moment of its earliest event or sample; None when it holds none."""
        moments = [m for m in (self.arrivals.first(), self.completions.first(), self.latency.first()) if m is not None]
        return min(moments) if moments else None


class TypeRows:
    """The rows of a poll (see the module); the collector's state it reads is set in ShapeCollector.__init__."""

    layout: Layout
    window_s: float
    only_types: frozenset[str]
    max_types: int | None
    pinned: frozenset[str]
    looking_for: str  # the dashboard's filter: past max_types, the types whose name holds it are shown too
    _history: dict[str, TypeHistory]
    _expiring: list[tuple[float, str]]  # a heap: (a history's `due`, its type), the earliest first
    _unseen: TypeHistory
    _all: TypeHistory
    _forgotten: list[int]  # arrivals and completions of the shown types dropped from `_history`: not the totals'
    _in_no_state: InNoState
    _observed: dict[str, float]
    _provides: dict[str, bool]
    _estimated: set[str]
    _shown: InNameOrder  # the types a poll shows, by name
    _vanished: object | None

    @property
    def untyped_name(self) -> str:
        raise NotImplementedError

    def _build(self, now: datetime, counts: Counts) -> tuple[tuple[TypeStats, ...], TypeStats, TypeStats | None, int]:
        """The rows of the types shown, the totals, and past `max_types` the `(other)` row and how many types it
        stands for (`fold.py`)."""
        t = seconds(now)
        self._prune(t)
        live = set().union(*counts.values(), self._in_no_state.counts or ())
        for job_type in [jt for jt, h in self._history.items() if jt not in live and h.empty()]:
            gone = self._history.pop(job_type)
            if gone.feeds is not None:  # a shown type's: its counters leave the totals' with it
                self._forgotten[0] += gone.arrivals.total
                self._forgotten[1] += gone.completions.total
        names = set(self._history)  # the types with events in the window, or a job in any state (or in none)
        for by_type in counts.values():
            names.update(jt for jt, (count, _) in by_type.items() if count)
        names.update(jt for jt, rows in (self._in_no_state.counts or {}).items() if rows)
        if not self.layout.has_job_type:
            names = {self.untyped_name}
        if self.only_types:
            names &= self.only_types
        in_order = self._shown.of(names)
        spans = self._spans(t)
        quiet = tuple(None if span is None else 0.0 for span in spans)  # the rates of a type with no events
        held_in = _held_in(counts)
        no_state, estimated = self._in_no_state.counts, self._estimated
        named, folded = (in_order, []) if self.max_types is None or len(names) <= self.max_types \
            else busiest(in_order, counts, self._history, self.max_types, self.pinned, self.looking_for)
        rows = [self._stats(jt, now, counts, held_in, self._history.get(jt), spans, quiet,
                            None if no_state is None else no_state.get(jt, 0), jt in estimated) for jt in named]
        # Every shown type's events are in one window too (`_all`): the totals' rates are read once, not summed
        # over every type's windows (as much work as all the types' rows together), and the folded types' are
        # theirs less the named rows'.
        # The same for their counters: every event `_all` was fed, less those of the types dropped since.
        every = _rates([self._all], spans)
        counters = (self._all.arrivals.total - self._forgotten[0], self._all.completions.total - self._forgotten[1])
        other = None
        if folded:
            shown = [(r.arrivals_10s_per_s, r.arrivals_60s_per_s, r.completions_10s_per_s, r.completions_60s_per_s)
                     for r in rows]  # fmt: skip
            rest = [None if part is None else _at_least_0(part - sum(r[n] or 0.0 for r in shown))
                    for n, part in enumerate(every)]  # fmt: skip
            other = self._merged(OTHER, set(folded), now, counts, rest,
                                 (counters[0] - sum(r.arrivals_total or 0 for r in rows),
                                  counters[1] - sum(r.completions_total or 0 for r in rows)), None)  # fmt: skip
        # the jobs seen only in passing (`_vanished`) are the totals' too, of no type
        unseen = [self._unseen] if self._vanished is not None and not self.only_types else []
        totals = self._merged(TOTAL, names, now, counts,
                              [None if part is None else part + (unseen_part or 0.0)
                               for part, unseen_part in zip(every, _rates(unseen, spans), strict=True)],
                              (counters[0] + sum(h.arrivals.total for h in unseen),
                               counters[1] + sum(h.completions.total for h in unseen)), self._all.latency,
                              every_type=not self.only_types)  # fmt: skip
        return tuple(rows), totals, other, len(folded)

    def _history_at(self, job_type: str, at: float) -> TypeHistory:
        """The type's history, which an event or a sample at `at` is about to join."""
        history = self._history.get(job_type)
        if history is None:
            shown = not self.only_types or job_type in self.only_types
            history = self._history[job_type] = TypeHistory(self.window_s, self._all if shown else None)
        if history.due is None or at < history.due:
            history.due = at
            heapq.heappush(self._expiring, (at, job_type))
        return history

    def _prune(self, t: float) -> None:
        """Drop what has left the window at `t`: of the totals, and of the types whose earliest event or sample has
        (`_expiring`), not of every type — at 10,000 types most are at rest, and pruning each of their windows on
        every poll cost more than the rest of their rows."""
        self._unseen.prune(t)
        self._all.prune(t)
        cutoff, expiring, histories, again = t - self.window_s, self._expiring, self._history, []
        while expiring and expiring[0][0] <= cutoff:
            due, job_type = heapq.heappop(expiring)
            history = histories.get(job_type)
            if history is None or history.due != due:
                continue  # dropped since, or an earlier event came and has its own entry
            history.prune(t)
            history.due = history.earliest()
            if history.due is not None:
                again.append((history.due, job_type))  # after the loop: each history is pruned once a poll
        for entry in again:
            heapq.heappush(expiring, entry)

    def _merged(self, job_type: str, names: set[str], now: datetime, counts: Counts, rates: Sequence[float | None],
                counters: tuple[int, int], latency: LatencyWindow | None,
                every_type: bool = False) -> TypeStats:  # fmt: skip
        """The row of several types together (the totals, the folded types' `(other)`): their counts summed;
        `rates` and `counters` (arrivals, completions) theirs summed, `latency` their latencies (None: no
        percentiles). `every_type`: `names` holds every type `counts` has a job of (the totals' when no type is
        left out), so its counts are summed without looking each type up in `names`."""
        summed = {s: {job_type: _sum(c, None if every_type else names)} for s, c in counts.items()}
        return self._stats(job_type, now, summed, _held_in(summed), _Merged(counters, latency), (), rates,
                           self._in_no_state.of(names), bool(self._estimated & names))  # no spans: rates given

    RATES = (("arrivals", SHORT_WINDOW_S), ("arrivals", None), ("completions", SHORT_WINDOW_S), ("completions", None))

    def _spans(self, t: float) -> list[tuple[str, float, float] | None]:
        """Per rate of `RATES`, what each type's is read from at `t`: (its window, the cutoff, the time observed),
        the same for every type; None where the shape cannot know it or nothing has been watched yet."""
        spans: list[tuple[str, float, float] | None] = []
        for kind, span in self.RATES:
            observed, span_s = self._observed.get(kind), span or self.window_s
            if not self._provides[kind] or observed is None or t <= observed:
                spans.append(None)
            else:  # as `rate_per_s`: over the time observed, never more than the span
                spans.append((kind, t - span_s, min(span_s, t - observed)))
        return spans

    def _stats(self, job_type: str, now: datetime, counts: Counts, held_in: Sequence[dict | None],
               history: TypeHistory | _Merged | None, spans: Sequence[tuple[str, float, float] | None],
               rates: Sequence[float | None], in_no_state: int | None, estimate: bool) -> TypeStats:  # fmt: skip
        """One row: a type's (`history` its events, None if it had none in the window; `rates` the rates of a type
        with none), or the totals' (`history` every shown type's, `rates` theirs summed). Called for every type on
        every poll, the hot path at 10,000 types: what is the same for every type (`held_in`, `spans`) is worked
        out once by the caller."""
        claimed_in, timed_out_in, dead_in, scheduled_in, lost_in = held_in
        depth, oldest = counts["pending"].get(job_type, _NONE)
        latency = history.latency if history is not None else None
        if type(history) is TypeHistory:
            arrivals, completions = history.arrivals, history.completions
            rates = [None if span is None
                     else (arrivals if span[0] == "arrivals" else completions).count_after(span[1]) / span[2]
                     for span in spans]  # fmt: skip
        arrivals_10, arrivals_60, completions_10, completions_60 = rates
        samples = len(latency) if latency is not None else 0
        wait_p = latency.wait_percentiles() if samples else (None, None, None)  # type: ignore[union-attr]
        work_p = latency.processing_percentiles() if samples else (None, None, None)  # type: ignore[union-attr]
        drain, eta = drain_eta(depth, arrivals_60, completions_60)
        provides = self._provides
        return TypeStats.of({
            "job_type": job_type, "depth": depth,
            "oldest_age_s": (now - oldest).total_seconds() if oldest is not None and depth else None,
            "claimed": None if claimed_in is None else claimed_in.get(job_type, _NONE)[0],
            "timed_out": None if timed_out_in is None else timed_out_in.get(job_type, _NONE)[0],
            "dead": None if dead_in is None else dead_in.get(job_type, _NONE)[0],
            "scheduled": None if scheduled_in is None else scheduled_in.get(job_type, _NONE)[0],
            "lost": None if lost_in is None else lost_in.get(job_type, _NONE)[0],
            "arrivals_10s_per_s": arrivals_10, "arrivals_60s_per_s": arrivals_60,
            "completions_10s_per_s": completions_10, "completions_60s_per_s": completions_60,
            "wait_p50_s": wait_p[0], "wait_p95_s": wait_p[1], "wait_p99_s": wait_p[2],
            "processing_p50_s": work_p[0], "processing_p95_s": work_p[1], "processing_p99_s": work_p[2],
            "drain": drain, "drain_eta_s": eta, "depth_is_estimate": estimate,
            "arrivals_total": (history.arrivals.total if history is not None else 0) if provides["arrivals"] else None,
            "completions_total": (history.completions.total if history is not None else 0)
            if provides["completions"] else None,
            "latency_sample": samples or None, "latency_is_sample": bool(samples and latency.sampled),  # type: ignore
            "in_no_state": in_no_state,
        })  # fmt: skip


_NONE: tuple[int, datetime | None] = (0, None)
_jobs_of = itemgetter(0)  # of a (jobs, oldest) count
HELD = ("claimed", "timed_out", "dead", "scheduled", "lost")  # the states past pending, as TypeStats names them


def _held_in(counts: Counts) -> tuple[dict | None, ...]:
    """Per state of HELD, its counts by type, None where the shape has no such state (its figure: unknown)."""
    return tuple(counts.get(name) for name in HELD)


def _at_least_0(rate: float) -> float:
    """A difference of sums of rates, without the float's residue (1e-17 jobs/s is none)."""
    return rate if rate > 1e-9 else 0.0


def _rates(histories: list[TypeHistory], spans: list[tuple[str, float, float] | None]) -> tuple[float | None, ...]:
    """Arrivals and completions per second (`ShapeCollector.RATES`), summed over `histories`."""
    return tuple(None if span is None else sum(getattr(h, span[0]).count_after(span[1]) for h in histories) / span[2]
                 for span in spans)


class _Merged:
    """Several types' events (the totals', the folded ones'), as `_stats` reads a type's: their counters summed,
    their latencies one window."""

    def __init__(self, counters: tuple[int, int], latency: LatencyWindow | None) -> None:
        self.arrivals, self.completions, self.latency = _Total(counters[0]), _Total(counters[1]), latency


class _Total:
    def __init__(self, total: int) -> None:
        self.total = total


def _sum(counts: dict[str, tuple[int, datetime | None]], names: set[str] | None) -> tuple[int, datetime | None]:
    """The jobs of `names` (None: of every type in `counts`) and the oldest of them."""
    chosen = counts.values() if names is None else [v for k, v in counts.items() if k in names]
    return sum(map(_jobs_of, chosen)), min((o for c, o in chosen if c and o is not None), default=None)
