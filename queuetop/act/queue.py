"""Queue operations on a leased queue: enqueue, claim, complete, fail, release. The CLI, the dashboard and the
load driver all go through this module on the native schema, so they all behave as a real worker would; the
statements are the one engine's, from the layout's `[claim]` and `[complete]`.

Every change to a claimed job is a compare-and-set on its claim token (ProcessingMark): a worker whose claim
timed out and was released, or claimed again by someone else, cannot complete or fail it. That is reported
as `LeaseLost`, never ignored. Lower priority numbers are served first (0 is the most urgent, 255 the
least, 128 the default), then the job that has been available longest.
"""

from __future__ import annotations

import difflib
import signal
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from queuetop.act import batches
from queuetop.core.errors import STOP_SIGNALS, Stopped
from queuetop.db import Database, LeaseLost, QueuetopError, UsageError, retry_transient
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.sql import Statement, Statements

DEFAULT_PRIORITY = 128
DEFAULT_LEASE_S = 30.0
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_RETRY_AFTER_S = 10.0
MAX_ENQUEUE = 1_000_000
# Rows per enqueue transaction: short transactions, far below the ~5,000 locks at which SQL Server escalates to
# a table lock (which READPAST cannot skip: every claimer would wait, then fail with 1222).
ENQUEUE_CHUNK = 1_000
OUTCOMES = ("succeeded", "failed")
Id = TypeVar("Id")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, where the command makes it one) stopped a bulk write between two chunks: `message` says
    exactly what was committed."""

    def __init__(self, message: str, signum: int = signal.SIGINT) -> None:
        super().__init__(message)
        self.message = message
        self.signum = signum  # the signal that stopped it: exit 128 + signum


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held back while one chunk runs, then delivered to the handlers they had: a chunk is
    committed or not, never unknown. Only the main thread can hold signals; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held: dict[int, Any] = {}
    try:  # a signal may come while the handlers are swapped: whatever was swapped is put back
        for sig in STOP_SIGNALS:
            handler = signal.getsignal(sig)
            if handler not in (signal.SIG_IGN, None):  # an ignored signal stays ignored
                held[sig] = handler
                signal.signal(sig, lambda number, _frame: caught.append(number))
        yield
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])  # as it would have come: KeyboardInterrupt, or the command's own


def insert_in_chunks(db: Database, count: int, insert: Callable[[int], list[Id]],
                     chunk: int = ENQUEUE_CHUNK) -> list[Id]:  # fmt: skip
    """Write `count` rows as `insert(n)` does (it writes n rows and returns their ids), in transactions of at most
    `chunk` rows. Each chunk is all or nothing and is retried whole on a transient error (it was rolled back);
    a failure after some chunks raises an error that says exactly which ids stayed. Ctrl-C stops it between
    chunks (`Interrupted`, saying what was committed)."""
    ids: list[Id] = []

    def one_chunk(size: int) -> list[Id]:
        with db.transaction():
            return insert(size)

    try:
        while len(ids) < count:
            size = min(chunk, count - len(ids))
            with signals_held():
                ids += retry_transient(lambda size=size: one_chunk(size))
    except KeyboardInterrupt as exc:
        done = f"{len(ids):,} of {count:,} jobs were enqueued and committed (ids {ids[0]}..{ids[-1]})" if ids \
            else f"none of the {count:,} jobs was enqueued"
        raise Interrupted(f"interrupted: {done}; nothing else was written", Stopped.signal_of(exc)) from exc
    except QueuetopError as exc:
        if not ids:
            raise  # nothing was written
        raise QueuetopError(f"{exc.message}; {len(ids):,} of {count:,} jobs were enqueued before it "
                            f"(ids {ids[0]}..{ids[-1]})", exc.hint) from exc
    return ids


@dataclass(frozen=True)
class Job:
    """A claimed job, with the token that proves the claim."""

    id: int
    job_type: str
    info: str | None
    priority: int
    created: datetime
    attempts: int
    token: str
    worker: str
    timeout: datetime


@dataclass(frozen=True)
class ReleaseResult:
    """What a release found (dry run) or did."""

    timed_out: int  # claims past their timeout when looked at
    released: int = 0  # returned to pending
    dead: int = 0  # out of attempts: moved to the completed table as dead
    dry_run: bool = False


def check_job_type(job_type: object) -> str:
    if not isinstance(job_type, str) or not job_type.strip():
        raise UsageError("the job type is empty", "name it, e.g. --type email")
    if len(job_type) > 128:
        raise UsageError(f"the job type is {len(job_type)} characters long", "the limit is 128")
    if any(ord(ch) < 32 for ch in job_type):
        raise UsageError(f"the job type {job_type!r} contains control characters", "use printable text")
    return job_type


def check_priority(priority: object) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 255:
        raise UsageError(f"priority must be a whole number from 0 (most urgent) to 255, not {priority!r}")
    return priority


def check_count(count: object, what: str = "count", limit: int = MAX_ENQUEUE, low: int = 1) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or not low <= count <= limit:
        raise UsageError(f"{what} must be a whole number from {low} to {limit:,}, not {count!r}")
    return count


def check_seconds(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 10**7:
        raise UsageError(f"{what} must be a positive number of seconds, not {value!r}")
    return float(value)


class Queue:
    """The operations on one leased queue (the native schema's: `[claim] forms = ["batch"]`, `[complete] move`),
    over one connection (so: one thread). The statements are the one engine's (`layouts.sql.Statements`); this
    class checks what it is given and runs them, each claim and each move as one short transaction."""

    def __init__(self, db: Database, layout: Layout = NATIVE, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        claim = layout.claim
        if claim is None or "batch" not in claim.forms:
            raise UsageError(f"layout {layout.name} is not a leased queue: its seed's own dequeue takes its jobs",
                             "use `queuetop load --layout` to drive it")
        self.db = db
        self.layout = layout
        self.max_attempts = check_count(max_attempts, "max attempts", 1000)
        self.statements = Statements(db.dialect, layout)
        self.release_state = layout.release.state if layout.release is not None else "timed_out"

    # -- producing ---------------------------------------------------------------------------------------
    def enqueue(self, job_type: str, info: str | None = None, priority: int = DEFAULT_PRIORITY,
                delay_s: float = 0.0, created_by: str | None = None) -> int:  # fmt: skip
        """Add one job; its id."""
        return self.enqueue_many(job_type, 1, info, priority, delay_s, created_by)[0]

    def enqueue_many(self, job_type: str, count: int, info: str | None = None, priority: int = DEFAULT_PRIORITY,
                     delay_s: float = 0.0, created_by: str | None = None) -> list[int]:  # fmt: skip
        """Add `count` identical jobs in short transactions (`insert_in_chunks`); their ids, ascending."""
        check_job_type(job_type)
        check_priority(priority)
        check_count(count)
        if info is not None and not isinstance(info, str):
            raise UsageError("the job info must be text")
        if delay_s:
            check_seconds(delay_s, "delay")
        # created now and available `delay_s` later, both by the database's clock
        given = {"type": job_type, "info": info, "priority": priority, "created_by": created_by}
        fields = [field for field in given if field in self.layout.enqueue_fields]
        roles = [self.layout.enqueue_fields[field] for field in fields]
        values = [given[field] for field in fields]

        def insert(size: int) -> list[int]:
            return sorted(int(row[0]) for row in self.db.fetchall(
                *self.statements.insert_rows(roles, values, float(delay_s), size)))

        return insert_in_chunks(self.db, count, insert)

    # -- consuming ---------------------------------------------------------------------------------------
    def claim(self, worker: str, job_types: Sequence[str] | None = None, batch: int = 1,
              lease: float = DEFAULT_LEASE_S) -> list[Job]:  # fmt: skip
        """Claim up to `batch` available jobs (of the given types, or any), skipping rows others hold."""
        types = [check_job_type(t) for t in job_types or ()]
        check_count(batch, "batch", 10_000)
        lease = check_seconds(lease, "lease")
        token = str(uuid.uuid4())
        # The claim time and the lease's end are the database's clock, set in the statement: a worker host whose
        # clock runs late cannot make a lease end early (and its job run twice).
        statement = self.statements.claim_batch(types, {"__worker": worker, "__token": token, "__lease": lease,
                                                        "__batch": batch})  # fmt: skip
        if self.statements.claim_in_transaction:
            with self.db.transaction():
                rows = self.db.fetchall(*statement)
        else:
            rows = self.db.fetchall(*statement)
        decode = self.db.dialect.decode_time
        rows = sorted(rows, key=lambda r: (int(r[5]), int(r[0])))  # RETURNING/OUTPUT order is unspecified
        return [
            Job(id=int(r[0]), job_type=r[1], info=r[4], priority=int(r[5]), created=decode(r[6]),
                attempts=int(r[3]), token=token, worker=worker, timeout=decode(r[7]))
            for r in rows
        ]

    def _move(self, statements: list[Statement]) -> int:
        """Run a move (`Statements.move_finished`): one statement, or an INSERT and its DELETE in one transaction."""
        if len(statements) == 1:
            return self.db.execute(*statements[0])
        with self.db.transaction():
            moved = self.db.execute(*statements[0])
            if moved:
                self.db.execute(*statements[1])
        return moved

    def complete(self, job_id: int, token: str, outcome: str = "succeeded") -> None:
        """Move a claimed job to the completed table. Raises LeaseLost if the claim is no longer ours."""
        if outcome not in OUTCOMES:
            raise UsageError(f"unknown outcome {outcome!r}", f"use one of: {', '.join(OUTCOMES)}")
        if not self._move(self.statements.move_finished(job_id, token, outcome)):
            raise LeaseLost(f"job {job_id}: the claim was lost (timed out and released, or taken by another worker)")

    def fail(self, job_id: int, token: str, retry_after: float = DEFAULT_RETRY_AFTER_S) -> str:
        """Give a job back to be retried after `retry_after` s, or bury it as dead when out of attempts.
        Returns "retry" or "dead"; raises LeaseLost if the claim is no longer ours."""
        delay_s = check_seconds(retry_after, "retry delay") if retry_after else 0.0
        if self.db.execute(*self.statements.retry_later(job_id, token, delay_s, self.max_attempts)) == 1:
            return "retry"
        if self.bury(job_id, token):
            return "dead"
        raise LeaseLost(f"job {job_id}: the claim was lost (timed out and released, or taken by another worker)")

    def bury(self, job_id: int, token: str) -> int:
        """Move a claimed job that had `max_attempts` to the completed table as dead, while the claim is still
        `token`'s: 1, or 0 when it is not (or has attempts left)."""
        return self._move(self.statements.move_finished(job_id, token, "dead", self.max_attempts))

    def bury_timed_out(self, job_id: int, token: str) -> int:
        """As `bury`, only while the claim is still timed out (the release's state) by the database's clock."""
        return self._move(self.statements.bury_in_state(job_id, token, self.release_state, self.max_attempts))

    def give_back(self, job_id: int, token: str) -> None:
        """Return a claimed job that was never started (a worker shutting down), without spending an
        attempt. Raises LeaseLost if the claim is no longer ours."""
        if self.db.execute(*self.statements.give_back(job_id, token)) != 1:
            raise LeaseLost(f"job {job_id}: the claim was lost (timed out and released, or taken by another worker)")

    # -- steering ----------------------------------------------------------------------------------------
    def release_timed_out(self, job_type: str | None = None, dry_run: bool = False) -> ReleaseResult:
        """Count (dry run) or release claims past their timeout. Out of attempts → dead."""
        if job_type is not None:
            self.require_known_type(job_type)
        found = int(self.db.fetchone(*self.statements.count_state(self.release_state, job_type))[0])
        if dry_run or found == 0:
            return ReleaseResult(timed_out=found, dry_run=dry_run)
        if not self.statements.claim_in_transaction:  # statements of a batch each, skipping rows others hold
            return self._release_in_batches(job_type, found)
        with self.db.transaction():  # SQLite: one write lock, one clock, read inside it
            now = self.db.fetchone(*self.statements.clock())[0]
            bury, back = self.statements.release_state(self.release_state, job_type, self.max_attempts, now)
            dead = self.db.execute(*bury[0])
            if dead:
                self.db.execute(*bury[1])
            released = self.db.execute(*back)
        return ReleaseResult(timed_out=found, released=released, dead=dead)

    def release_job(self, job_id: Any) -> ReleaseResult:
        """Release one claim while it is still past its timeout (out of attempts → dead, as `release_timed_out`),
        in one transaction; all zero when it finished, was released or was claimed again meanwhile."""
        with self.db.transaction():
            now = self.db.fetchone(*self.statements.clock())[0] if self.statements.claim_in_transaction else None
            bury, back = self.statements.release_state(self.release_state, None, self.max_attempts, now,
                                                       job_id=job_id)  # fmt: skip
            dead = self.db.execute(*bury[0])
            for then in bury[1:] if dead else ():  # SQLite's burial is an INSERT, then this DELETE
                self.db.execute(*then)
            released = self.db.execute(*back)
        return ReleaseResult(timed_out=dead + released, released=released, dead=dead)

    def _release_in_batches(self, job_type: str | None, found: int) -> ReleaseResult:
        """Bury, then give back, at most MAINTENANCE_BATCH claims a statement, each committed on its own, until
        both come back short or the count taken first is reached (`act.batches`: a release after an outage must
        not take a row lock per timed-out claim in one statement)."""
        size = batches.MAINTENANCE_BATCH
        bury, back = self.statements.release_state(self.release_state, job_type, self.max_attempts, batch=size)
        dead = released = 0
        while True:
            buried = self.db.execute(*bury[0])
            given = self.db.execute(*back)
            dead, released = dead + buried, released + given
            if (buried < size and given < size) or dead + released >= found:
                return ReleaseResult(timed_out=found, released=released, dead=dead)

    def job_types(self) -> list[str]:
        """The job types of the newest jobs in the queue table (pending or claimed; NEWEST_FOR_TYPES of them)."""
        return [row[0] for row in self.db.fetchall(*self.statements.queued_types())]

    def has_job_type(self, job_type: str) -> bool:
        """Whether jobs of this type are in the queue table (pending or claimed); cheap at any depth."""
        return bool(self.db.fetchone(*self.statements.has_type(check_job_type(job_type)))[0])

    def require_known_type(self, job_type: str) -> None:
        refuse_typo(self.db, self.statements, job_type)


TYPO_CUTOFF = 0.75  # difflib's ratio: "reprot" for "report" (0.83), "emial" for "email" (0.8); not "sms" for "email"


def refuse_typo(db: Database, statements: Statements, job_type: str) -> None:
    """Refuse a job type that has no job in the queue table but is close to one that has ("reprot": did you mean
    'report'?), naming the types of the newest jobs. A type with jobs, or close to none, passes: a type that is
    merely idle is not a mistake, and its figures are zero."""
    if db.fetchone(*statements.has_type(job_type))[0]:
        return
    known = [str(row[0]) for row in db.fetchall(*statements.queued_types())]  # read only to word the error
    close = difflib.get_close_matches(job_type, known, n=1, cutoff=TYPO_CUTOFF)
    if close:
        listed = ", ".join(known[:12]) + (" …" if len(known) > 12 else "")
        raise UsageError(f"no such job type {job_type!r} (did you mean {close[0]!r}?)",
                         f"job types of the newest jobs in the queue: {listed}")
