"""The end report of a load run, computed from the database, not from the driver's counters.

After the run, the report reads where each of the run's jobs is now:
- `arrivals_after(first id - 1)`: every row at or above the run's first id, in the queue table and in the
  completed table (UNION ALL, so a job in both, or twice in one, is seen twice);
- `completions_since(run start - margin)`: the completed rows, with outcome and times;
- `current_claims(type)`: the claims in flight, with the worker that holds each.
Against the ids the inserts returned (the run's own record of what it enqueued): a job seen more than once is
a duplicate, a job seen nowhere is lost; the others are completed, dead, pending or claimed, and these add up
to the enqueued count. Wait (claimed - created) and processing (completed - claimed) percentiles come from
the run's completed rows: the last attempt's claim, as the dashboard shows them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

from queuetop import format as fmt
from queuetop.db import Database
from queuetop.history import percentiles
from queuetop.layouts import Layout
from queuetop.load.driver import LoadCounters, RunFacts
from queuetop.load.ids import IdLookup

CLOCK_MARGIN = timedelta(seconds=60)  # completion stamps come from several connections' clocks
CLAIMS_LIMIT = 10_000_000


@dataclass(frozen=True)
class Percentiles:
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None

    @classmethod
    def of(cls, values: list[float]) -> Percentiles:
        return cls(*percentiles(values))

    def text(self) -> str:
        return "/".join(fmt.duration(v) for v in (self.p50, self.p95, self.p99))

    def labelled(self) -> str:
        return "  ".join(f"{name} {fmt.duration(v):>5}" for name, v in (("p50", self.p50), ("p95", self.p95),
                                                                          ("p99", self.p99)))  # fmt: skip


@dataclass(frozen=True)
class TypeReport:
    job_type: str
    enqueued: int = 0
    completed: int = 0
    dead: int = 0
    pending: int = 0
    claimed: int = 0
    wait_s: Percentiles = Percentiles()
    processing_s: Percentiles = Percentiles()


@dataclass(frozen=True)
class LoadReport:
    """How a load run went. `completed` counts jobs that succeeded; every figure but the driver's comes
    from the database."""

    run: str
    target: str
    dialect: str
    elapsed_s: float
    producing_s: float
    interrupted: bool
    enqueued: int
    completed: int
    dead: int
    pending: int
    claimed: int
    other_outcomes: int  # completed rows with an outcome the driver never writes ("failed")
    failed_attempts: int  # from the driver: failed attempts are not rows
    crashed: int  # from the driver: claims it abandoned
    crashed_recovered: int  # of those, the ones no longer held by the worker that abandoned them
    duplicates: int
    lost: int
    wait_s: Percentiles
    processing_s: Percentiles
    types: tuple[TypeReport, ...]
    driver: LoadCounters
    config: dict[str, Any] = field(default_factory=dict)
    errors: tuple[str, ...] = ()
    stuck_threads: int = 0

    @property
    def ok(self) -> bool:
        """Every job processed at most once and none lost."""
        return self.duplicates == 0 and self.lost == 0

    @property
    def accounted(self) -> int:
        return self.completed + self.other_outcomes + self.dead + self.pending + self.claimed

    @property
    def throughput_per_s(self) -> float | None:
        return self.completed / self.elapsed_s if self.elapsed_s > 0 else None

    @property
    def enqueue_rate_per_s(self) -> float | None:
        return self.enqueued / self.producing_s if self.producing_s > 0 else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("driver")
        data["driver"] = {**asdict(self.driver), "settled": self.driver.settled}
        data.update(ok=self.ok, throughput_per_s=self.throughput_per_s, enqueue_rate_per_s=self.enqueue_rate_per_s)
        return data

    def summary(self) -> str:
        """One line, for the end of `queuetop demo` / `watch --with-load`."""
        left = self.pending + self.claimed
        verdict = "none lost or duplicated" if self.ok else f"{self.lost:,} LOST, {self.duplicates:,} DUPLICATED"
        return (f"load {self.run} ran {fmt.duration(self.elapsed_s)}: {self.enqueued:,} enqueued, "
                f"{self.completed:,} completed ({fmt.rate(self.throughput_per_s)}/s), {self.dead:,} dead, "
                f"{left:,} left in the queue; {verdict}")  # fmt: skip

    def render(self) -> str:
        """The text report of `queuetop load`."""
        how = "interrupted" if self.interrupted else "finished"
        lines = [f"load test {self.run} on {self.target} ({self.dialect}): {how} after {fmt.duration(self.elapsed_s)}"]

        def row(label: str, value: int, note: str = "") -> None:
            lines.append(f"  {label:<17}{value:>10,}" + (f"   {note}" if note else ""))

        row("enqueued", self.enqueued, f"{fmt.rate(self.enqueue_rate_per_s)}/s for {fmt.duration(self.producing_s)}")
        row("completed", self.completed, f"{fmt.rate(self.throughput_per_s)}/s")
        row("dead", self.dead, f"out of attempts ({self.config.get('max_attempts', '?')})")
        if self.other_outcomes:
            row("other outcomes", self.other_outcomes)
        row("still pending", self.pending)
        row("still claimed", self.claimed, "claims held after the stop" if self.claimed else "")
        row("failed attempts", self.failed_attempts, "retried, or dead on the last attempt")
        recovered = f"{self.crashed_recovered:,} released and taken back" if self.crashed else ""
        row("crashed claims", self.crashed, recovered)
        row("duplicates", self.duplicates, "jobs found more than once" if self.duplicates else "")
        row("lost", self.lost, "enqueued, and now nowhere" if self.lost else "")
        lines.append(f"  {'wait':<17}{self.wait_s.labelled()}   (created → claimed)")
        lines.append(f"  {'processing':<17}{self.processing_s.labelled()}   (claimed → completed)")
        if len(self.types) > 1:
            lines += ["", *self._type_table()]
        d = self.driver
        notes = [f"{d.busy_retries:,} busy retries", f"{d.leases_lost:,} leases lost while working",
                 f"{d.given_back:,} given back at stop", f"{d.swept_released:,} released by the sweeper"]  # fmt: skip
        if d.foreign:
            notes.append(f"{d.foreign:,} jobs of other runs processed")
        lines += ["", "driver: " + ", ".join(notes)]
        if self.stuck_threads:
            lines.append(f"warning: {self.stuck_threads} thread(s) did not stop in time; their claims may remain")
        lines.extend(f"error: {e}" for e in self.errors)
        lines.append(self._verdict())
        return "\n".join(lines)

    def _type_table(self) -> list[str]:
        header = ("TYPE", "ENQUEUED", "COMPLETED", "DEAD", "PENDING", "CLAIMED", "WAIT p50/95/99", "PROC p50/95/99")
        rows = [(t.job_type, f"{t.enqueued:,}", f"{t.completed:,}", f"{t.dead:,}", f"{t.pending:,}",
                 f"{t.claimed:,}", t.wait_s.text(), t.processing_s.text()) for t in self.types]  # fmt: skip
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

        def line(cells: tuple[str, ...]) -> str:
            return "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                    for i, (c, w) in enumerate(zip(cells, widths, strict=True)))  # fmt: skip

        return [line(r) for r in (header, *rows)]

    def _verdict(self) -> str:
        if not self.ok:
            return (f"FAILED: {self.lost:,} job(s) lost and {self.duplicates:,} duplicated "
                    "(queue operations are not exactly-once here)")  # fmt: skip
        return (f"OK: every job accounted for once: {self.completed:,} completed + {self.dead:,} dead + "
                f"{self.pending + self.claimed + self.other_outcomes:,} still queued = {self.enqueued:,} enqueued")


def build_report(db: Database, layout: Layout, facts: RunFacts) -> LoadReport:
    """Read where each of the run's jobs is now and compare with what was enqueued."""
    dialect = db.dialect
    ours = IdLookup(facts.ids)
    seen: Counter[int] = Counter()
    type_of: dict[int, str] = {}
    finished: dict[int, tuple[str, float | None, float | None]] = {}  # id -> (outcome, wait s, processing s)
    claims: dict[int, str] = {}
    if ours.first is not None:
        for job_id, job_type, _created in dialect.arrivals_after(db, layout, ours.first - 1, []):
            job_id = int(job_id)
            if job_id in ours:
                seen[job_id] += 1
                type_of[job_id] = job_type
        for job_id, _type, created, claimed, completed, outcome in dialect.completions_since(
            db, layout, facts.started_at - CLOCK_MARGIN
        ):
            job_id = int(job_id)
            if job_id in ours:
                finished[job_id] = (outcome, *_latencies(dialect, created, claimed, completed))
    for job_type in facts.config.type_names:
        for job_id, worker, *_ in dialect.current_claims(db, layout, job_type, CLAIMS_LIMIT):
            claims[int(job_id)] = worker

    state_by_type: dict[str, Counter[str]] = defaultdict(Counter)
    waits: dict[str, list[float]] = defaultdict(list)
    work: dict[str, list[float]] = defaultdict(list)
    for job_id, job_type in type_of.items():
        if job_id in finished:
            outcome, wait, processing = finished[job_id]
            state = {"succeeded": "completed", "dead": "dead"}.get(outcome, "other")
            if state == "completed":
                if wait is not None:
                    waits[job_type].append(wait)
                if processing is not None:
                    work[job_type].append(processing)
        else:
            state = "claimed" if job_id in claims else "pending"
        state_by_type[job_type][state] += 1
    totals: Counter[str] = sum(state_by_type.values(), Counter())
    still_held = sum(1 for job_id, worker in facts.abandoned if claims.get(job_id) == worker)
    types = tuple(
        TypeReport(job_type=name, enqueued=facts.enqueued_by_type.get(name, 0),
                   completed=state_by_type[name]["completed"], dead=state_by_type[name]["dead"],
                   pending=state_by_type[name]["pending"], claimed=state_by_type[name]["claimed"],
                   wait_s=Percentiles.of(waits[name]), processing_s=Percentiles.of(work[name]))
        for name in facts.config.type_names
    )  # fmt: skip
    return LoadReport(
        run=facts.tag, target=facts.target, dialect=dialect.name, elapsed_s=facts.elapsed_s,
        producing_s=facts.producing_s, interrupted=facts.interrupted, enqueued=ours.count,
        completed=totals["completed"], dead=totals["dead"], pending=totals["pending"], claimed=totals["claimed"],
        other_outcomes=totals["other"], failed_attempts=facts.counters.failed, crashed=facts.counters.crashed,
        crashed_recovered=facts.counters.crashed - still_held,
        duplicates=sum(1 for n in seen.values() if n > 1), lost=ours.count - len(seen),
        wait_s=Percentiles.of([w for ws in waits.values() for w in ws]),
        processing_s=Percentiles.of([p for ps in work.values() for p in ps]),
        types=types, driver=facts.counters, config=facts.config.describe(), errors=tuple(facts.errors),
        stuck_threads=facts.stuck_threads,
    )  # fmt: skip


def _latencies(dialect: Any, created: Any, claimed: Any, completed: Any) -> tuple[float | None, float | None]:
    created, claimed, completed = (dialect.decode_time(v) for v in (created, claimed, completed))
    wait = (claimed - created).total_seconds() if claimed and created else None
    processing = (completed - claimed).total_seconds() if claimed and completed else None
    return wait, processing
