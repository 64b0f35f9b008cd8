"""The `queuetop` command as users run it (a process of its own, `forked_cli`): outputs, JSON shape, and every
error case as one clear line on stderr with exit code 2, no traceback, and the queue unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from queuetop.act.queue import Queue
from queuetop.db import Database, SchemaMissing, parse_target

from . import forked_cli
from .conftest import PG_TARGET, _fresh_layout
from .helpers import completed_rows, enqueue_into, native_queue_file, queue_rows


def queuetop(*args: str, env_extra: dict | None = None, home=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "QUEUETOP_DB": "", **(env_extra or {})}
    if home is not None:
        env["XDG_DATA_HOME"] = str(home)
    return forked_cli.run(args, env=env, timeout=60)


def test_python_m_queuetop_and_the_installed_script_are_the_command(tmp_path):
    """What `forked_cli` skips, run whole: the interpreter starting `python -m queuetop` and the console script
    `pip install` made, each to its exit code (0 done, 2 a user's mistake) and its output."""
    env = {**os.environ, "QUEUETOP_DB": "", "XDG_DATA_HOME": str(tmp_path)}
    for command in ([sys.executable, "-m", "queuetop"], [str(Path(sys.executable).parent / "queuetop")]):
        done = subprocess.run([*command, "enqueue", "--type", "email"], capture_output=True, text=True, env=env,
                              timeout=60)  # fmt: skip
        assert done.returncode == 0 and done.stdout.startswith("enqueued 1 job of type 'email'"), done
        wrong = subprocess.run([*command, "stats", "--interval", "soon"], capture_output=True, text=True, env=env,
                               timeout=60)  # fmt: skip
        assert_clean_failure(wrong, "--interval")
        assert wrong.stdout == ""


def assert_clean_failure(result: subprocess.CompletedProcess, *phrases: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    line = result.stderr.strip()
    assert line.startswith("queuetop: error: ") and "\n" not in line, line
    for phrase in phrases:
        assert phrase in line, line


@pytest.fixture
def queue_file(tmp_path):
    path = tmp_path / "q.db"
    native_queue_file(path)
    return path


def snapshot_of_tables(path) -> tuple:
    with Database.open(parse_target(str(path))) as db:
        from queuetop.layouts import NATIVE

        return queue_rows(db, NATIVE), completed_rows(db, NATIVE)


def test_embedded_default_is_created_on_first_use(tmp_path):
    result = queuetop("enqueue", "--type", "email", "--count", "3", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "enqueued 3 jobs of type 'email': ids 1, 2, 3"
    assert (tmp_path / "queuetop" / "queuetop.db").exists()
    table = queuetop("stats", home=tmp_path).stdout
    assert "email" in table and "(all)" in table


def test_init_says_what_it_created_then_what_it_found(tmp_path):
    first = queuetop("init", "--db", str(tmp_path / "new.db"))
    second = queuetop("init", "--db", str(tmp_path / "new.db"))
    assert first.returncode == second.returncode == 0
    assert "created  table  WorkQueue" in first.stdout and "10 object(s) created" in first.stdout
    assert "exists   table  WorkQueue" in second.stdout and "nothing to do" in second.stdout


def test_enqueue_many_prints_the_range_and_stats_json_has_the_documented_shape(queue_file):
    result = queuetop("enqueue", "--db", str(queue_file), "-t", "report", "-n", "250", "--priority", "7")
    assert result.stdout.strip() == "enqueued 250 jobs of type 'report': ids 1..250"
    data = json.loads(queuetop("stats", "--db", str(queue_file), "--json").stdout)
    assert set(data) == {"taken_at", "target", "dialect", "poll_ms", "window_s", "error", "types", "totals", "layout",
                         "clock", "figures", "cannot_know", "reads", "library", "counted_s_ago"}
    assert data["cannot_know"] == {"lost": "no lost state"}  # native: lost is the requests seed's alone
    assert data["counted_s_ago"] is None  # counted by this poll (the native depth is tracked, never spaced)
    assert data["library"] is None  # queuetop's own tables: no library's words
    (row,) = data["types"]
    assert row["job_type"] == "report" and row["depth"] == 250 and row["claimed"] == 0
    assert {"oldest_age_s", "arrivals_10s_per_s", "completions_60s_per_s", "wait_p95_s", "processing_p99_s",
            "drain", "drain_eta_s", "depth_is_estimate"} <= set(row)  # fmt: skip
    assert data["totals"]["depth"] == 250 and data["dialect"] == "sqlite"


def test_release_dry_run_then_release(queue_file):
    with Database.open(parse_target(str(queue_file))) as db:
        queue = Queue(db)
        queue.enqueue_many("email", 2)
        queue.claim("w", batch=2, lease=0.001)
    import time

    time.sleep(0.05)
    dry = queuetop("release", "--db", str(queue_file), "--dry-run")
    assert "2 claim(s) past their timeout would be released (dry run: nothing changed)" in dry.stdout
    real = queuetop("release", "--db", str(queue_file), "--type", "email")
    assert ("released 2 timed-out claim(s) of type 'email' back to pending; "
            "0 out of attempts moved to dead") in real.stdout
    assert "nothing to release" in queuetop("release", "--db", str(queue_file)).stdout


@pytest.mark.parametrize(
    ("args", "phrases"),
    [
        (["enqueue", "-t", "email", "--count", "0"], ["count must be a whole number from 1"]),
        (["enqueue", "-t", "email", "--priority", "300"], ["priority must be a whole number from 0"]),
        (["enqueue", "-t", "", "--count", "2"], ["the job type is empty"]),
        (["enqueue", "-t", "email", "--delay", "-5"], ["--delay must be zero or more"]),
        (["release", "--type", "emial"], ["no such job type 'emial' (did you mean 'email'?)",
                                          "of the newest jobs in the queue: email"]),
        (["stats", "--type", "emial"], ["no such job type 'emial' (did you mean 'email'?)"]),
        (["stats", "--type", "emial", "--json"], ["did you mean 'email'?"]),  # a mistake, not "could not read"
        (["dead", "retry", "--type", "emial", "--yes"], ["did you mean 'email'?"]),
        (["watch", "--type", "emial"], ["did you mean 'email'?"]),  # before the dashboard starts
        (["watch", "--interval", "0"], ["--interval must be from 0.1 to 3600"]),
        (["watch", "--max-types", "-1"], ["--max-types must be 0 (every job type) or more, not -1"]),
    ],
)
def test_bad_arguments_fail_cleanly_and_change_nothing(queue_file, args, phrases):
    enqueue_into(queue_file, "email", 2)
    before = snapshot_of_tables(queue_file)
    assert_clean_failure(queuetop(*args, "--db", str(queue_file)), *phrases)
    assert snapshot_of_tables(queue_file) == before


def test_a_type_merely_idle_is_no_mistake_its_figures_are_zero(queue_file):
    enqueue_into(queue_file, "email", 2)
    idle = queuetop("stats", "--db", str(queue_file), "--type", "sms", "--json")  # close to no type the queue has
    assert idle.returncode == 0, idle.stderr
    assert queuetop("release", "--db", str(queue_file), "--type", "sms").returncode == 0


def test_argparse_mistakes_exit_2_in_one_line():
    result = queuetop("enqueue", "--type", "x", "--count", "three")
    assert_clean_failure(result, "--count takes a whole number, not 'three'", "see `queuetop enqueue --help`")


def test_a_native_enqueue_without_a_type_says_so(queue_file):
    result = queuetop("enqueue", "--db", str(queue_file), "--count", "3")
    assert result.returncode == 2 and "layout native needs a job type (name it with --type T)" in result.stderr


@pytest.mark.parametrize(
    ("target", "phrases"),
    [
        ("DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=1;DATABASE=x;UID=postgres",
         ["cannot reach the database server", "check SERVER and PORT"]),
        ("DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=5432;DATABASE=queuetop_test;UID=nosuchrole;PWD=s3cret",
         ["the server refused the login", "check UID and PWD"]),
        ("DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=5432;DATABASE=no_such_db;UID=postgres",
         ["the database does not exist", "fix DATABASE="]),
        ("DRIVER={No Such Driver};SERVER=x", ["the ODBC driver 'No Such Driver' is not installed"]),
        ("DRIVER={MariaDB Unicode};SERVER=127.0.0.1;PORT=3306;DATABASE=test;UID=root",
         ["unsupported database 'MariaDB'", "SQL Server, PostgreSQL and SQLite"]),
        ("queue.txt", ["cannot tell what database 'queue.txt' names"]),
    ],
)
def test_connection_problems_are_one_clear_line(target, phrases):
    result = queuetop("stats", "--db", target)
    assert_clean_failure(result, *phrases)
    assert "s3cret" not in result.stderr


def test_missing_schema_says_run_init(tmp_path):
    assert_clean_failure(queuetop("stats", "--db", str(tmp_path / "absent.db")), "run `queuetop init`")
    empty = tmp_path / "empty.db"
    Database.open(parse_target(str(empty)), create=True).close()
    assert_clean_failure(queuetop("enqueue", "-t", "x", "--db", str(empty)), "schema is missing", "queuetop init")


def test_missing_schema_on_postgres_says_run_init():
    from queuetop.watch.collector import collector_for

    with Database.open(parse_target(PG_TARGET)) as db, pytest.raises(SchemaMissing, match="run `queuetop init`"):
        collector_for(db, _fresh_layout()).poll()


def test_debug_shows_the_traceback(tmp_path):
    result = queuetop("stats", "--debug", "--db", str(tmp_path / "absent.db"))
    assert result.returncode == 2 and "Traceback" in result.stderr and "SchemaMissing" in result.stderr


def test_the_environment_names_the_target(queue_file):
    result = queuetop("stats", "--json", env_extra={"QUEUETOP_DB": str(queue_file)})
    assert json.loads(result.stdout)["target"] == str(queue_file)


@pytest.mark.postgres
def test_a_schema_qualified_table_is_that_schemas_table_not_the_first_of_its_name(tmp_path):
    """Two schemas each with a WorkQueue (two apps on one server, or two tests at once): `--table b.WorkQueue`
    watches b's, never whichever the catalog lists first."""
    from .conftest import PG_TARGET, drop_backend, make_backend

    first, second = make_backend("postgres", tmp_path), make_backend("postgres", tmp_path)
    try:
        for backend, count in ((first, 3), (second, 5)):
            with backend.open() as db:
                Queue(db, backend.layout).enqueue_many("email", count)
        for backend, count in ((first, 3), (second, 5)):
            table = f"{backend.layout.schema}.{backend.layout.queue_table}"
            result = queuetop("stats", "--json", "--db", PG_TARGET, "--table", table)
            assert result.returncode == 0, result.stderr
            assert json.loads(result.stdout)["totals"]["depth"] == count, (table, result.stderr)
        missing = queuetop("stats", "--db", PG_TARGET, "--table", f"{first.layout.schema}_gone.WorkQueue")
        assert_clean_failure(missing, f"table {first.layout.schema}_gone.WorkQueue not found", "queuetop detect")
    finally:
        drop_backend(first)
        drop_backend(second)
