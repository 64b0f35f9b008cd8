"""`queuetop load` as a user runs it: a finished run's JSON report, and Ctrl-C in the middle of one."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

from queuetop.cli import main
from queuetop.db import Database, parse_target
from queuetop.layouts import NATIVE
from queuetop.layouts.schema import init_schema

from .helpers import queue_rows


def fresh_sqlite(tmp_path) -> str:
    path = str(tmp_path / "load.db")
    with Database.open(parse_target(path), create=True) as db:
        init_schema(db, NATIVE)
    return path


def test_a_jobs_run_reports_json_and_exits_0(tmp_path, capsys):
    path = fresh_sqlite(tmp_path)
    status = main(["load", "--db", path, "--jobs", "150", "--rate", "unlimited", "--types", "email:2,report:1",
                   "--work", "fixed:1", "--fail", "0.1", "--consumers", "3", "--batch", "4", "--json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    report = json.loads(out)
    assert report["ok"] is True and report["duplicates"] == 0 and report["lost"] == 0
    assert report["enqueued"] == 150 == report["completed"] + report["dead"]
    assert {t["job_type"] for t in report["types"]} == {"email", "report"}
    assert report["wait_s"]["p50"] is not None and report["throughput_per_s"] > 0
    assert "150 enqueued" in err  # the final progress line


def test_the_embedded_default_is_created_on_first_use(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("QUEUETOP_DB", raising=False)
    assert main(["load", "--jobs", "20", "--rate", "unlimited", "--work", "fixed:0"]) == 0
    assert "OK: every job accounted for once" in capsys.readouterr().out


def test_ctrl_c_stops_within_seconds_and_leaves_no_claim(tmp_path):
    path = fresh_sqlite(tmp_path)
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONUNBUFFERED": "1"}
    # Slow jobs in batches, crashes and a 60 s lease: only a clean stop frees every claim at once.
    command = [sys.executable, "-m", "queuetop", "load", "--db", path, "--duration", "120", "--rate", "200",
               "--consumers", "4", "--batch", "5", "--work", "fixed:30", "--crash", "0.2", "--lease", "60", "--json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stderr is not None
        assert select.select([process.stderr], [], [], 20)[0], "no progress line within 20 s"
        first_line = process.stderr.readline()  # the progress line, once running
        assert first_line.startswith("load "), first_line + process.stderr.read()
        time.sleep(2.0)
        with Database.open(parse_target(path)) as db:
            assert any(row[1] is not None for row in queue_rows(db, NATIVE).values()), "nothing was claimed yet"
        process.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        out, err = process.communicate(timeout=15)
        took = time.monotonic() - interrupted
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert took < 5, f"took {took:.1f} s to stop"
    report = json.loads(out)
    assert report["interrupted"] is True and report["ok"] is True
    assert report["crashed"] > 0 and report["claimed"] == 0
    assert report["enqueued"] == report["completed"] + report["dead"] + report["pending"]
    with Database.open(parse_target(path)) as db:
        held = [job_id for job_id, row in queue_rows(db, NATIVE).items() if row[1] is not None]
    assert not held, f"{len(held)} claims were left to wait out their lease"
    assert "Traceback" not in err
