"""The cap on the job types one target exports: the busiest N by name, the rest folded into one
`job_type="(other)"`, so a queue with a type per tenant cannot flood Prometheus with series.

Each named type costs about 18 series (8 gauges, 2 counters with their `_created`, 6 quantiles); at the default
100 that is ~1,800 per target. Which types are named, and how the fold stays a valid Prometheus series:

- A named type stays named while it is in the snapshot (its series never flicker between its own name and
  "(other)"); a free place goes to the busiest unnamed type (pending + in flight, then arrival rate). Types with
  an SLO limit of their own are always named: their alert rules select them by name.
- "(other)"'s gauges are sums over the folded types (the oldest age: the largest), absent when no folded type
  has the figure; its wait and processing quantiles are absent (quantiles cannot be summed, and a made-up one is
  worse than none).
- Its counters must never go down, or `rate()` reads a reset and invents a burst. A folded type that leaves
  (promoted to a name, or gone from the snapshot) keeps what it had counted in the fold's base; one whose own
  counter starts again from 0 (the collector restarts a type that went quiet) has its last value added to
  the base first.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from queuetop.watch.snapshot import OTHER, TypeStats

DEFAULT_MAX_TYPES = 100
_SUMMED = ("depth", "claimed", "timed_out", "dead", "scheduled", "lost", "in_no_state")
_COUNTERS = ("arrivals_total", "completions_total")


@dataclass(frozen=True)
class Capped:
    """What one poll exports: the named types, then "(other)" when any was folded."""

    types: tuple[TypeStats, ...]
    folded: int  # how many types "(other)" stands for


class TypeCap:
    """Per target, across polls: which types are named, and the fold's counters (see the module)."""

    def __init__(self, max_types: int = DEFAULT_MAX_TYPES, pinned: Collection[str] = ()) -> None:
        if max_types < 1:
            raise ValueError("max_types must be at least 1")
        self.max_types = max_types
        self.pinned = frozenset(pinned)
        self._named: set[str] = set()
        self._base = dict.fromkeys(_COUNTERS, 0)  # counted by folded types that have left the fold
        self._last: dict[str, dict[str, int]] = {}  # per folded type: its counters at the last poll

    def cap(self, types: Sequence[TypeStats]) -> Capped:
        if len(types) <= self.max_types and not self._last:
            self._named = {row.job_type for row in types}
            return Capped(tuple(types), 0)
        present = {row.job_type: row for row in types}
        named = {name for name in self._named if name in present} | (self.pinned & present.keys())
        free = self.max_types - len(named - self.pinned)  # a pinned type takes no place of the busiest
        for row in sorted((row for row in types if row.job_type not in named), key=_busiest):
            if free <= 0:
                break
            named.add(row.job_type)
            free -= 1
        self._named = named
        folded = [row for row in types if row.job_type not in named]
        for name in [name for name in self._last if name not in present or name in named]:
            self._leave(name)  # promoted or gone: what it counted stays in the fold
        kept = tuple(row for row in types if row.job_type in named)
        if not folded:
            return Capped(kept, 0)
        return Capped((*kept, self._fold(folded)), len(folded))

    def _leave(self, name: str) -> None:
        for counter, value in self._last.pop(name).items():
            self._base[counter] += value

    def _fold(self, folded: Sequence[TypeStats]) -> TypeStats:
        sums: dict[str, object] = {}
        for figure in _SUMMED:
            values = [getattr(row, figure) for row in folded if getattr(row, figure) is not None]
            sums[figure] = sum(values) if values else (0 if figure == "depth" else None)
        ages = [row.oldest_age_s for row in folded if row.oldest_age_s is not None]
        for counter in _COUNTERS:
            known = [row for row in folded if getattr(row, counter) is not None]
            for row in known:
                value = getattr(row, counter)
                last = self._last.setdefault(row.job_type, {}).get(counter)
                if last is not None and value < last:  # the type's own counter began again
                    self._base[counter] += last
                self._last[row.job_type][counter] = value
            total = sum(getattr(row, counter) for row in known)
            sums[counter] = self._base[counter] + total if known or self._base[counter] else None
        return TypeStats(OTHER, oldest_age_s=max(ages) if ages else None, **sums)  # type: ignore[arg-type]


def _busiest(row: TypeStats) -> tuple:
    """Sort key, busiest first: jobs pending and in flight, then arrivals, then the name (a stable order)."""
    held = row.depth + (row.claimed or 0) + (row.timed_out or 0)
    return (-held, -(row.arrivals_60s_per_s or 0.0), row.job_type)
