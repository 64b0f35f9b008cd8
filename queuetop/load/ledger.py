"""The claims ledger of a load run: every claim the driver made, kept outside the queue's tables.

A queue's tables cannot tell whether two workers held one job at the same time: a completed table's primary key
forbids the same id twice, and a flag (seed 002) is 1 however many workers set it. So every claim is written
down here as the driver makes it: the job, the worker, when the claim was live. A duplicate is two live claims
of one job that overlap in time, whatever the tables say afterwards.

When a claim is live, on the one monotonic clock all the run's threads share:
- it starts when the claim statement has returned (so after the database committed it);
- it ends when the worker lets go: the moment *before* it sends the completion, the failure or the hand-back
  (so before the database can hand the job to anyone else), or, where the shape has a lease, at the latest
  when the lease ran out, counted from the moment *before* the claim was sent, less the tables' time precision
  (a lower bound of the lease the database gave: a later claim after the lease expired never overlaps it);
- a crashed worker's claim is live until its lease runs out, or for ever where the shape has no lease (a job
  a final claim took must never be taken again).
With these bounds a correct queue can never show an overlap, and a queue that hands one row to two workers
while the first is still working on it always does.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from queuetop.load.ids import IdLookup, IdRanges

# Tables keep times to the millisecond (SQL Server's datetime to 1/300 s, rounded): a stored timeout can fall
# that much before the lease counted here, and the job be taken again that much "early".
TIME_PRECISION_S = 0.01


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
    """Thread-safe: consumers write their claims, the report reads them once the run is over.

    A long run (a background load under the dashboard) compacts it now and then: claims that ended long ago can
    no longer overlap a new one, so once they have been checked against the others of their job they are
    dropped, and only what the report needs of them is kept (the jobs two claims held, the jobs a claim took,
    and how the last claim of a job ended where that was not a completion)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._claims: list[Claim] = []
        self._made = 0
        self._found: dict[Any, Duplicate] = {}  # duplicates among claims already compacted away
        self._ended: dict[Any, str] = {}  # compacted jobs whose last claim did not end "finished"
        self._taken = IdRanges()  # compacted jobs with integer ids
        self._taken_other: set[Any] = set()  # ... and with other ids (GUIDs)

    def claimed(self, job_ids: Iterable[Any], worker: str, sent_at: float, returned_at: float,
                lease_s: float | None) -> list[Claim]:  # fmt: skip
        """Record the jobs one claim statement returned. `sent_at` / `returned_at`: the monotonic clock before
        the statement was sent and after it returned; `lease_s`: the claim's lease, None where it has none."""
        lease_end = sent_at + lease_s - TIME_PRECISION_S if lease_s is not None else math.inf
        made = [Claim(job_id, worker, returned_at, lease_end) for job_id in job_ids]
        with self._lock:
            self._claims += made
            self._made += len(made)
        return made

    def __len__(self) -> int:
        """Jobs claimed, over the whole run (a job claimed twice counts twice)."""
        return self._made

    @property
    def held(self) -> int:
        """Claims kept in memory now."""
        return len(self._claims)

    def compact(self, now: float, keep_s: float) -> None:
        """Check and drop the claims that ended more than `keep_s` before `now` (on the same monotonic clock)."""
        with self._lock:
            cutoff = now - keep_s
            old = [claim for claim in self._claims if claim.end < cutoff]
            if not old:
                return
            jobs = {claim.job_id for claim in old}
            for duplicate in _overlaps(claim for claim in self._claims if claim.job_id in jobs):
                self._found.setdefault(duplicate.job_id, duplicate)
            self._claims = [claim for claim in self._claims if claim.end >= cutoff]
            for claim in sorted(old, key=lambda c: c.start):
                if claim.outcome == "finished":
                    self._ended.pop(claim.job_id, None)
                else:
                    self._ended[claim.job_id] = claim.outcome
            self._taken.add(job_id for job_id in jobs if isinstance(job_id, int))
            self._taken_other.update(job_id for job_id in jobs if not isinstance(job_id, int))

    def duplicates(self) -> list[Duplicate]:
        """Every job held by two claims at once (the first overlap found for each)."""
        with self._lock:
            found = dict(self._found)
            recent = list(self._claims)
        for duplicate in _overlaps(recent):
            found.setdefault(duplicate.job_id, duplicate)
        return list(found.values())

    def outcomes(self) -> Callable[[Any], str | None]:
        """How the last claim of a job ended ("finished", "crashed", ...), None if no claim took it."""
        with self._lock:
            latest: dict[Any, Claim] = {}
            for claim in self._claims:
                if claim.job_id not in latest or claim.start >= latest[claim.job_id].start:
                    latest[claim.job_id] = claim
            ended, taken, taken_other = dict(self._ended), IdLookup(self._taken), set(self._taken_other)

        def outcome(job_id: Any) -> str | None:
            if job_id in latest:
                return latest[job_id].outcome
            if job_id in ended:
                return ended[job_id]
            return "finished" if job_id in taken or job_id in taken_other else None

        return outcome


def _overlaps(claims: Iterable[Claim]) -> list[Duplicate]:
    """The first overlap of live claims of each job, among these claims."""
    by_job: dict[Any, list[Claim]] = defaultdict(list)
    for claim in claims:
        by_job[claim.job_id].append(claim)
    found = []
    for job_id, held in by_job.items():
        if len(held) < 2:
            continue
        held.sort(key=lambda c: c.start)
        holder = held[0]
        for claim in held[1:]:
            if claim.start < holder.end:
                found.append(Duplicate(job_id, (holder.worker, claim.worker), holder.end - claim.start))
                break
            if claim.end > holder.end:
                holder = claim
    return found
