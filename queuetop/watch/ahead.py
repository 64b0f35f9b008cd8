"""The dashboard's poll thread, and its first poll begun before the dashboard is built.

`CallThread` is one daemon thread that runs the calls given to it one after another: a dashboard's polls, on the
thread that holds the monitor's connection (no thread start per poll). A daemon, never waited for: a poll blocked
on a database that stopped answering must not hold the user's `q`; its connection's deadline ends it.

`PollAhead` submits the monitor's first poll to that thread as soon as the monitor exists, so the first poll runs
while Textual is imported and the screen is mounted (on this machine about 250 ms before the app could ask for
it; a SQLite first poll at 10⁶ rows is ~90 ms) rather than after: the statements wait on the database with the
interpreter free, so the first frame with figures comes sooner by nearly all of it. The dashboard's own first
poll, on the same thread after it, takes its outcome instead of polling again (`PollAhead.poll`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from queuetop.watch.monitor import PollOutcome


class CallThread:
    """One daemon thread that runs the calls given to `submit`, one after another."""

    def __init__(self, name: str) -> None:
        self._calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, call: Callable[[], None]) -> None:
        self._calls.put(call)

    def _run(self) -> None:
        while True:
            self._calls.get()()


class Polls(Protocol):
    def poll(self, looking_for: str = "", fresh: bool = False) -> PollOutcome: ...


class PollAhead:
    """A monitor's first poll, begun now on `thread` (the poll thread the dashboard will use)."""

    def __init__(self, source: Polls, thread: CallThread) -> None:
        self.source = source
        self.thread = thread
        self._outcome: PollOutcome | None = None
        thread.submit(self._poll)

    def _poll(self) -> None:
        self._outcome = self.source.poll()

    def poll(self, looking_for: str = "", fresh: bool = False) -> PollOutcome:
        """On the poll thread: the first poll's outcome the first time (it ran there before: it is there), then
        the source's polls."""
        outcome, self._outcome = self._outcome, None
        return outcome if outcome is not None else self.source.poll(looking_for, fresh)
