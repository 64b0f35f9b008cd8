"""The end report of a load run, computed from the database and the run's claims ledger, not from counters.

After the run, the report reads where each of the run's jobs is now:
- `arrivals_after(first id - 1)`: every row at or above the run's first id, in the queue table and in the
  completed table (UNION ALL, so a job in both, or twice in one, is seen twice);
- `completions_since(run start - margin)`: the completed rows, with outcome and times;
- the claimed and timed-out rows of each type (`Statements.rows_in_states`), with the worker that holds each.
Against the ids the inserts returned (the run's own record of what it enqueued): a job seen more than once is
a duplicate, a job seen nowhere is lost; the others are completed, dead, pending or claimed, and these add up
to the enqueued count. Wait (claimed - created) and processing (completed - claimed) percentiles come from
the run's completed rows: the last attempt's claim, as the dashboard shows them.

A duplicate is a job two claims held at the same time, found in the claims ledger (see ledger.py): the tables
alone cannot show it (a completed table's key forbids an id twice; a flag is 1 however often it was set). A job
whose row is found twice in the tables (in the queue and the completed table) is counted apart.

On any other shape (`build_shape_report`), where each of the run's rows is now comes from the layout's own
states, and the ledger says what the run's workers did with it: done (the seed's completion holds, or a final
claim whose worker finished it), dead, still claimable, held at the stop, stranded (a crashed or failed claim
left as the seed leaves it: for ever on seeds 000/002/003, until a release on 001, until its timeout on 004),
or lost (anything else: gone from the tables, or taken by no worker of the run). These add up to the enqueued
count.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

from queuetop.core import format as fmt
from queuetop.core.history import percentiles
from queuetop.db import Database
from queuetop.layouts import Layout
from queuetop.layouts.sql import Statements
from queuetop.load.ids import IdLookup
from queuetop.load.ledger import Duplicate
from queuetop.load.link import OutageFigures
from queuetop.load.tally import LoadCounters, RunFacts

CLOCK_MARGIN = timedelta(seconds=60)  # completion stamps come from several connections' clocks
CLAIMS_LIMIT = 10_000_000
DUPLICATES_SHOWN = 5
CLAIMABLE = ("pending", "scheduled", "timed_out")  # a shape's states whose rows its dequeue takes (again)
STRANDED_FATE = {  # what becomes of a stranded claim, by the shape's claim
    "never": "taken by a worker that died: this shape never takes them again",
    "release": "removed, never completed (the seed's 'lost' requests): `queuetop release` moves them back",
    "timeout": "held by a worker that died or failed: taken again after their timeout, dead after the last attempt",
}


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
    layout: str = "native"
    claim_form: str | None = None
    stranded: int = 0  # crashed or failed claims left as the seed leaves them
    stranded_fate: str = ""
    found_twice: int = 0  # jobs whose row is in the tables twice (the queue and the completed table)
    duplicate_examples: tuple[Duplicate, ...] = ()
    claims: int = 0  # claim statements that took a job
    claims_ledgered: int = 0  # jobs claimed, as the ledger has them
    claim_latency_s: Percentiles = Percentiles()  # time inside the claim statement(s), busy retries included
    empty_claims: int = 0
    outages: OutageFigures = field(default_factory=OutageFigures)  # connections the server ended, and their claims

    @property
    def ok(self) -> bool:
        """Every job held by one worker at a time, found once, and none lost."""
        return self.duplicates == 0 and self.lost == 0 and self.found_twice == 0

    @property
    def accounted(self) -> int:
        return self.completed + self.other_outcomes + self.dead + self.pending + self.claimed + self.stranded

    @property
    def claims_per_s(self) -> float | None:
        return self.claims / self.elapsed_s if self.elapsed_s > 0 else None

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
        data.update(ok=self.ok, throughput_per_s=self.throughput_per_s, enqueue_rate_per_s=self.enqueue_rate_per_s,
                    claims_per_s=self.claims_per_s, busy_retries=self.driver.busy_retries)  # fmt: skip
        return data

    def summary(self) -> str:
        """One line, for the end of `queuetop demo` / `watch --with-load`."""
        left = self.pending + self.claimed
        verdict = "none lost or duplicated" if self.ok else \
            f"{self.lost:,} LOST, {self.duplicates + self.found_twice:,} DUPLICATED"
        return (f"load {self.run} ran {fmt.duration(self.elapsed_s)}: {self.enqueued:,} enqueued, "
                f"{self.completed:,} completed ({fmt.rate(self.throughput_per_s)}/s), {self.dead:,} dead, "
                f"{left:,} left in the queue; {verdict}")  # fmt: skip

    def render(self) -> str:
        """The text report of `queuetop load`."""
        how = "interrupted" if self.interrupted else "finished"
        shape = "" if self.layout == "native" else f", layout {self.layout}, claim form {self.claim_form}"
        lines = [f"load test {self.run} on {self.target} ({self.dialect}{shape}): {how} after "
                 f"{fmt.duration(self.elapsed_s)}"]

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
        row("crashed claims", self.crashed, recovered if self.layout == "native" else "")
        if self.stranded or self.layout != "native":
            row("stranded", self.stranded, self.stranded_fate if self.stranded else "")
        row("duplicates", self.duplicates, "jobs two workers held at the same time" if self.duplicates else "")
        for dup in self.duplicate_examples:
            lines.append(f"    job {dup.job_id}: held by {dup.workers[0]} and {dup.workers[1]} at once"
                         + ("" if dup.overlap_s == float("inf") else f" for {fmt.duration(dup.overlap_s)}"))
        if self.found_twice:
            row("found twice", self.found_twice, "jobs whose row is in the tables twice")
        row("lost", self.lost, "enqueued, and now nowhere (or taken by no worker)" if self.lost else "")
        lines.append(f"  {'claims':<17}{self.claims:>10,}   {fmt.rate(self.claims_per_s)}/s, "
                     f"{self.claims_ledgered:,} jobs taken, {self.empty_claims:,} found nothing")
        lines.append(f"  {'claim latency':<17}{self.claim_latency_s.labelled()}   (inside the claim statements)")
        if self.wait_s != Percentiles() or self.layout == "native":
            lines.append(f"  {'wait':<17}{self.wait_s.labelled()}   (created → claimed)")
        if self.processing_s != Percentiles() or self.layout == "native":
            lines.append(f"  {'processing':<17}{self.processing_s.labelled()}   (claimed → completed)")
        if len(self.types) > 1:
            lines += ["", *self._type_table()]
        d = self.driver
        notes = [f"{d.busy_retries:,} retries (deadlocks, busy, lock timeouts)",
                 f"{d.leases_lost:,} leases lost while working", f"{d.given_back:,} given back at stop",
                 f"{d.swept_released:,} released by the sweeper"]  # fmt: skip
        if d.foreign:
            notes.append(f"{d.foreign:,} jobs of other runs processed")
        lines += ["", "driver: " + ", ".join(notes)]
        lines += self.outages.lines()
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
            return (f"FAILED: {self.lost:,} job(s) lost and {self.duplicates + self.found_twice:,} duplicated "
                    "(this queue's operations are not exactly-once here)")  # fmt: skip
        stranded = f" + {self.stranded:,} stranded" if self.stranded else ""
        return (f"OK: every job accounted for once: {self.completed:,} completed + {self.dead:,} dead + "
                f"{self.pending + self.claimed + self.other_outcomes:,} still queued{stranded} = "
                f"{self.enqueued:,} enqueued")


def build_report(db: Database, layout: Layout, facts: RunFacts) -> LoadReport:
    """Read where each of the run's jobs is now and compare with what was enqueued."""
    dialect, statements = db.dialect, Statements(db.dialect, layout)
    ours = IdLookup(facts.ids)
    seen: Counter[int] = Counter()
    type_of: dict[int, str] = {}
    finished: dict[int, tuple[str, float | None, float | None]] = {}  # id -> (outcome, wait s, processing s)
    claims: dict[int, str] = {}
    if ours.first is not None:
        for job_id, job_type, _created in db.fetchall(*statements.arrivals_after(ours.first - 1, [])):
            job_id = int(job_id)
            if job_id in ours:
                seen[job_id] += 1
                type_of[job_id] = job_type
        for job_id, _type, created, claimed, completed, outcome in db.fetchall(
            *statements.completions_since(facts.started_at - CLOCK_MARGIN)
        ):
            job_id = int(job_id)
            if job_id in ours:
                finished[job_id] = (outcome, *_latencies(dialect, created, claimed, completed))
    for job_type in facts.config.type_names:
        for job_id, worker in db.fetchall(*statements.rows_in_states(
                ["claimed", "timed_out"], job_type, ["id", "claimed_by"], ["timeout", "id"], CLAIMS_LIMIT)):
            claims[int(job_id)] = worker

    duplicates = facts.ledger.duplicates()
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
        duplicates=len(duplicates), found_twice=sum(1 for n in seen.values() if n > 1), lost=ours.count - len(seen),
        duplicate_examples=tuple(duplicates[:DUPLICATES_SHOWN]), **_claim_figures(facts),
        wait_s=Percentiles.of([w for ws in waits.values() for w in ws]),
        processing_s=Percentiles.of([p for ps in work.values() for p in ps]),
        types=types, driver=facts.counters, config=facts.config.describe(), errors=tuple(facts.errors),
        stuck_threads=facts.stuck_threads, outages=facts.outages,
    )  # fmt: skip


def _latencies(dialect: Any, created: Any, claimed: Any, completed: Any) -> tuple[float | None, float | None]:
    created, claimed, completed = (dialect.decode_time(v) for v in (created, claimed, completed))
    wait = (claimed - created).total_seconds() if claimed and created else None
    processing = (completed - claimed).total_seconds() if claimed and completed else None
    return wait, processing


def _claim_figures(facts: RunFacts) -> dict[str, Any]:
    return {"claims": facts.counters.claims, "claims_ledgered": len(facts.ledger),
            "claim_latency_s": Percentiles.of(facts.claim_latencies_s), "empty_claims": facts.counters.empty_claims,
            "layout": facts.layout.name, "claim_form": facts.claim_form}  # fmt: skip


def build_shape_report(db: Database, layout: Layout, facts: RunFacts) -> LoadReport:
    """Where each of the run's jobs is now on a shape other than native (see the module's docstring)."""
    statements, settings = Statements(db.dialect, layout), facts.settings
    if facts.baseline_id is not None:
        lookup = IdLookup(facts.ids)
        ours, enqueued, low_id, since_s = lookup.__contains__, lookup.count, facts.baseline_id + 1, None
    else:
        ours, enqueued, low_id = facts.guid_ids.__contains__, len(facts.guid_ids), None
        since_s = facts.elapsed_s + CLOCK_MARGIN.total_seconds()
    state: dict[Any, str | None] = {}
    seen: Counter[Any] = Counter()
    for table in ("queue", "completed") if layout.completed_table else ("queue",):
        for job_id, row_state in db.fetchall(*statements.row_states(table, settings, low_id, since_s)):
            if ours(job_id):
                seen[job_id] += 1
                state[job_id] = row_state
    outcome_of = facts.ledger.outcomes()
    figures: Counter[str] = Counter()
    for job_id in _enqueued_ids(facts):
        outcome = outcome_of(job_id)
        where = state.get(job_id, "missing")
        if where == "done" or (where is None and outcome == "finished"):
            figures["completed"] += 1
        elif where in CLAIMABLE:
            figures["pending"] += 1
        elif where == "dead":
            figures["dead"] += 1
        elif where in (None, "claimed", "lost") and outcome in ("crashed", "failed"):
            figures["stranded"] += 1
        elif where == "claimed" and outcome == "held":
            figures["claimed"] += 1
        else:  # gone from the tables, or taken (or lost) with no worker of this run holding it
            figures["lost"] += 1
    waits, work = _shape_latencies(db, statements, settings, facts, ours)
    duplicates = facts.ledger.duplicates()
    return LoadReport(
        run=facts.tag, target=facts.target, dialect=db.dialect.name, elapsed_s=facts.elapsed_s,
        producing_s=facts.producing_s, interrupted=facts.interrupted, enqueued=enqueued,
        completed=figures["completed"], dead=figures["dead"], pending=figures["pending"], claimed=figures["claimed"],
        other_outcomes=0, failed_attempts=facts.counters.failed, crashed=facts.counters.crashed,
        crashed_recovered=0, duplicates=len(duplicates), lost=figures["lost"],
        wait_s=Percentiles.of(waits), processing_s=Percentiles.of(work), types=(), driver=facts.counters,
        config=facts.config.describe(), errors=tuple(facts.errors), stuck_threads=facts.stuck_threads,
        outages=facts.outages,
        stranded=figures["stranded"], stranded_fate=STRANDED_FATE[layout.claim.taken_back if layout.claim else "never"],
        found_twice=sum(1 for n in seen.values() if n > 1), duplicate_examples=tuple(duplicates[:DUPLICATES_SHOWN]),
        **_claim_figures(facts),
    )  # fmt: skip


def _enqueued_ids(facts: RunFacts) -> list[Any]:
    if facts.baseline_id is None:
        return list(facts.guid_ids)
    return [job_id for first, last in facts.ids.runs() for job_id in range(first, last + 1)]


def _shape_latencies(db: Database, statements: Statements, settings: dict[str, Any], facts: RunFacts,
                     ours: Any) -> tuple[list[float], list[float]]:  # fmt: skip
    """Wait and processing of the run's completed jobs, by the shape's completion rule (none: empty)."""
    if statements.layout.completions is None:
        return [], []
    now = db.dialect.decode_time(db.fetchone(*statements.clock())[0])
    since = now - timedelta(seconds=facts.elapsed_s) - CLOCK_MARGIN
    low_id = facts.baseline_id + 1 if facts.baseline_id is not None and statements.ranged else None
    waits, work = [], []
    rows = db.fetchall(*statements.completions_after(db.dialect.encode_time(since), settings, low_id))
    for job_id, _type, _at, wait_from, wait_to, work_from, work_to in rows:
        if ours(job_id):
            wait, _ = _latencies(db.dialect, wait_from, wait_to, None)
            processing, _ = _latencies(db.dialect, work_from, work_to, None)
            if wait is not None:
                waits.append(wait)
            if processing is not None:
                work.append(processing)
    return waits, work
