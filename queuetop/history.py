"""The arithmetic of queue statistics: event windows, rates over measured time, percentiles, drain ETA.

Pure Python, no database: the collector feeds it events with their timestamps (seconds since the epoch, in
the server's clock) and asks for figures at a given moment. Windows are bounded in time and in size, so a
monitor left running for days uses the same memory as one started a minute ago.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right, insort
from collections import deque
from collections.abc import Iterable, Sequence


class EventWindow:
    """Timestamps of events of one kind (arrivals, completions) over the last `span_s` seconds."""

    def __init__(self, span_s: float) -> None:
        self.span_s = span_s
        self._times = array("d")
        self.total = 0  # every event ever added, pruned or not: what a Prometheus counter exports

    def add(self, when: float) -> None:
        self.total += 1
        if not self._times or when >= self._times[-1]:
            self._times.append(when)
        else:  # late commits arrive slightly out of order
            insort(self._times, when)

    def count_after(self, cutoff: float) -> int:
        return len(self._times) - bisect_right(self._times, cutoff)

    def prune(self, now: float) -> None:
        keep_from = bisect_right(self._times, now - self.span_s)
        if keep_from:
            del self._times[:keep_from]

    def __len__(self) -> int:
        return len(self._times)


def rate_per_s(window: EventWindow, now: float, span_s: float, observed_since: float) -> float | None:
    """Events per second over the last `span_s`, divided by the time actually observed (never more than
    `span_s`, less if the monitor has not been watching that long); None before any time has passed."""
    elapsed = min(span_s, now - observed_since)
    if elapsed <= 0:
        return None
    return window.count_after(now - span_s) / elapsed


class LatencyWindow:
    """(completed at, wait s, processing s) of recent completions, bounded by age and count. The waits and the
    processing times are also kept sorted as samples come and go, so a poll takes percentiles without sorting
    the whole window again (at a thousand jobs a second that sort cost more than all of a poll's reads)."""

    def __init__(self, span_s: float, max_samples: int = 20_000) -> None:
        self.span_s = span_s
        self.max_samples = max_samples
        self._samples: deque[tuple[float, float | None, float | None]] = deque()
        self._waits: list[float] = []
        self._processing: list[float] = []

    def add(self, completed_at: float, wait_s: float | None, processing_s: float | None) -> None:
        if len(self._samples) >= self.max_samples:
            self._forget(self._samples.popleft())
        self._samples.append((completed_at, wait_s, processing_s))
        if wait_s is not None:
            insort(self._waits, wait_s)
        if processing_s is not None:
            insort(self._processing, processing_s)

    def prune(self, now: float) -> None:
        cutoff = now - self.span_s
        while self._samples and self._samples[0][0] <= cutoff:
            self._forget(self._samples.popleft())

    def _forget(self, sample: tuple[float, float | None, float | None]) -> None:
        _, wait_s, processing_s = sample
        if wait_s is not None:
            del self._waits[bisect_left(self._waits, wait_s)]
        if processing_s is not None:
            del self._processing[bisect_left(self._processing, processing_s)]

    def waits(self) -> list[float]:
        """The waits in the window, in ascending order (the window's own list: do not change it)."""
        return self._waits

    def processing(self) -> list[float]:
        """The processing times in the window, in ascending order (the window's own list: do not change it)."""
        return self._processing


def percentiles(values: Iterable[float], points: Sequence[float] = (50, 95, 99)) -> tuple[float | None, ...]:
    """Nearest-rank percentiles: each is a value that occurred, and p100 is the maximum."""
    ordered = sorted(values)
    if not ordered:
        return tuple(None for _ in points)
    return tuple(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] for p in points)


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
