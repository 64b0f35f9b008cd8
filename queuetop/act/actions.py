"""What the dashboard does besides watching: enqueue test jobs, release timed-out claims, read one type's detail.

Each runs on a connection of its own, never the monitor's: writes on a "worker" connection through the Queue
class (so the dashboard enqueues and releases exactly as the CLI and real workers do), drill-down reads on a
second "monitor" connection (short timeouts, no transaction). Connections open on first use, are reused
while they work, and are dropped after an error so the next call starts afresh. The dashboard calls these
from worker threads, one call at a time per connection (a lock each), never on the UI thread.

Form parsing lives here too, so the modal's inline errors are the same words as the CLI's and are tested
without a screen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from queuetop.act.jobs import JobPage, JobView, read_job, read_jobs
from queuetop.act.queue import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PRIORITY,
    Queue,
    ReleaseResult,
    check_count,
    check_job_type,
    check_priority,
)
from queuetop.act.shape_queue import ShapeQueue, check_guid
from queuetop.act.workers import (
    ScheduledResult,
    WorkersView,
    make_available,
    make_job_available,
    read_workers,
    release_worker,
)
from queuetop.db import Database, QueuetopError, Target, UsageError
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.sql import statements_on
from queuetop.watch.watermarks import line_before

DETAIL_ROWS = 20  # rows per drill-down table
RECENT_S = 15 * 60.0  # how far back "recent completions" look
CREATED_BY = "queuetop-dashboard"

Opener = Callable[..., Database]


# -- enqueue ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EnqueueRequest:
    """A validated request from the enqueue form."""

    job_type: str | None
    count: int = 1
    info: str | None = None
    priority: int | None = DEFAULT_PRIORITY  # None: the table's default


@dataclass(frozen=True)
class EnqueueResult:
    job_type: str
    ids: tuple[int, ...]

    def describe(self) -> str:
        n = len(self.ids)
        kind = f" of type {self.job_type!r}" if self.job_type is not None else ""
        if n == 1:
            return f"enqueued 1 job{kind}: id {self.ids[0]}"
        listed = ", ".join(map(str, self.ids)) if n <= 5 else f"{self.ids[0]}..{self.ids[-1]}"
        return f"enqueued {n:,} jobs{kind}: ids {listed}"


def parse_enqueue_form(job_type: str, count: str, payload: str, priority: str, layout: Layout = NATIVE
                       ) -> tuple[EnqueueRequest | None, dict[str, str]]:  # fmt: skip
    """The form's text fields → (request, {}) when all are valid, else (None, {field: error}). Only the fields
    the layout's insert takes are read; the others are ignored."""
    return _parse_shape_form(job_type, count, payload, priority, layout)


def _parse_shape_form(job_type: str, count: str, payload: str, priority: str, layout: Layout
                      ) -> tuple[EnqueueRequest | None, dict[str, str]]:  # fmt: skip
    errors: dict[str, str] = {}
    fields = layout.enqueue_takes
    checked_type: str | None = None
    if "type" in fields:
        try:
            checked_type = check_guid(job_type.strip()) if layout.type_of("type") == "guid" else \
                check_job_type(job_type.strip())
        except UsageError as exc:
            errors["job_type"] = str(exc)
    try:
        checked_count = check_count(_whole_number(count))
    except UsageError as exc:
        errors["count"] = str(exc)
    checked_priority = None
    if "priority" in fields and priority.strip():
        try:
            checked_priority = check_priority(_whole_number(priority))
        except UsageError as exc:
            errors["priority"] = str(exc)
    if errors:
        return None, errors
    info = (payload or None) if "info" in fields else None
    return EnqueueRequest(checked_type, checked_count, info, checked_priority), {}


def _whole_number(text: str) -> int | str:
    """'1,000' and '1_000' → 1000; anything else is returned as typed, for the error message to quote."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    try:
        return int(cleaned)
    except ValueError:
        return text.strip()


# -- release ---------------------------------------------------------------------------------------------
def describe_release(result: ReleaseResult, job_type: str | None, what: str | None = None) -> str:
    """One sentence for a dry run or a release, saying plainly when there is nothing to do. `what`: the noun of
    a shape whose release is not the native one ("lost requests")."""
    scope = f" of type {job_type!r}" if job_type else ""
    if what is not None:
        if result.timed_out == 0:
            return f"Nothing to release: no {what}{scope}."
        if result.dry_run:
            return f"{result.timed_out:,} {what}{scope} found."
        return f"Released {result.released:,} of {result.timed_out:,} {what}{scope}."
    if result.timed_out == 0:
        return f"Nothing to release: no claims{scope} are past their timeout."
    if result.dry_run:
        if result.timed_out == 1:
            return f"1 claim{scope} is past its timeout."
        return f"{result.timed_out:,} claims{scope} are past their timeout."
    claims = "1 timed-out claim" if result.released == 1 else f"{result.released:,} timed-out claims"
    return f"Released {claims}{scope} back to pending; {result.dead:,} out of attempts moved to dead."


# -- drill-down ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PendingJob:
    id: int | str  # seed 001's ids are GUIDs
    age_s: float | None  # since created; None where the shape keeps no time
    priority: int | None
    attempts: int | None
    available_in_s: float  # > 0: not available yet (a retry delay or a scheduled job)
    info: str | None  # an excerpt


@dataclass(frozen=True)
class ClaimedJob:
    id: int | str
    worker: str | None
    claimed_for_s: float
    expires_in_s: float | None  # negative: overdue by that much
    attempts: int | None


@dataclass(frozen=True)
class CompletedJob:
    id: int | str
    outcome: str
    wait_s: float | None  # claimed - created
    processing_s: float | None  # completed - claimed
    ago_s: float


@dataclass(frozen=True)
class TypeDetail:
    """One job type, looked at closely: its oldest pending jobs, claims in flight, recent completions."""

    job_type: str
    taken_at: datetime
    pending: tuple[PendingJob, ...] = ()
    claims: tuple[ClaimedJob, ...] = ()
    completions: tuple[CompletedJob, ...] = field(default=())


def _seconds_between(later: datetime | None, earlier: datetime | None) -> float | None:
    return None if later is None or earlier is None else (later - earlier).total_seconds()


# -- the connections -------------------------------------------------------------------------------------
class _Connection:
    """One lazily opened connection, one caller at a time, dropped after an error."""

    def __init__(self, target: Target, purpose: str, opener: Opener) -> None:
        self.target, self.purpose, self._open = target, purpose, opener
        self._db: Database | None = None
        self._lock = threading.Lock()

    @contextmanager
    def use(self) -> Iterator[Database]:
        with self._lock:
            if self._db is None:
                self._db = self._open(self.target, purpose=self.purpose)
            try:
                yield self._db
            except UsageError:
                raise  # the request was wrong, the connection is fine
            except BaseException:
                self._drop()
                raise

    def close(self, wait_s: float = 2.0) -> None:
        """Close; a statement still in flight after `wait_s` has its connection cut (it ends as NotAnswering)."""
        if self._lock.acquire(timeout=wait_s):
            try:
                self._drop()
            finally:
                self._lock.release()
        elif self._db is not None:
            self._db.abandon()

    def _drop(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class Actions:
    """The dashboard's writes and drill-down reads, each on its own connection. Raises QueuetopError."""

    def __init__(self, target: Target, layout: Layout = NATIVE, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 open_database: Opener = Database.open, settings: dict | None = None) -> None:  # fmt: skip
        self.target = target
        self.layout = layout
        self.max_attempts = max_attempts
        self.settings = dict(settings or {})
        self._writer = _Connection(target, "worker", open_database)
        self._reader = _Connection(target, "monitor", open_database)
        self._workers_reader = _Connection(target, "monitor", open_database)  # the workers panel reads on its own

    def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        fields = self.layout.enqueue_takes  # a form may carry what this shape has no column for: not stored
        job_type = request.job_type if "type" in fields else None
        with self._writer.use() as db:
            ids = ShapeQueue(db, self.layout, self.settings).enqueue_many(
                job_type, request.count, info=request.info if "info" in fields else None,
                priority=request.priority if "priority" in fields else None, created_by=CREATED_BY)
        return EnqueueResult(job_type, tuple(ids))

    def count_timed_out(self, job_type: str | None = None) -> ReleaseResult:
        """The dry run: how many claims (of one type, or all) are past their timeout now."""
        return self._release(job_type, dry_run=True)

    def release(self, job_type: str | None = None) -> ReleaseResult:
        """Release the timed-out claims (of one type, or all); out of attempts → dead."""
        return self._release(job_type, dry_run=False)

    def _release(self, job_type: str | None, dry_run: bool) -> ReleaseResult:
        job_type = job_type if self.layout.has_job_type else None  # the one row of an untyped shape
        with self._writer.use() as db:
            if self.layout.batch_claims and job_type is not None and not Queue(db, self.layout).has_job_type(job_type):
                # A type with only finished jobs left (dead ones, say) has no claims at all.
                return ReleaseResult(timed_out=0, dry_run=dry_run)
            return self._shape_queue(db).release(job_type, dry_run=dry_run)

    def dead(self, action: str, job_type: str | None = None) -> int:
        """"count", "retry" (back to pending, as if never tried) or "delete" the dead jobs of a type (or all)."""
        job_type = job_type if self.layout.has_job_type else None
        with self._writer.use() as db:
            return self._shape_queue(db).dead(action, job_type)

    def type_detail(self, job_type: str, limit: int = DETAIL_ROWS) -> TypeDetail:
        """The drill-down of any shape: what its states and completions can show (None where it keeps nothing)."""
        layout, settings = self.layout, self.settings
        wanted = job_type if layout.has_job_type else None
        with self._reader.use() as db:
            statements, decode = statements_on(db, layout), db.dialect.decode_time
            now = decode(db.fetchone(f"SELECT {db.dialect.now_sql(layout.clock)}")[0])
            pending_rows = db.fetchall(*statements.rows_in_states(
                ["pending"], wanted, ["id", "created", "available", "priority", "attempts", "info"],
                ["created", "id"], limit, settings))
            claim_states = [s for s in ("claimed", "timed_out") if s in layout.states]
            claim_rows = []
            if claim_states and layout.states[claim_states[0]].table == "queue":
                claim_rows = db.fetchall(*statements.rows_in_states(
                    claim_states, wanted, ["id", "claimed_by", "claimed_at", "timeout", "attempts"],
                    ["timeout", "id"], limit, settings))
            completion_rows = []
            if layout.completions is not None:
                since = now - timedelta(seconds=RECENT_S)
                low = line_before(db, statements, since) if layout.log_lines else None  # a range of the log's key
                completion_rows = db.fetchall(*statements.recent_completions(
                    wanted, db.dialect.encode_value(layout.type_of(layout.completions.at), since), limit, settings,
                    low))
        pending = tuple(
            PendingJob(id=job_id, age_s=_seconds_between(now, decode(created)),
                       priority=None if priority is None else int(priority),
                       attempts=None if attempts is None else int(attempts),
                       available_in_s=max(0.0, _seconds_between(decode(available), now) or 0.0),
                       info=None if info is None else str(info)[:200])
            for job_id, created, available, priority, attempts, info in pending_rows
        )  # fmt: skip
        claims = tuple(
            ClaimedJob(id=job_id, worker=None if worker is None else str(worker),
                       claimed_for_s=_seconds_between(now, decode(claimed_at)) or 0.0,
                       expires_in_s=_seconds_between(decode(timeout), now),
                       attempts=None if attempts is None else int(attempts))
            for job_id, worker, claimed_at, timeout, attempts in claim_rows
        )  # fmt: skip
        completions = tuple(
            CompletedJob(id=job_id, outcome=outcome or "done",
                         wait_s=_seconds_between(decode(wait_to), decode(wait_from)),
                         processing_s=None if outcome == "dead" else _seconds_between(decode(work_to),
                                                                                      decode(work_from)),
                         ago_s=_seconds_between(now, decode(at)) or 0.0)
            for job_id, at, wait_from, wait_to, work_from, work_to, outcome in completion_rows
        )  # fmt: skip
        return TypeDetail(job_type, now, pending, claims, completions)

    # -- workers and scheduled jobs (queuetop.act.workers) ------------------------------------------------------
    def workers(self) -> WorkersView:
        """Who holds what, read on the workers panel's own connection."""
        with self._workers_reader.use() as db:
            return read_workers(db, self.layout, self.settings)

    def release_worker(self, worker: str | None, dry_run: bool = False) -> ReleaseResult:
        """Count (dry run) or release one worker's claims past their timeout, by compare-and-set on each token."""
        with self._writer.use() as db:
            return release_worker(db, self.layout, worker, dry_run=dry_run, max_attempts=self.max_attempts,
                                  settings=self.settings)  # fmt: skip

    def _shape_queue(self, db: Database) -> ShapeQueue:
        """The shape's queue on `db`, with the settings and the attempt limit its releases and dead jobs are
        judged by."""
        return ShapeQueue(db, self.layout, {**self.settings, "max_attempts": self.max_attempts})

    def dead_job(self, action: str, job_id: Any) -> int:
        """Retry or delete one dead job while it is still dead (compare-and-set): 1, or 0 when it moved on."""
        with self._writer.use() as db:
            return self._shape_queue(db).dead_job(action, job_id)

    def release_job(self, job_id: Any) -> ReleaseResult:
        """Release one claim while it is still past its timeout (`ShapeQueue.release_job`)."""
        with self._writer.use() as db:
            return self._shape_queue(db).release_job(job_id)

    def make_job_available(self, job_id: Any) -> int:
        """One scheduled job available now while it is still scheduled: 1, or 0 when it moved on."""
        with self._writer.use() as db:
            return make_job_available(db, self.layout, job_id, self.settings)

    def jobs(self, state: str, job_type: str, limit: int = DETAIL_ROWS) -> JobPage:
        """The first page of a state's jobs of one type (`jobs.read_jobs`, `queuetop jobs`'s own read), on the
        drill-down's connection: its first list when switched to scheduled or dead."""
        with self._reader.use() as db:
            return read_jobs(db, self.layout, state, job_type if self.layout.has_job_type else None, None, limit,
                             self.settings)  # fmt: skip

    def job(self, job_id: Any) -> JobView | None:
        """One job by its id, wherever it is now (`jobs.read_job`), on the drill-down's connection."""
        with self._reader.use() as db:
            return read_job(db, self.layout, job_id, self.settings)

    def make_available(self, job_type: str | None, dry_run: bool = False) -> ScheduledResult:
        """Count (dry run) or make available now the jobs (of one type) scheduled for later."""
        with self._writer.use() as db:
            return make_available(db, self.layout, job_type, dry_run=dry_run, settings=self.settings)

    def close(self, wait_s: float = 2.0) -> None:
        self._writer.close(wait_s)
        self._reader.close(wait_s)
        self._workers_reader.close(wait_s)


__all__ = [
    "Actions", "ClaimedJob", "CompletedJob", "EnqueueRequest", "EnqueueResult", "PendingJob", "QueuetopError",
    "ReleaseResult", "ScheduledResult", "TypeDetail", "WorkersView", "describe_release", "parse_enqueue_form",
]  # fmt: skip
