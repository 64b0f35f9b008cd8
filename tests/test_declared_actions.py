"""Writes that must never happen: a layout that does not declare an action is refused it, in one line naming the
missing section, before any SQL is sent — on a hand-written layout for a library's table (procrastinate's
`procrastinate_jobs`, made here without its NOT NULL constraints, so only queuetop can keep a garbage row out).
And `dead count` counts what `stats` reports as dead, on every layout. Real SQLite files and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from queuetop.act.shape_queue import ShapeQueue
from queuetop.act.shape_worker import check_claim_form
from queuetop.act.workers import make_available
from queuetop.db import Database, UsageError, parse_target
from queuetop.db.dialects import PostgresDialect, SQLiteDialect
from queuetop.db.recording import StatementRecorder
from queuetop.layouts import ACTIONS, PRESET_NAMES, load_layout, with_tables
from tests import forked_cli
from tests.conftest import PG_TARGET

# procrastinate's table as a user would describe it by hand: what it watches, nothing about how to write it.
LAYOUT = """
[tables]
queue = "procrastinate_jobs"
[queue_columns]
id = "id bigint"
type = "task_name varchar(128)"
info = "args text"
available = "scheduled_at datetime"
attempts = "attempts int"
finished = "status varchar(16)"
[states]
pending = "finished = 'todo' and available <= now"
scheduled = "finished = 'todo' and available > now"
claimed = "finished = 'doing'"
dead = "finished = 'failed'"
"""
DDL = ("CREATE TABLE {t} (id {serial}, queue_name varchar(128), task_name varchar(128), args text, "
       "status varchar(16), scheduled_at timestamp, attempts integer)")  # fmt: skip


@dataclass
class Library:
    db_text: str
    table: str  # as --table takes it
    layout_file: Path

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "QUEUETOP_DB": "", "QUEUETOP_LAYOUT": ""}
        return forked_cli.run([*args, "--db", self.db_text, "--layout", str(self.layout_file), "--table", self.table],
                              env=env, timeout=60)  # fmt: skip

    def open(self) -> Database:
        return Database.open(parse_target(self.db_text))

    def rows(self) -> list[tuple]:
        with self.open() as db:
            name = self.table.split(".")
            table = ".".join(db.dialect.quote(part) for part in name)
            return [tuple(r) for r in db.fetchall(f"SELECT task_name, status FROM {table} ORDER BY id")]


@pytest.fixture(params=["sqlite", "postgres"])
def library(request, tmp_path: Path) -> Iterator[Library]:
    layout_file = tmp_path / "procrastinate.toml"
    layout_file.write_text(LAYOUT)
    if request.param == "sqlite":
        made = Library(str(tmp_path / "app.db"), "procrastinate_jobs", layout_file)
        with Database.open(parse_target(made.db_text), create=True) as db:
            db.execute(DDL.format(t="procrastinate_jobs", serial="INTEGER PRIMARY KEY"))
            db.execute("INSERT INTO procrastinate_jobs (task_name, status, scheduled_at, attempts) VALUES "
                       "('email', 'failed', '2020-01-01', 3), ('email', 'failed', '2020-01-01', 3), "
                       "('email', 'failed', '2020-01-01', 3), ('sms', 'todo', '2099-01-01', 0)")  # fmt: skip
        yield made
        return
    schema = f"qt_{uuid.uuid4().hex[:12]}"
    made = Library(PG_TARGET, f"{schema}.procrastinate_jobs", layout_file)
    with made.open() as db:
        db.execute(f"CREATE SCHEMA {schema}")
        db.execute(DDL.format(t=f"{schema}.procrastinate_jobs", serial="bigserial PRIMARY KEY"))
        db.execute(f"INSERT INTO {schema}.procrastinate_jobs (task_name, status, scheduled_at, attempts) VALUES "
                   "('email', 'failed', '2020-01-01', 3), ('email', 'failed', '2020-01-01', 3), "
                   "('email', 'failed', '2020-01-01', 3), ('sms', 'todo', '2099-01-01', 0)")  # fmt: skip
    yield made
    with made.open() as db:
        db.execute(f"DROP SCHEMA {schema} CASCADE")


def refused(result: subprocess.CompletedProcess, section: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert f"declares no {section} section" in lines[0] and "Traceback" not in result.stderr


def test_every_write_a_layout_does_not_declare_is_refused_and_nothing_is_written(library: Library) -> None:
    before = library.rows()
    refused(library.cli("enqueue", "--type", "email"), "[enqueue]")
    refused(library.cli("enqueue", "--type", "email", "--count", "10", "--info", "{}"), "[enqueue]")
    refused(library.cli("dead", "retry", "--yes"), "[dead_retry]")
    refused(library.cli("dead", "delete", "--yes"), "[dead_retry]")
    release = library.cli("release")
    assert release.returncode == 2 and "declares no [release] section" in release.stderr
    load = library.cli("load", "--duration", "1")
    assert load.returncode == 2 and "[claim]" in load.stderr
    assert library.rows() == before  # not one row made up, changed or removed
    with library.open() as db:
        layout = with_tables(load_layout(str(library.layout_file)), library.table)
        with pytest.raises(UsageError, match=r"declares no \[make_available\] section"):
            make_available(db, layout, None)
    assert library.rows() == before


def test_dead_count_counts_what_stats_reports_as_dead(library: Library) -> None:
    stats = library.cli("stats", "--json")
    assert stats.returncode == 0, stats.stderr
    dead_in_stats = json.loads(stats.stdout)["totals"]["dead"]
    assert dead_in_stats == 3
    count = library.cli("dead", "count")
    assert count.returncode == 0, count.stderr
    assert "3 dead job(s)" in count.stdout


@pytest.mark.parametrize("dialect", [SQLiteDialect(), PostgresDialect()], ids=["sqlite", "postgres"])
def test_no_statement_is_sent_for_an_undeclared_write(dialect, tmp_path: Path) -> None:
    layout_file = tmp_path / "procrastinate.toml"
    layout_file.write_text(LAYOUT)
    layout = load_layout(str(layout_file))
    recorder = StatementRecorder(dialect)
    for call in (lambda q: q.enqueue_many("email", 10), lambda q: q.dead("retry"), lambda q: q.dead("delete"),
                 lambda q: q.release()):  # fmt: skip
        with pytest.raises(UsageError):
            call(ShapeQueue(recorder, layout))  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        make_available(recorder, layout)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="describes no dequeue"):
        check_claim_form(layout, None)
    assert recorder.statements == []


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_preset_declares_what_it_does_and_dead_count_follows_stats(preset: str) -> None:
    layout = load_layout(preset)
    # every seed's preset says how the seed inserts; a job library's declares nothing but, where the library
    # documents one, an enqueue through its own function: never an INSERT into a library's table
    assert (layout.refusal("enqueue") is None) == (layout.library is None or layout.enqueue_call is not None)
    if layout.library:
        assert layout.declares == (frozenset({"enqueue"}) if layout.enqueue_call else frozenset())
        assert not layout.enqueue_fields and not layout.enqueue_constants
    assert (layout.refusal("release") is None) == (layout.release is not None)  # native declares it too
    assert (layout.refusal("load") is None) == (layout.claim is not None)
    # where stats can report dead jobs, `dead count` counts them: it needs the dead state only
    recorder = StatementRecorder(SQLiteDialect(), one=(0,))
    queue = ShapeQueue(recorder, layout)  # type: ignore[arg-type]
    if layout.provides["dead"]:
        assert queue.dead("count") == 0 and len(recorder.statements) == 1
    else:
        with pytest.raises(UsageError, match="no dead jobs"):
            queue.dead("count")
    assert set(ACTIONS) >= layout.declares


def test_a_load_needs_the_enqueue_its_producers_write_with(tmp_path: Path) -> None:
    own = tmp_path / "claims_only.toml"  # seed 002's table with its dequeue described, but not its insert
    own.write_text('[tables]\nqueue = "work_queue"\n[queue_columns]\nid = "work_queue_id int"\n'
                   'finished = "processed_flag bit"\n[states]\npending = "finished = 0"\n'
                   '[claim]\nforms = ["update_top"]\nset = { finished = 1 }\n')
    with pytest.raises(UsageError, match=r"declares no \[enqueue\] section"):
        check_claim_form(load_layout(str(own)), None)
