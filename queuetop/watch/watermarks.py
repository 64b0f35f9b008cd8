"""The reads past a watermark that both collectors share, each bounded however fast the queue moves.

A busy queue finishes thousands of jobs between two polls. Fetching each of them (as queuetop once did) made a
poll's cost grow with the throughput: at 6,000 completions a second most of a poll was spent decoding rows and
sorting latencies, and the dashboard lagged exactly during the load test it was opened for. So a poll reads:

- counts, not rows: per job type and second, how many jobs arrived or finished (`COUNT(*) … GROUP BY` in the
  database), so a poll fetches one row per job type and second of its range, whatever the throughput;
- late commits by re-counting: a job stamped before the watermark may commit after the poll read past it, so
  each poll counts again, per second, a short overlap before the watermark, `Tally` keeping only the growth of
  each count (a separate check that the overlap had changed saved nothing: under a load it had on 9 polls
  in 10, and each statement is a round trip on a busy server);
  identities likewise: ids above the highest one seen a few seconds ago are counted again, as a range of the
  primary key, so an identity jump of any size costs nothing (no set of missing ids is ever built);
- a bounded sample for the percentiles: about SAMPLE_PER_S of the new completions per second since the last
  poll, never more than SAMPLE_CAP rows in one statement, picked by a hash of the id, each weighted by how many
  completions of its job type it stands for. A minute's window then holds about 30,000 samples, whatever the
  poll interval, and its p99 rests on some 300 of them.

Each watch reads in steps (`IdentityWatch.bounds`/`take`, `CompletionWatch.prepare`/`take`/`sample`), so the
native collector can put its counts into one statement with its other reads; `read` does the steps alone.
`Reads` counts the statements and the rows every statement of a poll fetched, so a test (and the benchmark)
can hold a poll to its bound.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from queuetop.core.history import Tally
from queuetop.db import Database
from queuetop.layouts.sql import Statement, Statements

OVERLAP_S = 3.0  # how late an arrival or a completion may commit and still be counted
SAMPLE_PER_S = 500  # completions sampled per second of the queue's time, for the percentiles ...
SAMPLE_CAP = 2_000  # ... and never more rows than this in one statement (the first poll's look back: 60 s)
SAMPLE_AT_LEAST = 50  # ... and at least this many on a poll that comes sooner than 0.1 s after the last
EPOCH = datetime(1970, 1, 1)

TypeOf = Callable[[Any], str]
Counted = Callable[[str, float, int, int], None]  # (job type, at, jobs, dead among them)
# (type, [(completed at, wait, processing)], the completions each stands for)
Sampled = Callable[[str, "list[tuple[float, float | None, float | None]]", float], None]


def seconds(moment: datetime) -> float:
    return (moment - EPOCH).total_seconds()


def whole_second(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)


@dataclass
class Reads:
    """What one poll fetched: statements run, rows fetched in all, and the most rows any one statement returned."""

    statements: int = 0
    rows: int = 0
    most_rows: int = 0

    def fetch(self, db: Database, statement: Statement) -> list[tuple[Any, ...]]:
        return self.count(db.fetchall(*statement))

    def count(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Count the rows a statement run elsewhere (a dialect's method) returned; returns them."""
        self.statements += 1
        self.rows += len(rows)
        self.most_rows = max(self.most_rows, len(rows))
        return rows


class TimeWatch:
    """Events stamped with a time (completions; arrivals where ids are not an identity) counted per job type and
    second past a watermark, with an overlap re-counted for late commits."""

    def __init__(self, window_s: float, overlap_s: float = OVERLAP_S) -> None:
        self.window_s = window_s
        self.overlap_s = overlap_s
        self.mark: datetime | None = None  # the latest event seen (never past the poll's `now`)
        self.tally = Tally()

    def since(self, now: datetime) -> datetime:
        """Where this poll reads from: the overlap before the watermark, never more than one window back, on a
        whole second (so every second read is read whole, and its count compares with the last one)."""
        assert self.mark is not None
        return whole_second(max(self.mark - timedelta(seconds=self.overlap_s),
                                now - timedelta(seconds=self.window_s + self.overlap_s)))  # fmt: skip

    def start(self, now: datetime) -> bool:
        """Set the watermark one window back on the first poll (so rates have meaning at once); True then."""
        if self.mark is not None:
            return False
        self.mark = now - timedelta(seconds=self.window_s)
        return True

    def take(self, rows: Sequence[tuple[Any, ...]], now: datetime, decode: Callable[[Any], datetime | None],
             type_of: TypeOf, counted: Counted) -> dict[str, int]:  # fmt: skip
        """Rows of (job type, second, jobs, dead, latest), every second since `since` counted whole: report what
        is new (each count's growth), move the watermark. Returns the new jobs per type, dead ones left out."""
        news = self.tally.news
        assert self.mark is not None
        latest, new = self.mark, {}
        # A second can come in several rows (seed 001's arrivals: a row per table, as jobs move from one to the
        # other): each key's count is their sum, or the tally would compare one table's count with the other's.
        whole: dict[tuple[str, datetime], list[Any]] = {}
        for job_type, second, jobs, dead, last in rows:
            at = decode(second)
            if at is None:
                continue
            summed = whole.setdefault((type_of(job_type), at), [0, 0, None])
            summed[0] += int(jobs)
            summed[1] += int(dead or 0)
            stamp = decode(last)
            if stamp is not None and (summed[2] is None or stamp > summed[2]):
                summed[2] = stamp
        for (name, at), (jobs, dead, stamp) in whole.items():
            fresh = news((name, at, False), jobs)
            fresh_dead = news((name, at, True), dead)
            if fresh or fresh_dead:
                counted(name, seconds(at) + 0.5, fresh, fresh_dead)  # the middle of its second
                new[name] = new.get(name, 0) + fresh - fresh_dead
            if stamp is not None and stamp > latest:
                latest = stamp
        self.mark = min(latest, now)
        keep_from = self.since(now)
        self.tally.keep(lambda key: key[1] >= keep_from)
        return new


class CompletionWatch(TimeWatch):
    """Completions: counts per job type and second, and a bounded, weighted sample of the new ones' latencies."""

    def __init__(self, window_s: float, overlap_s: float = OVERLAP_S, per_s: int = SAMPLE_PER_S,
                 cap: int = SAMPLE_CAP) -> None:  # fmt: skip
        super().__init__(window_s, overlap_s)
        self.per_s, self.cap = per_s, cap
        self._last_poll: datetime | None = None
        self._before: datetime | None = None  # the watermark when this poll began (set by `prepare`)
        self._wanted = SAMPLE_AT_LEAST

    def read(self, db: Database, statements: Statements, now: datetime, reads: Reads, type_of: TypeOf,
             counted: Counted, sampled: Sampled, settings: dict[str, Any] | None = None,
             low_id: int | None = None) -> None:  # fmt: skip
        """Count what is new since the overlap, then sample it: two statements."""
        rows = reads.fetch(db, statements.completion_counts(self.prepare(now), settings, low_id))
        new = self.take(rows, now, db.dialect.decode_time, type_of, counted)
        self.sample(db, statements, reads, type_of, sampled, new, settings, low_id)

    def prepare(self, now: datetime) -> datetime:
        """Begin a poll: the time its counts read from (`since`; every row after it, counted again whole — under
        a load a late commit in the overlap is the rule, so a check that it changed (once a separate count)
        nearly always asked for the full count anyway). Then `take` the counts, then `sample`."""
        self.start(now)
        elapsed = self.window_s if self._last_poll is None else (now - self._last_poll).total_seconds()
        self._last_poll = now
        self._wanted = max(SAMPLE_AT_LEAST, min(self.cap, round(self.per_s * elapsed)))
        self._before = self.mark
        return self.since(now)

    def sample(self, db: Database, statements: Statements, reads: Reads, type_of: TypeOf, sampled: Sampled,
               new: dict[str, int], settings: dict[str, Any] | None = None,
               low_id: int | None = None) -> None:  # fmt: skip
        """The latencies of a bounded sample of the completions `take` found new past the watermark it moved."""
        decode, before, wanted = db.dialect.decode_time, self._before, self._wanted
        fresh = sum(new.values())
        assert self.mark is not None and before is not None
        if fresh <= 0 or self.mark <= before:
            return  # nothing new past the watermark (late commits in the overlap count, but are not sampled)
        # Aim a little under the limit, so the limit (which keeps the rows it meets first) rarely cuts a sample short.
        share = min(1.0, 0.9 * wanted / fresh)
        rows = reads.fetch(db, statements.completion_sample(before, self.mark, share, wanted, settings, low_id))
        every_one = share >= 1.0 and len(rows) < wanted
        per_type: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            per_type.setdefault(type_of(row[0]), []).append(row)
        for name, taken in per_type.items():
            # Each sampled completion stands for new / taken of its type: a poll with more completions weighs more.
            weight = 1.0 if every_one else max(1.0, new.get(name, 0) / len(taken))
            latencies = [(seconds(moment), _span(decode(wait_from), decode(wait_to)),
                          _span(decode(work_from), decode(work_to)))
                         for _, at, wait_from, wait_to, work_from, work_to in taken
                         if (moment := decode(at)) is not None]  # fmt: skip
            if latencies:
                sampled(name, latencies, weight)


class IdentityWatch:
    """Arrivals by identity, as counts: ids above the settled one (the highest id seen at a poll at least
    `overlap_s` ago) are counted again on every poll, per job type and second created, and only each count's
    growth is new. Its memory is the counts of those few seconds, whatever the ids do: a jump of 10⁹ is one
    range of the primary key, like any other."""

    def __init__(self, overlap_s: float = OVERLAP_S) -> None:
        self.overlap_s = overlap_s
        self.settled = 0  # ids up to here are counted for good
        self.highest = 0
        self.open = Tally()  # per (type, second): rows above `settled` counted already
        self._seen: deque[tuple[float, int]] = deque()  # (poll time, highest id then)
        self._settle = 0  # where this poll's `bounds` settle

    def begin(self, highest: int) -> None:
        self.settled = self.highest = highest

    def read(self, db: Database, statements: Statements, now: datetime, reads: Reads, type_of: TypeOf,
             counted: Counted) -> None:  # fmt: skip
        after, settle = self.bounds(now)
        self.take(reads.fetch(db, statements.arrival_counts(after, settle)), now, db.dialect.decode_time, type_of,
                  counted)  # fmt: skip

    def bounds(self, now: datetime) -> tuple[int, int]:
        """(after, settle) for this poll's `arrival_counts`: ids above `after` are counted, those above `settle`
        will be counted again next time. Then `take` the rows."""
        t, settle = seconds(now), self.settled
        while self._seen and self._seen[0][0] <= t - self.overlap_s:
            settle = max(settle, self._seen.popleft()[1])
        self._settle = settle
        return self.settled, settle

    def take(self, rows: Sequence[tuple[Any, ...]], now: datetime, decode: Callable[[Any], datetime | None],
             type_of: TypeOf, counted: Counted) -> None:  # fmt: skip
        """Rows of (job type, second created, jobs, jobs above settle, highest id) of `arrival_counts`."""
        t = seconds(now)
        totals: dict[tuple[str, float | None], list[int]] = {}
        # The overlap's rows are a few seconds times the types that had arrivals in them (1,000 busy types: ~4,000
        # rows a poll), so each raw type is named and each second decoded once a poll, not once a row.
        names: dict[Any, str] = {}
        moments: dict[Any, float | None] = {}
        highest_id = self.highest
        for job_type, second, jobs, above, highest in rows:  # a job may be in both tables: add up the arms
            name = names.get(job_type)
            if name is None:
                name = names[job_type] = type_of(job_type)
            if second in moments:
                at_s = moments[second]
            else:  # None where the shape has no created time: the poll's own moment stands in
                at = decode(second)
                at_s = moments[second] = seconds(at) + 0.5 if at is not None else None
            both = totals.get((name, at_s))
            if both is None:
                both = totals[name, at_s] = [0, 0]
            both[0] += int(jobs)
            both[1] += int(above or 0)
            if highest is not None and int(highest) > highest_id:
                highest_id = int(highest)
        self.highest = highest_id
        for (name, at_s), (jobs, _) in totals.items():
            fresh = self.open.news((name, at_s), jobs)
            if fresh:
                counted(name, t if at_s is None else at_s, fresh, 0)
        self.open.replace({key: above for key, (_, above) in totals.items() if above})
        self.settled = self._settle
        self._seen.append((t, self.highest))


class FinishedWatch:
    """Completions of a shape with no times whose finished rows stay in a state of their own (a layout's `done`:
    seeds 002 and 003), as counts: per job type, the rows done with an id from a base on, the base at or below
    every live row's. Between two polls counted from the same base, what the count grew by is what finished
    (a row finished by a claim still uncommitted is counted when it commits). Each poll counts from the old base
    and, in the same pass, from a new one (the last poll's lowest live id), so the base follows the live end of
    the table and the rows counted are those finished over about two polls: with an index that leads with the
    flag (seed 003's (PROCESSED, ID)) a seek, whatever the history, not a count of the backlog."""

    def __init__(self) -> None:
        self.base: int | None = None  # `seen` counts the done rows with ids from here on, as of the last poll
        self.seen: dict[str, int] = {}
        self._next: int | None = None

    def start(self, rows: Sequence[tuple[Any, ...]], base: int, type_of: TypeOf) -> None:
        """The first poll's count (`state_counts(..., finished=True)`: rows of (type, count) from `base`)."""
        self.base, self.seen = base, {type_of(job_type): int(count or 0) for job_type, count in rows}

    def bounds(self, next_base: int) -> tuple[int, int]:
        """(old base, new base) for this poll's count (`shape_poll`'s `finished`); then `take` its rows."""
        assert self.base is not None, "start first"
        self._next = next_base
        return self.base, next_base

    def take(self, rows: Sequence[tuple[Any, ...]], at: float, type_of: TypeOf, counted: Counted) -> None:
        """Rows of (job type, done from the old base, done from the new one); each type's growth is counted at
        `at`. A count that fell (rows deleted or made pending again by hand) finished nothing."""
        seen: dict[str, int] = {}
        for job_type, from_old, from_new in rows:
            name = type_of(job_type)
            fresh = int(from_old or 0) - self.seen.get(name, 0)
            if fresh > 0:
                counted(name, at, fresh, 0)
            seen[name] = int(from_new or 0)
        self.base, self.seen = self._next, seen


def _span(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else (end - start).total_seconds()


class LiveRowsWatch:
    """Completions where finished rows are deleted and no time is kept (a layout's `deletes_finished`): per job
    type, what arrived between two polls less what the rows in every state grew by (a job taken is still a row,
    in a state of its own)."""

    def __init__(self) -> None:
        self.last: dict[str, int] | None = None  # per type, the rows in every state at the last poll
        self.arrived: dict[str, int] = {}  # per type, the arrivals seen since

    def saw(self, job_type: str, jobs: int) -> None:
        self.arrived[job_type] = self.arrived.get(job_type, 0) + jobs

    def take(self, live: dict[str, int]) -> dict[str, int] | None:
        """This poll's rows per type; per type, what finished since the last poll (None at the first)."""
        done = None
        if self.last is not None:
            done = {job_type: n for job_type in set(live) | set(self.last) | set(self.arrived)
                    if (n := self.arrived.get(job_type, 0) + self.last.get(job_type, 0) - live.get(job_type, 0)) > 0}
        self.last, self.arrived = dict(live), {}
        return done


class VanishedWatch:
    """Jobs that came and went between two polls where finished rows are deleted (graphile-worker): the ids the
    identity's sequence handed out, less the arrivals seen as rows. Their job type went with their row, so they
    count in the totals only, as arrivals and, where nothing else records their end, as completions (django-q2's
    results are read from their own table). The sequence is read one poll behind: ids
    handed out by the last poll have had a poll's time to commit and be seen. An insert whose transaction
    outlasts that is counted as gone, then seen: the count never falls (`counted`), so the next jobs gone unseen
    pay it back, and the total is right again. An id used by an insert that rolled back counts as a job that came
    and went: the sequence cannot tell them apart."""

    def __init__(self) -> None:
        self.start: int | None = None  # the sequence when watching began
        self.previous = 0  # the sequence at the last poll
        self.seen = 0  # arrivals seen as rows since the start (the identity watch counts from `start` too)
        self.counted = 0  # jobs counted as gone unseen, so far

    def begin(self, last_value: int) -> None:
        self.start = self.previous = last_value

    def saw(self, jobs: int) -> None:
        self.seen += jobs

    def take(self, last_value: int) -> int:
        """This poll's sequence value; how many jobs are newly known to have come and gone unseen."""
        assert self.start is not None, "begin first"
        unseen = self.previous - self.start - self.seen
        self.previous = last_value
        fresh = max(0, unseen - self.counted)
        self.counted += fresh
        return fresh


def sequence_value(row: Sequence[Any]) -> int:
    """The last id an identity handed out, from `sequence_value`'s row (NULL before the first: ids start at 1)."""
    return int(row[0] or 0)


def line_before(db: Database, statements: Statements, at: datetime, reads: Reads | None = None) -> int:
    """The highest line of a numbered log (`Layout.log_lines`) stamped before the overlap ahead of `at` (0: none).
    Every line stamped after `at` was made after it, unless its transaction took longer than the overlap to write
    it (as a completion committing later than that is not counted either): its lines from there on are a range
    of the log's key, found by walking the key down from the newest line through the lines made since."""
    statement = statements.line_at(at - timedelta(seconds=OVERLAP_S))
    rows = reads.fetch(db, statement) if reads is not None else db.fetchall(*statement)
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0
