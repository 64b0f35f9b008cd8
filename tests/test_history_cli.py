"""`queuetop history` on real history files: each format, the level chosen, the types, and the errors."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from queuetop.cli import main
from queuetop.db import parse_target
from queuetop.layouts import NATIVE, load_layout
from queuetop.store.history_store import HistoryStore
from queuetop.store.model import history_path, layout_identity, target_identity
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats

START = datetime(2026, 11, 20, 3, 0, 0)


def keep_history(db: Path, seconds: int, layout=NATIVE) -> None:
    """What a dashboard on `db` would have kept: a poll a second, email's depth = the second, report idle."""
    target = parse_target(str(db))
    store = HistoryStore(history_path(target, layout), target=target_identity(target), layout=layout_identity(layout),
                         clock=layout.clock)  # fmt: skip
    for s in range(seconds):
        email = TypeStats("email", depth=s, oldest_age_s=2.5, claimed=1, arrivals_10s_per_s=0.5,
                          completions_10s_per_s=0.25, wait_p95_s=1.5)  # fmt: skip
        report = TypeStats("report", depth=0, claimed=0)
        store.write(Snapshot(taken_at=START + timedelta(seconds=s), target=str(db), dialect="sqlite", poll_ms=1.0,
                             window_s=60.0, types=(email, report), totals=TypeStats(TOTAL, depth=s, claimed=1)))
    store.close()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_csv_has_every_poll_of_the_last_hour_with_units_in_the_header(tmp_path: Path, capsys) -> None:
    db = tmp_path / "q.db"
    keep_history(db, 120)
    code, out, _ = run(capsys, "history", "--db", str(db), "--since", "30s", "--type", "email")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 31  # the newest poll and the 30 seconds before it, one row per poll
    assert rows[-1]["time"] == "2026-11-20T03:01:59.000Z" and rows[-1]["job_type"] == "email"
    assert rows[-1]["depth"] == "119" and rows[-1]["oldest_age_s"] == "2.5" and rows[-1]["wait_p95_s"] == "1.5"
    assert rows[-1]["wait_p50_s"] == "" and rows[-1]["polls"] == "1"  # unknown: empty, never 0


def test_json_reads_the_10_s_buckets_past_an_hour(tmp_path: Path, capsys) -> None:
    db = tmp_path / "q.db"
    keep_history(db, 3700)
    code, out, _ = run(capsys, "history", "--db", str(db), "--since", "2h", "--format", "json", "--type", TOTAL)
    assert code == 0
    data = json.loads(out)
    assert data["level"] == "10s" and data["bucket_s"] == 10.0 and data["layout"] == "native:queuetop.WorkQueue"
    first = data["rows"][0]
    assert first["time"] == "2026-11-20T03:00:00.000Z" and first["polls"] == 10 and first["depth"] == 4.5
    assert len(data["rows"]) == 369  # 3,700 s: 370 buckets, the last still open (its polls are in the raw level)


def test_markdown_is_a_table_for_incident_notes(tmp_path: Path, capsys) -> None:
    db = tmp_path / "q.db"
    keep_history(db, 30)
    code, out, _ = run(capsys, "history", "--db", str(db), "--since", "2s", "--format", "markdown")
    assert code == 0
    assert out.startswith(f"# queuetop history: {db.resolve()} (native:queuetop.WorkQueue)")
    assert "| time | type | depth | oldest | claimed | timed-out | dead | in/s | out/s | wait p50/p95/p99 |" in out
    assert "| 2026-11-20T03:00:29.000Z | email | 29 | 2.5s | 1 | 0 | 0 | 0.5 | 0.25 | — / 1.5s / — |" in out
    assert "| 2026-11-20T03:00:29.000Z | all types | 29 |" in out


def test_level_can_be_chosen(tmp_path: Path, capsys) -> None:
    db = tmp_path / "q.db"
    keep_history(db, 200)
    code, out, _ = run(capsys, "history", "--db", str(db), "--level", "1m", "--type", "email")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["time"], r["polls"], r["depth"]) for r in rows] == [
        ("2026-11-20T03:00:00.000Z", "60", "29.5"), ("2026-11-20T03:01:00.000Z", "60", "89.5"),
        ("2026-11-20T03:02:00.000Z", "60", "149.5")]  # fmt: skip
    code, _, err = run(capsys, "history", "--db", str(db), "--level", "5m")
    assert code == 2 and "--level must be one of raw, 10s, 1m" in err


def test_errors_name_what_is_wrong_and_what_to_do(tmp_path: Path, capsys) -> None:
    db = tmp_path / "q.db"
    code, _, err = run(capsys, "history", "--db", str(db))
    assert code == 2 and "no history kept for" in err and "queuetop watch" in err
    keep_history(db, 5)
    code, _, err = run(capsys, "history", "--db", str(db), "--type", "nope")
    assert code == 2 and "no history of job type 'nope'" in err and "known: (all), email, report" in err
    code, _, err = run(capsys, "history", "--db", str(db), "--since", "yesterday")
    assert code == 2 and "--since must be a duration such as 90s, 15m, 2h or 7d, not 'yesterday'" in err
    keep_history(db, 5, load_layout("work_queue"))
    code, _, err = run(capsys, "history", "--db", str(db))
    assert code == 2 and "several histories kept" in err and "native, work_queue" in err and "--layout" in err
    code, out, _ = run(capsys, "history", "--db", str(db), "--layout", "work_queue")
    assert code == 0 and out.count("\n") == 1 + 3 * 5


def test_watch_help_says_where_the_history_lives(capsys, history_dir: Path) -> None:
    with pytest.raises(SystemExit):
        main(["watch", "--help"])
    out = capsys.readouterr().out
    assert str(history_dir) in out and "--no-history" in out and "queuetop history" in out


def test_watch_keeps_history_in_the_data_directory_unless_told_not_to(
        tmp_path: Path, history_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    import queuetop.tui

    seen: list[dict] = []
    monkeypatch.setattr(queuetop.tui, "run_dashboard", lambda target, **kwargs: seen.append(kwargs) or 0)
    db = str(tmp_path / "q.db")
    assert main(["watch", "--db", db]) == 0
    assert seen[-1]["history_path"].parent == history_dir and seen[-1]["history_path"].name.startswith("q.native.")
    assert main(["watch", "--db", db, "--no-history"]) == 0
    assert seen[-1]["history_path"] is None
    assert main(["watch", "--db", db, "--history-keep", "raw:2h,10s:2d"]) == 0
    assert seen[-1]["retention"].spec() == "raw:2h,10s:2d"


def test_a_bad_history_keep_is_refused_before_the_dashboard_starts(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "watch", "--db", str(tmp_path / "q.db"), "--history-keep", "raw:1h,2h:7d")
    assert code == 2 and "history retention: 2h buckets must be from 1 s to the raw polls' 1h" in err


def test_a_damaged_history_file_is_named_with_how_to_move_it_away(tmp_path: Path, capsys, history_dir: Path) -> None:
    db = tmp_path / "q.db"
    keep_history(db, 3)
    (kept,) = history_dir.glob("*.sqlite3")
    kept.write_bytes(b"not a database, a disk that lost its blocks" * 100)
    code, out, err = run(capsys, "history", "--db", str(db))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"the history file {kept} is damaged" in err and f"mv {kept} {kept}.damaged" in err
