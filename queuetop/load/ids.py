"""The ids a load run enqueued, kept as ranges: a run of a million jobs costs a few runs of integers, not a set.

Each `enqueue_many` returns ascending ids, usually contiguous, so they are stored as (first, last) runs.
Producers add from several threads; membership is asked at the end, by the report, through an `IdLookup`.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Iterable

Run = tuple[int, int]


def merge_runs(runs: Iterable[Run]) -> list[Run]:
    """Sorted, non-overlapping, non-adjacent runs covering the same ids."""
    merged: list[Run] = []
    for first, last in sorted(runs):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def runs_of(ids: Iterable[int]) -> list[Run]:
    return merge_runs((job_id, job_id) for job_id in ids)


class IdRanges:
    """A thread-safe collection of distinct job ids, stored as (first, last) runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: list[Run] = []
        self._merged_len = 0
        self._count = 0

    def add(self, ids: Iterable[int]) -> None:
        runs = runs_of(ids)
        with self._lock:
            self._runs += runs
            self._count += sum(last - first + 1 for first, last in runs)
            if len(self._runs) > 2 * self._merged_len + 64:  # merge now and then: amortised, never quadratic
                self._merge()

    def runs(self) -> list[Run]:
        with self._lock:
            self._merge()
            return list(self._runs)

    def _merge(self) -> None:
        self._runs = merge_runs(self._runs)
        self._merged_len = len(self._runs)

    def __len__(self) -> int:
        return self._count


class IdLookup:
    """Fast membership over a frozen union of IdRanges (for the report's pass over many rows)."""

    def __init__(self, *ranges: IdRanges) -> None:
        runs = merge_runs(run for r in ranges for run in r.runs())
        self._firsts = [first for first, _ in runs]
        self._lasts = [last for _, last in runs]
        self.count = sum(last - first + 1 for first, last in runs)

    @property
    def first(self) -> int | None:
        return self._firsts[0] if self._firsts else None

    def __contains__(self, job_id: object) -> bool:
        if not isinstance(job_id, int):
            return False
        i = bisect_right(self._firsts, job_id) - 1
        return i >= 0 and job_id <= self._lasts[i]
