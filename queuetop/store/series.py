"""History for the charts: per-poll figures in bounded buffers, read back as one chart's worth of points.

Each poll's Snapshot adds one point per track: the totals and every job type, each with depth, arrivals/s
and completions/s (the 10 s rates, which follow a load test closely). Tracks keep the last 15 minutes — the
widest chart window — and at most `max_points` points, so memory stays flat however long the dashboard
runs; a type that has had no point for 15 minutes is dropped. Times are the snapshot's server time in
seconds, so charts line up with the data and not with the wall clock of the machine drawing them.

`points()` turns a track into at most `buckets` points for a window: the mean of each completed, time-aligned
bucket, so a 15-minute chart of a 0.1 s poll is as cheap to draw as a 1-minute one, does not wobble as it
scrolls, and needs redrawing only when a bucket completes.

Each point also keeps the SLO breaches of its poll (a bit mask per type, the totals' the OR of every type's):
`marks()` gives the buckets in which a type, or the whole queue, was in breach, for the charts to mark.

With a history file (`store`), the windows past 15 minutes (1 h … 7 d) come from two places: the buckets that the
memory holds whole (its last 15 minutes, up to the bucket in progress) from the memory, the older ones from the
file's roll-ups, bucketed by SQLite (one indexed range per line). The file is never read on the thread that
draws: a miss hands a `FileRequest` to a `HistoryReader` thread (its own connection), whose answer, an immutable
`FileCharts`, comes back through `deliver` (the dashboard posts it as a message) and is taken in by `take()`;
meanwhile the charts show what they had. It is asked again only when a bucket completes. `load()` (at start,
before the dashboard runs) fills the memory from the file's raw polls, so the charts are full at once.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from queuetop.store.history_store import HistoryStore
from queuetop.store.model import CHART_FIGURES, Record
from queuetop.store.threads import HistoryReader
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats
from queuetop.watch.watermarks import seconds

WINDOWS_S: tuple[float, ...] = (60.0, 300.0, 900.0, 3600.0, 21600.0, 86400.0, 604800.0)  # 1 m … 7 d (`w`)
KEEP_S = 900.0  # in memory: the windows up to 15 minutes; wider ones are read from the history file
MAX_POINTS = 9_000  # 15 minutes at the fastest interval (0.1 s)
RANK_EVERY_S = 5.0  # how often the depth chart's top types are chosen again
FIELDS = ("depth", "arrivals", "completions")
NAN = math.nan


class Track:
    """One series of points (time, depth, arrivals/s, completions/s); NaN where a figure was unknown."""

    __slots__ = ("_data", "breaches", "times")

    def __init__(self) -> None:
        self.times = array("d")
        self._data = {name: array("d") for name in FIELDS}
        self.breaches = array("q")  # the SLOs breached at each point, one bit each (0: none)

    def add(self, t: float, row: TypeStats, breaches: int = 0) -> None:
        self.times.append(t)
        self._data["depth"].append(float(row.depth))
        self._data["arrivals"].append(_number(row.arrivals_10s_per_s))
        self._data["completions"].append(_number(row.completions_10s_per_s))
        self.breaches.append(breaches)

    def add_record(self, record: Record) -> None:
        self.times.append(record.t)
        for name, figure in CHART_FIGURES.items():
            self._data[name].append(_number(record.value(figure)))
        self.breaches.append(record.breaches or 0)

    def values(self, name: str) -> array:
        return self._data[name]

    def drop_before(self, t: float, max_points: int) -> None:
        # Cutting the head of an array moves the whole tail, so cut in chunks, not one point per poll.
        cut = max(bisect_left(self.times, t), len(self.times) - max_points)
        if cut > 0 and (cut >= 64 or cut * 8 >= len(self.times)):
            del self.times[:cut]
            del self.breaches[:cut]
            for values in self._data.values():
                del values[:cut]

    def __len__(self) -> int:
        return len(self.times)


def _number(value: float | None) -> float:
    return NAN if value is None else float(value)


Want = tuple[Hashable, ...]  # ("line", job type, field) | ("marks", job type) | ("rank", n, among or None)


@dataclass(frozen=True)
class FileRequest:
    """What the charts of one wide window want from the history file, as of one bucket: `buckets` of
    `window_s / buckets` seconds before bucket number `current` (for a ranking, `buckets` is 0 and `current`
    counts ranking periods)."""

    window_s: float
    buckets: int
    current: int
    latest: float  # the time of the newest poll then
    wants: frozenset[Want]

    @property
    def key(self) -> tuple[float, int]:
        return self.window_s, self.buckets


@dataclass(frozen=True)
class FileCharts:
    """The answer to a FileRequest, read on the history reader's thread: per line, (bucket number, mean) of the
    buckets the file has; per job type, the numbers of the buckets with a breach; per (n, among), the ranking."""

    request: FileRequest
    points: Mapping[tuple[str, str], tuple[tuple[int, float], ...]] = field(default_factory=dict)
    marks: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    ranked: Mapping[tuple[int, tuple[str, ...] | None], tuple[str, ...]] = field(default_factory=dict)

    def has(self, want: Want) -> bool:
        kind, *rest = want
        found = self.points if kind == "line" else self.marks if kind == "marks" else self.ranked
        return (tuple(rest) if kind != "marks" else rest[0]) in found


@dataclass(frozen=True)
class PastFigures:
    """The history file's figures at one moment (the time cursor's), read on the history reader's thread: the
    moment asked for, the level they come from (0: raw polls) and one record per job type and the totals."""

    asked_t: float
    level: int
    records: tuple[Record, ...]


def read_file_charts(store: HistoryStore, request: FileRequest) -> FileCharts:
    """On the history reader's thread: everything `request` wants, from the file."""
    points: dict[tuple[str, str], tuple[tuple[int, float], ...]] = {}
    marks: dict[str, tuple[int, ...]] = {}
    ranked: dict[tuple[int, tuple[str, ...] | None], tuple[str, ...]] = {}
    window_s, current = request.window_s, request.current
    width = window_s / request.buckets if request.buckets else window_s
    first = current - request.buckets
    level = store.level_for(window_s, width)
    for want in sorted(request.wants, key=repr):
        if want[0] == "line":
            job_type, name = str(want[1]), str(want[2])
            found = store.bucket_means(job_type, CHART_FIGURES[name], first * width, width, level)
            points[(job_type, name)] = tuple((b, mean) for b, mean in ((round(start / width), mean)
                                                                       for start, mean in found)
                                             if first <= b < current)  # fmt: skip
        elif want[0] == "marks":
            job_type = str(want[1])
            found_flags = store.bucket_breaches(job_type, first * width, width, level)
            marks[job_type] = tuple(b for b in (round(start / width) for start, _ in found_flags)
                                    if first <= b < current)  # fmt: skip
        else:
            n, among = want[1], want[2]
            assert isinstance(n, int)
            names = None if among is None else tuple(among)  # type: ignore[arg-type]
            ranked[(n, names)] = tuple(store.deepest(request.latest - window_s,
                                                     store.level_for(window_s, window_s / 100), n, names))  # fmt: skip
    return FileCharts(request, MappingProxyType(points), MappingProxyType(marks), MappingProxyType(ranked))


class Series:
    """Bounded chart history for the totals and each job type."""

    def __init__(self, keep_s: float = KEEP_S, max_points: int = MAX_POINTS, store: HistoryStore | None = None) -> None:
        self.keep_s = keep_s
        self.max_points = max_points
        self.store = store  # read on the thread that made it only by `load()`, before the dashboard runs
        self.tracks: dict[str, Track] = {}
        self.latest: float | None = None  # time of the newest point
        self._ranked: tuple[tuple, list[str]] | None = None
        self._points: dict[tuple, tuple[int, Track | None, FileCharts | None, object]] = {}
        # The wide windows: what each (window, buckets) wants and in which bucket it last wanted it, the last
        # request sent and the last answer taken in. Answers arrive through `deliver`, set by the dashboard.
        self.deliver: Callable[[FileCharts], None] | None = None
        self._reader: HistoryReader | None = None
        self._wants: dict[tuple[float, int], dict[Want, int]] = {}
        self._sent: dict[tuple[float, int], FileRequest] = {}
        self._loaded: dict[tuple[float, int], FileCharts] = {}

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

    def add(self, snapshot: Snapshot, breaches: Mapping[str, int] | None = None) -> bool:
        """Record one snapshot, with the SLOs each type breaches then (`slo.breach_masks`); False (and nothing
        recorded) if it is not newer than the last one."""
        t = seconds(snapshot.taken_at)
        if self.latest is not None and t <= self.latest:
            return False
        self.latest = t
        flags = breaches or {}
        for row in (snapshot.totals, *snapshot.types):
            track = self.tracks.get(row.job_type)
            if track is None:
                track = self.tracks[row.job_type] = Track()
            track.add(t, row, flags.get(row.job_type, 0))
        cutoff = t - self.keep_s
        for name in [name for name, track in self.tracks.items() if track.times[-1] < cutoff]:
            del self.tracks[name]
        for track in self.tracks.values():
            track.drop_before(cutoff, self.max_points)
        return True

    def covered_s(self, window_s: float) -> float:
        """How much of the window the data covers, in seconds back from the newest point: all of it for a wide
        window read from the history file (the file answers for all of it), else back to the oldest point in
        memory (after a restart, `load` has put the file's last `keep_s` there)."""
        if self.latest is None:
            return 0.0
        if window_s > self.keep_s and self.store is not None:
            return window_s
        first = min((track.times[0] for track in self.tracks.values() if len(track)), default=self.latest)
        return self.latest - first

    def points(self, job_type: str, name: str, window_s: float, buckets: int) -> tuple[list[float], list[float]]:
        """The window as at most `buckets` points: the mean of each completed time bucket, with x in seconds
        before the start of the bucket in progress (so -window_s … -width); unknown values are left out.

        Buckets are aligned to the clock and the one in progress is left out, so the points change only when a
        bucket completes: a chart drawn from them needs redrawing once per bucket, not once per poll, and a
        half-filled bucket never makes the line jump. A wide window's buckets come from the memory where it holds
        them whole, the older ones from the history file (see the module's docstring)."""
        found = self._buckets(("line", job_type, name), window_s, buckets)
        if found is None:
            return [], []
        pairs, width, current = found
        return [(b - current) * width for b, _ in pairs], [mean for _, mean in pairs]  # type: ignore[misc]

    def marks(self, job_type: str, window_s: float, buckets: int) -> list[float]:
        """The buckets of the window (as `points` gives them: x in seconds before the bucket in progress) in which
        `job_type` breached an SLO at some poll; for TOTAL, in which any type did."""
        found = self._buckets(("marks", job_type), window_s, buckets)
        if found is None:
            return []
        numbers, width, current = found
        return [(b - current) * width for b in numbers]  # type: ignore[operator]

    def _buckets(self, want: Want, window_s: float, buckets: int) -> tuple[list, float, int] | None:
        """The completed buckets of the window for a line ((number, mean) pairs) or for marks (numbers), the
        bucket width and the number of the bucket in progress; cached until a bucket completes or the file's
        answer arrives."""
        if self.latest is None or buckets < 1:
            return None
        job_type = str(want[1])
        from_file = window_s > self.keep_s and self.store is not None
        track = self.tracks.get(job_type)
        if track is None and not from_file:
            return None
        width = window_s / buckets
        current = math.floor(self.latest / width)
        loaded = self._file_charts(want, window_s, buckets, current) if from_file else None
        key = (*want, window_s, buckets)
        cached = self._points.get(key)
        if cached is not None and cached[0] == current and cached[1] is track and cached[2] is loaded:
            return cached[3], width, current  # type: ignore[return-value]  # no bucket has completed since
        first = current - buckets
        # The memory holds whole the buckets from the one after its oldest point: those from there, older from
        # the file (whose newest buckets are up to a minute late: the writer rolls them up once a minute).
        cut = max(first, math.ceil(track.times[0] / width) if track is not None and len(track) else current) \
            if from_file else first  # fmt: skip
        result: list = []
        if loaded is not None:
            if want[0] == "line":
                result = [(b, mean) for b, mean in loaded.points.get((job_type, str(want[2])), ()) if first <= b < cut]
            else:
                result = [b for b in loaded.marks.get(job_type, ()) if first <= b < cut]
        if track is not None:
            if want[0] == "line":
                result += self._bucket_means(track, str(want[2]), width, max(first, cut), current)
            else:
                result += self._bucket_marks(track, width, max(first, cut), current)
        if len(self._points) > 512:
            self._points.clear()
        self._points[key] = (current, track, loaded, result)
        return result, width, current

    def _file_charts(self, want: Want, window_s: float, buckets: int, current: int) -> FileCharts | None:
        """The file's last answer for this window and bucket count (perhaps of an earlier bucket: the charts show
        it meanwhile). Asks the reader thread again when it is out of date or lacks `want`, once per bucket."""
        key = (window_s, buckets)
        wants = self._wants.setdefault(key, {})
        wants[want] = current
        loaded = self._loaded.get(key)
        if loaded is not None and loaded.request.current == current and loaded.has(want):
            return loaded
        sent = self._sent.get(key)
        if sent is None or sent.current != current or want not in sent.wants:
            for old in [w for w, at in wants.items() if at < current - 1]:
                del wants[old]  # not drawn for two buckets (a type no longer among the deepest)
            assert self.latest is not None
            request = FileRequest(window_s, buckets, current, self.latest, frozenset(wants))
            self._sent[key] = request
            self._ask(request)
        return loaded

    def _ask(self, request: FileRequest) -> None:
        deliver, store = self.deliver, self.store
        if deliver is None or store is None:
            return  # nobody to hand the answer to: only the memory's buckets are drawn
        if len(self._sent) > 64:  # resized many times: forget the sizes not drawn any more
            for mapping in (self._wants, self._sent, self._loaded):
                mapping.clear()
            self._sent[request.key] = request
        self._reader_of(store).submit(request.key, lambda reader_store: read_file_charts(reader_store, request),
                                      deliver)  # fmt: skip

    def read_past(self, t: float, deliver: Callable[[PastFigures], None]) -> bool:
        """Ask the history reader's thread for the figures at moment `t`; `deliver` is called there with them. A
        newer ask replaces one not yet read. False when there is no history file."""
        store = self.store
        if store is None:
            return False

        def read(reader_store: HistoryStore) -> PastFigures:
            level, records = reader_store.at(t)
            return PastFigures(t, level, tuple(records))

        self._reader_of(store).submit("past", read, deliver)
        return True

    def _reader_of(self, store: HistoryStore) -> HistoryReader:
        if self._reader is None:
            self._reader = HistoryReader(store.path, store.retention)
        return self._reader

    def take(self, charts: FileCharts) -> bool:
        """Take in the file's answer (on the thread that draws); False if a newer one is already here."""
        key = charts.request.key
        loaded = self._loaded.get(key)
        if loaded is not None and loaded.request.current > charts.request.current:
            return False
        self._loaded[key] = charts
        return True

    def close(self) -> None:
        """Stop the history reader's thread (if it was started)."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    @staticmethod
    def _bucket_means(track: Track, name: str, width: float, first: int, end: int) -> list[tuple[int, float]]:
        """(bucket number, mean) of the buckets `first` … `end` - 1 that have a known value."""
        times, values = track.times, track.values(name)
        out: list[tuple[int, float]] = []
        total, count, bucket = 0.0, 0, first
        for i in range(bisect_left(times, first * width), bisect_left(times, end * width)):
            value = values[i]
            if value != value:  # NaN: unknown at that poll
                continue
            b = math.floor(times[i] / width)
            if b != bucket and count:
                out.append((bucket, total / count))
                total, count = 0.0, 0
            bucket = b
            total += value
            count += 1
        if count:
            out.append((bucket, total / count))
        return out

    @staticmethod
    def _bucket_marks(track: Track, width: float, first: int, end: int) -> list[int]:
        """The numbers of the buckets `first` … `end` - 1 with a breach at some poll."""
        times, flags = track.times, track.breaches
        out: list[int] = []
        for i in range(bisect_left(times, first * width), bisect_left(times, end * width)):
            if flags[i]:
                b = math.floor(times[i] / width)
                if not out or out[-1] != b:
                    out.append(b)
        return out

    def top_types(self, window_s: float, n: int, among: Iterable[str] | None = None) -> list[str]:
        """The `n` job types with the greatest depth seen in the window, deepest first (ties by name).
        Ranked again every RANK_EVERY_S at most: a chart's lines should not swap places at every poll."""
        if self.latest is None:
            return []
        names = tuple(among) if among is not None else None
        from_file = window_s > self.keep_s and self.store is not None
        every = max(RANK_EVERY_S, window_s / 100) if from_file else RANK_EVERY_S  # a wide window ranks less often
        if from_file:  # from the file's roll-ups, on the reader's thread; the last ranking known meanwhile
            loaded = self._file_charts(("rank", n, names), window_s, 0, math.floor(self.latest / every))
            found = list(loaded.ranked.get((n, names), ())) if loaded is not None else []
            if len(found) < n:  # the file's roll-ups lag a minute behind (a type just seen): the memory's deepest too
                found += [name for name in self.top_types(self.keep_s, n, names) if name not in found][:n - len(found)]
            return found
        key = (window_s, n, names, math.floor(self.latest / every))
        if self._ranked is not None and self._ranked[0] == key:
            return self._ranked[1]
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
