"""What a load run's threads count as they go, shared between them: the counters behind the progress line and
the end of a `--jobs` run, and the jobs the producers may still enqueue; and the run's facts, as its report reads
them (`RunFacts`)."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from queuetop.layouts import NATIVE, Layout
from queuetop.load.config import LoadConfig
from queuetop.load.ids import IdRanges
from queuetop.load.ledger import Ledger
from queuetop.load.link import OutageFigures


@dataclass(frozen=True)
class LoadCounters:
    """What the driver itself did, counted in memory (the report re-counts outcomes from the database)."""

    enqueued: int = 0
    succeeded: int = 0
    failed: int = 0  # failed attempts (retried or dead)
    dead: int = 0  # failed on the last attempt
    crashed: int = 0  # claims abandoned as if the worker died
    doomed: int = 0  # abandoned or lease lost on the last attempt: a release will bury them as dead
    leases_lost: int = 0  # complete/fail refused: the claim had timed out and been released
    given_back: int = 0  # unstarted jobs of a batch handed back at stop
    recovered_at_stop: int = 0  # abandoned claims handed back at stop, before their lease ran out
    swept_released: int = 0  # claims the sweeper returned to pending
    swept_dead: int = 0  # claims the sweeper buried as dead
    busy_retries: int = 0  # operations retried after a deadlock, a serialization conflict, a busy or lock timeout
    foreign: int = 0  # jobs of other origin that the consumers processed
    claims: int = 0  # claim statements that took at least one job
    empty_claims: int = 0  # claim statements that found nothing to take
    stranded: int = 0  # crashed claims a shape whose taking is final can never take back
    # completions of a job already completed: a worker that had lost its claim (swept back and taken again) finished
    # it anyway, on the new holder's row — seed 001's completion has no compare-and-set
    completed_again: int = 0

    @property
    def settled(self) -> int:
        """This run's jobs that reached their end: succeeded or dead (or bound to be), or stranded for good."""
        return self.succeeded + self.dead + self.doomed + self.stranded

    @property
    def in_flight(self) -> int:
        return max(0, self.enqueued - self.settled)


class Tally:
    """Thread-safe counters that become a LoadCounters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def snapshot(self) -> LoadCounters:
        with self._lock:
            return LoadCounters(**self._counts)


class Budget:
    """How many jobs producers may still enqueue (--jobs), shared by all producers."""

    def __init__(self, total: int | None) -> None:
        self._left = total
        self._lock = threading.Lock()

    def take(self, wanted: int) -> int:
        if self._left is None:
            return wanted
        with self._lock:
            granted = min(wanted, self._left)
            self._left -= granted
            return granted

    @property
    def exhausted(self) -> bool:
        return self._left == 0


@dataclass
class RunFacts:
    """What the report needs from the run besides the database."""

    tag: str
    target: str
    config: LoadConfig
    ids: IdRanges
    enqueued_by_type: dict[str, int]
    abandoned: list[tuple[Any, str]]  # (job id, the worker that abandoned it)
    started_at: datetime  # server time
    counters: LoadCounters
    elapsed_s: float
    producing_s: float
    interrupted: bool
    errors: list[str] = field(default_factory=list)
    stuck_threads: int = 0
    layout: Layout = NATIVE
    claim_form: str | None = None
    ledger: Ledger = field(default_factory=Ledger)
    claim_latencies_s: list[float] = field(default_factory=list)
    guid_ids: frozenset[Any] = frozenset()  # the run's ids on a shape whose ids are not integers
    baseline_id: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    outages: OutageFigures = field(default_factory=OutageFigures)
