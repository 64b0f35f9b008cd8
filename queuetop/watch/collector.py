"""One poll of a queue of any shape (a state-machine layout) → one frozen `Snapshot`.

Every shape — the native schema, the seeds' tables, users' own layouts and the job libraries' — is read here, from
its layout alone:

- states (pending, scheduled, claimed, timed out, dead, lost): one round trip, one arm per family of states (those
  that begin alike, as a filtered index does: `Statements.families`), counted per job type (or once, for a shape
  without one), plus the database's own clock of the layout's kind, so every age is the server's time minus the
  server's time. What they cost depends on the shape's indexes (seed 003's (PROCESSED, ID) makes depth a seek; seed
  002 has none, so it scans — README and bench/ say which index fixes each);
- the depth, where both arrivals and completions are read (every seed: `Layout.depth_tracked`), is not
  counted on every poll: the jobs of a type in any state change only by arrivals and completions, so the
  pending ones are those tracked jobs less the other states (few, and counted). The poll reads the pending rows
  of each type only up to DEPTH_EXACT_UP_TO + 1, in the queue's own order (so the oldest is among them): a
  shallow type is exact on every poll, a deep one is tracked and marked as an estimate (≈). A full count on a
  connection and a thread of its own (`recount.py`) corrects the tracked figures: every minute (at most 1 % of
  the time), at once when a capped count finds more than a tracked figure said, and when the queue comes to rest,
  so the depth is exact again a poll or two after a load test stops (`tracking.py`). A deep queue's first poll
  starts the tracking from a sample of the queue table instead of a count of every row (`firstlook.py`);
- arrivals: ids above the highest seen (identity shapes; ids of the last few seconds are counted again, since
  they commit out of order), or rows created past a time watermark (seed 001, whose ids are GUIDs) — counted
  per job type and second in the database, never fetched one by one (`watermarks.py`);
- completions: counted the same way past a watermark on their completion time, with an overlap for late
  commits; wait and processing percentiles from a bounded, weighted sample of the new completions;
- shapes with no times at all whose finished rows stay flagged (a layout's `done`: seeds 002, 003): completions
  are the growth of the count of those rows from a base id that follows the live end of the table
  (`FinishedWatch`), at the poll's moment; a layout with neither times nor `done` takes them as the arrivals minus
  the change in depth (its depth counted). The first poll has no rate (null, never 0).

After the first poll, states, arrivals and completion counts are one round trip (`Statements.shape_poll`), the
latency sample a second: under a load each statement waits for a slice of a busy server, whatever it reads.
The arrivals' and completions' bounds are set from the poll's moment before the database gives it (the last
poll's server time plus what elapsed here): they only decide which seconds are counted again.

Where rows stay in the queue table for good and carry an identity (seeds 000, 002, 003, 004), the finished
history is most of the table and never changes again: the poll reads only ids from the lowest one still in a
state (as of the last poll; never above the highest id less the overlap, for ids that commit late), a range of
the primary key, so its cost follows the live end of the table, not its history. The background full count
(tracked depth), or else a full read every FULL_PASS_EVERY_S on the poll (spaced out to at most 1 % of the
time), corrects anything changed by hand below that range.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from queuetop.core.errors import QueuetopError
from queuetop.core.history import LatencyWindow
from queuetop.db import Database, Timeout
from queuetop.db.diagnostics import diagnostics_for
from queuetop.layouts import NATIVE, STATES, Layout
from queuetop.layouts.sql import statements_on
from queuetop.watch.firstlook import estimate_pending
from queuetop.watch.fold import InNameOrder
from queuetop.watch.recount import Recounter, SpacedCount
from queuetop.watch.rows import TypeHistory, TypeRows
from queuetop.watch.snapshot import Snapshot
from queuetop.watch.tracking import TrackedDepth
from queuetop.watch.unaccounted import FIRST_WAIT_S, InNoState, first_count_ends_soon
from queuetop.watch.watermarks import (
    CompletionWatch,
    FinishedWatch,
    IdentityWatch,
    LiveRowsWatch,
    Reads,
    TimeWatch,
    VanishedWatch,
    line_before,
    seconds,
    sequence_value,
)

WINDOW_S = 60.0
FULL_PASS_EVERY_S = 60.0  # a read of the whole table this often (and no more than 1 % of the time) ...
FULL_PASS_MAX_SHARE = 0.01  # ... corrects what a ranged read cannot see (a row changed by hand below the range)
LOOK_BACK_IDS = 100_000  # the first poll's look back reads the arrivals among the newest ids this many at most
LOOK_BACK_JOINED_IDS = 10_000  # ... where each row's creation time is a lookup in another table (procrastinate:
# ~5.5 µs a row, 55 ms of an 80-100 ms first poll at 10⁶ jobs; fewer would be quicker, but where more arrived in the
# window than are read, all within a few seconds, the rate is those read over the time since: fewer, the lower)


def collector_for(db: Database, layout: Layout = NATIVE, *, job_types: Iterable[str] = (),
                  settings: dict[str, Any] | None = None, note: str | None = None,
                  first_count_wait_s: float | None = FIRST_WAIT_S, first_look: bool = True,
                  one_shot: bool = False, max_types: int | None = None,
                  pinned: Iterable[str] = ()) -> ShapeCollector:  # fmt: skip
    """The collector of a layout (every one, native included, is read by the one engine); `first_count_wait_s`:
    how long the first poll waits for the count of rows in no state (None: a one-shot look, until it ends);
    `first_look`: may the first poll of a deep queue estimate its depth from a sample (`firstlook.py`), and that of a
    big table leave its rows in no state to a later poll, or must it count every row (a verdict, `stats --exact`);
    `one_shot`: polled once (`stats`), so it starts no count off the poll that it would not wait for (a deep
    queue's first look then leaves the rows in no state uncounted);
    `max_types`: past this many types, the busiest are shown and the rest folded into one `(other)` row, `pinned`
    ones always shown (`fold.py`; None: every type)."""
    return ShapeCollector(db, layout, job_types=job_types, settings=settings, note=note,
                          first_count_wait_s=first_count_wait_s, first_look=first_look, one_shot=one_shot,
                          max_types=max_types, pinned=pinned)


class ShapeCollector(TrackedDepth, TypeRows):
    """Polls one queue of any layout; keeps the watermarks that make the next poll read only what is new."""

    def __init__(self, db: Database, layout: Layout, *, job_types: Iterable[str] = (), window_s: float = WINDOW_S,
                 settings: dict[str, Any] | None = None, note: str | None = None,
                 first_count_wait_s: float | None = FIRST_WAIT_S, first_look: bool = True,
                 one_shot: bool = False, max_types: int | None = None, pinned: Iterable[str] = ()) -> None:  # fmt: skip
        self.db = db
        self.max_types = max_types
        self.pinned = frozenset(pinned)
        self.looking_for = ""
        self.one_shot = one_shot
        self.first_count_wait_s = first_count_wait_s
        self.layout = layout
        self.only_types = frozenset(job_types)
        self.window_s = window_s
        self.settings = dict(settings or {})
        self.note = note
        self.statements = statements_on(db, layout)
        self._oldest_grouped = oldest_grouped(db, layout, self.statements.heads_by_type_list)
        self.statements.oldest_grouped = self._oldest_grouped
        self._provides = dict(layout.provides)  # built once: a poll asks it for every type it shows
        self._cannot_know = layout.cannot_know  # and why not, once; and the library's words for its states
        self._library_words = layout.library_words
        self._guid_types = layout.type_of("type") == "guid"
        if self._guid_types:
            self.only_types = frozenset(t.upper() for t in self.only_types)
            self.pinned = frozenset(t.upper() for t in self.pinned)
        self._history: dict[str, TypeHistory] = {}
        self._expiring: list[tuple[float, str]] = []  # when each type's earliest event leaves the window (rows.py)
        self._observed: dict[str, float] = {}  # per event kind: since when it has been watched
        self._reads_events = layout.arrivals is not None or layout.completions is not None or layout.done is not None
        self._identities = IdentityWatch()
        self._vanished = VanishedWatch() if layout.sequence else None
        self._unseen = TypeHistory(window_s)  # jobs that came and went unseen (`_vanished`): in the totals only
        self._all = TypeHistory(window_s)  # every shown type's events and latencies together (each type's
        # history feeds it): the totals'
        self._forgotten = [0, 0]  # their arrivals and completions, of the types dropped since (quiet and empty)
        self._arrivals_by_time = TimeWatch(window_s)
        self._completions = CompletionWatch(window_s)
        self._finished = FinishedWatch() if layout.done is not None else None  # no times: rows done past a base
        self._finished_at_recount: dict[str, int] = {}  # what `_finished` had seen when the running count began
        self.reads = Reads()  # what the last poll fetched
        self._low_id: int | None = None  # the lowest id still in a state at the last poll (ranged layouts) ...
        self._dead_low: int | None = None  # ... but dead, which is read from the lowest dead id, where it is apart
        self._dead_then: dict[str, int] = {}  # per type, its dead jobs at the last poll: fewer means a hand's change
        self._lows: deque[tuple[float, int]] = deque()  # (poll time, its low id): what completions may read from
        # ... or, where they are lines of a numbered log (`Layout.log_lines`), (poll time, the log's highest line then)
        self._lines: deque[tuple[float, int]] | None = deque() if layout.log_lines else None
        self._completions_ranged = self.statements.ranged and layout.completions is not None \
            and layout.completions.table == "queue"  # rows of the queue: read from its low id
        self._next_full_at = 0.0  # monotonic seconds: the next poll reading the whole table
        self._live_rows = LiveRowsWatch() if layout.deletes_finished else None
        self._clock: tuple[datetime, float] | None = None  # the last poll's server time, and time.monotonic() then
        self._done_low: int | None = None  # the low id this poll's completion counts read from (ranged layouts)
        # Tracked depth (`tracks_depth`): per type, the jobs in any state. They change only by arrivals and
        # completions, which the poll reads anyway, so the pending ones are that less the other states (few, and
        # counted), and only DEPTH_EXACT_UP_TO of them need be read to tell a shallow type's depth exactly.
        self.tracks_depth = layout.depth_tracked
        self._live: dict[str, int] = {}
        self._raw_types: dict[str, Any] = {}  # type as shown → as the database gives it (the heads' parameter)
        self._moved: dict[str, int] = {}  # per type, arrivals − completions since the running recount began
        self._moved_now: set[str] = set()  # the types that moved in this poll
        self._estimated: set[str] = set()  # the types whose depth this poll shows is tracked, not counted
        self._counted_at_rest: set[str] = set()  # types that have not moved since their last full count
        self._heads_turn, self._heads_kept, self._others_then = 0, {}, {}  # past 500 types: heads read in turn
        self._settled, self._settled_pending, self._settled_lows = set(), {}, {}  # per type, as last worked out
        self._wanted_order = InNameOrder()
        self._recount: Recounter[list[tuple[Any, ...]]] = Recounter(layout.queue_table)
        self._spaced: SpacedCount[dict[str, dict[str, tuple[int, datetime | None]]]] = SpacedCount()  # untracked
        self._in_no_state = InNoState(self.statements, self.settings, layout.queue_table)
        self._counted_once = False
        self._polling_first = False  # a first poll is running: it starts no count off the poll (`_poll`)
        self._shown = InNameOrder()
        # A deep queue's first poll estimates its depth from a sample (firstlook.py) where the shape allows it: an
        # untracked one's leaves its other states to the next poll's count, so `stats` (one look) counts them now
        # (the id span must be the live queue: rows that stay for good make it the history, but for those deleted)
        self._may_estimate = first_look  # and leave a big table's rows in no state to a later poll
        self._first_look = (first_look and layout.arrivals == "identity"
                            and (not self.statements.ranged or layout.deletes_finished)
                            and (self.tracks_depth or not one_shot))

    def settle(self, timeout_s: float = 30.0) -> None:
        """Wait for a background full count in flight (tests, benchmarks); the next poll takes its result."""
        self._recount.settle(timeout_s)
        self._in_no_state.settle(timeout_s)

    def use(self, db: Database) -> None:
        """Carry on over a new connection (after a reconnect); the watermarks stay valid."""
        self.db = db
        self.statements = statements_on(db, self.layout)
        self.statements.oldest_grouped = self._oldest_grouped

    @property
    def untyped_name(self) -> str:
        """The one row of a shape without a job type column is named after its queue table."""
        return self.layout.queue_table

    def _type(self, value: Any) -> str:
        if value is None:
            return self.untyped_name
        # A GUID type reads back lower-case from PostgreSQL, upper-case from SQL Server: one spelling for all.
        name = str(value).upper() if self._guid_types else str(value)
        self._raw_types[name] = value
        return name

    # -- polling -----------------------------------------------------------------------------------------
    def poll(self, looking_for: str = "", fresh: bool = False) -> Snapshot:
        """Read the queue once. Raises QueuetopError if the database cannot be read. `looking_for`: the
        dashboard's filter; past `max_types`, the types whose name holds it are shown too. `fresh`: the user just
        changed the queue, so a deep untracked shape counts its states now, not when its spaced count is due."""
        self.looking_for = looking_for
        try:
            return self._poll(fresh)
        except Timeout as exc:
            # On a seed's own table a read that outlasts the statement timeout is nearly always a missing index.
            raise Timeout(f"{exc.message} (layout {self.layout.name}: a poll read more of {self.layout.queue_table} "
                          "than the statement timeout allows)",
                          "an index on the columns of its states makes it cheap: README, 'What a poll costs on "
                          "each shape'") from exc

    def _poll(self, fresh: bool = False) -> Snapshot:
        started, begun = time.perf_counter(), time.monotonic()
        layout, decode = self.layout, self.db.dialect.decode_time
        self.reads = reads = Reads()
        states = [name for name in STATES if name in layout.states]
        ranged = self.statements.ranged
        # (a shape that reads no event, dramatiq-pg's, huey's, observes none: its first poll is its first alone)
        first = self._clock is None or (self._reads_events and not self._observed)
        # A count off the poll that the first poll does not wait for (a first look's full count, a big table's
        # rows in no state) starts with the next poll: the first poll's figures come out first, and a dashboard
        # draws them while two scans of the whole table would take the machine's cores (PostgreSQL splits each
        # over all of them: the first frame at 10⁶ pending, the database on the same 2 cores, 488 -> 346 ms).
        self._polling_first = first
        tracking = self.tracks_depth and not first
        # a deep untracked shape between two spaced counts of its states: their figures as counted then
        kept = None if first or self.tracks_depth or self._spaced.due(begun, fresh) else self._spaced.kept
        if tracking:
            self._take_recount(states)
        estimates = None
        if first and self._first_look:
            estimates = estimate_pending(self.db, self.statements, self.settings, reads, self._type)
        # a first poll that counts its states whole waits for the first count of the rows in no state: begun now
        first_wait = self._first_count_wait() if first and estimates is None else 0.0
        if first_wait != 0.0:
            self._in_no_state.begin(self.db)
        # Where the depth is tracked, the background count reads the whole table; elsewhere a full pass does.
        full = not tracking and kept is None and (not ranged or self._low_id is None
                                                  or time.monotonic() >= self._next_full_at)
        low = None if full else self._low_id
        # A job that went dead since the last poll was in another state then, at or above that poll's low id
        dead_low = None if low is None or self._dead_low is None else min(self._dead_low, low)
        read = [name for name in states if name != "pending"] if tracking or estimates is not None else states
        # a deep untracked queue's first look counts no state: its next poll counts them all (firstlook.py)
        sampled = estimates is not None and not self.tracks_depth
        counted = kept is None and not sampled  # this poll counts states: not the last count's, nor a first look
        if not counted:
            read = []
        asked = self._heads_asked() if tracking else []
        self._moved_now = set()
        # read before the poll's own statement, so every line made after the poll's moment is above it
        last_line = reads.fetch(self.db, self.statements.last_line())[0][0] if self._lines is not None else None
        asked_at = time.monotonic()
        heads: list[tuple[Any, ...]] = []
        if sampled:
            rows = [("now", None, reads.fetch(self.db, self.statements.clock())[0][0])]
            events: dict[str, list[tuple[Any, ...]]] = {}
        elif first:
            rows = reads.fetch(self.db, self.statements.state_counts(read, self.settings, low,
                                                                     finished=self._finished is not None,
                                                                     dead_low=dead_low))  # fmt: skip
            events = {}
        else:
            rows, events, heads = self._read_at_once(read, low, ranged, asked_at, asked, dead_low)
        if full:
            spent = time.perf_counter() - started
            self._next_full_at = time.monotonic() + max(FULL_PASS_EVERY_S, spent / FULL_PASS_MAX_SHARE)
        now = decode(next(row[2] for row in rows if row[0] == "now"))
        self._clock = (now, asked_at)
        counts: dict[str, dict[str, tuple[int, datetime | None]]] = {name: {} for name in states}
        live_ids, dead_ids, finished_from_low = [], [], []
        dead_at = self.statements.dead_apart(read)
        for part, job_type, oldest, *per_state in rows:
            if part == "now":
                continue
            if part.strip() == "finished":  # the first poll's: where the finished rows' count starts
                finished_from_low.append((job_type, per_state[0]))
                continue
            if ranged and (lowest := per_state.pop()) is not None:
                (dead_ids if self.statements.in_dead_family(per_state, dead_at) else live_ids).append(int(lowest))
            for name, count in zip(read, per_state, strict=True):
                # A row holds the counts of its family of states (`Statements.families`), NULL for the others'.
                # An untyped shape's family has its row even with no rows in it (SUM over none is NULL): 0.
                if layout.states[name].table != part or not (count or job_type is None):
                    continue
                job = self._type(job_type)
                if count is not None or job not in counts[name]:
                    oldest_here = decode(oldest) if name == "pending" else None
                    counts[name][job] = (int(count or 0), oldest_here)
        if kept is not None:
            counts = kept
        elif sampled:  # only the depth, ≈; every other state unknown (None) until the next poll counts it
            assert estimates is not None
            counts = {"pending": {job_type: (jobs, None) for job_type, jobs in estimates.items()}}
        elif not self.tracks_depth:
            self._spaced.counted(counts, sum(n for by_type in counts.values() for n, _ in by_type.values()), begun,
                                 time.perf_counter() - started)
        if layout.arrivals == "identity":
            if "arrived" in events:
                self._identities.take(events["arrived"], now, decode, self._type, self._arrived)
            else:
                self._read_arrivals_by_id(now, first)
            if self._vanished is not None and not first:
                gone = self._vanished.take(sequence_value(reads.fetch(self.db, self.statements.sequence_value())[0]))
                self._unseen.arrivals.add(seconds(now), gone)
                if layout.deletes_finished:  # else their completions are read where the shape keeps them
                    self._unseen.completions.add(seconds(now), gone)
        elif layout.arrivals == "created":
            if "arrived" in events:
                self._arrivals_by_time.take(events["arrived"], now, decode, self._type, self._arrived)
            else:
                self._read_arrivals_by_time(now, first)
        if layout.completions is not None:
            if first:
                self._observed["completions"] = seconds(now) - self.window_s
            if "done" in events:
                new = self._completions.take(events["done"], now, decode, self._type, self._completed)
                self._completions.sample(self.db, self.statements, reads, self._type, self._sampled, new,
                                         self.settings, self._done_low)  # fmt: skip
            else:
                self._completions.read(self.db, self.statements, now, reads, self._type, self._completed,
                                       self._sampled, self.settings, self._completions_low(now))
        elif self._finished is not None:
            if first:
                self._observed["completions"] = seconds(now)
            else:
                self._finished.take(events["finished"], seconds(now), self._type, self._completed)
        if tracking:
            live_ids += self._pending_from_heads(now, counts, read, heads, asked, low)
        elif estimates is not None and not sampled:  # the first look at a deep queue: tracked from a sample
            self._seed(estimates, counts, read)
            live_ids += self._pending_from_heads(now, counts, read, [], [], low)
        elif self.tracks_depth:  # the first poll counted everything: the tracking starts from it
            self._live = {}
            for by_type in counts.values():
                for job_type, (count, _) in by_type.items():
                    self._live[job_type] = self._live.get(job_type, 0) + count
            self._counted_at_rest = set(self._live)
            self._unsettle_all()
            self._recount.schedule.counted(seconds(now), time.perf_counter() - started)
            self._counted_once = True
        if self._lines is not None:
            self._lines.append((seconds(now), int(last_line or 0)))
        if ranged and counted:  # (a first look found no live end: the next poll reads all)
            newest_settled = self._identities.settled + 1  # ids above may still commit late
            self._low_id = max(0, min([*live_ids, newest_settled]))
            self._dead_low = min(dead_ids) if dead_ids else None
            if dead_at is not None:
                self._dead_left(counts, seconds(now))
            self._lows.append((seconds(now), self._low_id))
            if first and self._finished is not None:  # the statement counted from this same low id
                self._finished.start(finished_from_low, self._low_id, self._type)
        # what left is known at a count (the arrivals add up): a first look counts nothing
        if self._live_rows is not None and counted:
            self._take_live_rows(now, counts)
        if not (first and first_wait == 0.0):  # waited for, or counted from the next poll on (a one-shot: never)
            self._in_no_state.step(self.db, seconds(now), self._type, first_wait)
        if not self.tracks_depth:  # between spaced counts, every type's depth is the last count's: an estimate
            self._estimated = set() if counted \
                else {*self._history, *(t for by in counts.values() for t in by)}  # a first look's too
        types, totals, other, folded = self._build(now, counts)
        return Snapshot(
            taken_at=now, target=self.db.target.display, dialect=self.db.dialect.name,
            poll_ms=(time.perf_counter() - started) * 1000, window_s=self.window_s, types=types, totals=totals,
            other=other, folded=folded,
            layout=layout.name, figures=dict(self._provides), cannot_know=self._cannot_know, note=self.note,
            clock=layout.read_clock, reads=self.db.dialect.reads,
            library=layout.library, library_words=self._library_words,
            counted_s_ago=None if kept is None else begun - self._spaced.begun_at,
        )  # fmt: skip

    def _first_count_wait(self) -> float | None:
        """What the first poll waits for the first count of the rows in no state (None: until it ends). A big
        table's count would not end within a dashboard's moment, and a look that may estimate (`stats` but
        --exact) does not wait for it either: it comes with a later poll (a one-shot look's: not at all)."""
        wait = self.first_count_wait_s
        if wait != 0.0 and (wait is not None or self._may_estimate) \
                and not first_count_ends_soon(self.db, self.layout.schema, self.layout.queue_table):
            return 0.0
        return wait

    def _read_at_once(self, states: list[str], low: int | None, ranged: bool, asked_at: float,
                      heads: list[str], dead_low: int | None) -> tuple[list[tuple[Any, ...]],
                                                                     dict[str, list[tuple[Any, ...]]],
                                                                     list[tuple[Any, ...]]]:  # fmt: skip
        """States, arrivals, completion counts and the capped pending heads of `heads` (tracked depth) in one
        statement (`Statements.shape_poll`): under a load every round trip waits for a slice of a busy server.
        Their bounds need the poll's moment before the database gives it: the last poll's server time plus the
        time elapsed here (it only decides which seconds are read again). Returns the state rows as
        `state_counts` gives them, the event rows by part, as `arrival_counts` / `arrival_counts_since` /
        `completion_counts` give them, and the heads' rows as `shape_heads` gives them."""
        layout = self.layout
        assert self._clock is not None
        guess = self._clock[0] + timedelta(seconds=asked_at - self._clock[1])
        identity = self._identities.bounds(guess) if layout.arrivals == "identity" else None
        created = self._arrivals_by_time.since(guess) if layout.arrivals == "created" else None
        completed = None
        if layout.completions is not None:
            self._done_low = self._completions_low(guess)
            completed = (self._completions.prepare(guess), self._done_low)
        capped = self._capped(heads) if heads else None
        finished = None
        if self._finished is not None:
            assert self._low_id is not None  # a layout with `done` is ranged: its first poll set it
            finished = self._finished.bounds(self._low_id)
        rows = self.reads.fetch(self.db, self.statements.shape_poll(states, self.settings, low, identity, created,
                                                                    completed, capped, finished, dead_low))  # fmt: skip
        width = len(states) + ranged
        state_rows, events, head_rows = [], {}, []
        # Thousands of rows a poll past 1,000 types (the arrivals' overlap, a row per type and second): each row is
        # taken apart by position, not unpacked with a starred list.
        stripped: dict[str, str] = {}
        for row in rows:
            part = stripped.get(row[0]) or stripped.setdefault(row[0], row[0].strip())
            if part == "heads":
                head_rows.append((part, *row[1:]))
            elif part == "arrived" and identity is not None:
                events.setdefault(part, []).append((row[1], row[2], row[4], row[5], row[6]))
            elif part in ("arrived", "done"):
                events.setdefault(part, []).append((row[1], row[2], row[4], row[5] or 0, row[3]))
            elif part == "finished":
                events.setdefault(part, []).append((row[1], row[4], row[5]))
            else:
                state_rows.append((part, row[1], row[2], *row[4:4 + width]))
        for part, asked in (("arrived", identity is not None or created is not None), ("done", completed is not None),
                            ("finished", finished is not None)):  # a read that found nothing still ran: its watch
            if asked:                                             # must take its empty rows
                events.setdefault(part, [])
        return state_rows, events, head_rows

    def _dead_left(self, counts: dict[str, dict[str, tuple[int, datetime | None]]], t: float) -> None:
        """Dead jobs leave that state only by hand (retried, deleted): a retried one is waiting again below the
        low id the other states are read from, so where a type has fewer than at the last poll, the whole table is
        read again at once (the full count where the depth is tracked, else the next poll's full pass)."""
        dead = {job_type: count for job_type, (count, _) in counts["dead"].items()}
        if any(dead.get(job_type, 0) < was for job_type, was in self._dead_then.items()):
            if self.tracks_depth:
                self._start_recount(t)
            else:
                self._next_full_at = 0.0
        self._dead_then = dead

    def _completions_low(self, now: datetime) -> int | None:
        """The low id the completions read from: of the last poll before their overlap began. A job finished since
        was still in a state then, so its id is at or above that poll's low id (the current low id may already
        have passed it, and a count of a second read again must see all of its rows); a log's line made since was
        made after that poll read the log's highest line. None: the completions are read by their time alone."""
        lows = self._lines if self._lines is not None else self._lows if self._completions_ranged else None
        if lows is None or (self._completions.mark is None and self._lines is None):
            return None
        self._completions.start(now)  # the first poll's: its window's start (the same `prepare` sets)
        since_at = self._completions.since(now)
        since, low = seconds(since_at), None
        if lows is self._lines and not (lows and lows[0][0] <= since):  # the first poll: no earlier poll saw the log
            lows.appendleft((since, line_before(self.db, self.statements, since_at, self.reads)))
        while lows and lows[0][0] <= since:
            low = lows.popleft()[1]
        if low is not None:
            lows.appendleft((since, low))
        return low

    def _arrived(self, job_type: str, at: float, jobs: int, _dead: int = 0) -> None:
        self._history_at(job_type, at).arrivals.add(at, jobs)
        if self._live_rows is not None:
            self._live_rows.saw(job_type, jobs)
        if self._vanished is not None:
            self._vanished.saw(jobs)
        self._track(job_type, jobs)

    def _completed(self, job_type: str, at: float, jobs: int, dead: int) -> None:
        self._history_at(job_type, at).completions.add(at, jobs)
        self._track(job_type, -(jobs - dead))  # a job that went dead is still in a state: dead (native)

    def _sampled(self, job_type: str, latencies: list[tuple[float, float | None, float | None]],
                 weight: float) -> None:  # fmt: skip
        self._history_at(job_type, min(at for at, _, _ in latencies)).sample(LatencyWindow.samples(latencies, weight))

    def _read_arrivals_by_id(self, now: datetime, first: bool) -> None:
        db, decode, reads = self.db, self.db.dialect.decode_time, self.reads
        if not first:
            self._identities.read(db, self.statements, now, reads, self._type, self._arrived)
            return
        if self._vanished is not None:  # the ids past the sequence's value are new, whether seen as rows or not
            last_value = sequence_value(reads.fetch(db, self.statements.sequence_value())[0])
            self._vanished.begin(last_value)
            self._identities.begin(last_value)
        else:
            self._identities.begin(int(reads.fetch(db, self.statements.max_id())[0][0] or 0))
        self._observed["arrivals"] = seconds(now)
        if self.layout.has("created"):  # look back one window, so a one-shot `stats` has a rate
            since, highest = now - timedelta(seconds=self.window_s), self._identities.highest
            back = LOOK_BACK_JOINED_IDS if "created" in self.layout.joined else LOOK_BACK_IDS
            statement = self.statements.arrival_counts_since(since, (highest - back, highest))
            seen = [(self._type(job_type), seconds(at), int(jobs)) for job_type, second, jobs, _, _
                    in reads.fetch(db, statement) if (at := decode(second)) is not None]  # fmt: skip
            observed = seconds(since)
            if seen and sum(jobs for _, _, jobs in seen) >= back * 0.9:
                # The newest ids only, a range of the key, and they all arrived within the window: the rates are
                # over the seconds they cover, not the whole window — and not over the earliest, which the range
                # may cut (a burst of 10⁶ jobs in one second: 10⁴ of them over the time since would read as a
                # rate of a few hundred a second). Every later second was read whole.
                earliest = min(at for _, at, _ in seen)
                seen, observed = [event for event in seen if event[1] > earliest], earliest + 1
            self._observed["arrivals"] = observed
            for job_type, at, jobs in seen:
                moment = at + 0.5
                self._history_at(job_type, moment).arrivals.add(moment, jobs)

    def _read_arrivals_by_time(self, now: datetime, first: bool) -> None:
        watch = self._arrivals_by_time
        if watch.start(now):
            assert watch.mark is not None
            self._observed["arrivals"] = seconds(watch.mark)
        rows = self.reads.fetch(self.db, self.statements.arrival_counts_since(watch.since(now), None))
        watch.take(rows, now, self.db.dialect.decode_time, self._type, self._arrived)

    def _take_live_rows(self, now: datetime, counts: dict[str, dict[str, tuple[int, datetime | None]]]) -> None:
        assert self._live_rows is not None
        live: dict[str, int] = {}
        for name, by_type in counts.items():
            if self.layout.states[name].table == "queue":
                for job_type, (count, _) in by_type.items():
                    live[job_type] = live.get(job_type, 0) + count
        done = self._live_rows.take(live)
        if done is None:
            self._observed["completions"] = seconds(now)
        for job_type, jobs in (done or {}).items():
            self._history_at(job_type, seconds(now)).completions.add(seconds(now), jobs)

def oldest_grouped(db: Database, layout: Layout, heads_by_list: bool) -> bool:
    """Should each type's oldest pending job be read in one grouped pass (`Statements.oldest_grouped`)? Where the
    heads are read over a list of types and the catalog shows the queue table's indexes, none beginning with
    (type, created); a read per type (a seek each, on the native schema) where it cannot say."""
    columns = [layout.columns.get(role) for role in ("type", "created")]
    if not heads_by_list or None in columns:  # a role read from another table: no index of this one begins with it
        return bool(heads_by_list)
    try:
        leads = diagnostics_for(db.dialect).index_leads_with(
            db, layout.schema, layout.queue_table, [str(column) for column in columns])
    except QueuetopError:  # no right to read the catalog: as before, a read per type
        return False
    return leads is False
