"""The history file on real SQLite files: roll-ups equal to the raw polls' means, retention, restarts, the chunk
codec, the file's name and place, the writer thread."""

from __future__ import annotations

import math
import random
import sqlite3
import threading
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from queuetop.db import Target, UsageError
from queuetop.layouts import NATIVE, load_layout
from queuetop.store.chunks import decode_chunk, encode_chunk
from queuetop.store.history_store import HistoryStore
from queuetop.store.model import FIGURES, INDEX, Level, Retention, history_path, target_identity
from queuetop.store.threads import HistoryWriter, find_history
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats

START = datetime(2026, 11, 20, 3, 0, 0)  # on a minute boundary: buckets start with the first poll


def poll(t: float, rng: random.Random, types: tuple[str, ...] = ("email", "report")) -> Snapshot:
    """Irregular figures with unknowns, so a mean of means would differ from the mean of the polls."""
    rows = []
    for name in types:
        waiting = rng.random() < 0.7
        completions = rng.random() < 0.6
        rows.append(TypeStats(
            name, depth=rng.randint(0, 500) if waiting else 0, oldest_age_s=rng.uniform(0, 90) if waiting else None,
            claimed=rng.randint(0, 9), timed_out=rng.randint(0, 2), dead=rng.randint(0, 3),
            arrivals_10s_per_s=rng.uniform(0, 40), completions_10s_per_s=rng.uniform(0, 40),
            wait_p50_s=rng.uniform(0, 2) if completions else None,
            wait_p95_s=rng.uniform(2, 9) if completions else None,
            wait_p99_s=rng.uniform(9, 20) if completions else None,
            processing_p95_s=rng.uniform(0, 1) if completions else None))  # fmt: skip
    totals = TypeStats(TOTAL, depth=sum(r.depth for r in rows), claimed=sum(r.claimed or 0 for r in rows))
    return Snapshot(taken_at=START + timedelta(seconds=t), target="t", dialect="sqlite", poll_ms=1.0, window_s=60.0,
                    types=tuple(rows), totals=totals)  # fmt: skip


def fill(store: HistoryStore, times: list[float], seed: int = 1) -> None:
    rng = random.Random(seed)
    for t in times:
        assert store.write(poll(t, rng))


def t0() -> float:
    return (START - datetime(1970, 1, 1)).total_seconds()


# -- roll-ups ------------------------------------------------------------------------------------------------------
def test_roll_ups_give_the_raw_polls_means_and_highest_percentiles(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    # 1 Hz with a few polls missing and some late ones: buckets of unequal size, figures unknown at some polls
    times = [s + (0.4 if s % 7 == 0 else 0.0) for s in range(185) if s % 11 != 5]
    fill(store, times)
    store.close()
    store = HistoryStore(tmp_path / "h.sqlite3", create=False)  # read back from the file alone
    raw = store.records(level=0)
    assert len(raw) == 3 * len(times)
    checked = 0
    for level_no, width in ((1, 10.0), (2, 60.0)):
        for bucket in store.records(level=level_no):
            inside = [r for r in raw if r.job_type == bucket.job_type and bucket.t <= r.t < bucket.t + width]
            assert bucket.polls == len(inside)
            for figure in FIGURES:
                i = INDEX[figure.name]
                known = [r.values[i] for r in inside if r.values[i] is not None]
                if figure.rollup.value == "max":
                    assert bucket.values[i] == (max(known) if known else None), figure.name
                elif not known:
                    assert bucket.values[i] is None
                else:  # the mean of the stored raw values, to the stored unit
                    assert abs(bucket.values[i] - sum(known) / len(known)) <= 0.5, (figure.name, bucket.t)
            checked += 1
    # every bucket completed by a later poll is there: 18 of 10 s and 3 of 1 min per type (the last is still open)
    assert checked == 3 * (18 + 3)


def test_a_wide_bucket_is_the_mean_of_its_polls_not_the_mean_of_the_narrow_buckets(tmp_path: Path) -> None:
    """Depth known at every poll, oldest age only at some: the minute's oldest age is the mean over the polls that
    knew it, as the raw rows give it — a mean of the 10 s means would weigh a poll of a sparse bucket more."""
    store = HistoryStore(tmp_path / "h.sqlite3")
    for s in range(61):
        age = float(s) if (s < 10 or s % 10 == 0) else None  # 10 known in the first bucket, 1 in each other
        row = TypeStats("email", depth=s, oldest_age_s=age)
        store.write(Snapshot(taken_at=START + timedelta(seconds=s), target="t", dialect="sqlite", poll_ms=1.0,
                             window_s=60.0, types=(row,), totals=row.__class__(TOTAL, depth=s)))  # fmt: skip
    minute = store.records(level=2, job_types=["email"])[0]
    assert minute.value("oldest_age_s") == pytest.approx((sum(range(10)) + 10 + 20 + 30 + 40 + 50) / 15, abs=1e-3)
    tens = store.records(level=1, job_types=["email"])
    mean_of_means = sum(r.value("oldest_age_s") for r in tens) / len(tens)
    assert abs(minute.value("oldest_age_s") - mean_of_means) > 5  # the two differ: the test can tell them apart
    assert minute.value("depth") == pytest.approx(29.5, abs=0.05) and minute.polls == 60


def test_chart_means_from_buckets_equal_the_raw_means(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    times = [float(s) for s in range(0, 1800) if s % 13 != 4]
    fill(store, times)
    since = t0()
    for level in (1, 2):
        from_buckets = dict(store.bucket_means("report", "depth", since, 300.0, level))
        from_raw = dict(store.bucket_means("report", "depth", since, 300.0, 0))
        assert from_buckets.keys() == from_raw.keys() and len(from_raw) == 6
        for start, mean in from_raw.items():
            assert from_buckets[start] == pytest.approx(mean, abs=0.05 + 1e-9)


# -- retention -----------------------------------------------------------------------------------------------------
def test_retention_drops_old_rows_level_by_level(tmp_path: Path) -> None:
    retention = Retention((Level(0, 120), Level(10, 600), Level(60, 1800)))
    store = HistoryStore(tmp_path / "h.sqlite3", retention=retention)
    fill(store, [float(s) for s in range(3000)])
    store.close()
    store = HistoryStore(tmp_path / "h.sqlite3", create=False)
    latest = t0() + 2999
    raw = store.records(level=0)
    assert latest - 120 - 60 <= raw[0].t <= latest - 119  # pruned once a minute: at most a minute over
    assert raw[-1].t == latest
    tens = store.records(level=1)
    assert latest - 600 - 64 * 10 - 60 <= tens[0].t <= latest - 600  # whole chunks go: a chunk is 64 buckets
    assert store.records(level=2)[0].t <= latest - 1800 + 60  # kept longest

def test_retention_cuts_whole_chunks_of_minutes_once_they_are_all_old(tmp_path: Path) -> None:
    retention = Retention((Level(0, 60), Level(60, 600)))
    store = HistoryStore(tmp_path / "h.sqlite3", retention=retention)
    fill(store, [float(s) for s in range(0, 2 * 64 * 60, 5)])
    latest = t0() + 2 * 64 * 60 - 5
    chunks = {math.floor(r.t / 60) // 64 for r in store.records(level=1)}
    first, last = math.floor(t0() / 60) // 64, math.floor(latest / 60) // 64
    assert last - first == 2  # three chunks were written (the start is not on a chunk's boundary)
    assert first not in chunks and last in chunks  # the oldest, wholly older than 10 minutes, is gone
    assert min(r.t for r in store.records(level=1)) <= latest - 600  # nothing younger than 10 minutes went


# -- restarts -------------------------------------------------------------------------------------------------------
def test_a_bucket_spanning_a_restart_holds_the_polls_of_both_runs(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    first = HistoryStore(path)
    fill(first, [0.0, 1.0, 2.0, 3.0], seed=3)
    first.close()
    second = HistoryStore(path)
    fill(second, [4.0, 5.0, 11.0], seed=4)  # 11 s completes the first 10 s bucket
    second.close()
    reader = HistoryStore(path, create=False)
    bucket = reader.records(level=1, job_types=["email"])[0]
    raw = [r for r in reader.records(level=0, job_types=["email"]) if r.t < t0() + 10]
    assert bucket.polls == 6 == len(raw)
    assert bucket.value("claimed") == pytest.approx(sum(r.value("claimed") for r in raw) / 6, abs=0.05)


def test_buckets_lost_in_a_crash_are_rebuilt_from_the_raw_polls(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = HistoryStore(path)
    fill(store, [float(s) for s in range(95)])
    # a crash: the chunks changed since the last minute are not written (no close)
    store._db.close()
    reopened = HistoryStore(path)
    tens = reopened.records(level=1, job_types=[TOTAL])
    assert [r.t - t0() for r in tens] == [float(10 * i) for i in range(9)]  # every completed 10 s bucket


def test_a_poll_not_newer_than_the_last_is_not_kept(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    rng = random.Random(5)
    assert store.write(poll(10.0, rng))
    assert not store.write(poll(10.0, rng)) and not store.write(poll(3.0, rng))
    assert len(store.records(level=0, job_types=[TOTAL])) == 1


# -- reading -------------------------------------------------------------------------------------------------------
def test_at_gives_the_figures_of_a_moment_from_the_finest_level_still_kept(tmp_path: Path) -> None:
    retention = Retention((Level(0, 60), Level(10, 600)))
    store = HistoryStore(tmp_path / "h.sqlite3", retention=retention)
    fill(store, [float(s) for s in range(400)])
    level, records = store.at(t0() + 390.5)  # within the raw minute: the poll itself
    assert level == 0 and records[0].t == t0() + 390 and {r.job_type for r in records} == {TOTAL, "email", "report"}
    level, records = store.at(t0() + 125.0)  # older: its 10 s bucket
    assert level == 1 and records[0].t == t0() + 120 and records[0].polls == 10


def test_the_chunk_codec_round_trips_unknowns_negatives_and_large_numbers() -> None:
    entries = {0: (10, (5, None, 2**40, -7, 0, *range(10)), None), 9: (1, (3, 8, None, -9, 0, *range(10)), 6)}
    assert decode_chunk(encode_chunk(entries)) == entries


# -- the file --------------------------------------------------------------------------------------------------------
def test_the_file_name_is_stable_safe_and_per_target_and_layout(tmp_path: Path) -> None:
    odbc = Target("odbc", "DRIVER={PostgreSQL Unicode};SERVER=db1;DATABASE=jobs;UID=ops;PWD=s3cret/../x")
    path = history_path(odbc, NATIVE, tmp_path)
    assert path == history_path(odbc, NATIVE, tmp_path) and path.parent == tmp_path
    assert path.name.startswith("db1-jobs.native.") and path.suffix == ".sqlite3"
    assert "s3cret" not in path.name and "/" not in path.name
    assert history_path(odbc, load_layout("job_queue"), tmp_path) != path
    other = Target("odbc", "DRIVER={PostgreSQL Unicode};SERVER=db2;DATABASE=jobs;UID=ops")
    assert history_path(other, NATIVE, tmp_path) != path
    # a SQLite target by its full path, wherever it was named from
    relative = Target("sqlite", "q.db")
    assert target_identity(relative) == str(Path("q.db").resolve())


def test_passwords_never_reach_the_history_file(tmp_path: Path) -> None:
    odbc = Target("odbc", "DRIVER={PostgreSQL Unicode};SERVER=db1;DATABASE=jobs;UID=ops;PWD=s3cret")
    path = history_path(odbc, NATIVE, tmp_path)
    writer = HistoryWriter(path, target=target_identity(odbc), layout="native:WorkQueue")
    writer.record(poll(1.0, random.Random(1)))
    writer.close()
    assert b"s3cret" not in path.read_bytes()
    assert [p for p, _ in find_history(odbc, None, tmp_path)] == [path]
    assert find_history(odbc, "job_queue", tmp_path) == []


def test_a_history_file_is_never_the_watched_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUEUETOP_HISTORY_DIR", str(tmp_path))
    target = Target("sqlite", str(tmp_path / "q.db"))
    assert history_path(target, NATIVE) != tmp_path / "q.db"


def test_retention_is_checked_and_named_in_the_error() -> None:
    assert Retention.parse("raw:2h, 10s:48h, 1m:30d").levels == (Level(0, 7200), Level(10, 172800),
                                                                Level(60, 2592000))  # fmt: skip
    for bad, words in (("10s:1h", "start with the raw polls"), ("raw:1h,1m:7d,10s:24h", "wider"),
                       ("raw:1h,2h:7d", "from 1 s to the raw polls' 1h"), ("raw:1h,10s", "WIDTH:KEEP"),
                       ("raw:1h,10s:soon", "duration")):  # fmt: skip
        with pytest.raises(UsageError, match=words):
            Retention.parse(bad)


def test_a_file_kept_with_other_buckets_is_refused_with_the_fix(tmp_path: Path) -> None:
    HistoryStore(tmp_path / "h.sqlite3").close()
    with pytest.raises(UsageError, match=r"keeps raw:1h,10s:1d,1m:7d.*same bucket widths"):
        HistoryStore(tmp_path / "h.sqlite3", retention=Retention.parse("raw:1h,30s:1d"))
    HistoryStore(tmp_path / "h.sqlite3", retention=Retention.parse("raw:2h,10s:2d,1m:30d")).close()  # keeps: fine


def test_a_file_that_is_no_history_is_refused_with_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "h.sqlite3"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(UsageError, match=r"cannot use the history file .*--no-history"):
        HistoryStore(bad)


# -- the writer thread ------------------------------------------------------------------------------------------------
def test_the_writer_keeps_what_other_threads_record(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    writer = HistoryWriter(path, target="t", layout="native:WorkQueue")
    rng = random.Random(9)
    snapshots = [poll(float(s), rng) for s in range(30)]
    thread = threading.Thread(target=lambda: [writer.record(s) for s in snapshots])
    thread.start()
    thread.join()
    writer.flush()
    reader = HistoryStore(path, create=False)
    assert len(reader.records(level=0, job_types=[TOTAL])) == 30
    writer.close()
    assert writer.store is not None and writer.store.cost.snapshots == 30
    with sqlite3.connect(path) as db:  # the raw level is plain rows, readable with the sqlite3 shell
        assert db.execute("SELECT count(*) FROM polls").fetchone()[0] == 90


def test_breach_flags_are_kept_per_poll_and_or_ed_over_a_bucket(tmp_path: Path) -> None:
    """The hook SLO checks use to mark breaches on the charts: a bit mask per job type and poll."""
    store = HistoryStore(tmp_path / "h.sqlite3")
    rng = random.Random(4)
    flags = {0.0: {"email": 1}, 3.0: {"email": 4, "report": 2}, 12.0: None}
    for t in (0.0, 1.0, 3.0, 12.0):
        store.write(poll(t, rng), flags.get(t))
    store.close()  # the open chunks are written at close (else once a minute)
    store = HistoryStore(tmp_path / "h.sqlite3", create=False)
    raw = {(r.t - t0(), r.job_type): r.breaches for r in store.records(level=0)}
    assert raw[(0.0, "email")] == 1 and raw[(1.0, "email")] is None and raw[(3.0, "report")] == 2
    bucket = {r.job_type: r.breaches for r in store.records(level=1)}
    assert bucket == {TOTAL: None, "email": 5, "report": 2}


def test_a_chart_bucket_of_no_whole_milliseconds_gets_the_raw_polls_in_it(tmp_path: Path) -> None:
    """An hour over 111 columns: buckets of 32.43… s. The raw polls were once grouped by whole milliseconds, which
    put them in buckets far from the chart's: the newest minute of an hour's chart was empty."""
    store = HistoryStore(tmp_path / "h.sqlite3")
    times = [float(s) for s in range(0, 400)]
    fill(store, times)
    width = 3600 / 111
    raw = {r.t: r.value("depth") for r in store.records(job_types=["report"])}
    means = dict(store.bucket_means("report", "depth", t0(), width, 0))
    assert means  # (they were all elsewhere)
    for start, mean in means.items():
        b = round(start / width)
        inside = [depth for t, depth in raw.items() if math.floor(t / width) == b]
        assert inside and mean == pytest.approx(sum(inside) / len(inside))
    assert math.floor((t0() + 399) / width) * width == pytest.approx(max(means))  # the newest bucket is there


def test_breach_flags_come_back_or_ed_per_chart_bucket_from_roll_ups_and_raw_polls(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    rng = random.Random(5)
    flags = {30.0: {"email": 1}, 31.0: {"email": 4}, 95.0: {"email": 2}, 250.0: {"report": 8}, 299.0: {"email": 16}}
    for t in range(0, 300):
        store.write(poll(float(t), rng), flags.get(float(t)))
    # Written once a minute: the roll-ups hold up to about 4 minutes, the raw polls the rest (299 is raw only).
    found = dict(store.bucket_breaches("email", t0(), 60.0, 1))
    assert found == {t0(): 1 | 4, t0() + 60: 2, t0() + 240: 16}
    assert dict(store.bucket_breaches("report", t0(), 60.0, 1)) == {t0() + 240: 8}
    assert dict(store.bucket_breaches("email", t0() + 60, 60.0, 0)) == {t0() + 60: 2, t0() + 240: 16}  # raw only
    assert store.bucket_breaches("nobody", t0(), 60.0, 1) == []
