"""The immutable result of one poll: what the CLI prints and the dashboard renders.

Field names carry their units (`oldest_age_s`, `arrivals_10s_per_s`) because they are also the stable JSON
shape of `queuetop stats --json`; see the README before renaming one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from types import MappingProxyType
from typing import Any

TOTAL = "(all)"
OTHER = "(other)"  # the types folded together past a watcher's --max-types (parentheses: no job type's name)


@dataclass(frozen=True)
class TypeStats:
    """Everything known about one JobType (or the totals) at one poll."""

    job_type: str
    depth: int = 0  # pending: not yet claimed
    oldest_age_s: float | None = None  # age of the oldest pending job
    claimed: int | None = 0  # in flight; None: the shape cannot know (see Snapshot.figures)
    timed_out: int | None = 0  # claims past their timeout, not yet released
    dead: int | None = 0  # jobs that ran out of attempts
    scheduled: int | None = None  # not claimable yet: available later (job_queue)
    lost: int | None = None  # taken but never finished, past --lost-after (requests)
    arrivals_10s_per_s: float | None = None
    arrivals_60s_per_s: float | None = None
    completions_10s_per_s: float | None = None
    completions_60s_per_s: float | None = None
    wait_p50_s: float | None = None  # claimed - created
    wait_p95_s: float | None = None
    wait_p99_s: float | None = None
    processing_p50_s: float | None = None  # completed - claimed
    processing_p95_s: float | None = None
    processing_p99_s: float | None = None
    drain: str = "unknown"  # empty | draining | never | unknown
    drain_eta_s: float | None = None  # set when draining
    depth_is_estimate: bool = False
    # Events seen since queuetop began watching the type (the first poll's look-back included): counters for
    # Prometheus. A type that goes quiet and drops out of the snapshot starts again from 0 when it comes back.
    arrivals_total: int | None = None
    completions_total: int | None = None
    latency_sample: int | None = None  # completions behind the wait/processing percentiles (None: no latencies)
    latency_is_sample: bool = False  # they are a sample: more completions finished than were read one by one
    # Rows of the queue table in no state (`Layout.accounted`): shown, never dropped; None until first counted
    in_no_state: int | None = None

    @classmethod
    def of(cls, figures: dict[str, Any]) -> TypeStats:
        """A row from a dict of every one of its fields by name (the dict becomes the row's: made for it alone),
        equal to the constructor's but made without the frozen `__init__`'s `object.__setattr__` for each of its
        26 fields: a poll makes a row per job type, and at 10,000 types those calls were a fifth of it. A dict,
        not keywords: a call with 26 keywords costs twice the dict (3.0 against 1.5 µs a row). Every field must
        be given (the collector's tests hold each row it makes equal to the constructor's)."""
        row = object.__new__(cls)
        object.__setattr__(row, "__dict__", figures)
        return row


@dataclass(frozen=True)
class Snapshot:
    """One poll of one queue."""

    taken_at: datetime  # server time, in `clock`
    target: str  # passwords masked
    dialect: str
    poll_ms: float
    window_s: float
    types: tuple[TypeStats, ...] = ()
    totals: TypeStats = field(default_factory=lambda: TypeStats(TOTAL))
    other: TypeStats | None = None  # past the watcher's --max-types: the types not in `types`, summed (fold.py)
    folded: int = 0  # how many types `other` stands for
    error: str | None = None
    layout: str = "native"
    figures: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))  # what the shape can know
    cannot_know: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # and why not, per figure
    clock: str = "utc"  # the clock of taken_at and of the shape's times: "utc" or the server's "local" time
    note: str | None = None  # e.g. how the layout was chosen
    reads: str = "committed"  # "dirty": counts read NOLOCK (SQL Server without RCSI) may include uncommitted rows
    library: str | None = None  # the job library whose tables these are, and per state its own words ("doing")
    library_words: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # A deep queue whose depth cannot be tracked, between two of its spaced counts: how long ago its states were
    # counted (their figures are that count's, every depth ≈); None: this poll counted or tracked them
    counted_s_ago: float | None = None

    def provides(self, figure: str) -> bool:
        """Whether the shape can know a figure (every figure, when the snapshot does not say)."""
        return self.figures.get(figure, True)

    def type_named(self, job_type: str) -> TypeStats | None:
        return next((row for row in self.types if row.job_type == job_type), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "taken_at": self.taken_at.isoformat(timespec="milliseconds") + ("Z" if self.clock == "utc" else ""),
            "target": self.target,
            "dialect": self.dialect,
            "poll_ms": round(self.poll_ms, 3),
            "window_s": self.window_s,
            "error": self.error,
            "layout": self.layout,
            "clock": self.clock,
            "figures": dict(self.figures),
            "cannot_know": dict(self.cannot_know),
            "reads": self.reads,
            "library": None if self.library is None else {"name": self.library, "words": dict(self.library_words)},
            "counted_s_ago": None if self.counted_s_ago is None else round(self.counted_s_ago, 3),
            "types": [_figures(row) for row in self.types],
            "totals": _figures(self.totals),
        }


_FIELDS = tuple(f.name for f in fields(TypeStats))


def _figures(row: TypeStats) -> dict[str, Any]:
    """A row's fields by name, in their order: `asdict` without its deep copy of each value (they are numbers and
    text), which was most of `stats --json` at 10,000 types."""
    return {name: getattr(row, name) for name in _FIELDS}
