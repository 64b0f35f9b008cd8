"""History for the charts: per-poll figures in bounded buffers, read back as one chart's worth of points.

Each poll's Snapshot adds one point per track: the totals and every job type, each with depth, arrivals/s
and completions/s (the 10 s rates, which follow a load test closely). Tracks keep the last 15 minutes — the
widest chart window — and at most `max_points` points, so memory stays flat however long the dashboard
runs; a type that has had no point for 15 minutes is dropped. Times are the snapshot's server time in
seconds, so charts line up with the data and not with the wall clock of the machine drawing them.

`points()` turns a track into at most `buckets` points for a window: the mean of each completed, time-aligned
bucket, so a 15-minute chart of a 0.1 s poll is as cheap to draw as a 1-minute one, does not wobble as it
scrolls, and needs redrawing only when a bucket completes.

With a history file (`store`, a HistoryStore read on the thread that draws), the windows past 15 minutes (1 h …
7 d) are read from the file's roll-ups, bucketed by SQLite (one indexed range per line, at most a few thousand
rows), again only when a bucket completes; and `load()` fills the memory from the file's raw polls, so the
charts are full as soon as the dashboard starts.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

from queuetop.history_store import CHART_FIGURES, HistoryStore, Record
from queuetop.snapshot import TOTAL, Snapshot, TypeStats
from queuetop.watermarks import seconds

WINDOWS_S: tuple[float, ...] = (60.0, 300.0, 900.0, 3600.0, 21600.0, 86400.0, 604800.0)  # 1 m … 7 d (`w`)
KEEP_S = 900.0  # in memory: the windows up to 15 minutes; wider ones are read from the history file
MAX_POINTS = 9_000  # 15 minutes at the fastest interval (0.1 s)
RANK_EVERY_S = 5.0  # how often the depth chart's top types are chosen again
FIELDS = ("depth", "arrivals", "completions")
NAN = math.nan


class Track:
    """One series of points (time, depth, arrivals/s, completions/s); NaN where a figure was unknown."""

    __slots__ = ("_data", "times")

    def __init__(self) -> None:
        self.times = array("d")
        self._data = {name: array("d") for name in FIELDS}

    def add(self, t: float, row: TypeStats) -> None:
        self.times.append(t)
        self._data["depth"].append(float(row.depth))
        self._data["arrivals"].append(_number(row.arrivals_10s_per_s))
        self._data["completions"].append(_number(row.completions_10s_per_s))

    def add_record(self, record: Record) -> None:
        self.times.append(record.t)
        for name, figure in CHART_FIGURES.items():
            self._data[name].append(_number(record.value(figure)))

    def values(self, name: str) -> array:
        return self._data[name]

    def drop_before(self, t: float, max_points: int) -> None:
        # Cutting the head of an array moves the whole tail, so cut in chunks, not one point per poll.
        cut = max(bisect_left(self.times, t), len(self.times) - max_points)
        if cut > 0 and (cut >= 64 or cut * 8 >= len(self.times)):
            del self.times[:cut]
            for values in self._data.values():
                del values[:cut]

    def __len__(self) -> int:
        return len(self.times)


def _number(value: float | None) -> float:
    return NAN if value is None else float(value)


class Series:
    """Bounded chart history for the totals and each job type."""

    def __init__(self, keep_s: float = KEEP_S, max_points: int = MAX_POINTS, store: HistoryStore | None = None) -> None:
        self.keep_s = keep_s
        self.max_points = max_points
        self.store = store
        self.tracks: dict[str, Track] = {}
        self.latest: float | None = None  # time of the newest point
        self._ranked: tuple[tuple, list[str]] | None = None
        self._points: dict[tuple, tuple[int, Track | None, tuple[list[float], list[float]]]] = {}

    @property
    def windows(self) -> tuple[float, ...]:
        """The chart windows there is data for: all with a history file, else those kept in memory."""
        return WINDOWS_S if self.store is not None else tuple(w for w in WINDOWS_S if w <= self.keep_s)

    def load(self) -> int:
        """Fill the memory from the history file's raw polls of the last `keep_s` (at start); how many polls."""
        if self.store is None:
            return 0
        latest = self.store.latest()
        if latest is None:
            return 0
        records = self.store.records(since=latest - self.keep_s, level=0)
        for record in records:
            track = self.tracks.get(record.job_type)
            if track is None:
                track = self.tracks[record.job_type] = Track()
            track.add_record(record)
        self.latest = latest
        self._points.clear()
        return len({record.t for record in records})

    def add(self, snapshot: Snapshot) -> bool:
        """Record one snapshot; False (and nothing recorded) if it is not newer than the last one."""
        t = seconds(snapshot.taken_at)
        if self.latest is not None and t <= self.latest:
            return False
        self.latest = t
        for row in (snapshot.totals, *snapshot.types):
            track = self.tracks.get(row.job_type)
            if track is None:
                track = self.tracks[row.job_type] = Track()
            track.add(t, row)
        cutoff = t - self.keep_s
        for name in [name for name, track in self.tracks.items() if track.times[-1] < cutoff]:
            del self.tracks[name]
        for track in self.tracks.values():
            track.drop_before(cutoff, self.max_points)
        return True

    def points(self, job_type: str, name: str, window_s: float, buckets: int) -> tuple[list[float], list[float]]:
        """The window as at most `buckets` points: the mean of each completed time bucket, with x in seconds
        before the start of the bucket in progress (so -window_s … -width); unknown values are left out.

        Buckets are aligned to the clock and the one in progress is left out, so the points change only when a
        bucket completes: a chart drawn from them needs redrawing once per bucket, not once per poll, and a
        half-filled bucket never makes the line jump."""
        if self.latest is None or buckets < 1:
            return [], []
        from_file = window_s > self.keep_s and self.store is not None
        track = None if from_file else self.tracks.get(job_type)
        if track is None and not from_file:
            return [], []
        width = window_s / buckets
        current = math.floor(self.latest / width)
        key = (job_type, name, window_s, buckets)
        cached = self._points.get(key)
        if cached is not None and cached[0] == current and cached[1] is track:
            return cached[2]  # no bucket has completed since: the same points
        if track is None:
            result = self._file_means(job_type, name, window_s, width, current, buckets)
        else:
            result = self._bucket_means(track, name, width, current, buckets)
        if len(self._points) > 512:
            self._points.clear()
        self._points[key] = (current, track, result)
        return result

    def _file_means(self, job_type: str, name: str, window_s: float, width: float, current: int,
                    buckets: int) -> tuple[list[float], list[float]]:  # fmt: skip
        """The window's completed buckets from the history file, from the coarsest level fine enough for them."""
        assert self.store is not None
        level = self.store.level_for(window_s, width)
        xs: list[float] = []
        ys: list[float] = []
        for start, mean in self.store.bucket_means(job_type, CHART_FIGURES[name], (current - buckets) * width, width,
                                                   level):  # fmt: skip
            bucket = round(start / width)
            if current - buckets <= bucket < current:
                xs.append((bucket - current) * width)
                ys.append(mean)
        return xs, ys

    @staticmethod
    def _bucket_means(track: Track, name: str, width: float, current: int,
                      buckets: int) -> tuple[list[float], list[float]]:  # fmt: skip
        times, values = track.times, track.values(name)
        xs: list[float] = []
        ys: list[float] = []
        total, count, bucket = 0.0, 0, current - buckets
        end = bisect_left(times, current * width)
        for i in range(bisect_left(times, bucket * width), end):
            value = values[i]
            if value != value:  # NaN: unknown at that poll
                continue
            b = math.floor(times[i] / width)
            if b != bucket and count:
                xs.append((bucket - current) * width)
                ys.append(total / count)
                total, count = 0.0, 0
            bucket = b
            total += value
            count += 1
        if count:
            xs.append((bucket - current) * width)
            ys.append(total / count)
        return xs, ys

    def top_types(self, window_s: float, n: int, among: Iterable[str] | None = None) -> list[str]:
        """The `n` job types with the greatest depth seen in the window, deepest first (ties by name).
        Ranked again every RANK_EVERY_S at most: a chart's lines should not swap places at every poll."""
        if self.latest is None:
            return []
        names = tuple(among) if among is not None else None
        from_file = window_s > self.keep_s and self.store is not None
        every = max(RANK_EVERY_S, window_s / 100) if from_file else RANK_EVERY_S  # a wide window ranks less often
        key = (window_s, n, names, math.floor(self.latest / every))
        if self._ranked is not None and self._ranked[0] == key:
            return self._ranked[1]
        if from_file:
            assert self.store is not None
            ranked = self.store.deepest(self.latest - window_s, self.store.level_for(window_s, window_s / 100), n,
                                        names)  # fmt: skip
        else:
            ranked = self._rank(window_s, n, names)
        self._ranked = (key, ranked)
        return ranked

    def _rank(self, window_s: float, n: int, among: Iterable[str] | None) -> list[str]:
        assert self.latest is not None
        since = self.latest - window_s
        ranked = []
        for name in among if among is not None else self.tracks:
            track = self.tracks.get(name)
            if name == TOTAL or track is None:
                continue
            start = bisect_right(track.times, since)
            if start < len(track):
                ranked.append((-max(track.values("depth")[start:]), name))
        return [name for _, name in sorted(ranked)[:n]]

    def point_count(self) -> int:
        return sum(len(track) for track in self.tracks.values())
