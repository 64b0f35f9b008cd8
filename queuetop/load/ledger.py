"""The claims ledger of a load run: every claim the driver made, kept outside the queue's tables.

A queue's tables cannot tell whether two workers held one job at the same time: a completed table's primary key
forbids the same id twice, and a flag (seed 002) is 1 however many workers set it. So every claim is written
down here as the driver makes it: the job, the worker, when the claim was live. A duplicate is two live claims
of one job that overlap in time, whatever the tables say afterwards.

When a claim is live, on the one monotonic clock all the run's threads share:
- it starts when the claim statement has returned (so after the database committed it);
- it ends when the worker lets go: the moment *before* it sends the completion, the failure or the hand-back
  (so before the database can hand the job to anyone else), or, where the shape has a lease, at the latest
  when the lease ran out, counted from the moment *before* the claim was sent (a lower bound of the lease the
  database gave: a later claim after the lease expired never overlaps it);
- a crashed worker's claim is live until its lease runs out, or for ever where the shape has no lease (a job
  a final claim took must never be taken again).
With these bounds a correct queue can never show an overlap, and a queue that hands one row to two workers
while the first is still working on it always does.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Duplicate:
    """One job two claims held at the same time."""

    job_id: Any
    workers: tuple[str, str]
    overlap_s: float  # how long both held it (inf: a crashed claim without lease)


class Claim:
    """One claim: live from `start` to `end`, which the worker sets when it lets go (else its lease does), and
    how it ended: "held" (still, at the stop), "finished", "failed", "given back", "lease lost" or "crashed"."""

    __slots__ = ("end", "job_id", "lease_end", "outcome", "start", "worker")

    def __init__(self, job_id: Any, worker: str, start: float, lease_end: float) -> None:
        self.job_id = job_id
        self.worker = worker
        self.start = start
        self.lease_end = lease_end
        self.end = lease_end  # until the worker lets go
        self.outcome = "held"

    def let_go(self, at: float, outcome: str) -> None:
        """Called just before the statement that finishes, fails or hands back the job is sent."""
        self.end = min(self.lease_end, at)
        self.outcome = outcome

    def crashed(self) -> None:
        """The worker died holding it: the claim stays live until its lease runs out (for ever without one)."""
        self.outcome = "crashed"


class Ledger:
    """Thread-safe: consumers write their claims, the report reads them once the run is over."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._claims: list[Claim] = []

    def claimed(self, job_ids: Iterable[Any], worker: str, sent_at: float, returned_at: float,
                lease_s: float | None) -> list[Claim]:  # fmt: skip
        """Record the jobs one claim statement returned. `sent_at` / `returned_at`: the monotonic clock before
        the statement was sent and after it returned; `lease_s`: the claim's lease, None where it has none."""
        lease_end = sent_at + lease_s if lease_s is not None else math.inf
        made = [Claim(job_id, worker, returned_at, lease_end) for job_id in job_ids]
        with self._lock:
            self._claims += made
        return made

    def __len__(self) -> int:
        return len(self._claims)

    def duplicates(self) -> list[Duplicate]:
        """Every job held by two claims at once (the first overlap found for each)."""
        by_job: dict[Any, list[Claim]] = defaultdict(list)
        with self._lock:
            for claim in self._claims:
                by_job[claim.job_id].append(claim)
        found = []
        for job_id, claims in by_job.items():
            if len(claims) < 2:
                continue
            claims.sort(key=lambda c: c.start)
            holder = claims[0]
            for claim in claims[1:]:
                if claim.start < holder.end:
                    found.append(Duplicate(job_id, (holder.worker, claim.worker), holder.end - claim.start))
                    break
                if claim.end > holder.end:
                    holder = claim
        return found

    def last_claims(self) -> dict[Any, Claim]:
        """The latest claim of every job (the one that decided where it ended up)."""
        with self._lock:
            claims = list(self._claims)
        latest: dict[Any, Claim] = {}
        for claim in claims:
            if claim.job_id not in latest or claim.start >= latest[claim.job_id].start:
                latest[claim.job_id] = claim
        return latest
