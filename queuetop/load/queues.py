"""What the load driver asks of a queue, for the native schema and for any shape with a `[claim]`.

The driver's threads do what real workers do: enqueue, claim, complete or fail, hand back at a stop, and a
sweeper releases what is stuck. `NativeLoadQueue` does that through `queue.Queue`; `ShapeLoadQueue` through the
seed's own dequeue and completion (`shape_worker.ShapeWorker`) and the shape's own release (`ShapeQueue`). What a
shape cannot do is said by its capabilities, so the driver never asks it (and the config refuses what the
seed has no path for, such as `--fail` on a shape whose taking is final).
"""

from __future__ import annotations

from typing import Any

from queuetop.act.queue import Job, Queue, ReleaseResult
from queuetop.act.shape_queue import ShapeQueue, nothing_to_release
from queuetop.act.shape_worker import ShapeWorker, Taken
from queuetop.db import Database
from queuetop.layouts import Layout
from queuetop.layouts.schema import require_current, schema_present
from queuetop.layouts.sql import Statements


class NativeLoadQueue:
    """The native schema: leases, fail with retry or dead, hand-back, release."""

    can_fail = True
    can_give_back = True
    final_claims = False  # a crashed claim times out and is released
    nothing_to_release: str | None = None

    def __init__(self, db: Database, layout: Layout, max_attempts: int) -> None:
        self.queue = Queue(db, layout, max_attempts=max_attempts)

    @staticmethod
    def baseline_id(db: Database, layout: Layout) -> int | None:
        """The highest id before the run (the run's jobs are above it); raises SchemaMissing without a schema."""
        from queuetop.db import SchemaMissing

        if not schema_present(db, layout):
            raise SchemaMissing(db.target.display)
        require_current(db, layout)  # a run's completions carry the columns added since
        row = db.fetchone(*Statements(db.dialect, layout).max_job_id())
        return max(int(row[0] or 0), int(row[1] or 0))

    def enqueue(self, job_type: str | None, count: int, created_by: str) -> list[Any]:
        return self.queue.enqueue_many(job_type or "", count, created_by=created_by)

    def claim(self, worker: str, job_types: list[str], batch: int, lease_s: float) -> list[Job]:
        return self.queue.claim(worker, job_types, batch, lease_s)

    def complete(self, job: Job) -> None:
        self.queue.complete(job.id, job.token)

    def fail(self, job: Job, retry_after_s: float) -> str:
        """"retry" or "dead"."""
        return self.queue.fail(job.id, job.token, retry_after_s)

    def give_back(self, job: Job) -> None:
        self.queue.give_back(job.id, job.token)

    def recover(self, job: Job) -> None:
        """At a stop: a claim this run abandoned back to pending now, as a release would, not after its lease."""
        self.queue.fail(job.id, job.token, retry_after=0)

    def release(self) -> ReleaseResult:
        return self.queue.release_timed_out()


class ShapeLoadQueue:
    """Any shape whose layout describes its seed's dequeue (`[claim]`)."""

    def __init__(self, db: Database, layout: Layout, form: str | None, settings: dict[str, Any]) -> None:
        self.layout = layout
        self.worker = ShapeWorker(db, layout, form, settings)
        self.shape = ShapeQueue(db, layout, settings)
        claim = self.worker.claim_spec
        self.can_fail = claim.failure is not None
        self.can_give_back = self.worker.can_give_back
        self.final_claims = claim.taken_back == "never"  # a crashed claim is never taken back
        self.nothing_to_release = None if layout.release is not None else nothing_to_release(layout)
        info_type = layout.type_of("info") or ""
        self._info = '<load job="queuetop"/>' if info_type == "xml" else "queuetop load"

    @staticmethod
    def baseline_id(db: Database, layout: Layout) -> int | None:
        """The highest id before the run, on shapes with an identity (None: ids are GUIDs). Raises a clear error
        when the shape's tables or columns are not there."""
        from queuetop.layouts.detect import check_layout

        check_layout(db, layout)
        if layout.arrivals != "identity":
            return None
        row = db.fetchone(*Statements(db.dialect, layout).max_id())
        return int(row[0]) if row and row[0] is not None else 0

    def enqueue(self, job_type: str | None, count: int, created_by: str) -> list[Any]:
        info = self._info if "info" in self.layout.enqueue_takes else None
        return self.shape.enqueue_many(job_type if self.layout.has_job_type else None, count, info=info)

    def claim(self, worker: str, job_types: list[str], batch: int, lease_s: float) -> list[Taken]:
        return self.worker.claim(worker, job_types, batch, lease_s)

    def complete(self, job: Taken) -> None:
        self.worker.complete(job)

    def fail(self, job: Taken, retry_after_s: float) -> str:
        """The seed's failure path: nothing to write. Seed 004's attempt is left unfinished (taken again after
        its timeout, dead after the last attempt); seed 001's request is never completed (lost, until a release
        moves it back). Returns "left"."""
        return "left"

    def give_back(self, job: Taken) -> None:
        self.worker.give_back(job)

    def recover(self, job: Taken) -> None:
        """Crashed claims stay as the crash left them: that is what the report shows (stranded, or lost until
        released, or taken again after their timeout)."""

    def release(self) -> ReleaseResult:
        if self.layout.release is None:
            return ReleaseResult(timed_out=0)
        return self.shape.release()
