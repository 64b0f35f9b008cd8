"""A load thread's connection, kept through the server ending it: a terminated backend, a restart, or a stall the
watchdog cut (db/watchdog.py). As the dashboard does, the thread reconnects with back-off and the run goes on;
`Outages` keeps the account the report gives: how many reconnects, how long the database was away (the time
any thread was without its connection, overlaps counted once), and what became of the claims in flight on a
lost connection (handed back at once after reconnecting, or left to their lease).
"""

from __future__ import annotations

import random
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from queuetop.act.queue import Job
from queuetop.db import ConnectError, Database, NotAnswering, Target
from queuetop.load.ledger import Claim

BACKOFF_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0)  # waits after 1, 2, 3 … failed attempts to reconnect
# A load's statements are small (a chunk of inserts, a batch claim): past this without a word the server has
# stopped answering, and the thread reconnects rather than wait out a worker's 65 s (db/connection.py).
DEADLINE_S = 15.0


@dataclass(frozen=True)
class OutageFigures:
    """What the run lost to connections the server ended, for the report."""

    lost: int = 0  # connections lost while in use
    reconnects: int = 0  # connections opened again after a loss
    away_s: float = 0.0  # how long at least one thread was without its connection
    claims_cut: int = 0  # claim statements whose answer went with the connection: their jobs are left to the lease
    released: int = 0  # jobs in hand on a lost connection, handed back to pending after reconnecting
    left_to_lease: int = 0  # jobs in hand on a lost connection that could not be handed back: left to their lease
    last_error: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"lost": self.lost, "reconnects": self.reconnects, "away_s": round(self.away_s, 3),
                "claims_cut": self.claims_cut, "released": self.released, "left_to_lease": self.left_to_lease,
                "last_error": self.last_error}  # fmt: skip

    def lines(self) -> list[str]:
        """The report's lines (none when no connection was lost)."""
        if not self.lost:
            return []
        lines = [f"connections lost: {self.lost:,}, reconnected {self.reconnects:,} time(s); the database was away "
                 f"{self.away_s:.1f} s in all (last: {self.last_error})"]
        fate = [f"{self.released:,} job(s) in hand handed back to pending at once after reconnecting"]
        if self.left_to_lease or self.claims_cut:
            fate.append(f"{self.left_to_lease + self.claims_cut:,} left to their lease ({self.claims_cut:,} claim "
                        "statement(s) cut short: their jobs, if the server committed them, come back when the lease "
                        "runs out)")
        lines.append("claims in flight on a lost connection: " + "; ".join(fate))
        return lines


class Outages:
    """Thread-safe: every thread of the run records its losses and reconnects here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: list[tuple[float, float | None]] = []  # (lost at, back at) on the monotonic clock
        self._counts = {"lost": 0, "reconnects": 0, "claims_cut": 0, "released": 0, "left_to_lease": 0}
        self._last_error: str | None = None

    def lost(self, error: Exception) -> int:
        """A connection in use was lost; the index of its span, to close when it is back. A server that stopped
        answering was away from the moment it went silent."""
        since = time.monotonic() - (error.silent_s if isinstance(error, NotAnswering) else 0.0)
        with self._lock:
            self._counts["lost"] += 1
            self._last_error = str(error)
            self._spans.append((since, None))
            return len(self._spans) - 1

    def back(self, span: int) -> None:
        with self._lock:
            self._counts["reconnects"] += 1
            self._spans[span] = (self._spans[span][0], time.monotonic())

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def away_for_s(self) -> float:
        """How long the database has been away now: since the oldest loss not yet back (0: every thread is in)."""
        with self._lock:
            open_since = [start for start, end in self._spans if end is None]
        return time.monotonic() - min(open_since) if open_since else 0.0

    def figures(self) -> OutageFigures:
        now = time.monotonic()
        with self._lock:
            spans = sorted((start, now if end is None else end) for start, end in self._spans)
            counts, last = dict(self._counts), self._last_error
        away, reach = 0.0, float("-inf")
        for start, end in spans:  # the union of the spans: two threads away at once count once
            if end > reach:
                away += end - max(start, reach)
                reach = end
        return OutageFigures(away_s=away, last_error=last, **counts)


class Link:
    """One thread's connection: `connect()` opens it (again, with back-off, after a loss) until it opens or `stop`
    is set; `lost()` records a loss; `abandon()` (from another thread) cuts a statement stuck in flight."""

    def __init__(self, target: Target, outages: Outages, stop: threading.Event) -> None:
        self.target = target
        self.outages = outages
        self.stop = stop
        self.db: Database | None = None
        self._span: int | None = None  # the outage this thread is in, if any

    def connect(self) -> Database | None:
        failures = 0
        while True:
            try:
                self.db = Database.open(self.target, purpose="worker", deadline_s=DEADLINE_S)
            except ConnectError as exc:
                if self._span is None:
                    self._span = self.outages.lost(exc)
                failures += 1
                if self.stop.wait(BACKOFF_S[min(failures, len(BACKOFF_S)) - 1]):
                    return None
                continue
            if self._span is not None:
                self.outages.back(self._span)
                self._span = None
            return self.db

    def lost(self, error: Exception) -> None:
        self.close()
        self._span = self.outages.lost(error)

    def abandon(self) -> None:
        db = self.db
        if db is not None:
            db.abandon()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None


class Hands:
    """What a consumer keeps across reconnects: who it is, its crashed claims, the jobs in its hands."""

    def __init__(self, worker: str, rng: random.Random, latencies_kept: int) -> None:
        self.worker = worker
        self.lives = 0
        self.rng = rng
        self.abandoned: list[tuple[Job, Claim]] = []  # its crashed claims (and their ledger's) not released yet
        self.held: list[tuple[Any, Claim]] = []  # claimed and not yet let go: handed back after a lost connection
        self.claiming = False  # a claim statement is in flight
        self.latencies: deque[float] = deque(maxlen=latencies_kept)

