"""The arithmetic of queue statistics: event windows, rates over measured time, percentiles, drain ETA.

Pure Python, no database: the collector feeds it events with their timestamps (seconds since the epoch, in
the server's clock) and asks for figures at a given moment. Windows are bounded in time and in size, so a
monitor left running for days uses the same memory as one started a minute ago.

A poll never fetches every event: it reads counts per job type and second (`EventWindow.add(second, count)`,
with `Tally` telling the rows of a re-read overlap that were counted already from the ones that committed
late), and a bounded sample of the completions whose latencies are weighted by how many completions each
sample stands for (`LatencyWindow`, `weighted_percentiles`).
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import accumulate


class EventWindow:
    """How many events of one kind (arrivals, completions) happened when, over the last `span_s` seconds. An entry
    is a moment and a count (a second's worth of events read as one aggregate), so its size follows the seconds
    in the window, never the throughput."""

    def __init__(self, span_s: float, feeds: EventWindow | None = None) -> None:
        """`feeds`: a window of several kinds of events together (every job type's), which each event added here
        is added to as well."""
        self.span_s = span_s
        self.feeds = feeds
        self._times = array("d")
        self._counts = array("q")
        self.in_window = 0  # the events in the window: the whole window's count without summing it (read it,
        # never set it: `add` and `prune` keep it)
        self.total = 0  # every event ever added, pruned or not: what a Prometheus counter exports

    def add(self, when: float, count: int = 1) -> None:
        if count <= 0:
            return
        if self.feeds is not None:
            self.feeds.add(when, count)
        self.total += count
        self.in_window += count
        if not self._times or when >= self._times[-1]:
            self._times.append(when)
            self._counts.append(count)
        else:  # late commits arrive slightly out of order
            at = bisect_right(self._times, when)
            self._times.insert(at, when)
            self._counts.insert(at, count)

    def count_after(self, cutoff: float) -> int:
        times = self._times
        if not times or times[-1] <= cutoff:  # none after it: a quiet type's, most types' at 10,000 (no search)
            return 0
        if times[0] > cutoff:  # all of them: the whole window's rate
            return self.in_window
        return sum(self._counts[bisect_right(times, cutoff):])

    def prune(self, now: float) -> None:
        keep_from = bisect_right(self._times, now - self.span_s)
        if keep_from:
            self.in_window -= sum(self._counts[:keep_from])
            del self._times[:keep_from]
            del self._counts[:keep_from]

    def __len__(self) -> int:
        """The number of events in the window."""
        return self.in_window

    def first(self) -> float | None:
        """The moment of the earliest event in the window; None when it holds none."""
        return self._times[0] if self._times else None


class Tally:
    """Counts already taken, per key (job type and second), for rows a poll reads again: the overlap re-read
    for late commits returns the whole count of each key, and only its growth is new."""

    def __init__(self) -> None:
        self._counted: dict[Hashable, int] = {}

    def news(self, key: Hashable, count: int) -> int:
        """How many of `count` rows under `key` were not counted before (0 when rows went away)."""
        before = self._counted.get(key, 0)
        if count <= before:
            return 0
        self._counted[key] = count
        return count - before

    def add(self, key: Hashable, count: int) -> int:
        """Rows known to be new (read past the watermark): all of `count` is added."""
        self._counted[key] = self._counted.get(key, 0) + count
        return count

    def total(self, wanted: Callable[[Hashable], bool]) -> int:
        return sum(n for key, n in self._counted.items() if wanted(key))

    def keep(self, wanted: Callable[[Hashable], bool]) -> None:
        """Forget the keys a later poll will not read again."""
        self._counted = {key: n for key, n in self._counted.items() if wanted(key)}

    def replace(self, counted: dict[Hashable, int]) -> None:
        self._counted = dict(counted)

    def __len__(self) -> int:
        return len(self._counted)


def rate_per_s(window: EventWindow, now: float, span_s: float, observed_since: float) -> float | None:
    """Events per second over the last `span_s`, divided by the time actually observed (never more than
    `span_s`, less if the monitor has not been watching that long); None before any time has passed."""
    elapsed = min(span_s, now - observed_since)
    if elapsed <= 0:
        return None
    return window.count_after(now - span_s) / elapsed


Sample = tuple[float, float | None, float | None, float, int | None, int | None]
"""A completion's latencies in a `LatencyWindow`: (completed at, wait, processing, the completions it stands for,
the wait's bucket, the processing's bucket)."""


class LatencyWindow:
    """Wait and processing times of recent completions, bounded by age and count, as weighted histograms with
    buckets 2 % wide, each read back as the mean of the values in it (so within 1 % of any of them, and exact
    where they are all the same). A sample of a poll's completions carries a
    weight: how many completions it stands for (1 when every one was read). Adding a sample and taking the
    percentiles cost the same however many samples the window holds: a sorted list of 30,000 samples cost a
    poll tens of milliseconds in insertions alone."""

    GROWTH = 1.02  # one bucket's upper bound over its lower one
    SMALLEST_S = 1e-6  # at or below (a clock's tick, or skew): one bucket

    def __init__(self, span_s: float, max_samples: int = 40_000) -> None:
        self.span_s = span_s
        self.max_samples = max_samples
        self._samples: deque[Sample] = deque()
        self._waits: dict[int, list[float]] = {}  # bucket → [weight, weighted sum of its values]
        self._processing: dict[int, list[float]] = {}
        self._weighted = 0  # samples standing for more than one completion
        # the percentiles read since the last change, by (histogram, points): a poll reads every shown type's, and
        # most types' samples did not change since the last poll
        self._changes = 0
        self._read: dict[tuple[str, tuple[float, ...]], tuple[int, tuple[float | None, ...]]] = {}

    @classmethod
    def _bucket(cls, value: float | None) -> int | None:
        if value is None:
            return None
        if value <= cls.SMALLEST_S:
            return ZERO_BUCKET
        return round(math.log(value) / _LOG_GROWTH)

    @classmethod
    def samples(cls, latencies: Iterable[tuple[float, float | None, float | None]],
                weight: float = 1.0) -> list[Sample]:  # fmt: skip
        """(completed at, wait, processing) as samples for `add_all`, each standing for `weight` completions: their
        buckets worked out once, for every window that takes them (a type's and the totals') and for the moment
        each leaves it."""
        bucket = cls._bucket
        return [(at, wait, work, weight, bucket(wait), bucket(work)) for at, wait, work in latencies]

    def add(self, completed_at: float, wait_s: float | None, processing_s: float | None,
            weight: float = 1.0) -> None:  # fmt: skip
        self.add_all(self.samples([(completed_at, wait_s, processing_s)], weight))

    def add_all(self, samples: Iterable[Sample]) -> None:
        held, waits, processing = self._samples, self._waits, self._processing
        for sample in samples:
            if len(held) >= self.max_samples:
                self._forget(held.popleft())
            held.append(sample)
            _, wait_s, processing_s, weight, wait_bucket, processing_bucket = sample
            self._weighted += weight != 1.0
            for value, bucket, histogram in ((wait_s, wait_bucket, waits),
                                             (processing_s, processing_bucket, processing)):  # fmt: skip
                if value is not None:
                    entry = histogram.get(bucket)  # type: ignore[arg-type]
                    if entry is None:
                        entry = histogram[bucket] = [0.0, 0.0]  # type: ignore[index]
                    entry[0] += weight
                    entry[1] += weight * value
        self._changes += 1

    def prune(self, now: float) -> None:
        cutoff = now - self.span_s
        while self._samples and self._samples[0][0] <= cutoff:
            self._forget(self._samples.popleft())

    def first(self) -> float | None:
        """The moment of the earliest sample in the window; None when it holds none."""
        return self._samples[0][0] if self._samples else None

    def _forget(self, sample: Sample) -> None:
        _, wait_s, processing_s, weight, wait_bucket, processing_bucket = sample
        self._weighted -= weight != 1.0
        self._changes += 1
        for value, bucket, histogram in ((wait_s, wait_bucket, self._waits),
                                         (processing_s, processing_bucket, self._processing)):  # fmt: skip
            if value is not None:
                entry = histogram[bucket]  # type: ignore[index]
                entry[0] -= weight
                entry[1] -= weight * value
                if entry[0] <= 1e-9:
                    del histogram[bucket]  # type: ignore[arg-type]

    @staticmethod
    def _pairs(histogram: dict[int, list[float]]) -> list[tuple[float, float]]:
        return [(_mean(entry), entry[0]) for entry in (histogram[b] for b in sorted(histogram))]

    def waits(self) -> list[tuple[float, float]]:
        """(value, weight) per bucket of the waits in the window, in ascending order."""
        return self._pairs(self._waits)

    def processing(self) -> list[tuple[float, float]]:
        return self._pairs(self._processing)

    def wait_percentiles(self, points: Sequence[float] = (50, 95, 99)) -> tuple[float | None, ...]:
        return self._percentiles("waits", self._waits, points)

    def processing_percentiles(self, points: Sequence[float] = (50, 95, 99)) -> tuple[float | None, ...]:
        return self._percentiles("processing", self._processing, points)

    def _percentiles(self, name: str, histogram: dict[int, list[float]],
                     points: Sequence[float]) -> tuple[float | None, ...]:  # fmt: skip
        key = (name, tuple(points))
        read = self._read.get(key)
        if read is None or read[0] != self._changes:
            read = self._read[key] = (self._changes, _bucket_percentiles(histogram, points))
        return read[1]

    @property
    def sampled(self) -> bool:
        """Whether the percentiles come from a sample (some completions were not read one by one)."""
        return self._weighted > 0

    def __len__(self) -> int:
        """The number of samples in the window."""
        return len(self._samples)


ZERO_BUCKET = -(10**9)
_LOG_GROWTH = math.log(LatencyWindow.GROWTH)


def percentiles(values: Iterable[float], points: Sequence[float] = (50, 95, 99)) -> tuple[float | None, ...]:
    """Nearest-rank percentiles: each is a value that occurred, and p100 is the maximum."""
    ordered = sorted(values)
    if not ordered:
        return tuple(None for _ in points)
    return tuple(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] for p in points)


def weighted_percentiles(pairs: Sequence[tuple[float, float]],
                         points: Sequence[float] = (50, 95, 99)) -> tuple[float | None, ...]:  # fmt: skip
    """Nearest-rank percentiles of (value, weight) pairs sorted by value: the smallest value whose cumulative
    weight reaches p % of the total. With every weight 1 this is `percentiles`."""
    return _nearest_rank([weight for _, weight in pairs], points, lambda rank: pairs[rank][0])


def _bucket_percentiles(histogram: dict[int, list[float]], points: Sequence[float]) -> tuple[float | None, ...]:
    """`weighted_percentiles` of a `LatencyWindow`'s histogram as `_pairs` gives it, without making every bucket's
    pair: only the buckets chosen are read back (a type's window has ~100, the totals' several hundred)."""
    buckets = sorted(histogram)
    return _nearest_rank([histogram[b][0] for b in buckets], points, lambda rank: _mean(histogram[buckets[rank]]))


def _nearest_rank(weights: Sequence[float], points: Sequence[float],
                  value_at: Callable[[int], float]) -> tuple[float | None, ...]:  # fmt: skip
    """Per point p, the value at the first rank whose cumulative weight reaches p % of the total (`weights` in the
    values' ascending order); None for each where there are none."""
    if not weights:
        return tuple(None for _ in points)
    cumulative = list(accumulate(weights))
    total, last = cumulative[-1], len(weights) - 1
    return tuple(value_at(min(last, bisect_left(cumulative, p / 100 * total))) for p in points)


def _mean(bucket: list[float]) -> float:
    """The mean of the values in a histogram's bucket ([weight, weighted sum])."""
    return max(0.0, bucket[1] / bucket[0])


def drain_eta(depth: int, arrivals_per_s: float | None, completions_per_s: float | None) -> tuple[str, float | None]:
    """("empty", 0) | ("draining", seconds) | ("never", None) | ("unknown", None)."""
    if depth == 0:
        return "empty", 0.0
    if arrivals_per_s is None or completions_per_s is None:
        return "unknown", None
    net = completions_per_s - arrivals_per_s
    if net <= 0:
        return "never", None
    return "draining", depth / net
