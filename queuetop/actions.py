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

from queuetop.db import Database, QueuetopError, Target, UsageError
from queuetop.layouts import NATIVE, Layout
from queuetop.queue import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PRIORITY,
    Queue,
    ReleaseResult,
    check_count,
    check_job_type,
    check_priority,
)

DETAIL_ROWS = 20  # rows per drill-down table
RECENT_S = 15 * 60.0  # how far back "recent completions" look
CREATED_BY = "queuetop-dashboard"

Opener = Callable[..., Database]


# -- enqueue ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EnqueueRequest:
    """A validated request from the enqueue form."""

    job_type: str
    count: int = 1
    info: str | None = None
    priority: int = DEFAULT_PRIORITY


@dataclass(frozen=True)
class EnqueueResult:
    job_type: str
    ids: tuple[int, ...]

    def describe(self) -> str:
        n = len(self.ids)
        if n == 1:
            return f"enqueued 1 job of type {self.job_type!r}: id {self.ids[0]}"
        listed = ", ".join(map(str, self.ids)) if n <= 5 else f"{self.ids[0]}..{self.ids[-1]}"
        return f"enqueued {n:,} jobs of type {self.job_type!r}: ids {listed}"


def parse_enqueue_form(job_type: str, count: str, payload: str, priority: str) -> tuple[EnqueueRequest | None,
                                                                                      dict[str, str]]:  # fmt: skip
    """The form's text fields → (request, {}) when all are valid, else (None, {field: error})."""
    errors: dict[str, str] = {}

    def check(name: str, checker: Callable[[object], object], value: object) -> object:
        try:
            return checker(value)
        except UsageError as exc:
            errors[name] = str(exc)
            return None

    checked_type = check("job_type", check_job_type, job_type.strip())
    checked_count = check("count", check_count, _whole_number(count))
    checked_priority = check("priority", check_priority, _whole_number(priority))
    if errors:
        return None, errors
    return EnqueueRequest(str(checked_type), int(checked_count), payload or None, int(checked_priority)), {}  # type: ignore[arg-type]


def _whole_number(text: str) -> int | str:
    """'1,000' and '1_000' → 1000; anything else is returned as typed, for the error message to quote."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    try:
        return int(cleaned)
    except ValueError:
        return text.strip()


# -- release ---------------------------------------------------------------------------------------------
def describe_release(result: ReleaseResult, job_type: str | None) -> str:
    """One sentence for a dry run or a release, saying plainly when there is nothing to do."""
    scope = f" of type {job_type!r}" if job_type else ""
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
    id: int
    age_s: float  # since created
    priority: int
    attempts: int
    available_in_s: float  # > 0: not available yet (a retry delay or a scheduled job)
    info: str | None  # an excerpt


@dataclass(frozen=True)
class ClaimedJob:
    id: int
    worker: str | None
    claimed_for_s: float
    expires_in_s: float | None  # negative: overdue by that much
    attempts: int


@dataclass(frozen=True)
class CompletedJob:
    id: int
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
        if self._lock.acquire(timeout=wait_s):
            try:
                self._drop()
            finally:
                self._lock.release()

    def _drop(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class Actions:
    """The dashboard's writes and drill-down reads, each on its own connection. Raises QueuetopError."""

    def __init__(self, target: Target, layout: Layout = NATIVE, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 open_database: Opener = Database.open) -> None:  # fmt: skip
        self.target = target
        self.layout = layout
        self.max_attempts = max_attempts
        self._writer = _Connection(target, "worker", open_database)
        self._reader = _Connection(target, "monitor", open_database)

    def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        with self._writer.use() as db:
            ids = Queue(db, self.layout).enqueue_many(request.job_type, request.count, info=request.info,
                                                      priority=request.priority, created_by=CREATED_BY)  # fmt: skip
        return EnqueueResult(request.job_type, tuple(ids))

    def count_timed_out(self, job_type: str | None = None) -> ReleaseResult:
        """The dry run: how many claims (of one type, or all) are past their timeout now."""
        return self._release(job_type, dry_run=True)

    def release(self, job_type: str | None = None) -> ReleaseResult:
        """Release the timed-out claims (of one type, or all); out of attempts → dead."""
        return self._release(job_type, dry_run=False)

    def _release(self, job_type: str | None, dry_run: bool) -> ReleaseResult:
        with self._writer.use() as db:
            queue = Queue(db, self.layout, max_attempts=self.max_attempts)
            if job_type is not None and not queue.has_job_type(job_type):
                # A type with only finished jobs left (dead ones, say) has no claims at all.
                return ReleaseResult(timed_out=0, dry_run=dry_run)
            return queue.release_timed_out(job_type, dry_run=dry_run)

    def type_detail(self, job_type: str, limit: int = DETAIL_ROWS) -> TypeDetail:
        with self._reader.use() as db:
            dialect, layout, decode = db.dialect, self.layout, db.dialect.decode_time
            now = db.now()
            pending_rows = dialect.oldest_pending(db, layout, job_type, limit)
            claim_rows = dialect.current_claims(db, layout, job_type, limit)
            since = now - timedelta(seconds=RECENT_S)
            completion_rows = dialect.recent_completions(db, layout, job_type, since, limit)
        pending = tuple(
            PendingJob(id=int(job_id), age_s=_seconds_between(now, decode(created)) or 0.0, priority=int(priority),
                       attempts=int(attempts or 0), available_in_s=_seconds_between(decode(available), now) or 0.0,
                       info=info)
            for job_id, created, available, priority, attempts, info in pending_rows
        )
        claims = tuple(
            ClaimedJob(id=int(job_id), worker=worker, claimed_for_s=_seconds_between(now, decode(claimed_at)) or 0.0,
                       expires_in_s=_seconds_between(decode(timeout), now), attempts=int(attempts or 0))
            for job_id, worker, claimed_at, timeout, attempts in claim_rows
        )
        completions = []
        for job_id, outcome, created, claimed_at, completed_at in completion_rows:
            created, claimed_at, completed_at = decode(created), decode(claimed_at), decode(completed_at)
            completions.append(CompletedJob(
                id=int(job_id), outcome=outcome, wait_s=_seconds_between(claimed_at, created),
                processing_s=None if outcome == "dead" else _seconds_between(completed_at, claimed_at),
                ago_s=_seconds_between(now, completed_at) or 0.0))  # fmt: skip
        return TypeDetail(job_type, now, pending, claims, tuple(completions))

    def close(self) -> None:
        self._writer.close()
        self._reader.close()


__all__ = [
    "Actions", "ClaimedJob", "CompletedJob", "EnqueueRequest", "EnqueueResult", "PendingJob", "QueuetopError",
    "ReleaseResult", "TypeDetail", "describe_release", "parse_enqueue_form",
]  # fmt: skip
