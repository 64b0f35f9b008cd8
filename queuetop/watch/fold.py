"""Past a screen of job types, which ones a poll names, and which it folds into one `(other)` row.

A queue with a job type per tenant can hold 10,000 of them; a dashboard reads the few that matter, and making a
row for each of the others cost a poll most of its time (and its history file a row a type a second). Where a
watcher asks for at most N types (`watch --max-types`), the poll makes rows for the N busiest and one `(other)`
row for the rest, whose figures are their sums (the oldest age: the largest; no wait or processing percentiles:
those cannot be summed). The totals stay every type's. What is named:

- the types pinned by name (an SLO limit of their own: a limit judged on a sum would be wrong) and those the
  dashboard's filter is looking for (`/`: a part of their name), taking no place of the busiest;
- then the busiest: jobs waiting and in flight (pending + claimed + timed out), then events in the last window
  (arrivals and completions), then the name — so a backlog or a stuck claim is never folded away while a quiet
  type is named, and the order is stable from one poll to the next.

`stats`, `check` and `serve` fold nothing here: a script and a verdict read every type (`serve` caps its series
itself, `serve/typecap.py`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

DEFAULT_SHOWN_TYPES = 1_000  # the dashboard's --max-types: a queue past it has a type per tenant, not per job kind
_HELD = ("pending", "claimed", "timed_out")  # the jobs a type holds: waiting and in flight


class InNameOrder:
    """A set of job types as a list by name, sorted again only when the set differs from the last one asked: at
    10,000 types a sort on every poll cost 3-5 ms, a comparison of two sets a tenth of that. The list is kept and
    handed out again: read it, never change it."""

    def __init__(self) -> None:
        self._then: set[str] = set()
        self._in_order: list[str] = []

    def of(self, names: set[str]) -> list[str]:
        if names != self._then:
            self._then, self._in_order = names, sorted(names)
        return self._in_order


def busiest(names: Sequence[str], counts: Mapping[str, Mapping[str, tuple[int, datetime | None]]],
            history: Mapping[str, Any], keep: int, pinned: Collection[str] = (),
            looking_for: str = "") -> tuple[list[str], list[str]]:  # fmt: skip
    """(named, folded), each sorted by name: the pinned types among `names` (given sorted by name) and those whose
    name holds `looking_for` (any case), and the `keep` busiest of the rest (see the module); `counts` per state,
    per type (jobs, oldest); `history` per type, its event windows."""
    needle = looking_for.strip().lower()
    named = [name for name in names if name in pinned or (needle and needle in name.lower())] if pinned or needle \
        else []
    chosen_already = set(named)
    rest = [name for name in names if name not in chosen_already] if named else names  # by name: the last key
    if len(rest) <= keep:
        return sorted([*named, *rest]), []
    pending = counts.get("pending", {})
    held = {name: jobs for name, (jobs, _) in pending.items()}
    for state in _HELD:
        if state != "pending":
            for name, (jobs, _) in counts.get(state, {}).items():
                held[name] = held.get(name, 0) + jobs
    held_of = held.get
    events_of = {name: h.arrivals.in_window + h.completions.in_window for name, h in history.items()}.get
    # Smaller first: the most jobs held, then the most events (one int: held above 2⁴⁰, events below), each worked
    # out in a comprehension (no Python call per type); one sort on them (stable: equal ranks stay by name), not a
    # heap of 10,000 tuples compared element by element (bench/README, `many_types.py`)
    rank = {name: -(held_of(name, 0) << 40 | events_of(name, 0)) for name in rest}
    chosen = sorted(rest, key=rank.__getitem__)[:keep]
    chosen_set = set(chosen)
    return sorted([*named, *chosen]), [name for name in rest if name not in chosen_set]
