"""Proof that tests/seedshapes.py builds each seed's tables as the seed wrote them and that the seed's own
enqueue / dequeue / completion behave as the seed promises, on real databases only (a SQLite file and the
PostgreSQL server), from concurrent workers with a connection each.

Later tests point queuetop at these tables and compare its figures with counts from the tables, so these
fixtures must be right first: every job popped exactly once, end states as the seed implies, seed 004's
timeout and attempt limit, seed 001's lost-request trail, and times on the database's local clock under a
non-UTC session time zone. `test_the_exactly_once_check_catches_a_racy_dequeue` shows the main check can fail.
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pyodbc
import pytest

from queuetop.db import Database, Target, parse_target
from tests import seedshapes
from tests.conftest import PG_TARGET as CONFTEST_PG_TARGET
from tests.seedshapes import (
    PG_TARGET,
    PG_TZ,
    PG_TZ_TARGET,
    QUEUESAMPLE_JOB_TYPES,
    SEEDS,
    SeedTables,
    bit_sql,
    create_seed,
    drop_seed,
    finish,
    local_now_sql,
    pop,
    push,
    qualified,
    worker_guid,
)

JOBS = 200
WORKERS = 6
GUID_TEXT = re.compile(r"^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$")
LOCAL_TEXT = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$")  # SQLite's getdate(): 'YYYY-MM-DD HH:MM:SS.SSS'


@dataclass(frozen=True)
class Place:
    """Where a test's seed lives: a SQLite file, or a fresh PostgreSQL schema dropped afterwards."""

    backend: str
    target: Target
    schema: str | None

    def open(self, target: Target | None = None) -> Database:
        return Database.open(target or self.target, purpose="worker", create=True)


def _make_place(backend: str, tmp_path) -> Place:
    if backend == "sqlite":
        return Place(backend, parse_target(str(tmp_path / "seed.db")), None)
    return Place(backend, parse_target(PG_TARGET), f"qt_{uuid.uuid4().hex[:12]}")


def _drop_place(place: Place) -> None:
    if place.schema:
        with place.open() as db:
            db.execute(f"DROP SCHEMA IF EXISTS {seedshapes.quote(place.schema)} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def place(request: pytest.FixtureRequest, tmp_path) -> Iterator[Place]:
    made = _make_place(request.param, tmp_path)
    yield made
    _drop_place(made)


@pytest.fixture
def pg_place(tmp_path) -> Iterator[Place]:
    made = _make_place("postgres", tmp_path)
    yield made
    _drop_place(made)


def _count(db: Database, sql: str, params: tuple[Any, ...] = ()) -> int:
    return int(db.fetchone(sql, params)[0])


def _fill(db: Database, tables: SeedTables, n: int = JOBS) -> None:
    for i in range(n):
        if tables.seed == "queuesample":  # two GUID job types, as in the seed's test script
            push(db, tables, job_type=QUEUESAMPLE_JOB_TYPES[i % 2], payload=f"<info><key>{i}</key></info>")
        elif tables.seed == "job_queue":  # mixed priorities, and the default 255
            push(db, tables, payload=f"job {i}", priority=None if i % 4 == 0 else (i % 3) * 50)
        else:
            push(db, tables, payload=f"job {i}")


PopFn = Callable[..., list[dict[str, Any]]]


def _drain(place: Place, tables: SeedTables, pop_fn: PopFn = pop, batch: int = 1) -> list[Any]:
    """WORKERS threads, a connection each, released together, pop + finish until the queue answers nothing
    for every job type. Returns every id taken, from all threads, duplicates included."""
    job_types = QUEUESAMPLE_JOB_TYPES if tables.seed == "queuesample" else (None,)
    taken: list[list[Any]] = [[] for _ in range(WORKERS)]
    errors: list[BaseException] = []
    start = threading.Barrier(WORKERS)

    def work(n: int) -> None:
        try:
            with place.open() as db:
                start.wait(timeout=10)  # all connected first, so the dequeues really race
                while True:
                    got = False
                    for job_type in job_types:
                        jobs = pop_fn(db, tables, f"worker-{n}", job_type=job_type, batch=batch)
                        for job in jobs:
                            time.sleep(0.001)  # the job's work: lets the others in (SQLite's busy waiters back off)
                            finish(db, tables, job)
                            taken[n].append(job["id"])
                        got = got or bool(jobs)
                    if not got:
                        return
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)
            start.abort()

    threads = [threading.Thread(target=work, args=(n,), daemon=True) for n in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a worker never finished"
    if errors:
        raise errors[0]
    assert sum(1 for ids in taken if ids) >= WORKERS // 2, "few workers ever got a job: nothing raced"
    return [job_id for ids in taken for job_id in ids]


def _assert_exactly_once(taken: list[Any], in_table: list[Any]) -> None:
    twice = sorted({job_id for job_id in taken if taken.count(job_id) > 1}, key=str)
    assert not twice, f"{len(twice)} job(s) popped more than once, e.g. {twice[:5]}"
    assert len(taken) == len(set(taken)) == JOBS
    assert set(taken) == set(in_table), "the jobs popped are not the jobs in the table"


def _ids(db: Database, tables: SeedTables) -> list[Any]:
    if tables.seed == "requests":
        rows = db.fetchall(f'SELECT "id" FROM {qualified(tables, tables.completed)}')
        return [seedshapes.guid_text(r[0]) for r in rows]
    column = {"queuesample": "WorkQueueID", "work_queue": "work_queue_id"}.get(tables.seed, "ID")
    return [r[0] for r in db.fetchall(f'SELECT "{column}" FROM {qualified(tables)}')]


def _assert_end_state(db: Database, tables: SeedTables) -> None:
    """The tables after every job went through the seed's own dequeue and completion."""
    t = qualified(tables)
    if tables.seed == "queuesample":
        assert _count(db, f"SELECT count(*) FROM {t}") == JOBS
        assert _count(db, f'SELECT count(*) FROM {t} WHERE "RetrievedDate" IS NULL') == 0
        assert _count(db, f"SELECT count(*) FROM {qualified(tables, tables.view)}") == 0
        by = {seedshapes.guid_text(r[0]) for r in db.fetchall(f'SELECT DISTINCT "RetrievedBy" FROM {t}')}
        assert by <= {worker_guid(f"worker-{n}") for n in range(WORKERS)}
        assert _count(db, f'SELECT count(*) FROM {t} WHERE "RetrievedDate" < "CreatedDate"') == 0
    elif tables.seed == "requests":
        done = qualified(tables, tables.completed)
        assert _count(db, f"SELECT count(*) FROM {t}") == 0
        assert _count(db, f"SELECT count(*) FROM {done}") == JOBS
        assert _count(db, f'SELECT count(*) FROM {done} WHERE "CompletedDate" IS NULL') == 0
        assert _count(db, f'SELECT count(*) FROM {done} WHERE "RemovedDate" < "InsertedDate" '
                          'OR "CompletedDate" < "RemovedDate"') == 0  # fmt: skip
    elif tables.seed in ("work_queue", "processed"):
        flag = "processed_flag" if tables.seed == "work_queue" else "PROCESSED"
        assert _count(db, f"SELECT count(*) FROM {t}") == JOBS
        assert _count(db, f'SELECT count(*) FROM {t} WHERE "{flag}" = {bit_sql(db, 1)}') == JOBS
    else:
        assert _count(db, f"SELECT count(*) FROM {t}") == JOBS
        assert _count(db, f'SELECT count(*) FROM {t} WHERE "Last_Attempt_End_Date" IS NOT NULL '
                          'AND "Last_Attempt_End_Date" >= "Last_Attempt_Start_Date" AND "Attempts" = 1 '
                          'AND "Processing_Mark" IS NOT NULL') == JOBS  # fmt: skip
        # claims of batch=3: one fresh mark per claim, stamped on up to 3 rows
        per_mark = [r[0] for r in db.fetchall(f'SELECT count(*) FROM {t} GROUP BY "Processing_Mark"')]
        assert max(per_mark) == 3


# -- every seed, both databases: 200 jobs, 6 racing workers ------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_every_job_is_popped_exactly_once(place: Place, seed: str) -> None:
    with place.open() as db:
        tables = create_seed(db, seed, schema=place.schema)
        _fill(db, tables)
    taken = _drain(place, tables, batch=3 if seed == "job_queue" else 1)
    with place.open() as db:
        _assert_exactly_once(taken, _ids(db, tables))
        _assert_end_state(db, tables)


def _racy_pop(db: Database, tables: SeedTables, worker: str, **_: Any) -> list[dict[str, Any]]:
    """Seed 002's *broken* dequeue ("Discovering the Problem"): a plain SELECT, a delay, then the UPDATE, with
    no lock hint. Used only to show that the exactly-once check catches a dequeue that hands a job out twice."""
    t = qualified(tables)
    rows = db.fetchall(f'SELECT "work_queue_id" FROM {t} WHERE "processed_flag" = {bit_sql(db, 0)} '
                       'ORDER BY "work_queue_id" LIMIT 1')  # fmt: skip
    if not rows:
        return []
    time.sleep(0.005)  # the seed's WAITFOR DELAY, shortened
    db.execute(f'UPDATE {t} SET "processed_flag" = {bit_sql(db, 1)} WHERE "work_queue_id" = ?', (rows[0][0],))
    return [{"id": rows[0][0]}]


def test_the_exactly_once_check_catches_a_racy_dequeue(pg_place: Place) -> None:
    with pg_place.open() as db:
        tables = create_seed(db, "work_queue", schema=pg_place.schema)
        _fill(db, tables)
    taken = _drain(pg_place, tables, pop_fn=_racy_pop)
    with pg_place.open() as db, pytest.raises(AssertionError, match="popped more than once"):
        _assert_exactly_once(taken, _ids(db, tables))


# -- seed 004: timeouts, attempts, the mark ------------------------------------------------------------------
def _job_row(db: Database, tables: SeedTables, job_id: int) -> tuple[Any, ...]:
    return db.fetchone(f'SELECT "Attempts", "Processing_Mark", "Processing_Server", "Last_Attempt_End_Date" '
                       f'FROM {qualified(tables)} WHERE "ID" = ?', (job_id,))  # fmt: skip


def _lease_s(db: Database, tables: SeedTables, job_id: int) -> float:
    if db.dialect.name == "postgresql":
        span = 'EXTRACT(EPOCH FROM "Timeout_Date" - "Last_Attempt_Start_Date")'
    else:
        span = '(julianday("Timeout_Date") - julianday("Last_Attempt_Start_Date")) * 86400'
    return float(db.fetchone(f'SELECT {span} FROM {qualified(tables)} WHERE "ID" = ?', (job_id,))[0])


def test_job_queue_timed_out_claim_comes_back_until_three_attempts(place: Place) -> None:
    with place.open() as db, place.open() as other:
        tables = create_seed(db, "job_queue", schema=place.schema)
        push(db, tables, payload="flaky")
        first = pop(db, tables, "w1", lease_s=0.5)
        assert len(first) == 1 and first[0]["payload"] == "flaky"
        assert 0.4 < _lease_s(db, tables, first[0]["id"]) < 0.6
        marks = {first[0]["mark"]}
        for attempt in (2, 3):
            assert pop(other, tables, "early", lease_s=0.5) == []  # still leased
            time.sleep(0.7)
            again = pop(other, tables, f"w{attempt}", lease_s=0.5)
            assert [job["id"] for job in again] == [first[0]["id"]]
            assert again[0]["mark"] not in marks
            marks.add(again[0]["mark"])
            attempts, mark, server, _ = _job_row(db, tables, first[0]["id"])
            assert (attempts, seedshapes.guid_text(mark), server) == (attempt, again[0]["mark"], f"w{attempt}")
        finish(db, tables, first[0])  # the first holder's stale mark completes nothing
        assert _job_row(db, tables, first[0]["id"])[3] is None
        time.sleep(0.7)
        assert pop(other, tables, "w4", lease_s=0.5) == []  # Attempts = 3: never again
        assert _job_row(db, tables, first[0]["id"])[0] == 3
        # the seed's own lease: DATEADD(mi, 15, GETDATE())
        push(db, tables, payload="steady")
        steady = pop(db, tables, "w5")
        assert [job["payload"] for job in steady] == ["steady"]
        assert 899.9 < _lease_s(db, tables, steady[0]["id"]) < 900.1


def test_job_queue_order_and_availability(place: Place) -> None:
    with place.open() as db:
        tables = create_seed(db, "job_queue", schema=place.schema)
        push(db, tables, payload="later", priority=0, available_in_s=3600)
        push(db, tables, payload="low")  # Priority default 255
        push(db, tables, payload="high", priority=10)
        push(db, tables, payload="mid", priority=100)
        push(db, tables)  # every default
        first = pop(db, tables, "w", batch=2)  # ORDER BY Priority, Available_Date
        assert [job["payload"] for job in first] == ["high", "mid"]
        assert len({job["mark"] for job in first}) == 1  # one claim, one mark
        rest = pop(db, tables, "w", batch=10)
        assert [job["payload"] for job in rest] == ["low", "a piece of work in the queue"]
        assert {job["mark"] for job in rest}.isdisjoint({job["mark"] for job in first})
        assert pop(db, tables, "w") == []  # "later" is not available yet
        assert _count(db, f'SELECT count(*) FROM {qualified(tables)} WHERE "Priority" = 255') == 2


# -- seed 001: the lost-request trail ------------------------------------------------------------------------
def test_requests_unfinished_pop_stays_in_completed_without_completed_date(place: Place) -> None:
    with place.open() as db:
        tables = create_seed(db, "requests", schema=place.schema)
        for i in range(3):
            push(db, tables, payload=f"request {i}")
        lost = pop(db, tables, "w1")[0]
        done = pop(db, tables, "w2")[0]
        finish(db, tables, done)
        completed = qualified(tables, tables.completed)
        rows = {seedshapes.guid_text(r[0]): r[1:] for r in db.fetchall(
            f'SELECT "id", "RemovedDate", "CompletedDate" FROM {completed}')}  # fmt: skip
        assert set(rows) == {lost["id"], done["id"]}
        assert rows[lost["id"]][0] is not None and rows[lost["id"]][1] is None  # removed, never completed: lost
        assert rows[done["id"]][1] is not None
        assert _count(db, f"SELECT count(*) FROM {qualified(tables)}") == 1
        assert GUID_TEXT.match(lost["id"]) and GUID_TEXT.match(done["id"])


# -- seed 000: job types and the view -----------------------------------------------------------------------
def test_queuesample_pops_only_its_job_type_through_the_view(place: Place) -> None:
    type_a, type_b = QUEUESAMPLE_JOB_TYPES
    with place.open() as db:
        tables = create_seed(db, "queuesample", schema=place.schema)
        push(db, tables, job_type=type_a.lower(), payload="<info><key>4</key></info>")  # any spelling goes in
        push(db, tables, job_type=type_b, payload="<info><anotherkey>422</anotherkey></info>")
        push(db, tables, job_type=type_a, payload="<info><key>5</key></info>")
        got = pop(db, tables, "w", job_type=type_a)
        assert [(job["job_type"], job["info"]) for job in got] == [(type_a, "<info><key>4</key></info>")]
        assert got[0]["retrieved"] is not None and got[0]["retrieved_by"] == worker_guid("w")
        assert _count(db, f"SELECT count(*) FROM {qualified(tables, tables.view)}") == 2
        assert pop(db, tables, "w", job_type=str(uuid.uuid4())) == []  # a type with no jobs
        with pytest.raises(ValueError, match="JobType"):
            pop(db, tables, "w")


# -- the DDL is the seed's ---------------------------------------------------------------------------------
def _columns(db: Database, tables: SeedTables, table: str | None = None) -> dict[str, str]:
    name = table or tables.queue
    if db.dialect.name == "sqlite":
        return {r[1]: r[2] for r in db.fetchall(f"PRAGMA table_info({seedshapes.quote(name)})")}
    rows = db.fetchall("SELECT column_name, data_type, datetime_precision, is_identity FROM information_schema.columns "
                       "WHERE table_schema = ? AND table_name = ?", (tables.schema, name))  # fmt: skip
    return {r[0]: r[1] + (f"({r[2]})" if r[1].startswith("timestamp") else "") + (" identity" if r[3] == "YES" else "")
            for r in rows}  # fmt: skip


def test_ddl_keeps_the_seeds_names_and_types(place: Place) -> None:
    pg = place.backend == "postgres"
    ts = "timestamp without time zone(3)" if pg else "datetime"
    with place.open() as db:
        made = {seed: create_seed(db, seed, schema=place.schema) for seed in SEEDS}
        queue = _columns(db, made["queuesample"])
        assert queue["WorkQueueID"] == ("bigint identity" if pg else "INTEGER")
        assert (queue["JobType"], queue["JobInfo"], queue["CreatedDate"]) == \
            (("uuid", "xml", ts) if pg else ("uniqueidentifier", "xml", "datetime"))  # fmt: skip
        requests = _columns(db, made["requests"], "RequestsCompleted")
        assert (requests["id"], requests["request"], requests["RemovedDate"]) == \
            (("uuid", "character varying", ts) if pg else ("uniqueidentifier", "varchar(512)", "datetime"))  # fmt: skip
        assert _columns(db, made["work_queue"])["processed_flag"] == ("boolean" if pg else "bit")
        processed = _columns(db, made["processed"])
        assert (processed["COMMAND"].lower(), processed["PROCESSED"]) == ("text", "boolean" if pg else "bit")
        jobs = _columns(db, made["job_queue"])
        assert (jobs["Priority"], jobs["Processing_Mark"], jobs["Available_Date"]) == \
            (("smallint", "uuid", ts) if pg else ("tinyint", "uniqueidentifier", "datetime"))  # fmt: skip
        # seed 003's clustered (PROCESSED, ID) index; seed 001's PK on id
        if pg:
            index = db.fetchone("SELECT indexdef FROM pg_indexes WHERE schemaname = ? AND indexname = 'cdxwork_items'",
                                (place.schema,))[0]  # fmt: skip
            assert '("PROCESSED", "ID")' in index
            assert _count(db, "SELECT count(*) FROM information_schema.table_constraints WHERE table_schema = ? "
                              "AND table_name = 'RequestsQueue' AND constraint_type = 'PRIMARY KEY'",
                          (place.schema,)) == 1  # fmt: skip
        else:
            assert [r[2] for r in db.fetchall("PRAGMA index_info('cdxwork_items')")] == ["PROCESSED", "ID"]
            assert any(r[3] == "pk" for r in db.fetchall("PRAGMA index_list('RequestsQueue')"))
        # the defaults: newid() as upper-case GUID text on SQLite, getdate() as local time text
        push(db, made["requests"], payload="r")
        guid, inserted = db.fetchone(f'SELECT "id", "InsertedDate" FROM {qualified(made["requests"])}')
        if not pg:
            assert GUID_TEXT.match(guid) and LOCAL_TEXT.match(inserted)
        for tables in made.values():
            drop_seed(db, tables)
        for seed in SEEDS:  # dropped cleanly: the same DDL runs again
            create_seed(db, seed, schema=place.schema)


def test_seed_000_default_schema_and_its_cleanup() -> None:
    """Without a schema, seed 000 lives in its own "QueueSample" schema and its cleanup removes it."""
    with Database.open(parse_target(PG_TARGET), purpose="worker") as db:
        if _count(db, "SELECT count(*) FROM pg_namespace WHERE nspname = 'QueueSample'"):
            pytest.fail('schema "QueueSample" already exists in the test database; drop it first')
        tables = create_seed(db, "queuesample")
        try:
            assert tables.schema == "QueueSample" and qualified(tables) == '"QueueSample"."WorkQueue"'
            push(db, tables, job_type=QUEUESAMPLE_JOB_TYPES[0], payload="<info/>")
            assert _count(db, 'SELECT count(*) FROM "QueueSample"."WorkQueue_Pending"') == 1
        finally:
            drop_seed(db, tables)
        assert _count(db, "SELECT count(*) FROM pg_namespace WHERE nspname = 'QueueSample'") == 0


# -- clocks: the database's local time, whatever the session's time zone -------------------------------------
def test_pg_tz_target_sets_the_session_time_zone() -> None:
    assert PG_TARGET == CONFTEST_PG_TARGET  # the same server and database as every other test
    raw = pyodbc.connect(PG_TZ_TARGET, autocommit=True)
    try:
        assert raw.cursor().execute("SHOW TimeZone").fetchone()[0] == PG_TZ
    finally:
        raw.close()
    with Database.open(parse_target(PG_TZ_TARGET), purpose="worker") as db:  # and queuetop keeps it
        assert db.fetchone("SHOW TimeZone")[0] == PG_TZ


def _assert_local_not_utc(stored: Any, local: Any, utc: Any) -> None:
    assert abs(stored - local) < timedelta(seconds=5), (stored, local)
    # St John's is 3:30 behind UTC (2:30 in summer)
    assert timedelta(hours=2, minutes=20) < utc - stored < timedelta(hours=3, minutes=40), (stored, utc)


def test_job_queue_on_pg_uses_the_sessions_local_clock(pg_place: Place) -> None:
    with pg_place.open(parse_target(PG_TZ_TARGET)) as db:
        assert db.fetchone("SHOW TimeZone")[0] == PG_TZ
        tables = create_seed(db, "job_queue", schema=pg_place.schema)
        push(db, tables, payload="now", available_in_s=0)
        push(db, tables, payload="soon", available_in_s=60)
        assert [job["payload"] for job in pop(db, tables, "w", batch=5)] == ["now"]  # claimable at once
        stored, start, local, utc = db.fetchone(
            f'SELECT "Available_Date", "Last_Attempt_Start_Date", {local_now_sql(db)}, '
            f"CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS timestamp(3)) FROM {qualified(tables)} "
            """WHERE "Payload" = 'now'""")  # fmt: skip
        _assert_local_not_utc(stored, local, utc)
        _assert_local_not_utc(start, local, utc)


def test_job_queue_on_sqlite_uses_the_local_clock(tmp_path) -> None:
    """SQLite's 'localtime' follows the process's TZ: under St John's time, rows carry local text times."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = PG_TZ
    time.tzset()
    try:
        place = _make_place("sqlite", tmp_path)
        with place.open() as db:
            tables = create_seed(db, "job_queue")
            push(db, tables, payload="now")
            push(db, tables, payload="soon", available_in_s=60)
            assert [job["payload"] for job in pop(db, tables, "w", batch=5)] == ["now"]
            stored, local, utc = db.fetchone(
                f"""SELECT "Available_Date", {local_now_sql(db)}, strftime('%Y-%m-%d %H:%M:%f', 'now') """
                f"""FROM {qualified(tables)} WHERE "Payload" = 'now'""")  # fmt: skip
            assert LOCAL_TEXT.match(stored)
            _assert_local_not_utc(*(datetime.fromisoformat(v) for v in (stored, local, utc)))
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()
