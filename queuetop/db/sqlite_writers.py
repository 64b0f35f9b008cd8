"""SQLite writers of one process take turns: none waits long.

SQLite lets one writer at a time into a file. One that finds the write lock taken waits in SQLite's busy
handler, which sleeps (1, 2, 5, ... up to 100 ms) and tries again, and whoever asks just as the lock comes free
gets it. Under a saturated load (`queuetop load`, the benchmarks, the dashboard's demo load) the lock is nearly
always held, so a writer could keep missing it until the busy timeout ran out, six times over with the retries,
and the whole load run stopped with "database is locked" while the others carried on. Inside one process
queuetop's writers to a file wait on a lock here instead (woken when it is released, never polling), and one
that has waited PATIENCE_S is handed it ahead of the others, first come first served. Writers in other processes
still meet in SQLite's busy handler. Reads take no turn: in WAL mode they never wait for a writer.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

# A statement writes if its first word (after queuetop's tag comment) does; a WITH writes when its body does.
_FIRST_WORD = re.compile(r"^\s*(?:/\*.*?\*/\s*)*(\w+)", re.S)
_WRITE_WORDS = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER"})
_WRITES_IN_WITH = re.compile(r"\b(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.I)
PATIENCE_S = 0.05  # a writer that has waited this long is served first come first served


@lru_cache(maxsize=4096)  # queuetop's statements are few and built once: their text repeats
def writes(sql: str) -> bool:
    """Does this statement write (and so need the file's write lock)?"""
    first = _FIRST_WORD.match(sql)
    word = first.group(1).upper() if first else ""
    return word in _WRITE_WORDS or (word == "WITH" and _WRITES_IN_WITH.search(sql) is not None)


class TurnLock:
    """A lock that lets a writer barge in while nobody has waited long (a thread that just wrote may write again:
    handing every write over to another thread costs a switch of threads each time, and cut a native SQLite
    load from about 7,900 to 2,300 completions a second), but hands it over first come first served to the
    writers that have waited PATIENCE_S, so none waits much longer than that."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._mutex = threading.Lock()  # guards the line, and every hand-over
        self._line: deque[threading.Event] = deque()  # the writers out of patience, in the order they came

    def acquire(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        if self._lock.acquire(timeout=min(timeout, PATIENCE_S)):
            return True
        with self._mutex:
            if self._lock.acquire(blocking=False):  # freed while nobody was in line
                return True
            turn = threading.Event()
            self._line.append(turn)
        if turn.wait(max(0.0, deadline - time.monotonic())):
            return True
        with self._mutex:
            if turn.is_set():  # handed over just as the wait ran out
                return True
            self._line.remove(turn)
            return False

    def release(self) -> None:
        with self._mutex:
            if self._line:
                self._line.popleft().set()  # handed over: the lock stays held, now by the first in line
            else:
                self._lock.release()


_LOCKS: dict[str, TurnLock] = {}
_LOCKS_MUTEX = threading.Lock()


def lock_for(path: str) -> TurnLock:
    """The one lock of a file (by its resolved path), shared by every connection of this process."""
    with _LOCKS_MUTEX:
        return _LOCKS.setdefault(path, TurnLock())


@contextmanager
def turn(lock: TurnLock, timeout_s: float) -> Iterator[None]:
    """Wait for this writer's turn, at most `timeout_s` (then SQLite's own busy error, which callers already
    treat as a busy timeout: retried, or reported)."""
    if not lock.acquire(timeout_s):
        raise sqlite3.OperationalError("database is locked (queuetop's own writers to this file queued past the "
                                       "busy timeout)")  # fmt: skip
    try:
        yield
    finally:
        lock.release()
