"""Workers, read from the claims: who holds what, who is keeping up, who is probably dead; and the two actions
that go with them — release one worker's timed-out claims, make scheduled jobs available now.

Queue tables have no heartbeat table, but a claim names its claimer (`RetrievedBy` in the native schema and
seed 000, `Processing_Server` in seed 004). Per claimer: the claims held now and how many of them are past
their timeout, the claims made in the last minute, the completions and failures of the last minute with their
p95 processing time, and the last claim seen. A worker all of whose claims are past their timeout is marked
probably dead: a live worker holds at least the claim it is working on. Shapes whose rows do not say who took
a job (`requests`, `work_queue`, `processed`) have no workers to show, and `no_claimer` says so.

Every read is one short statement from `layouts/sql/rows.py`, the native schema's as every other shape's; the
result is a frozen `WorkersView`. Changes are compare-and-set, row by row, on the
claim token (release) or on the scheduled state itself (make available), so a job claimed again meanwhile is
never touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from queuetop.act.batches import MAINTENANCE_BATCH, Progress, in_batches
from queuetop.act.queue import DEFAULT_MAX_ATTEMPTS, Queue, ReleaseResult
from queuetop.core.errors import UsageError
from queuetop.core.history import percentiles
from queuetop.db import Database
from queuetop.layouts import Layout
from queuetop.layouts.sql import Statements, statements_on

RECENT_S = 60.0  # "in the last minute": claims, completions, failures and their processing times
SEEN_S = 300.0  # a worker holding nothing is listed while it claimed something this recently
COMPLETIONS_READ = 20_000  # newest completions read per look: the counts and the p95 of a very busy minute
RELEASE_BATCH = 500  # claims looked at per round of a worker's release
UNNAMED = "(no claimer recorded)"
FIGURES = ("held", "timed_out", "claims_1m", "completed_1m", "failed_1m", "processing_p95_s", "last_claim_ago_s")


def no_claimer(layout: Layout) -> str | None:
    """Why a shape has no workers to show, or None when its claims name their claimer."""
    if layout.has("claimed_by"):
        return None
    taken = "when a job was taken but not by whom" if layout.has("claimed_at") or layout.has("c_claimed_at") \
        else "nothing about who takes a job"  # fmt: skip
    return f"layout {layout.name} has no claimer column: its rows record {taken}, so there are no workers to show"


@dataclass(frozen=True)
class WorkerStats:
    """One claimer, as its claims show it. None: a figure the shape cannot know."""

    worker: str | None  # None: claims whose claimer was not recorded
    held: int | None  # claims held now, past their timeout or not
    timed_out: int | None  # of those, past their timeout
    claims_1m: int | None  # claims made in the last minute (held now or finished since)
    completed_1m: int | None
    failed_1m: int | None
    processing_p95_s: float | None  # over the last minute's completions
    last_claim_ago_s: float | None

    @property
    def name(self) -> str:
        return UNNAMED if self.worker is None else self.worker

    @property
    def probably_dead(self) -> bool:
        """Every claim it holds is past its timeout: a live worker holds at least the one it is working on."""
        return bool(self.held) and self.timed_out == self.held


@dataclass(frozen=True)
class WorkersView:
    """The workers of one queue at one moment; `reason` says why there are none to show for a shape."""

    taken_at: datetime  # the database's time, in the layout's clock
    layout: str
    claimer_column: str | None
    workers: tuple[WorkerStats, ...] = ()
    figures: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType(dict.fromkeys(FIGURES, True)))
    reason: str | None = None
    clock: str = "utc"

    def to_json(self) -> dict[str, Any]:
        return {
            "taken_at": self.taken_at.isoformat(timespec="milliseconds") + ("Z" if self.clock == "utc" else ""),
            "layout": self.layout,
            "claimer_column": self.claimer_column,
            "reason": self.reason,
            "window_s": RECENT_S,
            "figures": dict(self.figures),
            "workers": [{**asdict(worker), "probably_dead": worker.probably_dead} for worker in self.workers],
        }


def figures_of(layout: Layout) -> dict[str, bool]:
    """Which worker figures a shape can know."""
    if not layout.has("claimed_by"):
        return dict.fromkeys(FIGURES, False)
    held = any(name in layout.states and layout.states[name].table == "queue" for name in ("claimed", "timed_out"))
    completions = _completions_name_claimer(layout)
    failures = completions and _rows_leave(layout) and layout.has("c_outcome")  # a failed or dead job's outcome
    return {"held": held, "timed_out": "timed_out" in layout.states, "claims_1m": True, "completed_1m": completions,
            "failed_1m": failures, "processing_p95_s": completions, "last_claim_ago_s": True}  # fmt: skip


def _rows_leave(layout: Layout) -> bool:
    """Whether a finished job leaves the queue table for the completed one (native): its claim is then counted
    from there."""
    return layout.completions is not None and layout.completions.table == "completed"


def _completions_name_claimer(layout: Layout) -> bool:
    """Whether the shape's completions say who processed them (and how long it took)."""
    spec = layout.completions
    if spec is None or spec.processing is None:
        return False
    return layout.has(("c_" if spec.table == "completed" else "") + "claimed_by")


def _seconds(later: datetime | None, earlier: datetime | None) -> float | None:
    return None if later is None or earlier is None else (later - earlier).total_seconds()


def _ago(now: datetime, then: datetime | None) -> float | None:
    """How long ago: never in the future, though a millisecond column rounded to the nearest one can say so."""
    ago = _seconds(now, then)
    return None if ago is None else max(0.0, ago)


# -- reading -----------------------------------------------------------------------------------------------------
def read_workers(db: Database, layout: Layout, settings: Mapping[str, Any] | None = None) -> WorkersView:
    """One look at the workers of the queue, or a view whose `reason` says why this shape has none."""
    reason = no_claimer(layout)
    figures = figures_of(layout)
    if reason is not None:
        # Nothing is read: the client's time, in the layout's clock (the JSON marks a UTC time with "Z").
        taken = datetime.now(UTC).replace(tzinfo=None) if layout.read_clock == "utc" else datetime.now()
        return WorkersView(taken, layout.name, None, figures=MappingProxyType(figures), reason=reason,
                           clock=layout.read_clock)  # fmt: skip
    # The database's now, once: the age of each worker's last claim is measured from it. Every "past its
    # timeout" and "in the last minute" is judged in the statements themselves, by the same clock.
    now = db.dialect.decode_time(db.fetchone(*statements_on(db, layout).clock())[0])
    claims, done = _rows(db, layout, settings or {})
    decode, rows_leave = db.dialect.decode_time, _rows_leave(layout)
    found: dict[str | None, dict[str, Any]] = {}

    def worker(name: str | None) -> dict[str, Any]:
        return found.setdefault(name, {"held": 0, "timed_out": 0, "claims": 0, "last": None, "completed": 0,
                                       "failed": 0, "took": []})

    for name, held, timed_out, recent, last in claims:
        row = worker(None if name is None else str(name))  # a GUID claimer (seed 000) in one spelling
        row.update(held=int(held or 0), timed_out=int(timed_out or 0), claims=int(recent or 0), last=decode(last))
    for name, outcome, claimed_at, claimed_recently, completed_at in done:
        row, claimed_at = worker(None if name is None else str(name)), decode(claimed_at)
        if outcome == "failed" or outcome == "dead":
            row["failed"] += 1
        else:
            row["completed"] += 1
            took = _seconds(decode(completed_at), claimed_at)
            if took is not None:
                row["took"].append(took)
        # A finished job's claim left the queue table with it (native): count it where it was made in the minute.
        if rows_leave and claimed_recently:
            row["claims"] += 1
            row["last"] = max(row["last"] or claimed_at, claimed_at)

    def known(figure: str, value: Any) -> Any:  # None where the shape cannot know it, never a fake 0
        return value if figures[figure] else None

    workers = tuple(sorted((
        WorkerStats(name, known("held", row["held"]), known("timed_out", row["timed_out"]), row["claims"],
                    known("completed_1m", row["completed"]), known("failed_1m", row["failed"]),
                    known("processing_p95_s", percentiles(row["took"], (95,))[0]), _ago(now, row["last"]))
        for name, row in found.items()), key=lambda w: (not w.probably_dead, -(w.held or 0), w.name)))  # fmt: skip
    return WorkersView(now, layout.name, layout.columns["claimed_by"], workers, MappingProxyType(figures),
                       clock=layout.read_clock)  # fmt: skip


def _rows(db: Database, layout: Layout, settings: Mapping[str, Any]) -> tuple[list, list]:
    """(per claimer: held, timed out, claimed in the minute, last claim; the last minute's completions)."""
    statements = Statements(db.dialect, layout)
    claims = db.fetchall(*statements.worker_claims(RECENT_S, SEEN_S, dict(settings)))
    done = []
    if _completions_name_claimer(layout):
        done = db.fetchall(*statements.worker_completions(RECENT_S, COMPLETIONS_READ, dict(settings)))
    return claims, done


# -- one worker's timed-out claims -----------------------------------------------------------------------------
def can_release_worker(layout: Layout) -> str | None:
    """Why a worker's claims cannot be released on this shape, or None when they can."""
    reason = no_claimer(layout)
    if reason is not None:
        return reason
    release = layout.release
    if release is None and "timed_out" in layout.states:
        return layout.refusal("release")
    if release is None or release.action != "clear" or not layout.has("token"):
        return f"layout {layout.name} has no claims that time out: nothing of a worker's to release"
    return None


def release_worker(db: Database, layout: Layout, worker: str | None, *, dry_run: bool = False,
                   max_attempts: int = DEFAULT_MAX_ATTEMPTS, settings: Mapping[str, Any] | None = None
                   ) -> ReleaseResult:  # fmt: skip
    """Count (dry run) or release the claims of one worker that are past their timeout, each by compare-and-set
    on its claim token, as `release` does: a claim completed or taken again meanwhile is left alone. Where a
    failure is retried (`[claim] failure = "retry"`, native), a claim out of attempts goes to the completed table
    as dead, by compare-and-set too."""
    reason = can_release_worker(layout)
    if reason is not None:
        raise UsageError(reason)
    values = {**(settings or {}), "max_attempts": max_attempts}
    queue = Queue(db, layout, max_attempts=max_attempts) if layout.release_buries else None
    statements = Statements(db.dialect, layout)
    state = layout.release.state  # type: ignore[union-attr]
    released = dead = found = 0
    seen: set[Any] = set()
    while True:
        rows = [(job_id, token) for job_id, token in
                db.fetchall(*statements.ids_of_claimer(state, worker, RELEASE_BATCH, values)) if job_id not in seen]
        if not rows:
            return ReleaseResult(timed_out=found, released=released, dead=dead, dry_run=dry_run)
        found += len(rows)
        for job_id, token in rows:
            seen.add(job_id)
            if dry_run:
                continue
            # Back to pending where it was in the queue (its claim cleared, its available time kept) while it still
            # holds that token, is still timed out (and has attempts left, where they are counted).
            back = db.execute(*statements.clear_claim(state, values, job_id, token))
            released += back
            if not back and queue is not None:  # out of attempts, and still timed out: dead
                dead += queue.bury_timed_out(job_id, str(token))


# -- scheduled jobs, available now ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScheduledResult:
    """What a make-available found (dry run) or did."""

    scheduled: int  # scheduled jobs when looked at
    made_available: int = 0
    dry_run: bool = False

    def describe(self, job_type: str | None) -> str:
        scope = f" of type {job_type!r}" if job_type else ""
        if self.scheduled == 0:
            return f"Nothing to do: no jobs{scope} are scheduled for later."
        if self.dry_run:
            return f"{self.scheduled:,} job(s){scope} scheduled for later."
        return (f"Made {self.made_available:,} scheduled job(s){scope} available now"
                + (f" ({self.scheduled - self.made_available:,} were claimed or came due meanwhile)."
                   if self.made_available < self.scheduled else "."))  # fmt: skip


def no_scheduled_state(layout: Layout) -> str | None:
    """Why a shape has no scheduled jobs to make available (or does not declare how), or None when it may."""
    if "scheduled" in layout.states and layout.has("available"):
        return layout.refusal("make available")
    return f"layout {layout.name} has no scheduled jobs: its rows have no time before which a job may not be taken"


def make_job_available(db: Database, layout: Layout, job_id: Any, settings: Mapping[str, Any] | None = None) -> int:
    """One scheduled job available now, only while it is still scheduled: 1, or 0 when it moved on meanwhile."""
    reason = no_scheduled_state(layout)
    if reason is not None:
        raise UsageError(reason)
    with db.transaction():
        return db.execute(*Statements(db.dialect, layout).change_job("make_available", "scheduled", job_id,
                                                                     dict(settings or {})))


def make_available(db: Database, layout: Layout, job_type: str | None = None, *, dry_run: bool = False,
                   settings: Mapping[str, Any] | None = None, on_progress: Progress | None = None,
                   ) -> ScheduledResult:  # fmt: skip
    """Count (dry run) or make available now the jobs (of one type) scheduled for later: UPDATEs that set their
    available time to the database's now only where a row is still scheduled, so a job claimed meanwhile is
    left as it is; in batches (`act.batches`)."""
    reason = no_scheduled_state(layout)
    if reason is not None:
        raise UsageError(reason)
    if job_type is not None and not layout.has_job_type:
        job_type = None
    statements, values = Statements(db.dialect, layout), dict(settings or {})
    found = int(db.fetchone(*statements.count_state("scheduled", job_type, values))[0])
    if dry_run or found == 0:
        return ScheduledResult(found, dry_run=dry_run)
    changed = in_batches(db, statements.make_available(job_type, values, batch=MAINTENANCE_BATCH),
                         batch=MAINTENANCE_BATCH, expected=found, on_progress=on_progress)  # fmt: skip
    return ScheduledResult(found, changed)
