"""SQLite writers of one process take turns, first come first served.

SQLite lets one writer at a time into a file. One that finds the write lock taken waits in SQLite's busy
handler, which sleeps (1, 2, 5, ... up to 100 ms) and tries again, and whoever asks just as the lock comes free
gets it. Under a saturated load (`queuetop load`, the benchmarks, the dashboard's demo load) the lock is nearly
always held, so a writer could keep missing it until the busy timeout ran out, six times over with the retries,
and the whole load run stopped with "database is locked" while the others carried on. Inside one process
queuetop's writers to a file queue here instead, each handed the turn as the last one ends, so none waits longer
than the writers ahead of it take. Writers in other processes still meet in SQLite's busy handler. Reads take no
turn: in WAL mode they never wait for a writer.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

# A statement writes if its first word (after queuetop's tag comment) does; a WITH writes when its body does.
_FIRST_WORD = re.compile(r"^\s*(?:/\*.*?\*/\s*)*(\w+)", re.S)
_WRITE_WORDS = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER"})
_WRITES_IN_WITH = re.compile(r"\b(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.I)


@lru_cache(maxsize=4096)  # queuetop's statements are few and built once: their text repeats
def writes(sql: str) -> bool:
    """Does this statement write (and so need the file's write lock)?"""
    first = _FIRST_WORD.match(sql)
    word = first.group(1).upper() if first else ""
    return word in _WRITE_WORDS or (word == "WITH" and _WRITES_IN_WITH.search(sql) is not None)


class FairLock:
    """A lock handed to its waiters in the order they came (a threading.Lock lets the thread that just released
    it take it again ahead of those waiting)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held = False
        self._waiters: deque[threading.Event] = deque()

    def acquire(self, timeout: float) -> bool:
        with self._mutex:
            if not self._held:
                self._held = True
                return True
            turn = threading.Event()
            self._waiters.append(turn)
        if turn.wait(timeout):
            return True
        with self._mutex:
            if turn.is_set():  # handed over just as the wait ran out
                return True
            self._waiters.remove(turn)
            return False

    def release(self) -> None:
        with self._mutex:
            if self._waiters:
                self._waiters.popleft().set()  # the turn passes on: still held, now by the next in line
            else:
                self._held = False


_LOCKS: dict[str, FairLock] = {}
_LOCKS_MUTEX = threading.Lock()


def lock_for(path: str) -> FairLock:
    """The one lock of a file (by its resolved path), shared by every connection of this process."""
    with _LOCKS_MUTEX:
        return _LOCKS.setdefault(path, FairLock())


@contextmanager
def turn(lock: FairLock, timeout_s: float) -> Iterator[None]:
    """Wait for this writer's turn, at most `timeout_s` (then SQLite's own busy error, which callers already
    treat as a busy timeout: retried, or reported)."""
    if not lock.acquire(timeout_s):
        raise sqlite3.OperationalError("database is locked (queuetop's own writers to this file queued past the "
                                       "busy timeout)")  # fmt: skip
    try:
        yield
    finally:
        lock.release()
