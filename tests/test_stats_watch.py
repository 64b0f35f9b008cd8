"""Scripts and pipes: `queuetop stats --watch SECONDS [--count N]` prints a table (or one JSON document a line)
per poll, and a shape whose throughput needs two polls has its rates from the second on; a poll that cannot read
the queue is a line that says so and the watch goes on; `queuetop` alone with stdout a pipe prints the figures
once instead of a dashboard nobody sees. Each command runs in a process of its own, its stdout a real pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from queuetop.cli import main, queue_commands

from .test_cli import assert_clean_failure, queuetop


def test_watch_prints_one_json_document_a_line_and_the_rates_that_need_two_polls_from_the_second(seed_file):
    result = queuetop("stats", "--db", str(seed_file), "--layout", "processed", "--table", "work_items",
                      "--watch", "0.2", "--count", "3", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(documents) == 3 and all(d["error"] is None for d in documents)
    assert len({d["taken_at"] for d in documents}) == 3  # three polls, not one printed three times
    rates = [d["totals"]["completions_10s_per_s"] for d in documents]
    assert rates[0] is None and rates[1] is not None and rates[2] is not None  # a first poll has no rate: null
    assert {d["totals"]["depth"] for d in documents} == {4}


def test_watch_prints_a_table_per_poll(seed_file):
    result = queuetop("stats", "--db", str(seed_file), "--layout", "processed", "--table", "work_items",
                      "--watch", "0.1", "--count", "2")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("TYPE") == 2 and result.stdout.count("(all)") == 2


def test_a_poll_that_cannot_read_the_queue_is_a_line_and_the_watch_goes_on(tmp_path):
    missing = str(tmp_path / "nothing.db")
    result = queuetop("stats", "--db", missing, "--layout", "processed", "--table", "work_items", "--watch", "0.1",
                      "--count", "2", "--json")  # fmt: skip
    assert result.returncode == 2
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(documents) == 2 and all(d["error"] and d["types"] == [] for d in documents)
    assert result.stderr.count("queuetop: error:") == 2 and "again in 0.1 s" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("options", "complaint"), [
    (("--count", "3"), "--count needs --watch"),
    (("--watch", "0"), "--watch must be from 0.1 to 3600 seconds, not 0"),
    (("--watch", "1", "--count", "0"), "--count must be 1 or more, not 0"),
    (("--watch", "1", "--format", "openmetrics"), "--watch prints tables or JSON lines, not OpenMetrics"),
])  # fmt: skip
def test_a_watch_asked_wrongly_is_one_line(seed_file, options, complaint):
    assert_clean_failure(queuetop("stats", "--db", str(seed_file), *options), complaint)


def test_queuetop_alone_into_a_pipe_prints_the_figures_once_and_ends(seed_file):
    # `queuetop | head`: no dashboard on a screen nobody sees, no process left running
    result = queuetop("--db", str(seed_file), "--layout", "processed", "--table", "work_items", "--interval", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1].startswith("TYPE") and "(all)" in result.stdout
    assert "stdout is not a terminal" in result.stderr
    piped = subprocess.run(f"{sys.executable} -m queuetop --db {seed_file} --layout processed --table work_items "
                           "| head -1", shell=True, capture_output=True, text=True, timeout=60,
                           env={**os.environ, "QUEUETOP_DB": ""})  # fmt: skip
    assert piped.stdout.startswith(str(seed_file)) and "Traceback" not in piped.stderr
    assert_clean_failure(queuetop("--db", str(seed_file), "--with-load"), "stdout is not a terminal")


def test_a_poll_slower_than_the_interval_never_asks_for_a_negative_sleep(seed_file, monkeypatch, capsys):
    """A poll that outlasts `--watch` starts the next one at once: the time left is never below zero, however the
    clock moved between reading it and sleeping (a loaded CI machine once made it -0.000001 s: ValueError)."""
    clock = iter(float(n) for n in range(10_000))  # each read of the clock a second later: every poll is "slow"
    slept: list[float] = []
    # The command's own clock only: the time module itself is every thread's (the database's, the watchdog's)
    monkeypatch.setattr(queue_commands, "time", SimpleNamespace(monotonic=lambda: next(clock), sleep=slept.append))
    code = main(["stats", "--db", str(seed_file), "--layout", "processed", "--table", "work_items",
                 "--watch", "0.1", "--count", "3"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert len(slept) == 2 and min(slept) >= 0
