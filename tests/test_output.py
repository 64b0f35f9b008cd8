"""What a script or a pipeline meets: a reader that leaves early (`| head`), a mistyped option, a JSON or
OpenMetrics document asked for when the database cannot be read — each ends the README's way, never with a
traceback or argparse's usage block."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .helpers import enqueue_into, native_queue_file
from .test_cli import assert_clean_failure, queuetop

UNREACHABLE = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=1;DATABASE=x;UID=ops;PWD={a}}b-secret}"


def piped_to_head(*args: str) -> subprocess.CompletedProcess:
    """`queuetop ARGS | head -c 1`: the reader leaves after one byte, with most of the output still to come."""
    command = [sys.executable, "-m", "queuetop", *args]
    env = {**os.environ, "QUEUETOP_DB": "", "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.read(1)
        process.stdout.close()  # the pipe's reader is gone: the next write meets EPIPE
        err = process.stderr.read().decode()
        process.wait(timeout=30)
    return subprocess.CompletedProcess(command, process.returncode, "", err)


@pytest.mark.parametrize(("args", "codes"), [
    (("layouts",), (0, 141)),
    (("--help",), (0, 141)),
    (("stats", "--db", "QUEUE"), (0, 141)),
    (("check", "--db", "QUEUE", "--max-depth", "0", "--for", "1s", "--interval", "0.2"), (1, 141)),  # 1: breached
], ids=lambda a: a[0] if isinstance(a, tuple) and isinstance(a[0], str) else "")  # fmt: skip
def test_a_reader_that_leaves_ends_the_command_quietly(args, codes, tmp_path):
    db = tmp_path / "q.db"
    native_queue_file(db)
    enqueue_into(db, "email", 40)
    for _ in range(3):  # it failed 10 of 10 times before: three tries are enough to see it
        result = piped_to_head(*[str(db) if a == "QUEUE" else a for a in args])
        assert result.returncode in codes and result.stderr == "", result.stderr


@pytest.mark.parametrize(("args", "phrases"), [
    (("enqueue", "--count", "abc"), ("--count takes a whole number, not 'abc'", "see `queuetop enqueue --help`")),
    (("stats", "--format", "xml"), ("--format takes one of 'table', 'json', 'openmetrics', not 'xml'",)),
    (("watch", "--interval", "fast"), ("--interval takes a number, not 'fast'", "see `queuetop watch --help`")),
    (("release", "--worker"), ("--worker needs a value",)),
    (("--bogus",), ("unrecognized arguments: --bogus", "see `queuetop --help`")),
    (("load", "--types", ""), ("--types is empty", "leave --types out for the default")),
])  # fmt: skip
def test_a_command_line_mistake_is_one_line_naming_the_option(args, phrases, tmp_path):
    result = queuetop(*args, "--db", str(tmp_path / "q.db"))
    assert_clean_failure(result, *phrases)
    assert "usage:" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize("command", [("stats", "--json"), ("workers", "--json")])
def test_a_json_document_comes_even_when_the_database_cannot_be_read(command):
    result = queuetop(*command, "--db", UNREACHABLE)
    assert result.returncode == 2
    document = json.loads(result.stdout)
    assert "cannot reach the database server" in document["error"]
    assert document["target"].endswith("PWD=***") and "secret" not in result.stdout + result.stderr
    assert document.get("totals", "absent") is None or document.get("workers") == []
    line = result.stderr.strip()
    assert line.startswith("queuetop: error: cannot reach") and "\n" not in line


def test_openmetrics_says_the_target_is_down_when_it_cannot_be_read(tmp_path):
    result = queuetop("stats", "--format", "openmetrics", "--db", str(tmp_path / "missing.db"))
    assert result.returncode == 2
    assert 'queuetop_up{target="default"} 0.0' in result.stdout and result.stdout.endswith("# EOF\n")
    assert "queuetop_depth{" not in result.stdout  # absent, never zero
    assert "the queue schema is missing" in result.stderr
