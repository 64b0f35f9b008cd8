"""Two dashboards on one queue share one history file: both keep every poll, whichever registers a new job type
first (real SQLite files, two connections as two processes would have)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from queuetop.store.history_store import HistoryStore
from queuetop.store.threads import HistoryWriter
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats

START = datetime(2026, 11, 20, 3, 0, 0)


def poll(t: float, types: tuple[str, ...]) -> Snapshot:
    rows = tuple(TypeStats(name, depth=int(t)) for name in types)
    return Snapshot(taken_at=START + timedelta(seconds=t), target="t", dialect="sqlite", poll_ms=1.0, window_s=60.0,
                    types=rows, totals=TypeStats(TOTAL, depth=len(rows)))  # fmt: skip


def kept_times(path: Path, job_type: str) -> int:
    reader = HistoryStore(path, create=False)
    try:
        return len([r for r in reader.records() if r.job_type == job_type])
    finally:
        reader.close()


def test_a_type_registered_by_the_other_dashboard_is_taken_not_a_unique_failure(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    first = HistoryStore(path, target="t", layout="native")
    second = HistoryStore(path, target="t", layout="native")  # read the job types before the first added one
    try:
        assert first.write(poll(1, ("email",)))
        assert second.write(poll(2, ("email",)))  # "email" is new to this connection only
        assert second.write(poll(3, ("email", "report")))
        assert first.write(poll(4, ("email", "report")))  # and the other way round
    finally:
        first.close()
        second.close()
    assert kept_times(path, "email") == 4 and kept_times(path, "report") == 2


def test_both_writer_threads_keep_writing_after_a_new_type_appears(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    writers = [HistoryWriter(path, target="t", layout="native") for _ in range(2)]
    try:
        for n, writer in enumerate(writers):  # both know "email"
            writer.record(poll(1 + n / 10, ("email",)))
            writer.flush()
        for n, writer in enumerate(writers):  # then "sms" appears while both run
            writer.record(poll(2 + n / 10, ("email", "sms")))
            writer.flush()
        for n, writer in enumerate(writers):  # and both go on keeping their polls
            writer.record(poll(3 + n / 10, ("email", "sms")))
            writer.flush()
        assert [w.store.cost.errors for w in writers] == [0, 0]  # type: ignore[union-attr]
    finally:
        for writer in writers:
            writer.close()
    assert kept_times(path, "sms") == 4 and kept_times(path, "email") == 6
