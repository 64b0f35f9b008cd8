"""The tracked depth of a shape whose jobs change state only by arrivals and completions (`Layout.depth_tracked`).

The jobs of a type in any state change only by arrivals and completions, which the poll reads anyway, so the
pending ones are those tracked jobs less the jobs in the other states (few, and counted). A poll reads each
type's pending rows only up to DEPTH_EXACT_UP_TO + 1 (its heads, in the queue's own order, the oldest among
them): a shallow type is exact on every poll, a deep one is tracked and marked as an estimate (≈). A full count on
a connection and a thread of its own (`recount.py`) corrects the tracked figures; a deep queue's first look
(`firstlook.py`) starts them from a sample. `TrackedDepth` is that part of `ShapeCollector`, whose state it
keeps.

A type whose figures did not move since the last poll (no arrival, no completion, the same jobs in each other
state) has the same pending jobs, so past HEADS_PER_STATEMENT types a poll reads the heads of the types that moved
and of HEADS_IN_TURN others in turn, and keeps the rest as last read, its figures as last worked out with them: a
queue with a type per tenant costs a poll what its busy types cost (10,000 types, 100 of them moving: this part of
a poll 40 -> 15 ms on PostgreSQL, bench/README), and a change that no figure shows (a claim and a release of the
same type between two polls, a row changed by hand) is read within one turn (10,000 types: 50 polls) or by the
next full count (at most a minute). A turn of 500 types was 30 of a 130-ms poll on PostgreSQL at 10,000 types;
200, 20 ms.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from queuetop.layouts import STATES
from queuetop.watch.recount import DEPTH_EXACT_UP_TO, Recounter
from queuetop.watch.watermarks import seconds

if TYPE_CHECKING:
    from queuetop.db import Database
    from queuetop.layouts import Layout
    from queuetop.layouts.sql import Statements
    from queuetop.watch.fold import InNameOrder
    from queuetop.watch.watermarks import CompletionWatch, FinishedWatch, IdentityWatch, Reads, TimeWatch

# Types whose pending heads one statement reads: two parameters each, and SQL Server takes at most 2,100 a statement.
HEADS_PER_STATEMENT = 500
HEADS_IN_TURN = 200  # past HEADS_PER_STATEMENT types, the types that did not move read per poll, in turn

Counts = dict[str, dict[str, tuple[int, "datetime | None"]]]  # per state, per type: (jobs, oldest pending created)


class TrackedDepth:
    """The collector's depth between full counts: what it tracks per type, and how a poll's heads and a full count
    put it right."""

    # The collector's state this part reads and keeps (set in ShapeCollector.__init__)
    db: Database
    layout: Layout
    statements: Statements
    settings: dict[str, Any]
    reads: Reads
    only_types: frozenset[str]
    tracks_depth: bool
    _live: dict[str, int]
    _moved: dict[str, int]
    _moved_now: set[str]
    _estimated: set[str]
    _counted_at_rest: set[str]
    _counted_once: bool
    _polling_first: bool
    _raw_types: dict[str, Any]
    _history: dict[str, Any]
    _recount: Recounter[list[tuple[Any, ...]]]
    _identities: IdentityWatch
    _arrivals_by_time: TimeWatch
    _completions: CompletionWatch
    _finished: FinishedWatch | None
    _finished_at_recount: dict[str, int]
    _low_id: int | None
    _heads_turn: int  # where the next poll's turn of heads begins, past HEADS_PER_STATEMENT types
    _heads_kept: dict[str, tuple[str, datetime | None, Any, Any]]  # per type, its heads as last read
    _others_then: dict[str, tuple[int, ...]]  # per type, its jobs in each other state at the last poll
    # The types read and not moved since, whose figures stand as worked out then: those with pending jobs, their
    # (depth, oldest), and the lowest id its heads read (ranged). A poll works out again only the other types.
    _settled: set[str]
    _settled_pending: dict[str, tuple[int, datetime | None]]
    _settled_lows: dict[str, int]
    _wanted_order: InNameOrder  # the types whose heads a poll reads, by name

    @property
    def untyped_name(self) -> str:
        raise NotImplementedError

    def _type(self, value: Any) -> str:
        raise NotImplementedError

    def _heads_asked(self) -> list[str]:
        """The types whose heads the poll's own statement reads: every type, up to HEADS_PER_STATEMENT; past it, the
        next HEADS_IN_TURN in turn (the types that moved are read after it, a statement per HEADS_PER_STATEMENT;
        the rest are kept as last read)."""
        wanted = self._heads_wanted()
        if len(wanted) <= HEADS_PER_STATEMENT:
            return list(wanted)
        turn = min(HEADS_IN_TURN, HEADS_PER_STATEMENT)
        start = self._heads_turn % len(wanted)
        self._heads_turn = start + turn
        return wanted[start:start + turn] + wanted[:max(0, start + turn - len(wanted))]

    def _capped(self, heads: list[str]) -> tuple[list[Any], int, list[bool]]:
        """The shape poll's `heads`: the types as the database gives them, the cap, and which are counted."""
        return self._raw(heads), DEPTH_EXACT_UP_TO + 1, self._counted(heads)

    def _seed(self, estimates: dict[str, int], counts: Counts, read: list[str]) -> None:
        """The first look's tracked figures: per type, its pending jobs as estimated and its jobs in the other
        states as counted; a type seen arriving in the look-back but not in the sample has its heads read too."""
        others = _summed(_in_states(counts, read))
        self._live = {t: estimates.get(t, 0) + others.get(t, 0) for t in {*estimates, *others}}
        for job_type in self._history:
            self._live.setdefault(job_type, 1)
        self._counted_at_rest = set()
        self._counted_once = True
        self._unsettle_all()

    def _heads_wanted(self) -> list[str]:
        """The types whose pending heads a poll reads: every type with jobs, as tracked (one, if untyped), by name
        (the turn goes through them in that order; `InNameOrder` sorts them again only when they change)."""
        if not self.layout.has_job_type:
            return [self.untyped_name]
        wanted = {t for t, jobs in self._live.items() if jobs > 0 and (not self.only_types or t in self.only_types)}
        return self._wanted_order.of(wanted)

    def _wanted(self, job_type: str) -> bool:
        """Whether a poll reads this type's pending heads (`_heads_wanted`, for one type)."""
        if not self.layout.has_job_type:
            return job_type == self.untyped_name
        return self._live.get(job_type, 0) > 0 and (not self.only_types or job_type in self.only_types)

    def _unsettle(self, job_type: str) -> None:
        """Forget a type's figures as last worked out: they are worked out again this poll, or it has no job."""
        self._settled.discard(job_type)
        self._settled_pending.pop(job_type, None)
        self._settled_lows.pop(job_type, None)
        self._estimated.discard(job_type)

    def _unsettle_all(self) -> None:
        """A full count (or a first look) changed the tracked figures of any type: every type is worked out again."""
        self._settled, self._settled_pending, self._settled_lows, self._estimated = set(), {}, {}, set()

    def _counted(self, names: list[str]) -> list[bool]:
        """Which of these types a poll counts (up to the cap), where the heads are read over a list of types:
        those with few jobs as tracked (twice the cap: room for a poll's change). A deep one only has its oldest
        read; its depth is tracked, and the full count corrects it."""
        if not self.statements.heads_by_type_list:
            return [True] * len(names)
        return [self._live.get(name, 0) <= 2 * DEPTH_EXACT_UP_TO for name in names]

    def _raw(self, names: list[str]) -> list[Any]:
        if not self.layout.has_job_type:
            return [None]
        return [self._raw_types.get(name, name) for name in names]

    def _pending_from_heads(self, now: datetime, counts: Counts,
                            read: list[str], heads: list[tuple[Any, ...]], asked: list[str],
                            low: int | None) -> list[int]:  # fmt: skip
        """Depth and oldest per type at a cost bounded by the number of types: counted up to DEPTH_EXACT_UP_TO,
        tracked above it (the jobs in any state less those in the other states, which were counted), so a deep
        backlog costs a poll no more than a shallow one. A type first seen in this poll's arrivals is read after
        it. A capped count above a tracked figure that said shallow means the tracking drifted (a change that
        bypassed arrivals and completions): a full count starts at once. Returns the lowest ids read (ranged)."""
        asked_already, kept, settled, live = set(asked), self._heads_kept, self._settled, self._live
        others_by_state = _in_states(counts, read)
        moved = self._moved_now | {t for t, jobs in others_by_state.items() if self._others_then.get(t) != jobs} \
            | {t for t in self._others_then if t not in others_by_state}
        self._others_then = others_by_state
        # Read again: the types that moved and those never read (new, or put right by a full count); a type with no
        # job left is forgotten. The others keep their heads, and their figures, as last worked out.
        maybe = moved | (live.keys() - kept.keys())
        if not self.layout.has_job_type:
            maybe.add(self.untyped_name)
        new = []
        for job_type in maybe:
            if job_type in moved:
                self._unsettle(job_type)
            if not self._wanted(job_type):
                self._unsettle(job_type)
                kept.pop(job_type, None)
                if live.get(job_type, 1) <= 0:
                    del live[job_type]
            elif job_type not in asked_already and (job_type in moved or job_type not in kept):
                new.append(job_type)
        new.sort()  # the same statements for the same types, whatever the order of a set
        for start in range(0, len(new), HEADS_PER_STATEMENT):  # past the poll's own: a statement per 500
            heads = heads + self.reads.fetch(self.db, self.statements.shape_heads(
                self._raw(new[start:start + HEADS_PER_STATEMENT]), DEPTH_EXACT_UP_TO + 1, low, self.settings))
        if self.statements.oldest_by_min_id:
            heads = self._with_oldest(heads)
        decode = self.db.dialect.decode_time
        read_now = [(self._type(job_type), decode(oldest), count, low_read)  # one row per type asked, even with
                    for _, job_type, oldest, _, count, low_read, *_ in heads]  # none pending  # fmt: skip
        for head in read_now:
            kept[head[0]] = head
        read_names = {head[0] for head in read_now}
        drifted = False
        others = _summed(others_by_state)
        for name, oldest, count, low_read in [*read_now, *(kept[t] for t in kept.keys() - settled
                                                           if t not in read_names)]:  # fmt: skip
            self._unsettle(name)
            counted = count is not None
            count = int(count or 0)
            tracked = live.get(name, 0) - others.get(name, 0)
            estimate, drifts = False, False
            if counted and count <= DEPTH_EXACT_UP_TO:
                depth = count
            elif counted and tracked <= DEPTH_EXACT_UP_TO:  # more than the tracked figure said: count all soon
                depth, drifts, estimate = DEPTH_EXACT_UP_TO + 1, True, True
                self._counted_at_rest.discard(name)
            elif not counted and oldest is None:  # not one pending row: the tracking drifted (a change by hand)
                depth, drifts = 0, True
            else:
                depth, estimate = tracked, name not in self._counted_at_rest
            drifted = drifted or drifts
            jobs = depth + others.get(name, 0)
            if jobs <= 0:  # no job left: its heads are read again once it has one
                live.pop(name, None)
                kept.pop(name, None)
                continue
            live[name] = jobs
            if not drifts:  # a drifting type is worked out again each poll, until the full count puts it right
                settled.add(name)
            if depth:
                self._settled_pending[name] = (depth, oldest)
            if low_read is not None:
                self._settled_lows[name] = int(low_read)
            if estimate:
                self._estimated.add(name)
        counts["pending"] = dict(self._settled_pending)
        for name, jobs in others.items():  # a type with no pending job: its jobs are all in the other states
            if name not in counts["pending"]:
                live[name] = jobs
        lows = [min(self._settled_lows.values())] if self._settled_lows else []
        t = seconds(now)
        resting = not self._moved_now and bool(self._estimated)
        if drifted or self._recount.schedule.due(t, resting):
            self._start_recount(t)
        return lows

    def _with_oldest(self, heads: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The heads with each type's oldest filled in from its lowest waiting id (`Statements.created_of`), where
        the creation time is another table's: one statement for every type."""
        lowest = sorted({int(row[5]) for row in heads if row[5] is not None})
        if not lowest:
            return heads
        created = {int(job_id): at for job_id, at in self.reads.fetch(self.db, self.statements.created_of(lowest))}
        return [(*row[:2], None if row[5] is None else created.get(int(row[5])), *row[3:]) for row in heads]

    def _start_recount(self, t: float) -> None:
        # a first poll's figures come out first (and a one-shot look, which polls once, would leave the count running
        # on the server)
        if self._recount.running or self._polling_first:
            return
        self._moved = {}
        layout = self.layout
        statement = self.statements.shape_recount(
            [name for name in STATES if name in layout.states], self.settings,
            self._identities.highest if layout.arrivals == "identity" else None,
            self._arrivals_by_time.mark if layout.arrivals == "created" else None,
            self._completions.mark, self._finished.base if self._finished is not None else None)  # fmt: skip
        if self._finished is not None:
            self._finished_at_recount = dict(self._finished.seen)
        self._recount.start(self.db, t, lambda db: db.fetchall(*statement))

    def _take_recount(self, states: list[str]) -> None:
        """Put right the tracked figures with a finished full count, less what had moved past the marks when it was
        taken, plus what the polls have seen move since it began."""
        counts = self._recount.take()
        if counts is None:
            return
        self._unsettle_all()
        ranged = self.statements.ranged
        total: dict[str, int] = {}
        past: dict[str, int] = {}  # arrived after the marks (already in the count) less completed after them
        lows, dead_at = [], self.statements.dead_apart(states)
        for part, job_type, _, *per_state in counts:
            part, name = part.strip(), self._type(job_type)
            if part == "now":
                continue
            if part in ("arrived", "done"):
                past[name] = past.get(name, 0) + (int(per_state[0]) if part == "arrived" else -int(per_state[0]))
                continue
            if part == "finished":  # finished since the poll before the count: that poll's count of them is out
                past[name] = past.get(name, 0) - (int(per_state[0]) - self._finished_at_recount.get(name, 0))
                continue
            if ranged and per_state[len(states)] is not None and \
                    not self.statements.in_dead_family(per_state, dead_at):  # the dead are read from their own
                lows.append(int(per_state[len(states)]))
            total[name] = total.get(name, 0) + sum(int(c or 0) for c in per_state[:len(states)])
        types = set(total) | set(self._moved) | set(self._live)
        before, self._live = self._live, {t: total.get(t, 0) - past.get(t, 0) + self._moved.get(t, 0) for t in types}
        for job_type in [t for t in self._heads_kept if self._live.get(t) != before.get(t)]:
            del self._heads_kept[job_type]  # the count put it right: its heads are read again
        self._counted_at_rest = {t for t in types if t not in self._moved}
        if ranged and lows and self._low_id is not None and min(lows) < self._low_id:
            self._low_id = min(lows)  # a row made live by hand below the range comes in (a dead job retried) ...
            self._heads_kept.clear()  # ... of any type: every type's heads are read again, from there

    def _track(self, job_type: str, jobs: int) -> None:
        if not self.tracks_depth or not self._counted_once:  # the first poll's full count already holds these
            return
        self._live[job_type] = self._live.get(job_type, 0) + jobs
        self._moved[job_type] = self._moved.get(job_type, 0) + jobs
        self._moved_now.add(job_type)
        self._counted_at_rest.discard(job_type)


def _in_states(counts: Counts, states: list[str]) -> dict[str, tuple[int, ...]]:
    """Per type with a job in any of these states, its jobs in each (as the poll counted them)."""
    jobs: dict[str, list[int]] = {}
    for n, name in enumerate(states):
        for job_type, (count, _) in counts[name].items():
            if count:
                jobs.setdefault(job_type, [0] * len(states))[n] = count
    return {job_type: tuple(per_state) for job_type, per_state in jobs.items()}


def _summed(per_state: dict[str, tuple[int, ...]]) -> dict[str, int]:
    """Per type, its jobs in all the states `_in_states` counted."""
    return {job_type: sum(jobs) for job_type, jobs in per_state.items()}
