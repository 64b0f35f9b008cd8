"""The dashboard's poller: one connection and one Collector, kept alive through outages.

`Monitor.poll()` is what the dashboard's poll thread calls once per interval. It never raises: every call
returns a `PollOutcome` — a fresh Snapshot, or the state of the link (reconnecting in N s, schema missing,
poll timed out, poll rolled back by a conflict) with the error text in one line. After a lost connection it is
dropped and reopened with back-off, so a database that goes away (server stopped, file removed) costs one short
attempt every few seconds and the dashboard recovers by itself when it returns. A poll that ran past the
statement timeout, or that the database rolled back to break a deadlock (the monitor's sessions are the chosen
victim: DEADLOCK_PRIORITY LOW), keeps its connection: the next poll comes at the usual interval.

A Monitor is driven by one thread at a time (the dashboard's polls never overlap; a lock makes sure of it),
which is all a pyodbc or sqlite3 connection asks. Pure Python: no Textual here, so it is tested directly.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from queuetop.db import (
    ConnectError,
    ConnectionLost,
    Database,
    DatabaseError,
    NotAnswering,
    QueuetopError,
    SchemaMissing,
    Target,
    Timeout,
    TransientError,
)
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.schema import init_schema, schema_current
from queuetop.watch.blocking import Blocking, read_blocking
from queuetop.watch.collector import ShapeCollector, collector_for
from queuetop.watch.snapshot import Snapshot

log = logging.getLogger("queuetop")

CONNECTED = "connected"
RECONNECTING = "reconnecting"
NO_SCHEMA = "no schema"
TIMED_OUT = "timed out"  # the poll ran past the statement timeout: connection kept, next poll as usual
BUSY = "busy"  # the poll was rolled back to break a deadlock or a serialization conflict: connection kept
NOT_ANSWERING = "not answering"  # the poll went past its deadline without a word: connection cut, reconnecting
CLOSED = "closed"  # `close()` was called: a poll still scheduled on a thread reads nothing and reopens nothing

BACKOFF_S: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 15.0)  # waits after 1, 2, 3 … consecutive failures
SCHEMA_RETRY_CAP_S = 5.0  # `queuetop init` in another terminal should be noticed quickly
BLOCKING_EVERY_S = 10.0  # the sessions around the queue (holders, blocking chains) are read this often

Opener = Callable[..., Database]


@dataclass(frozen=True)
class PollOutcome:
    """What one poll produced: a snapshot when connected, else the link state and why."""

    state: str  # CONNECTED | RECONNECTING | NOT_ANSWERING | NO_SCHEMA | TIMED_OUT | BUSY | CLOSED
    snapshot: Snapshot | None = None
    error: str | None = None  # one line, fit for the status bar
    retry_in_s: float | None = None  # until the next attempt (when not connected)
    failures: int = 0  # consecutive failed attempts
    unexpected: bool = False  # the error is a bug, not the database: it was logged with its traceback
    blocking: Blocking | None = None  # the last read of sessions holding claims or blocking (None: not read)

    @property
    def connected(self) -> bool:
        return self.state == CONNECTED

    @property
    def poll_s(self) -> float | None:
        """What the poll took, in seconds (`pace.py` reads it); None where it read nothing."""
        return None if self.snapshot is None else self.snapshot.poll_ms / 1000

    @property
    def link_lost(self) -> bool:
        """The connection is gone (or was never made): not a poll that timed out or lost a conflict."""
        return self.state in (RECONNECTING, NOT_ANSWERING, NO_SCHEMA)


def backoff_delay(failures: int, schedule: Sequence[float] = BACKOFF_S) -> float:
    """The wait after `failures` consecutive failures (1 → the first step), capped at the last step."""
    return schedule[min(max(failures, 1), len(schedule)) - 1]


class Monitor:
    """Owns the monitor connection and the Collector; turns every poll into a PollOutcome."""

    def __init__(self, target: Target, layout: Layout = NATIVE, *, job_types: Iterable[str] = (),
                 auto_init: bool = False, backoff: Sequence[float] = BACKOFF_S,
                 clock: Callable[[], float] = time.monotonic, open_database: Opener = Database.open,
                 settings: dict | None = None, note: str | None = None,
                 blocking_every_s: float | None = BLOCKING_EVERY_S, max_types: int | None = None,
                 pinned: Iterable[str] = ()) -> None:  # fmt: skip
        self.target = target
        self.layout = layout
        self.job_types = tuple(job_types)
        self.max_types = max_types  # past this many types, the busiest shown and the rest folded (watch/fold.py)
        self.pinned = tuple(pinned)
        self.auto_init = auto_init
        self.settings = settings
        self.note = note
        self._backoff = tuple(backoff)
        self._clock = clock
        self._open = open_database
        self._lock = threading.Lock()
        self._closed = False
        self._db: Database | None = None
        self._collector: ShapeCollector | None = None
        self._file_identity: tuple[int, int] | None = None  # SQLite: (device, inode) the collector has read
        self._ever_connected = False
        self._failures = 0
        self._retry_at = 0.0
        self._last_failure: PollOutcome | None = None
        # SQLite cannot show its sessions without taking the write lock: never from the dashboard
        self._blocking_every_s = None if target.kind == "sqlite" else blocking_every_s
        self._blocking: Blocking | None = None
        self._blocking_at = float("-inf")

    # -- the one public verb -----------------------------------------------------------------------------
    def poll(self, looking_for: str = "", fresh: bool = False) -> PollOutcome:
        """Read the queue once, or try to reconnect when due. Never raises. `looking_for`: the dashboard's filter
        (past `max_types`, the types whose name holds it are shown too); `fresh`: the user just changed the queue
        (every state counted now, also where a deep queue's counts are spaced)."""
        with self._lock:
            if self._closed:
                return PollOutcome(CLOSED, error="the monitor was closed")
            now = self._clock()
            if self._db is None and self._last_failure is not None and now < self._retry_at:
                return self._waiting(now)
            try:
                if self._db is None:
                    self._connect()
                self._check_file_still_there()
                assert self._collector is not None
                snapshot = self._collector.poll(looking_for, fresh)
            except SchemaMissing as exc:  # `queuetop init` makes only the native schema: another layout's is named
                missing = str(exc) if self.layout.made_by_init else \
                    f"table {' or '.join(self.layout.table_names(schema=False))} not found (layout {self.layout.name})"
                return self._failed(NO_SCHEMA, missing, now)
            except TransientError as exc:
                return self._interrupted(exc)
            except NotAnswering as exc:
                return self._failed(NOT_ANSWERING, f"{exc}; reconnecting", now)
            except ConnectionLost as exc:
                return self._failed(RECONNECTING, f"{exc}; reconnecting", now)
            except QueuetopError as exc:
                return self._failed(RECONNECTING, str(exc), now)
            except Exception as exc:  # a bug, not the database: keep the traceback for the log
                log.exception("unexpected error while polling %s", self.target.display)
                return self._failed(RECONNECTING, f"{type(exc).__name__}: {exc}", now, unexpected=True)
            if self._failures:
                log.info("connected again to %s after %d failed attempt(s)", self.target.display, self._failures)
            self._failures = 0
            self._last_failure = None
            return PollOutcome(CONNECTED, snapshot=snapshot, blocking=self._read_blocking(now))

    def _read_blocking(self, now: float) -> Blocking | None:
        """The sessions around the queue, read at most every `blocking_every_s` (kept between reads). A database
        that refuses (SQL Server without VIEW SERVER STATE) is asked no more: the panel is a bonus, the poll is not."""
        if self._blocking_every_s is None or self._db is None or now - self._blocking_at < self._blocking_every_s:
            return self._blocking
        self._blocking_at = now
        try:
            self._blocking = read_blocking(self._db, self.layout)
        except DatabaseError as exc:
            log.warning("%s: cannot read the sessions holding or waiting for locks (%s); not asking again",
                        self.target.display, exc)  # fmt: skip
            self._blocking_every_s, self._blocking = None, None
        except QueuetopError:
            self._blocking = None  # a timeout or a lost link: the next poll says so; try again next time
        return self._blocking

    def close(self, wait_s: float = 2.0) -> None:
        """Close the connection. Waits up to `wait_s` for a poll in flight; if it is stuck, cuts its connection
        (the poll's thread then ends with NotAnswering and nobody waits for it). A poll after it opens nothing."""
        self._closed = True
        if not self._lock.acquire(timeout=wait_s):
            db = self._db
            if db is not None:
                db.abandon()
            return
        try:
            self._disconnect()
        finally:
            self._lock.release()

    # -- connecting --------------------------------------------------------------------------------------
    def _connect(self) -> None:
        # The embedded default is created on the very first connect only: a file that disappears later is
        # an event to report, not something to paper over with an empty queue.
        create = self.auto_init and not self._ever_connected
        if self._ever_connected and self.target.kind == "sqlite" and self._sqlite_identity() is None:
            raise self._file_gone()
        db = self._open(self.target, purpose="monitor", create=create)
        try:
            if create and self.layout.made_by_init and not schema_current(db, self.layout):
                init_schema(db, self.layout)
            identity = self._sqlite_identity()
        except BaseException:
            db.close()
            raise
        if self._collector is None or identity != self._file_identity:
            # A different file starts from scratch: its ids and completion times mean nothing to the old one.
            self._collector = collector_for(db, self.layout, job_types=self.job_types, settings=self.settings,
                                            note=self.note, max_types=self.max_types, pinned=self.pinned)
        else:
            self._collector.use(db)
        self._db = db
        self._file_identity = identity
        self._ever_connected = True

    def _disconnect(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _sqlite_identity(self) -> tuple[int, int] | None:
        if self.target.kind != "sqlite":
            return None
        try:
            stat = os.stat(Path(self.target.value).expanduser())
        except OSError:
            return None
        return stat.st_dev, stat.st_ino

    def _check_file_still_there(self) -> None:
        """An open SQLite connection keeps reading a removed or replaced file without a word; look at the path."""
        if self.target.kind != "sqlite":
            return
        identity = self._sqlite_identity()
        if identity is None:
            raise self._file_gone()
        if identity != self._file_identity:
            raise ConnectError(f"the database file {self.target.value} was replaced", "reconnecting to the new file")

    def _file_gone(self) -> ConnectError:
        return ConnectError(f"the database file {self.target.value} is gone (removed or renamed)",
                            "queuetop reconnects when it is back")  # fmt: skip

    # -- failures ----------------------------------------------------------------------------------------
    def _failed(self, state: str, error: str, now: float, unexpected: bool = False) -> PollOutcome:
        self._disconnect()
        self._failures += 1
        delay = backoff_delay(self._failures, self._backoff)
        if state == NO_SCHEMA:
            delay = min(delay, SCHEMA_RETRY_CAP_S)
        self._retry_at = now + delay
        if not unexpected and (self._last_failure is None or self._last_failure.error != error):
            log.warning("%s: %s (retrying in %.0f s)", self.target.display, error, delay)
        self._last_failure = PollOutcome(state, error=error, retry_in_s=delay, failures=self._failures,
                                         unexpected=unexpected)  # fmt: skip
        return self._last_failure

    def _interrupted(self, exc: TransientError) -> PollOutcome:
        """A poll the database stopped (statement timeout) or rolled back (deadlock): the connection is fine, so
        it is kept, and nothing waits for a back-off."""
        state = TIMED_OUT if isinstance(exc, Timeout) else BUSY
        log.warning("%s: poll %s: %s", self.target.display, state, exc)
        return PollOutcome(state, error=str(exc))

    def _waiting(self, now: float) -> PollOutcome:
        last = self._last_failure
        assert last is not None
        return PollOutcome(last.state, error=last.error, retry_in_s=max(0.0, self._retry_at - now),
                           failures=self._failures)  # fmt: skip
