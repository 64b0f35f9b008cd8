"""Rows in no state: a row that none of a layout's conditions accounts for (a status value its states do not name)
is counted apart, per type, and shown — in `stats` (JSON, the table and its note), the exporter and the dashboard
— never dropped, and a type whose only rows are such still has its row. A layout's `ended` says which rows ended
and stay, so they are not. On a real SQLite file; the real libraries are in tests/libraries (procrastinate's
legacy 'aborting', dramatiq-pg's done messages)."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from queuetop.cli import main
from queuetop.core.errors import UsageError
from queuetop.db import Database, parse_target
from queuetop.db.diagnostics import diagnostics_for
from queuetop.layouts import Layout, layout_from_toml, with_tables
from queuetop.layouts.sql import Statements
from queuetop.serve.exporter import TargetState, exposition
from queuetop.watch import recount, unaccounted
from queuetop.watch.collector import ShapeCollector
from queuetop.watch.monitor import CONNECTED, PollOutcome
from queuetop.watch.unaccounted import InNoState

from .conftest import PG_TARGET
from .test_cli import queuetop

LAYOUT = """
[tables]
queue = "jobs"
[queue_columns]
id = "id bigint"
type = "kind"
status = "status"
[states]
pending = "status = 'todo'"
claimed = "status = 'doing'"
dead = "status = 'failed'"
"""
ROWS = [("report", "todo"), ("report", "todo"), ("report", "paused"), ("report", "doing"), ("ghost", "paused"),
        ("ghost", "paused"), ("email", "failed"), ("email", None)]  # fmt: skip


@pytest.fixture
def queue(tmp_path: Path) -> tuple[Path, Path]:
    path = tmp_path / "q.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT, status TEXT)")
        connection.executemany("INSERT INTO jobs (kind, status) VALUES (?, ?)", ROWS)
    layout = tmp_path / "layout.toml"
    layout.write_text(LAYOUT)
    return path, layout


def test_stats_counts_the_rows_no_state_names_and_keeps_the_type_that_has_only_those(queue):
    path, layout = queue
    result = queuetop("stats", "--json", "--db", str(path), "--layout", str(layout))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    rows = {t["job_type"]: (t["depth"], t["claimed"], t["dead"], t["in_no_state"]) for t in data["types"]}
    # a NULL status is in no state either: no condition holds for it
    assert rows == {"report": (2, 1, 0, 1), "ghost": (0, 0, 0, 2), "email": (0, 0, 1, 1)}
    assert data["totals"]["in_no_state"] == 4
    table = queuetop("stats", "--db", str(path), "--layout", str(layout)).stdout.splitlines()
    assert "NO STATE" in table[1] and table[-1].startswith("NO STATE: 4 rows in none of layout layout's states")


def test_rows_a_layout_says_ended_are_in_no_state_no_more(queue):
    path, layout = queue
    layout.write_text("ended = \"status = 'paused' or status is null\"\n" + LAYOUT)
    result = queuetop("stats", "--json", "--db", str(path), "--layout", str(layout))
    assert {t["job_type"]: t["in_no_state"] for t in json.loads(result.stdout)["types"]} == {"report": 0, "email": 0}
    assert "NO STATE" not in queuetop("stats", "--db", str(path), "--layout", str(layout)).stdout  # none: no column


def test_ended_is_a_condition_of_the_queue_table_checked_as_it_is_read():
    with pytest.raises(UsageError, match="ended mentions nothing"):
        layout_from_toml("mine", "ended = \"nothing = 'x'\"\n" + LAYOUT)


TIMED = LAYOUT.split("[states]")[0] + """timeout = "lease_until"
[states]
pending = "status = 'todo'"
claimed = "status = 'doing' and timeout >= now"
timed_out = "status = 'doing' and timeout < now"
"""  # LAYOUT's table and columns, and a lease whose two sides split the claims


def test_a_row_null_where_two_states_split_is_in_neither(tmp_path):
    """Conditions that begin alike are tested as one (`status = 'doing' AND (timeout >= now OR timeout < now)`):
    a row whose timeout is NULL meets neither, so it is in no state, not taken for held by that shared beginning."""
    path = tmp_path / "timed.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT, status TEXT, lease_until TEXT)")
        connection.executemany("INSERT INTO jobs (kind, status, lease_until) VALUES ('report', ?, "
                               "strftime('%Y-%m-%d %H:%M:%f', 'now', ?))",
                               [("doing", "+1 hour"), ("doing", "-1 hour"), ("doing", None), ("todo", None)])
    layout = layout_from_toml("timed", TIMED)
    with Database.open(parse_target(str(path)), purpose="monitor") as db:
        totals = ShapeCollector(db, layout, first_count_wait_s=None).poll().totals
    assert (totals.depth, totals.claimed, totals.timed_out, totals.in_no_state) == (1, 1, 1, 1)


def test_later_counts_run_off_the_poll_and_a_failed_one_keeps_the_last(queue):
    path, _ = queue
    layout = layout_from_toml("mine", LAYOUT)
    with Database.open(parse_target(str(path)), purpose="monitor") as db:
        counter = InNoState(Statements(db.dialect, layout), dict(layout.settings), "jobs")
        assert counter.of(["ghost"]) is None  # not counted yet: unknown, not 0
        counter.step(db, 0.0, str, wait_s=None)  # a one-shot look waits for it
        assert (counter.of(["ghost"]), counter.of(["report", "email"])) == (2, 2)
        db.execute("UPDATE jobs SET status = 'todo' WHERE kind = 'ghost'")
        counter.step(db, 1.0, str)  # the next count is not due for a minute
        counter.settle()
        assert counter.of(["ghost"]) == 2
        counter.step(db, 120.0, str)  # due: started on a connection of its own
        counter.settle()
        counter.step(db, 121.0, str)  # taken at the next poll
        assert (counter.of(["ghost"]), counter.counts) == (0, {"report": 1, "email": 1})


def test_the_exporter_has_the_rows_in_no_state_per_type(queue):
    path, _ = queue
    with Database.open(parse_target(str(path)), purpose="monitor") as db:
        snapshot = ShapeCollector(db, layout_from_toml("mine", LAYOUT), first_count_wait_s=None).poll()

    text = exposition([TargetState("local", PollOutcome(CONNECTED, snapshot), 0.01)])
    assert 'queuetop_in_no_state{job_type="ghost",layout="mine",target="local"} 2.0' in text


def test_a_first_poll_that_waits_for_the_count_begins_it_before_its_own_statements(queue, monkeypatch):
    """`stats` waits for the count of the rows in no state: begun as the poll begins, it reads the table beside the
    poll's own statements (on a connection of its own), not after them."""
    path, _ = queue
    events: list[str] = []
    start = recount.BackgroundCount.start
    monkeypatch.setattr(recount.BackgroundCount, "start", lambda job: (events.append("count"), start(job))[1])
    with Database.open(parse_target(str(path)), purpose="monitor") as db:
        fetchall = db.fetchall
        monkeypatch.setattr(db, "fetchall", lambda sql, params=(): (events.append("poll"), fetchall(sql, params))[1])
        snapshot = ShapeCollector(db, layout_from_toml("mine", LAYOUT), first_count_wait_s=None).poll()
    # after one read only: the catalog's guess of the table's size (small: the poll waits for its count)
    assert events.index("count") == 1 and events.count("count") == 1 and events.count("poll") >= 2
    assert snapshot.totals.in_no_state == 4  # waited for: ghost's two, report's paused one, email's NULL


BIG = 150_000  # rows: past FIRST_WAIT_UP_TO_ROWS, and a count of them still ends well within FIRST_WAIT_S


@pytest.fixture(params=["sqlite", "postgres"])
def big_queue(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Layout]]:
    """BIG rows of one type, one of them in no state, in a table the catalog knows the size of."""
    if request.param == "sqlite":
        target, table = str(tmp_path / "big.db"), "jobs"
    else:
        target, table = PG_TARGET, f"qt_{uuid.uuid4().hex[:12]}.jobs"
    with Database.open(parse_target(target), create=True) as db:
        if request.param == "postgres":
            db.execute(f"CREATE SCHEMA {table.split('.')[0]}")
        db.execute(f"CREATE TABLE {table} (id bigint PRIMARY KEY, kind varchar(20), status varchar(20))")
        db.execute(f"""WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {BIG})
                       INSERT INTO {table} (id, kind, status)
                       SELECT i, 'report', CASE WHEN i = 7 THEN 'paused' ELSE 'doing' END FROM n""")
        db.execute(f"ANALYZE {table}")
    yield target, with_tables(layout_from_toml("mine", LAYOUT), table)
    if request.param == "postgres":
        with Database.open(parse_target(target)) as db:
            db.execute(f"DROP SCHEMA {table.split('.')[0]} CASCADE")


def test_the_first_poll_waits_for_the_count_only_where_the_table_is_small_enough(big_queue, monkeypatch):
    target, layout = big_queue
    with Database.open(parse_target(target), purpose="monitor") as db:
        assert diagnostics_for(db.dialect).estimated_rows(db, layout.schema, layout.queue_table) == BIG
        # a dashboard's first poll: the catalog says the table is past what a count reads while it waits
        first = ShapeCollector(db, layout).poll()
        assert first.totals.in_no_state is None and first.totals.claimed == BIG - 1
        monkeypatch.setattr(unaccounted, "FIRST_WAIT_UP_TO_ROWS", BIG)  # the same table, deemed small
        assert ShapeCollector(db, layout).poll().totals.in_no_state == 1


def big_queue_args(big_queue: tuple[str, Layout], tmp_path: Path) -> list[str]:
    """The command line's words that name `big_queue`: its target, LAYOUT as a file, its table."""
    target, layout = big_queue
    (file := tmp_path / "mine.toml").write_text(LAYOUT)
    return ["--db", target, "--layout", str(file),
            "--table", f"{layout.schema}.{layout.queue_table}" if layout.schema else layout.queue_table]


@pytest.fixture
def counts_started(monkeypatch: pytest.MonkeyPatch) -> list[recount.BackgroundCount]:
    """Every count off the poll started from here on (and none run)."""
    started: list[recount.BackgroundCount] = []
    monkeypatch.setattr(recount.BackgroundCount, "start", lambda job: started.append(job))
    return started


def test_stats_leaves_a_big_tables_rows_in_no_state_to_exact(big_queue, tmp_path, monkeypatch, capsys,
                                                              counts_started):  # fmt: skip
    """`stats` on a table past what a count reads in a moment: its rows in no state are not counted (null, and the
    table says so) and no count is left running on the server; `--exact` counts them."""
    stats = ["stats", *big_queue_args(big_queue, tmp_path)]
    assert main([*stats, "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert (totals["in_no_state"], totals["claimed"], counts_started) == (None, BIG - 1, [])
    monkeypatch.undo()
    assert queuetop(*stats).stdout.splitlines()[-1].startswith("NO STATE: not counted")
    assert json.loads(queuetop(*stats, "--exact", "--json").stdout)["totals"]["in_no_state"] == 1


def test_a_check_of_a_big_table_leaves_no_count_running(big_queue, tmp_path, capsys, counts_started):
    """`check` polls once by default (cron, CI): on a table past what a count reads in a moment it must not start
    the count of its rows in no state and exit, leaving the scan running on the server. Its first poll starts no
    count off the poll; the second would."""
    assert main(["check", *big_queue_args(big_queue, tmp_path), "--slo", "max_depth=1000000"]) == 0
    assert "ok" in capsys.readouterr().out.lower() and counts_started == []


def test_the_catalogs_guess_of_a_tables_rows(tmp_path):
    with Database.open(parse_target(str(tmp_path / "q.db")), create=True) as db:
        diagnostics = diagnostics_for(db.dialect)
        db.execute("CREATE TABLE spread (id INTEGER PRIMARY KEY)")
        assert diagnostics.estimated_rows(db, None, "spread") == 0
        db.execute("INSERT INTO spread (id) VALUES (3), (4), (1002)")  # the rowids' span: deleted rows count
        assert diagnostics.estimated_rows(db, None, "spread") == 1000
        db.execute("CREATE TABLE keyed (name TEXT PRIMARY KEY) WITHOUT ROWID")
        assert diagnostics.estimated_rows(db, None, "keyed") is None  # no rowid: cannot say
    schema = f"qt_{uuid.uuid4().hex[:12]}"
    with Database.open(parse_target(PG_TARGET)) as db:
        diagnostics = diagnostics_for(db.dialect)
        try:  # a partitioned table (pg-boss's, a partition per queue) holds its partitions' rows
            db.execute(f"CREATE SCHEMA {schema}")
            db.execute(f"CREATE TABLE {schema}.job (name text, id int) PARTITION BY LIST (name)")
            for name, rows in (("a", 300), ("b", 700)):
                db.execute(f"CREATE TABLE {schema}.job_{name} PARTITION OF {schema}.job FOR VALUES IN ('{name}')")
                db.execute(f"INSERT INTO {schema}.job SELECT '{name}', i FROM generate_series(1, {rows}) AS i")
            db.execute(f"ANALYZE {schema}.job")
            assert diagnostics.estimated_rows(db, schema, "job") == 1000
            # a view (graphile-worker's jobs: its table joined with small lookups) as many as the biggest it reads
            db.execute(f"CREATE TABLE {schema}.kind (name text PRIMARY KEY)")
            db.execute(f"INSERT INTO {schema}.kind VALUES ('a'), ('b')")
            db.execute(f"ANALYZE {schema}.kind")
            db.execute(f"CREATE VIEW {schema}.waiting AS SELECT j.* FROM {schema}.job AS j "
                       f"JOIN {schema}.kind AS k ON k.name = j.name")
            assert diagnostics.estimated_rows(db, schema, "waiting") == 1000
            db.execute(f"CREATE VIEW {schema}.kinds AS SELECT * FROM {schema}.kind")
            assert diagnostics.estimated_rows(db, schema, "kinds") == 2
            assert diagnostics.estimated_rows(db, schema, "nothing_here") is None
        finally:
            db.execute(f"DROP SCHEMA {schema} CASCADE")
