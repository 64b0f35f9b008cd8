"""The history file's two threads: the writer, which owns a connection and takes snapshots from a queue (the
poll thread never waits for the disk), and the reader, which runs the dashboard's wide chart reads."""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from queuetop.db import Target, UsageError
from queuetop.layouts import Layout
from queuetop.store.history_store import HistoryStore
from queuetop.store.model import QUEUE_LIMIT, Record, Retention, history_dir, layout_identity, moment, target_identity
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats

log = logging.getLogger("queuetop")
T = TypeVar("T")

# -- the writer thread -------------------------------------------------------------------------------------------
_STOP = object()


class HistoryWriter:
    """A thread that owns its own HistoryStore connection; `record()` only puts the snapshot on its queue."""

    def __init__(self, path: Path, *, target: str, layout: str, clock: str = "utc",
                 retention: Retention | None = None) -> None:  # fmt: skip
        self.path = path
        self._queue: queue.Queue = queue.Queue(maxsize=QUEUE_LIMIT)
        self._ready = threading.Event()
        self.store: HistoryStore | None = None
        self.error: str | None = None
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, args=(target, layout, clock, retention),
                                        name="queuetop-history", daemon=True)  # fmt: skip
        self._thread.start()
        self._ready.wait(10.0)
        if self.error is not None:
            raise UsageError(self.error)

    def record(self, snapshot: Snapshot, breaches: Mapping[str, int] | None = None) -> None:
        """Hand one poll to the writer. Never blocks: if the writer is far behind, the poll is dropped."""
        try:
            self._queue.put_nowait((snapshot, breaches))
        except queue.Full:
            if not self.dropped:
                log.warning("history file %s: the writer is %d polls behind; polls are dropped until it catches up",
                            self.path, QUEUE_LIMIT)  # fmt: skip
            self.dropped += 1

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until everything recorded so far is on disk (tests, benchmarks)."""
        done = threading.Event()
        try:
            self._queue.put((None, done), timeout=timeout)
        except queue.Full:
            return
        done.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued and close the file; a writer stuck on the disk is left behind after `timeout`."""
        try:
            self._queue.put((_STOP, None), timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)

    def _run(self, target: str, layout: str, clock: str, retention: Retention | None) -> None:
        try:
            store = self.store = HistoryStore(self.path, target=target, layout=layout, clock=clock,
                                              retention=retention)  # fmt: skip
        except UsageError as exc:
            self.error = str(exc)
            self._ready.set()
            return
        self._ready.set()
        try:
            while True:
                batch, stop = [self._queue.get()], False
                while len(batch) < 1000:  # whatever else is waiting goes in the same transaction
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                polls = [(snapshot, extra) for snapshot, extra in batch if isinstance(snapshot, Snapshot)]
                try:
                    if polls:
                        store.write_many(polls)
                except sqlite3.Error as exc:  # a full disk, a locked file: say it once, keep the dashboard going
                    store.cost.errors += 1
                    if store.cost.last_error != str(exc):
                        log.warning("history file %s: %s", self.path, exc)
                    store.cost.last_error = str(exc)
                for snapshot, extra in batch:
                    if snapshot is None:
                        extra.set()  # a flush() waiting for what came before it
                    stop = stop or snapshot is _STOP
                if stop:
                    return
        finally:
            store.close()


class HistoryReader:
    """A thread with its own connection to a history file, for the dashboard's reads of the wide chart windows: the
    UI thread hands it a job and never waits; `done(result)` is called on this thread (it posts a message). Jobs
    waiting under the same key replace one another: only the newest of each is run, so a slow disk costs a late
    chart, never a queue of stale reads."""

    def __init__(self, path: Path, retention: Retention | None = None) -> None:
        self.path = path
        self.retention = retention
        self._pending: dict[Hashable, tuple[Callable[[HistoryStore], Any], Callable[[Any], None]]] = {}
        self._wake = threading.Condition()
        self._closed = False
        self._failed: str | None = None
        self._thread = threading.Thread(target=self._run, name="queuetop-history-reader", daemon=True)
        self._thread.start()

    def submit(self, key: Hashable, job: Callable[[HistoryStore], T], done: Callable[[T], None]) -> None:
        with self._wake:
            self._pending.pop(key, None)  # the newer job goes last: jobs run in the order they were last asked
            self._pending[key] = (job, done)
            self._wake.notify()

    def close(self, timeout: float = 5.0) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join(timeout)

    def _run(self) -> None:
        store: HistoryStore | None = None
        try:
            while True:
                with self._wake:
                    while not self._pending and not self._closed:
                        self._wake.wait()
                    if self._closed:
                        return
                    key = next(iter(self._pending))
                    job, done = self._pending.pop(key)
                try:
                    if store is None:
                        store = HistoryStore(self.path, create=False, retention=self.retention)
                    result = job(store)
                    done(result)
                except (sqlite3.Error, UsageError) as exc:  # the chart stays as it was; say it once
                    if self._failed != str(exc):
                        log.warning("history file %s: cannot read the charts' past: %s", self.path, exc)
                    self._failed = str(exc)
        finally:
            if store is not None:
                store.close()


def open_history(path: Path, target: Target, layout: Layout,
                 retention: Retention | None = None) -> tuple[HistoryWriter, HistoryStore]:  # fmt: skip
    """The dashboard's two ends of a history file: the writer thread (its own connection), and a reader on a
    connection of the calling thread's (the charts, the time cursor)."""
    writer = HistoryWriter(path, target=target_identity(target), layout=layout_identity(layout),
                           clock=layout.read_clock, retention=retention)  # fmt: skip
    try:
        reader = HistoryStore(path, create=False, retention=retention)
    except BaseException:
        writer.close()
        raise
    return writer, reader


def find_history(target: Target, layout_name: str | None, folder: Path | None = None,
                 table: str | None = None) -> list[tuple[Path, dict[str, str]]]:  # fmt: skip
    """The history files kept for a target (and layout, when named), with their meta, newest first."""
    who = target_identity(target)
    found = []
    folder = folder or history_dir()
    for path in sorted(folder.glob("*.sqlite3")):
        try:
            meta = _meta_of(path)
        except sqlite3.Error:
            continue
        if meta.get("target") != who:
            continue
        name, _, where = meta.get("layout", "").partition(":")
        if layout_name is not None and name != layout_name:
            continue
        if table is not None and where.split(".")[-1].lower() != table.split(".")[-1].lower():
            continue
        found.append((path, meta))
    found.sort(key=lambda item: -item[0].stat().st_mtime)
    return found


def damaged_histories(folder: Path | None = None) -> list[tuple[Path, str]]:
    """The history files in the folder that cannot be read, with SQLite's reason: `find_history` passes them by."""
    damaged = []
    for path in sorted((folder or history_dir()).glob("*.sqlite3")):
        try:
            _meta_of(path)
        except sqlite3.Error as exc:
            damaged.append((path, str(exc)))
    return damaged


def _meta_of(path: Path) -> dict[str, str]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())
    finally:
        db.close()


def snapshot_from(records: Sequence[Record], *, like: Snapshot | None, target: str, clock: str) -> Snapshot | None:
    """A Snapshot of past figures (from `at()`), for the table: the shape's figures as the live one says."""
    if not records:
        return None
    totals = next((r.to_stats() for r in records if r.job_type == TOTAL), TypeStats(TOTAL))
    types = tuple(r.to_stats() for r in records if r.job_type != TOTAL)
    base = dict(dialect=like.dialect, layout=like.layout, figures=like.figures, window_s=like.window_s,
                note=like.note) if like is not None else {}  # fmt: skip
    return Snapshot(taken_at=moment(records[0].t), target=target, poll_ms=0.0, types=types, totals=totals,
                    clock=clock, **{"dialect": "", "window_s": 0.0, **base})  # fmt: skip
