"""Service-level objectives: a snapshot judged against limits per job type, as an immutable list of breaches.

An SLO is a limit on one figure of a job type (`max_oldest_age_s = 60`), given for every type (the default) or
for one type by name; a type's own limit beats the default. `evaluate()` is pure: one Snapshot (and, for the
dead rate, the dead counts of a minute earlier) in, one frozen `Evaluation` out, in which every limit that
applies has one of four verdicts:

- ok, or breach;
- not checkable: the queue's shape cannot know the figure at all (seed 002's `work_queue` has no times, so
  no wait; only seed 001's `requests` knows lost jobs). Said once per SLO, never passed off as ok;
- no data: the shape knows the figure but this poll has no value for it (no completion in the last minute
  to take a wait p95 from; the first poll of a dead rate). Neither ok nor a breach.

The figures, exactly (each from the row of the job type):

- max_oldest_age_s: oldest_age_s, the age of the oldest pending job; above the limit is a breach (an empty
  queue has no oldest job: ok);
- max_depth: depth, pending jobs; above;
- max_wait_p95_s: wait_p95_s, claimed − created, p95 over the completions of the last 60 s; above;
- min_completions_per_s: completions_60s_per_s; below the limit while jobs are waiting (depth > 0), so an idle
  queue is ok;
- max_timed_out: timed_out, claims past their timeout, not yet released; above;
- max_lost: lost, taken and not completed after --lost-after (requests); above;
- max_dead_rate: the dead rate, jobs that became dead per second: the rise of the row's `dead` count from the
  oldest poll at most 60 s back to this one, divided by the time between those polls (server clock); a fall
  (dead jobs retried or deleted) counts as 0. A type first seen at this poll has no rate yet. Above.

`SloWatch` is the stateful part the dashboard, `check --for` and `serve` share: it keeps the dead counts of
the last minute and when each breach began, so it can say how long a breach has lasted and which ones are new.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from queuetop.core import format as fmt
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats

DEAD_RATE_WINDOW_S = 60.0


class Slo(Enum):
    """The SLOs there are; the value is the key in the config file and the JSON."""

    MAX_OLDEST_AGE = "max_oldest_age_s"
    MAX_DEPTH = "max_depth"
    MAX_WAIT_P95 = "max_wait_p95_s"
    MIN_COMPLETIONS = "min_completions_per_s"
    MAX_TIMED_OUT = "max_timed_out"
    MAX_LOST = "max_lost"
    MAX_DEAD_RATE = "max_dead_rate"

    @property
    def spec(self) -> SloSpec:
        return SPECS[self]


class Verdict(Enum):
    OK = "ok"
    BREACH = "breach"
    NOT_CHECKABLE = "not checkable"
    NO_DATA = "no data"


@dataclass(frozen=True)
class SloSpec:
    """What an SLO looks at: the shape's figure it needs, the row's field, the dashboard column it colours."""

    figure: str  # Snapshot.provides() key: without it the SLO is not checkable on the shape
    field: str | None  # TypeStats attribute; None: computed (the dead rate)
    column: str  # the dashboard table's column key
    label: str  # words for a person: "oldest age"
    unit: str  # "s" (a duration), "jobs", "/s"
    is_minimum: bool = False  # a floor (breached below it), not a ceiling
    flag: str = ""  # the command-line option that sets the default


SPECS: dict[Slo, SloSpec] = {
    Slo.MAX_OLDEST_AGE: SloSpec("oldest_age_s", "oldest_age_s", "oldest", "oldest age", "s", flag="--max-oldest-age"),
    Slo.MAX_DEPTH: SloSpec("depth", "depth", "depth", "depth", "jobs", flag="--max-depth"),
    Slo.MAX_WAIT_P95: SloSpec("wait", "wait_p95_s", "wait", "wait p95", "s", flag="--max-wait-p95"),
    Slo.MIN_COMPLETIONS: SloSpec("completions", "completions_60s_per_s", "completions", "completions",
                                 "/s", is_minimum=True, flag="--min-completions"),
    Slo.MAX_TIMED_OUT: SloSpec("timed_out", "timed_out", "timed_out", "timed-out claims", "jobs",
                               flag="--max-timed-out"),
    Slo.MAX_LOST: SloSpec("lost", "lost", "lost", "lost jobs", "jobs", flag="--max-lost"),
    Slo.MAX_DEAD_RATE: SloSpec("dead", None, "dead", "dead rate", "/s", flag="--max-dead-rate"),
}  # fmt: skip


def show_value(slo: Slo, value: float | None) -> str:
    """A figure or a limit in the SLO's unit: 2m14s, 1,204 jobs, 0.5/s."""
    if value is None:
        return "—"
    unit = slo.spec.unit
    if unit == "s":
        return fmt.duration(value)
    if unit == "/s":
        return f"{fmt.rate(value) if value >= 0.01 or value == 0 else f'{value:.3g}'}/s"
    return f"{value:,.0f}"


@dataclass(frozen=True)
class Limit:
    """One SLO's limit, for every job type (`job_type` None) or for one; `source` says where it was set."""

    slo: Slo
    value: float
    job_type: str | None = None
    source: str = ""


@dataclass(frozen=True)
class Slos:
    """A set of limits. Adding a set on top (`over`) replaces the limits it sets again, slot by slot."""

    limits: tuple[Limit, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.limits)

    @property
    def own_types(self) -> frozenset[str]:
        """The job types with a limit of their own: always shown by name (`serve`'s series, a dashboard's rows)."""
        return frozenset(limit.job_type for limit in self.limits if limit.job_type)

    def over(self, below: Slos) -> Slos:
        """These limits, and those of `below` that these do not set again."""
        mine = {(limit.slo, limit.job_type) for limit in self.limits}
        return Slos(tuple(lim for lim in below.limits if (lim.slo, lim.job_type) not in mine) + self.limits)

    def limit_for(self, job_type: str, slo: Slo) -> Limit | None:
        """The type's own limit, else the default one."""
        own = folded = default = None
        for limit in self.limits:
            if limit.slo is slo:
                if limit.job_type is None:
                    default = limit
                elif limit.job_type == job_type:
                    own = limit
                elif limit.job_type.casefold() == job_type.casefold():  # a GUID type spelled in lower case
                    folded = limit
        return own or folded or default

    def used(self) -> tuple[Slo, ...]:
        return tuple(slo for slo in Slo if any(limit.slo is slo for limit in self.limits))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for limit in self.limits:
            if limit.job_type is None:
                out[limit.slo.value] = limit.value
            else:
                out.setdefault("types", {}).setdefault(limit.job_type, {})[limit.slo.value] = limit.value
        return out


@dataclass(frozen=True)
class Check:
    """One limit applied to one job type (job_type None: to the whole shape, when it cannot be checked)."""

    slo: Slo
    verdict: Verdict
    job_type: str | None
    limit: float
    value: float | None = None
    reason: str = ""  # for "not checkable" and "no data"

    def describe(self) -> str:
        spec, what = self.slo.spec, self.job_type or "every type"
        if self.verdict in (Verdict.BREACH, Verdict.OK):
            sign = ("<" if spec.is_minimum else ">") if self.verdict is Verdict.BREACH else \
                ("≥" if spec.is_minimum else "≤")  # fmt: skip
            return (f"{what}: {spec.label} {show_value(self.slo, self.value)} {sign} "
                    f"{show_value(self.slo, self.limit)} ({self.slo.value})")  # fmt: skip
        return f"{what}: {self.slo.value} {self.verdict.value}: {self.reason}"


@dataclass(frozen=True)
class Breach:
    """A breached SLO, in the form a history keeps: what, which type, the limit and the figure, since when."""

    target: str
    job_type: str
    slo: Slo
    limit: float
    value: float
    taken_at: datetime  # the poll that saw it (server clock of the snapshot)
    since: datetime  # the first poll of this run of breaches (== taken_at for a new one)
    clock: str = "utc"  # the snapshot's clock: "utc", or the server's "local" time (seed layouts)

    @property
    def lasted_s(self) -> float:
        return (self.taken_at - self.since).total_seconds()

    @property
    def key(self) -> tuple[str, str, Slo]:
        return self.target, self.job_type, self.slo

    def describe(self) -> str:
        spec = self.slo.spec
        sign = "<" if spec.is_minimum else ">"
        return (f"{self.job_type} {spec.label} {show_value(self.slo, self.value)} {sign} "
                f"{show_value(self.slo, self.limit)}")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        zone = "Z" if self.clock == "utc" else ""  # as Snapshot.to_json: local times carry no zone
        return {"target": self.target, "job_type": self.job_type, "slo": self.slo.value, "limit": self.limit,
                "value": self.value, "taken_at": self.taken_at.isoformat(timespec="milliseconds") + zone,
                "since": self.since.isoformat(timespec="milliseconds") + zone, "lasted_s": round(self.lasted_s, 3),
                "clock": self.clock}


@dataclass(frozen=True)
class Evaluation:
    """Every check of one snapshot."""

    target: str
    taken_at: datetime
    checks: tuple[Check, ...] = ()

    @property
    def breaches(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.verdict is Verdict.BREACH)

    @property
    def not_checkable(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.verdict is Verdict.NOT_CHECKABLE)

    @property
    def no_data(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.verdict is Verdict.NO_DATA)

    def breached_cells(self) -> frozenset[tuple[str, str]]:
        """(job type, dashboard column key) of every breach: the cells the dashboard colours."""
        return frozenset((c.job_type, c.slo.spec.column) for c in self.breaches if c.job_type is not None)


def evaluate(snapshot: Snapshot, slos: Slos, dead_rates: Mapping[str, float | None] | None = None) -> Evaluation:
    """Judge every job type of the snapshot against its limits. `dead_rates` (per type, jobs per second; see the
    module's table) comes from `SloWatch`; without it the dead rate has no data."""
    checks: list[Check] = []
    for slo in slos.used():
        spec = slo.spec
        if not snapshot.provides(spec.figure):
            default = next((lim for lim in slos.limits if lim.slo is slo and lim.job_type is None), None)
            limit = default or next(lim for lim in slos.limits if lim.slo is slo)
            checks.append(Check(slo, Verdict.NOT_CHECKABLE, None, limit.value,
                                reason=f"layout {snapshot.layout} cannot know {spec.label}"))  # fmt: skip
            continue
        for row in snapshot.types:
            limit = slos.limit_for(row.job_type, slo)
            if limit is not None:
                checks.append(_judge(slo, row, limit.value, dead_rates))
    return Evaluation(snapshot.target, snapshot.taken_at, tuple(checks))


def _judge(slo: Slo, row: TypeStats, limit: float, dead_rates: Mapping[str, float | None] | None) -> Check:
    spec = slo.spec
    if spec.field is None:  # the dead rate: two polls' dead counts
        value = (dead_rates or {}).get(row.job_type)
        if value is None:
            return Check(slo, Verdict.NO_DATA, row.job_type, limit, reason="needs a second poll (check --for 60s)")
    else:
        value = getattr(row, spec.field)
    if value is None:
        if slo is Slo.MAX_OLDEST_AGE and row.depth == 0:
            return Check(slo, Verdict.OK, row.job_type, limit, 0.0)  # nothing waits, so nothing is old
        why = {Slo.MAX_WAIT_P95: "no job was claimed and completed in the last 60 s",
               Slo.MIN_COMPLETIONS: "no completion rate yet (the first poll of this shape)"}.get(slo, "no value")
        return Check(slo, Verdict.NO_DATA, row.job_type, limit, reason=why)
    breached = (row.depth > 0 and value < limit) if spec.is_minimum else value > limit
    return Check(slo, Verdict.BREACH if breached else Verdict.OK, row.job_type, limit, float(value))


# -- successive polls ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Watched:
    """One poll seen by a SloWatch: its evaluation, the breaches now open (with since when) and the new ones."""

    evaluation: Evaluation
    breaches: tuple[Breach, ...] = ()
    new: tuple[Breach, ...] = ()


@dataclass
class SloWatch:
    """Feeds successive snapshots of one target through `evaluate`; remembers what evaluation alone cannot: the
    dead counts of the last minute (for the dead rate) and when each open breach began. A breach that is absent
    from one poll (or that poll failed to check it) is over; if it comes back it is new again."""

    slos: Slos
    target: str = ""
    _dead: deque[tuple[datetime, dict[str, int]]] = field(default_factory=deque)
    _open: dict[tuple[str, str, Slo], datetime] = field(default_factory=dict)

    def observe(self, snapshot: Snapshot) -> Watched:
        rates = self._dead_rates(snapshot)
        evaluation = evaluate(snapshot, self.slos, rates)
        target = self.target or snapshot.target
        breaches, new, still = [], [], {}
        for check in evaluation.breaches:
            assert check.job_type is not None and check.value is not None
            key = (target, check.job_type, check.slo)
            since = self._open.get(key)
            breach = Breach(target, check.job_type, check.slo, check.limit, check.value, snapshot.taken_at,
                            since or snapshot.taken_at, snapshot.clock)  # fmt: skip
            still[key] = breach.since
            breaches.append(breach)
            if since is None:
                new.append(breach)
        self._open = still
        return Watched(evaluation, tuple(breaches), tuple(new))

    def _dead_rates(self, snapshot: Snapshot) -> dict[str, float | None] | None:
        if Slo.MAX_DEAD_RATE not in self.slos.used() or not snapshot.provides("dead"):
            return None
        now = snapshot.taken_at
        counts = {row.job_type: row.dead for row in snapshot.types if row.dead is not None}
        while self._dead and (now - self._dead[0][0]).total_seconds() > DEAD_RATE_WINDOW_S:
            self._dead.popleft()
        rates: dict[str, float | None] = {}
        if self._dead:
            then, before = self._dead[0]
            elapsed = (now - then).total_seconds()
            for job_type, dead in counts.items():
                if job_type in before and elapsed > 0:  # a type first seen now has no earlier count
                    rates[job_type] = max(0, dead - before[job_type]) / elapsed
        self._dead.append((now, counts))
        return rates


def worst(breaches: Iterable[Breach]) -> Breach | None:
    """The breach to name first: the longest-lasting, then by type."""
    return min(breaches, key=lambda b: (b.since, b.job_type, b.slo.value), default=None)


def breach_masks(breaches: Iterable[Breach]) -> dict[str, int]:
    """Job type -> the SLOs it breaches, one bit per Slo in declaration order: how the history file keeps them
    (OR-ed over each bucket), so a breach can be found again after a restart; and the totals (TOTAL) -> every SLO
    any type breaches, which the charts of the whole queue mark."""
    bits = {slo: 1 << i for i, slo in enumerate(Slo)}
    masks: dict[str, int] = {}
    for breach in breaches:
        masks[breach.job_type] = masks.get(breach.job_type, 0) | bits[breach.slo]
        masks[TOTAL] = masks.get(TOTAL, 0) | bits[breach.slo]
    return masks


def breached_cells(masks: Mapping[str, int | None]) -> frozenset[tuple[str, str]]:
    """(job type, dashboard column key) of the breaches in `masks` (as `breach_masks` makes them, or as the
    history file kept them): the cells the table colours, for a moment of the past."""
    return frozenset((job_type, slo.spec.column) for job_type, mask in masks.items() if mask and job_type != TOTAL
                     for i, slo in enumerate(Slo) if mask >> i & 1)  # fmt: skip
