"""How long a watcher waits from one poll to the next: its interval, or longer where a poll is dear.

A poll reads what moved since the last one, where the shape's indexes let it (`collector.py`). Where they do not —
a seed's completed table with no index on its completion time, a claim mark no index holds: `queuetop doctor`
names the index each layout needs — a poll reads the whole table, and its cost grows with the table: seed 001's
`requests` at 10⁶ rows 125-184 ms, at 10⁷ about ten times that (bench/README). Polled every second, such a monitor
would take a growing share of a database core, the load it is there to watch. So the wait after a poll stretches
until polls take at most POLL_MAX_SHARE of the time (a 1.2 s poll: every 12 s), never longer than PACED_AT_MOST_S
(beyond it a dashboard would show a queue long gone). Only a poll dearer than PACED_PAST_S can stretch it, and only
the cheaper of the last two polls counts: a first poll counts every row once, and a moment's load on a busy
machine is not the table's size. A pace starts where it would stretch the interval by half again (PACED_FROM) and
holds while it stretches it at all: a poll cost hovering around a tenth of the interval would otherwise make the
pace, and the dashboard's note of it, come and go from poll to poll (seen at 10⁶ rows: every 1.06 s, then 1 s).
An index takes the pacing away by itself: the polls get cheap again.

Every watcher paces the same way: the dashboard (each target of a multi-target one), the exporter, `check --for`
and `stats --watch`; all but `check` (whose report counts its polls) say so. The poll after an enqueue, release
or retry from the dashboard is not held back.
"""

from __future__ import annotations

POLL_MAX_SHARE = 0.10  # polls take at most this share of the time ...
PACED_PAST_S = 0.1  # ... where a poll costs more than this (below, at most 10 % of the default 1 s interval)
PACED_AT_MOST_S = 30.0  # ... and never further apart than this (a user's longer interval stays theirs)
PACED_FROM = 1.5  # a pace starts where it stretches the interval this many times, and holds while it stretches it


class Pace:
    """One watcher's pace: `took` after each poll, `wait_s` when the next is scheduled."""

    def __init__(self) -> None:
        self._took: tuple[float | None, float | None] = (None, None)  # the last two polls' seconds, latest first
        self._held = False  # pacing now: it holds down to the interval itself (PACED_FROM)

    def took(self, poll_s: float | None) -> None:
        """A poll took `poll_s` seconds (None: it failed, and read nothing)."""
        self._took = (poll_s, self._took[0])

    @property
    def dear_s(self) -> float | None:
        """What a poll costs, as the pace reads it: the cheaper of the last two (None: fewer than two polls read)."""
        latest, before = self._took
        return None if latest is None or before is None else min(latest, before)

    def wait_s(self, interval_s: float) -> float:
        """The wait before the next poll: `interval_s`, or longer where polls are dear (see the module)."""
        dear = self.dear_s
        paced = min(PACED_AT_MOST_S, dear / POLL_MAX_SHARE) if dear is not None and dear > PACED_PAST_S else 0.0
        # the same answer however often it is asked (the status line asks every second): once held, the bar is lower
        self._held = paced > interval_s * (1.0 if self._held else PACED_FROM)
        return paced if self._held else interval_s
