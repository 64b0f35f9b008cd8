"""Watching never changes the watched database: a SQLite file queuetop did not make keeps its journal mode through
every command; a file queuetop makes itself is WAL; `doctor` says when WAL would help. Real files, the real CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from . import forked_cli


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QUEUETOP_DB": "", "QUEUETOP_LAYOUT": ""}
    return forked_cli.run(args, env=env, timeout=60)


def journal_mode(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return db.execute("PRAGMA journal_mode").fetchone()[0]


def test_a_file_in_delete_mode_keeps_it_through_init_enqueue_stats_and_doctor(tmp_path: Path) -> None:
    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as db:  # someone else's database, in SQLite's default mode
        db.execute("CREATE TABLE other (x INTEGER)")
    assert journal_mode(path) == "delete"
    for args in (("init",), ("enqueue", "--type", "email", "--count", "3"), ("stats",), ("release", "--dry-run")):
        result = cli(*args, "--db", str(path))
        assert result.returncode == 0, result.stderr
        assert journal_mode(path) == "delete", args
    doctor = cli("doctor", "--json", "--sample", "0", "--db", str(path))
    assert journal_mode(path) == "delete"
    found = {f["check"]: f for f in json.loads(doctor.stdout)["findings"]}
    assert found["journal mode"]["status"] == "warn" and "PRAGMA journal_mode = WAL" in found["journal mode"]["fix"]


def test_a_file_queuetop_creates_is_wal_and_doctor_says_so(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    assert cli("init", "--db", str(path)).returncode == 0
    assert journal_mode(path) == "wal"
    doctor = cli("doctor", "--json", "--sample", "0", "--db", str(path))
    found = {f["check"]: f for f in json.loads(doctor.stdout)["findings"]}
    assert found["journal mode"]["status"] == "ok"
