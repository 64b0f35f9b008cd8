"""The history file: every poll's figures kept on disk, rolled up, so a restart (or a script) sees the past.

One SQLite file per target + layout in the user's data directory (`history_dir()`), never in the monitored
database. Each poll adds one row per job type (and the totals) to the raw level (table `polls`); as each 10 s and
1 min bucket completes, SQLite computes one entry per type from the raw rows in it, kept in compressed chunks
(table `buckets`, see `encode_chunk`). Retention is per level (`Retention`, default raw 1 h, 10 s buckets 24 h,
1 min buckets 7 d), so the file stops growing after a week.

What a roll-up keeps, per figure:
- gauges and rates (depth, oldest age, scheduled, claimed, timed out, dead, lost, arrivals/s, completions/s):
  the mean of the polls in the bucket, over the polls that knew the figure — exactly the mean of the raw rows
  (both are computed from the same stored integers, straight from the polls, never a mean of means);
- percentiles (wait and processing p50/p95/p99): the highest value any poll of the bucket reported. A mean of
  percentiles is no percentile either; the maximum keeps a spike visible in a week-long chart;
- `polls`: how many polls the entry stands for; `breaches`: the OR of the polls' breach flags (a bit mask per
  job type: `write(snapshot, breaches={job_type: flags})`, set by whoever knows the targets — the dashboard's SLO
  checks; the totals' row holds every type's flags — and drawn as marks on the charts).

Figures are stored as integers in fixed units (the column names say which: `depth_x10` is tenths of a job,
`wait_p95_s_x1000` milliseconds), so a row costs a few bytes per figure and sums are exact. Times are the
snapshot's server time (`Snapshot.taken_at`, in the layout's clock), in ms since the file's own epoch.

`HistoryStore` is one connection, for the one thread that uses it. What is stored and where is `model.py`; the
chunks' encoding `chunks.py`; `threads.py` has `HistoryWriter`, a thread of its own with a queue in front (the
poll thread hands it a snapshot and never waits for the disk), and `HistoryReader`, another with its own
connection, where the dashboard's charts of the wide windows are read.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from queuetop.core.files import private_file
from queuetop.db import UsageError
from queuetop.store.chunks import (
    BREACHES,
    CHUNK_BUCKETS,
    Entry,
    decode_breaches,
    decode_chunk,
    decode_column,
    encode_chunk,
)
from queuetop.store.model import (
    DEFAULT_RETENTION,
    DIR_ENV_VAR,
    FIGURES,
    FORMAT_VERSION,
    INDEX,
    PRUNE_EVERY_S,
    Record,
    Retention,
    Rollup,
    stored_values,
)
from queuetop.watch.snapshot import TOTAL, Snapshot
from queuetop.watch.watermarks import seconds

log = logging.getLogger("queuetop")
T = TypeVar("T")



class _BitOr:
    """SQLite has no bitwise-OR aggregate: the breach flags of a bucket's polls, combined."""

    def __init__(self) -> None:
        self.flags: int | None = None

    def step(self, value: int | None) -> None:
        if value:
            self.flags = (self.flags or 0) | value

    def finalize(self) -> int | None:
        return self.flags


# Every job type: lets SQLite seek the key (type_id, t_ms) once per type for a range of time.
ALL_TYPES = "(SELECT id FROM job_types)"

# -- the store ---------------------------------------------------------------------------------------------------
@dataclass
class WriteCost:
    """What writing has cost so far (for the benchmark and the log)."""

    snapshots: int = 0
    rows: int = 0
    seconds: float = 0.0
    errors: int = 0
    last_error: str | None = None
    per_write_s: list[float] = field(default_factory=list)


CLAIMED_MEANING = "held and not past its timeout (a timed-out claim is in timed_out only)"


class HistoryStore:
    """One history file on one connection, used by the thread that opened it: the writer thread writes through
    its own; the dashboard and `queuetop history` read through theirs (WAL: readers never wait for the writer).

    Tables: `polls` (the raw level: one row per job type and poll, every figure a column, readable with the
    sqlite3 shell), `buckets` (the other levels, in chunks: see `encode_chunk`), `job_types`, `meta`."""

    def __init__(self, path: Path, *, target: str = "", layout: str = "", clock: str = "utc",
                 retention: Retention | None = None, create: bool = True) -> None:  # fmt: skip
        """`create`: make the file and its tables if needed, for writing; else open an existing one to read, with
        the retention it was written with."""
        self.path = Path(path)
        if not create and not self.path.exists():
            raise UsageError(f"no history file {self.path}")
        try:
            if create:  # before SQLite opens it: its -wal and -shm files take the file's mode
                private_file(self.path)
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=5.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # a crash may lose the last polls, never the file
            if create:
                self._create(target, layout, clock, retention or DEFAULT_RETENTION)
            self.meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        except (sqlite3.Error, OSError) as exc:
            raise UsageError(f"cannot use the history file {self.path}: {exc}",
                             f"move it away, or start with --no-history (or ${DIR_ENV_VAR} elsewhere)") from None
        kept = Retention.parse(self.meta["retention"])
        if retention is not None and [lv.width_s for lv in retention.levels] != [lv.width_s for lv in kept.levels]:
            self._db.close()
            raise UsageError(f"the history file {self.path} keeps {kept.spec()}, not the buckets of {retention.spec()}",
                             "give --history-keep the same bucket widths (the times kept may differ), or move the "
                             "file away")  # fmt: skip
        self.retention = retention or kept
        self.epoch_ms = int(self.meta["epoch_ms"])
        self.clock = self.meta.get("clock", "utc")
        self._refresh_types()
        self._last_t = self.latest()
        self._pruned_at: float | None = None
        self._open_chunks: dict[tuple[int, int], tuple[int, dict[int, Entry]]] = {}  # (level, type) → the last chunk
        self._dirty: set[tuple[int, int]] = set()  # open chunks changed since they were last written
        self._columns: dict[tuple[int, int, int, int], tuple[bytes, list]] = {}  # decoded chunk figures (reading)
        self.cost = WriteCost()
        self._db.create_aggregate("bit_or", 1, _BitOr)
        columns = ", ".join(f.column for f in FIGURES)
        self._insert_raw = (f"INSERT OR REPLACE INTO polls (type_id, t_ms, {columns}, breaches) "
                            f"VALUES (?, ?, {', '.join('?' * len(FIGURES))}, ?)")  # fmt: skip
        # A bucket: the mean of its polls for gauges and rates (AVG skips the polls that did not know the figure),
        # the highest for percentiles; from the same stored integers as the raw rows, so the means agree.
        combined = ", ".join(f"ROUND(AVG({f.column}))" if f.rollup is Rollup.MEAN else f"MAX({f.column})"
                             for f in FIGURES)  # fmt: skip
        self._bucket_rows = (f"SELECT type_id, COUNT(*), {combined}, bit_or(breaches) FROM polls "
                             f"WHERE type_id IN {ALL_TYPES} AND t_ms >= ? AND t_ms < ? GROUP BY type_id")
        if create:
            self._resume()

    def _create(self, target: str, layout: str, clock: str, retention: Retention) -> None:
        figures = ", ".join(f"{f.column} INTEGER" for f in FIGURES)
        with self._transaction():
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.execute("CREATE TABLE IF NOT EXISTS job_types (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
            # (job type, time) first: a chart's line is one range of the key. No rowid: the key is the row.
            self._db.execute(f"CREATE TABLE IF NOT EXISTS polls (type_id INTEGER NOT NULL, t_ms INTEGER NOT NULL, "
                             f"{figures}, breaches INTEGER, PRIMARY KEY (type_id, t_ms)) WITHOUT ROWID")
            # A rowid table: a chunk (~1 KB) stays on its page; a WITHOUT ROWID row that size spills to overflow
            # pages and leaves most of each page empty.
            self._db.execute("CREATE TABLE IF NOT EXISTS buckets (level INTEGER NOT NULL, type_id INTEGER NOT NULL, "
                             "chunk INTEGER NOT NULL, depth_max INTEGER, data BLOB NOT NULL)")
            self._db.execute("CREATE UNIQUE INDEX IF NOT EXISTS buckets_key ON buckets (level, type_id, chunk)")
            # The deepest types of a window from the index alone, without reading every chunk's page.
            self._db.execute("CREATE INDEX IF NOT EXISTS buckets_depth ON buckets (level, type_id, chunk, depth_max)")
            epoch_ms = int(time.time() // 86400 * 86400 * 1000)  # times are stored from here: small integers
            for key, value in (("format", FORMAT_VERSION), ("target", target), ("layout", layout), ("clock", clock),
                               ("epoch_ms", str(epoch_ms)), ("retention", retention.spec()),
                               # what its `claimed` holds: a file without this key, of the native layout, was
                               # written by the native collector, which counted timed-out claims in it too
                               ("claimed", CLAIMED_MEANING),
                               ("created", datetime.now().isoformat(timespec="seconds"))):  # fmt: skip
                self._db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        if self._dirty:
            with self._transaction():
                self._write_chunks()
        self._db.close()

    def _ms(self, t: float) -> int:
        return round(t * 1000) - self.epoch_ms

    def _t(self, t_ms: int) -> float:
        return (t_ms + self.epoch_ms) / 1000

    def _refresh_types(self) -> None:
        """Another connection (the writer thread) may have added job types since this one read them."""
        self._type_ids: dict[str, int] = dict(self._db.execute("SELECT name, id FROM job_types").fetchall())
        self._type_names = {v: k for k, v in self._type_ids.items()}

    def _type_id(self, name: str) -> int:
        type_id = self._type_ids.get(name)
        if type_id is None:
            # Another process (a second dashboard on the same queue) may have registered the name since this one
            # read the table: take its id then, never a UNIQUE failure. Called inside the write's transaction, so
            # the SELECT sees what the other one committed.
            self._db.execute("INSERT OR IGNORE INTO job_types (name) VALUES (?)", (name,))
            type_id = self._db.execute("SELECT id FROM job_types WHERE name = ?", (name,)).fetchone()[0]
            self._type_ids[name] = type_id
            self._type_names[type_id] = name
        return type_id

    def _name(self, type_id: int) -> str:
        if type_id not in self._type_names:
            self._refresh_types()
        return self._type_names.get(type_id, f"#{type_id}")

    # -- writing -------------------------------------------------------------------------------------------
    def write(self, snapshot: Snapshot, breaches: Mapping[str, int] | None = None) -> bool:
        """Keep one poll: its raw rows, the buckets it completes, and (once a minute) the retention cut.
        False when it is not newer than the last poll kept (nothing written)."""
        return self.write_many([(snapshot, breaches)]) == 1

    def write_many(self, polls: Sequence[tuple[Snapshot, Mapping[str, int] | None]]) -> int:
        """Several polls in one transaction (a writer that fell behind catches up at once); how many were kept."""
        started = time.perf_counter()
        kept = rows = 0
        try:
            kept, rows = self._write_polls(polls)
        except sqlite3.Error:
            # Rolled back: names registered in it are gone again. Read them afresh, so that a failure costs these
            # polls only, never the history keeping for good.
            self._refresh_types()
            raise
        elapsed = time.perf_counter() - started
        self.cost.snapshots += kept
        self.cost.rows += rows
        self.cost.seconds += elapsed
        if len(self.cost.per_write_s) < 100_000:
            self.cost.per_write_s.append(elapsed)
        return kept

    def _write_polls(self, polls: Sequence[tuple[Snapshot, Mapping[str, int] | None]]) -> tuple[int, int]:
        kept = rows = 0
        with self._transaction():
            for snapshot, breaches in polls:
                t = seconds(snapshot.taken_at)
                if self._last_t is not None and t <= self._last_t:
                    continue  # not newer than the last poll kept
                flags = breaches or {}
                if self._last_t is not None:
                    for level_no, level in enumerate(self.retention.levels[1:], start=1):
                        done = math.floor(self._last_t / level.width_s)
                        if math.floor(t / level.width_s) != done:
                            self._roll_up(level_no, done)
                t_ms = self._ms(t)
                type_id = self._type_id
                self._db.executemany(self._insert_raw, [(type_id(row.job_type), t_ms, *stored_values(row),
                                                         flags.get(row.job_type))
                                                        for row in (snapshot.totals, *snapshot.types)])  # fmt: skip
                if self._pruned_at is None or t - self._pruned_at >= PRUNE_EVERY_S:
                    self._write_chunks()
                    self._prune(t)
                self._last_t = t
                kept += 1
                rows += 1 + len(snapshot.types)
        return kept, rows

    def _roll_up(self, level_no: int, index: int) -> None:
        """One completed bucket: one entry per job type from the raw polls in it, added to its chunk in memory.
        The chunks changed are written once a minute (and when complete, and at close): a chunk is re-encoded
        whole, so writing it at every 10 s bucket would cost six times as much. Buckets lost in a crash meanwhile
        are rebuilt from the raw polls (kept an hour) when the file is opened again (`_resume`)."""
        width = self.retention.levels[level_no].width_s
        found = self._db.execute(self._bucket_rows, (self._ms(index * width), self._ms((index + 1) * width)))
        chunk, slot = divmod(index, CHUNK_BUCKETS)
        for type_id, polls, *rest in found.fetchall():
            key = (level_no, type_id)
            cached = self._open_chunks.get(key)
            if cached is None or cached[0] != chunk:
                if cached is not None and key in self._dirty:
                    self._write_chunk(key)  # the previous chunk is complete
                stored = self._db.execute("SELECT data FROM buckets WHERE level = ? AND type_id = ? AND chunk = ?",
                                          (level_no, type_id, chunk)).fetchone()  # fmt: skip
                cached = self._open_chunks[key] = (chunk, decode_chunk(stored[0]) if stored else {})
            cached[1][slot] = (polls, tuple(None if v is None else int(v) for v in rest[:-1]), rest[-1])
            self._dirty.add(key)
            if slot == CHUNK_BUCKETS - 1:
                self._write_chunk(key)

    def _write_chunk(self, key: tuple[int, int]) -> None:
        chunk, entries = self._open_chunks[key]
        depth_max = max((entry[1][0] for entry in entries.values() if entry[1][0] is not None), default=None)
        self._db.execute("INSERT OR REPLACE INTO buckets (level, type_id, chunk, depth_max, data) "
                         "VALUES (?, ?, ?, ?, ?)", (*key, chunk, depth_max, encode_chunk(entries)))
        self._dirty.discard(key)

    def _write_chunks(self) -> None:
        for key in sorted(self._dirty):
            self._write_chunk(key)

    def _resume(self) -> None:
        """Opened for writing: roll up the buckets completed before the last run stopped but not yet kept (a crash
        between two chunk writes), from the raw polls."""
        total_id = self._type_ids.get(TOTAL)
        if self._last_t is None or total_id is None:
            return
        first = self._db.execute("SELECT min(t_ms) FROM polls WHERE type_id = ?", (total_id,)).fetchone()[0]
        with self._transaction():
            for level_no, level in enumerate(self.retention.levels[1:], start=1):
                stored = self._db.execute("SELECT chunk, data FROM buckets WHERE level = ? AND type_id = ? ORDER BY "
                                          "chunk DESC LIMIT 1", (level_no, total_id)).fetchone()  # fmt: skip
                start = math.ceil(self._t(first) / level.width_s)  # the first bucket whose every poll is kept
                if stored is not None:
                    start = max(start, stored[0] * CHUNK_BUCKETS + max(decode_chunk(stored[1]), default=-1) + 1)
                for index in range(start, math.floor(self._last_t / level.width_s)):
                    self._roll_up(level_no, index)
            self._write_chunks()

    def _prune(self, t: float) -> None:
        raw = self.retention.levels[0]
        self._db.execute(f"DELETE FROM polls WHERE type_id IN {ALL_TYPES} AND t_ms < ?", (self._ms(t - raw.keep_s),))
        for level_no, level in enumerate(self.retention.levels[1:], start=1):
            first_kept = math.floor((t - level.keep_s) / level.width_s) // CHUNK_BUCKETS  # chunks wholly older go
            self._db.execute(f"DELETE FROM buckets WHERE level = ? AND type_id IN {ALL_TYPES} AND chunk < ?",
                             (level_no, first_kept))  # fmt: skip
        self._pruned_at = t

    # -- reading -------------------------------------------------------------------------------------------
    def latest(self) -> float | None:
        """The time of the newest poll kept."""
        if TOTAL not in self._type_ids:
            self._refresh_types()
        last = self._db.execute("SELECT max(t_ms) FROM polls WHERE type_id = ?",
                                (self._type_ids.get(TOTAL),)).fetchone()[0]  # every poll writes the totals' row
        return None if last is None else self._t(last)

    def job_types(self) -> list[str]:
        self._refresh_types()
        return sorted(self._type_ids)

    def level_for(self, span_s: float, width_s: float = 0.0) -> int:
        """The level to read for the last `span_s` seconds drawn in buckets of `width_s`: the coarsest whose
        buckets are no wider than that, among those kept long enough; else the one kept longest."""
        levels = self.retention.levels
        covering = [i for i, level in enumerate(levels) if level.keep_s >= span_s]
        if not covering:
            return len(levels) - 1
        fine_enough = [i for i in covering if levels[i].width_s <= width_s]
        return fine_enough[-1] if fine_enough else covering[0]

    def _type_filter(self, job_types: Iterable[str] | None) -> tuple[str, list[int]] | None:
        """SQL and parameters choosing the job types (all of them: None); None when none of them is kept."""
        if job_types is None:
            return f"type_id IN {ALL_TYPES}", []
        names = list(job_types)
        if any(name not in self._type_ids for name in names):
            self._refresh_types()
        ids = [self._type_ids[name] for name in names if name in self._type_ids]
        return (f"type_id IN ({', '.join('?' * len(ids))})", ids) if ids else None

    def records(self, since: float | None = None, until: float | None = None, job_types: Iterable[str] | None = None,
                level: int = 0) -> list[Record]:  # fmt: skip
        """The rows of one level from `since` to `until` (inclusive), by time, the totals first, then by name."""
        chosen = self._type_filter(job_types)
        if chosen is None:
            return []
        where, params = chosen
        low = -(2**62) if since is None else self._ms(since)
        high = 2**62 if until is None else self._ms(until)
        out: list[Record] = []
        if level == 0:
            columns = ", ".join(f.column for f in FIGURES)
            found = self._db.execute(f"SELECT type_id, t_ms, {columns}, breaches FROM polls WHERE {where} "
                                     f"AND t_ms BETWEEN ? AND ?", [*params, low, high])  # fmt: skip
            for type_id, t_ms, *rest in found:
                out.append(Record(self._t(t_ms), self._name(type_id), tuple(rest[:-1]), 1, rest[-1]))
        else:
            width = self.retention.levels[level].width_s
            lowest = -(2**62) if since is None else math.floor(since / width) // CHUNK_BUCKETS
            highest = 2**62 if until is None else math.floor(until / width) // CHUNK_BUCKETS
            rows = self._db.execute(f"SELECT type_id, chunk, data FROM buckets WHERE level = ? AND {where} AND chunk "
                                    f"BETWEEN ? AND ?", [level, *params, lowest, highest])  # fmt: skip
            for type_id, chunk, data in rows.fetchall():
                name = self._name(type_id)
                for slot, (polls, values, flags) in decode_chunk(data).items():
                    t = (chunk * CHUNK_BUCKETS + slot) * width
                    if low <= self._ms(t) <= high:
                        out.append(Record(t, name, values, polls, flags))
        out.sort(key=lambda r: (r.t, r.job_type != TOTAL, r.job_type))
        return out

    def at(self, t: float) -> tuple[int, list[Record]]:
        """The figures at moment `t`: the newest row at or before it, from the finest level that still covers it
        (the raw poll itself within the last hour, its 10 s bucket within a day, …); before the oldest poll kept,
        that poll. (level, records)."""
        latest = self.latest()
        if latest is None:
            return 0, []
        levels = self.retention.levels
        for level_no, level in enumerate(levels):
            if t < latest - level.keep_s and level_no < len(levels) - 1:
                continue
            back = level.keep_s if level_no == 0 else level.width_s * CHUNK_BUCKETS * 2
            totals = self.records(t - back, t, [TOTAL], level_no)
            if totals:
                when = totals[-1].t
                return level_no, self.records(when, when, level=level_no)
        # Before anything kept: the oldest poll kept (the cursor stops at the start of the history).
        first = self._db.execute("SELECT min(t_ms) FROM polls WHERE type_id = ?",
                                 (self._type_ids.get(TOTAL),)).fetchone()  # fmt: skip
        if first[0] is None or self._t(first[0]) <= t:
            return 0, []
        return 0, self.records(self._t(first[0]), self._t(first[0]), level=0)

    def bucket_means(self, job_type: str, name: str, since: float, width_s: float, level: int) -> list[tuple[float,
                                                                                                         float]]:
        """(bucket start, mean) of a mean-kept figure over buckets of `width_s` (aligned to the epoch) from `since`,
        read from `level` and weighted by the polls each row stands for: the mean of the raw polls."""
        figure = FIGURES[INDEX[name]]
        sums: dict[int, list[float]] = {}
        raw_from = since
        chosen = self._type_filter([job_type])
        if chosen is None:
            return []
        if level > 0:
            level_width = self.retention.levels[level].width_s
            rows = self._db.execute("SELECT chunk, data FROM buckets WHERE level = ? AND type_id = ? AND chunk >= ?",
                                    (level, chosen[1][0], math.floor(since / level_width) // CHUNK_BUCKETS))
            for chunk, data in rows.fetchall():
                for slot, polls, value in self._column(level, chosen[1][0], chunk, data, INDEX[name]):
                    t = (chunk * CHUNK_BUCKETS + slot) * level_width
                    if t < since:
                        continue
                    raw_from = max(raw_from, t + level_width)
                    if value is not None:
                        entry = sums.setdefault(math.floor(t / width_s + 1e-9), [0, 0])
                        entry[0] += value * polls
                        entry[1] += polls
        # The raw polls after the last bucket kept (the newest buckets are written once a minute), or all of them.
        where, params = chosen
        # In seconds, divided as floats, exactly as Python's floor(t / width) does (the memory's buckets, the chart's):
        # a chart's bucket is rarely a whole number of milliseconds (3600 s / 111 columns), and dividing integer
        # milliseconds put the polls in buckets far from the chart's (which left its newest minute empty).
        rows = self._db.execute(
            f"SELECT CAST((t_ms + ?) / 1000.0 / ? AS INTEGER), SUM({figure.column}), COUNT({figure.column}) "
            f"FROM polls WHERE {where} AND t_ms >= ? GROUP BY 1",
            (self.epoch_ms, width_s, *params, self._ms(raw_from))).fetchall()  # fmt: skip
        for b, total, weight in rows:
            if weight:
                entry = sums.setdefault(b, [0, 0])
                entry[0] += total
                entry[1] += weight
        return [(b * width_s, total / weight / figure.scale) for b, (total, weight) in sorted(sums.items())]

    def bucket_breaches(self, job_type: str, since: float, width_s: float, level: int) -> list[tuple[float, int]]:
        """(bucket start, flags) of the buckets of `width_s` from `since` in which the job type breached an SLO:
        the OR of the breach flags kept at `level` (the roll-ups') and of the raw polls after its last bucket."""
        chosen = self._type_filter([job_type])
        if chosen is None:
            return []
        type_id = chosen[1][0]
        flags: dict[int, int] = {}
        raw_from = since
        if level > 0:
            level_width = self.retention.levels[level].width_s
            rows = self._db.execute("SELECT chunk, data FROM buckets WHERE level = ? AND type_id = ? AND chunk >= ?",
                                    (level, type_id, math.floor(since / level_width) // CHUNK_BUCKETS))
            for chunk, data in rows.fetchall():
                for slot, _, mask in self._column(level, type_id, chunk, data, BREACHES):
                    t = (chunk * CHUNK_BUCKETS + slot) * level_width
                    if t < since:
                        continue
                    raw_from = max(raw_from, t + level_width)
                    if mask:
                        b = math.floor(t / width_s + 1e-9)
                        flags[b] = flags.get(b, 0) | mask
        rows = self._db.execute("SELECT t_ms, breaches FROM polls WHERE type_id = ? AND t_ms >= ? AND breaches != 0",
                                (type_id, self._ms(raw_from))).fetchall()  # fmt: skip
        for t_ms, mask in rows:
            b = math.floor(self._t(t_ms) / width_s)
            flags[b] = flags.get(b, 0) | mask
        return [(b * width_s, mask) for b, mask in sorted(flags.items())]

    def _column(self, level: int, type_id: int, chunk: int, data: bytes,
                index: int) -> list[tuple[int, int, int | None]]:  # fmt: skip
        """A chunk's figure, decoded once: a chunk changes only while it is the newest, so a chart redrawn every
        bucket decodes one chunk per line, not the whole week again."""
        key = (level, type_id, chunk, index)
        cached = self._columns.get(key)
        if cached is not None and cached[0] == data:
            return cached[1]
        if len(self._columns) > 8192:
            self._columns.clear()
        decoded = [(slot, 0, mask) for slot, mask in decode_breaches(data)] if index == BREACHES else \
            decode_column(data, index)  # fmt: skip
        self._columns[key] = (data, decoded)
        return decoded

    def deepest(self, since: float, level: int, n: int, among: Iterable[str] | None = None) -> list[str]:
        """The `n` job types with the greatest depth kept since `since` at `level`, deepest first."""
        if level == 0:
            rows = self._db.execute(f"SELECT type_id, MAX({FIGURES[0].column}) FROM polls WHERE type_id IN "
                                    f"{ALL_TYPES} AND t_ms >= ? GROUP BY type_id", (self._ms(since),)).fetchall()
        else:
            first = math.floor(since / self.retention.levels[level].width_s) // CHUNK_BUCKETS
            rows = self._db.execute(f"SELECT type_id, MAX(depth_max) FROM buckets WHERE level = ? AND type_id IN "
                                    f"{ALL_TYPES} AND chunk >= ? GROUP BY type_id", (level, first)).fetchall()
        wanted = None if among is None else set(among)
        ranked = sorted((-(depth or 0), self._name(type_id)) for type_id, depth in rows)
        return [name for _, name in ranked if name != TOTAL and (wanted is None or name in wanted)][:n]

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.exists())


