"""`queuetop doctor` on a real SQLite file and a real PostgreSQL server: a missing index is found and the index it
prints fixes it, the native schema plans clean, a worker idle in a transaction holding a claim is listed with its
application and host, and a claimer blocked behind it shows as a blocking chain."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest

from queuetop.act.queue import Queue
from queuetop.cli import main
from queuetop.db import Database, Timeout, parse_target
from queuetop.layouts import layout_from_toml
from queuetop.serve import live_end
from queuetop.serve.doctor import Finding, Report, Status, run_doctor
from queuetop.watch.blocking import read_blocking
from tests.conftest import Backend
from tests.seedshapes import drop_seed, finish, pop, push
from tests.test_shapes import Seeded, make_seeded

from .helpers import layout_sql


def by_check(report: Report) -> dict[str, Finding]:
    return {finding.check: finding for finding in report.findings}


def doctor(db: Database, layout, **options) -> Report:
    return run_doctor(db, layout, sample_s=options.pop("sample_s", 0), idle_holder_s=0, **options)


@pytest.fixture(params=["sqlite", "postgres"])
def work_queue(request, tmp_path) -> Iterator[Seeded]:
    made = make_seeded("work_queue", request.param, tmp_path)
    yield made
    with made.open() as db:
        drop_seed(db, made.tables)


# -- plans ---------------------------------------------------------------------------------------------------
def test_the_native_schema_plans_every_poll_read_and_the_dequeue_through_its_indexes(backend: Backend):
    with backend.open("monitor") as db:
        report = doctor(db, backend.layout)
    plans = {f.check: f for f in report.findings if f.check.startswith("plan: ")}
    assert sorted(plans) == sorted(f"plan: {name}" for name in (
        "poll: states (full pass)", "poll: arrivals past the last id", "poll: completions past the watermark",
        "poll: every poll (states, pending heads, arrivals, completions)", "drill-down: oldest pending jobs",
        "dequeue: claim one type", "dequeue: claim any type"))  # fmt: skip
    assert {check: f.status for check, f in plans.items() if f.status is not Status.OK} == {}
    claim = plans["plan: dequeue: claim one type"]
    assert "IX_WorkQueue_Pending" in claim.summary or "IX_WorkQueue_Dequeue" in claim.summary


EVERY_POLL = "plan: poll: every poll (states, pending heads, arrivals, completions)"


def test_a_dropped_native_index_is_found_and_the_fix_is_init_s_own_statement(backend: Backend):
    with backend.open() as db:
        index = db.dialect.qualify(backend.layout.schema, "IX_WorkQueue_Claimed")
        db.execute(f"DROP INDEX {index}")
        finding = by_check(doctor(db, backend.layout))[EVERY_POLL]
        assert finding.status is Status.WARN
        assert finding.fix is not None and 'CREATE INDEX "IX_WorkQueue_Claimed"' in finding.fix
        db.execute(finding.fix.rstrip(";"))  # the statement printed is the one that fixes it
        assert by_check(doctor(db, backend.layout))[EVERY_POLL].status is Status.OK


def test_seed_002_without_an_index_on_its_flag_warns_and_the_printed_index_fixes_it(work_queue: Seeded):
    with work_queue.open("monitor") as db:
        push(db, work_queue.tables, payload="a")
        finding = by_check(doctor(db, work_queue.layout))["plan: poll: states (full pass)"]
        assert finding.status is Status.WARN
        assert "scans work_queue" in finding.summary
        assert finding.fix is not None and '("processed_flag", "work_queue_id")' in finding.fix
        db.execute(finding.fix.rstrip(";"))
        after = by_check(doctor(db, work_queue.layout))
    assert after["plan: poll: states (full pass)"].status is Status.OK
    assert after["plan: drill-down: pending rows"].status is Status.OK


# -- sessions ------------------------------------------------------------------------------------------------
def _worker(backend: Backend, name: str) -> Database:
    db = backend.open()
    if db.dialect.name == "postgresql":
        db.execute(f"SET application_name = '{name}'")
    return db


def test_a_worker_idle_in_a_transaction_holding_a_claim_is_listed_with_application_and_host(backend: Backend):
    with backend.open() as db:
        Queue(db, backend.layout).enqueue_many("email", 3)
    worker = _worker(backend, "worker-7")
    try:
        with worker.transaction():
            assert Queue(worker, backend.layout).claim("worker-7", ["email"])  # ... and then it goes quiet
            with backend.open("monitor") as db:
                findings = by_check(doctor(db, backend.layout))
            holders = findings["sessions holding claims"]
            assert holders.status is Status.WARN
            if backend.name == "sqlite":
                assert "another connection holds the write lock" in holders.summary
            else:
                assert len(holders.details) == 1
                assert "worker-7 @ 127.0.0.1" in holders.details[0]
                assert "idle in a transaction" in holders.details[0]
                assert holders.fix is not None and "pg_terminate_backend(" in holders.fix
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    finally:
        worker.close()
    with backend.open("monitor") as db:
        assert by_check(doctor(db, backend.layout))["sessions holding claims"].status is Status.OK


def test_a_claimer_blocked_behind_an_idle_holder_shows_as_a_blocking_chain(pg_backend: Backend):
    layout = pg_backend.layout
    with pg_backend.open() as db:
        job_id = Queue(db, layout).enqueue("email")
    holder = _worker(pg_backend, "worker-holder")
    waiter = _worker(pg_backend, "worker-waiter")
    waiter.execute("SET lock_timeout = '20s'")
    holder_pid = str(holder.fetchone("SELECT pg_backend_pid()")[0])
    waited: list[object] = []

    def claim_without_skip_locked() -> None:  # a worker whose claim forgot SKIP LOCKED: it waits
        try:
            waiter.fetchall(layout_sql(waiter, layout, "SELECT {id} FROM {queue} WHERE {id} = ? FOR UPDATE"), (job_id,))
            waited.append("done")
        except Timeout as exc:
            waited.append(exc)

    try:
        with holder.transaction():
            assert Queue(holder, layout).claim("worker-holder")
            thread = threading.Thread(target=claim_without_skip_locked)
            thread.start()
            with pg_backend.open("monitor") as db:
                deadline = time.monotonic() + 10
                while not read_blocking(db, layout, idle_holder_s=0).waits and time.monotonic() < deadline:
                    time.sleep(0.1)
                findings = by_check(doctor(db, layout))
            chain = findings["blocking chains"]
            assert chain.status is Status.FAIL
            assert len(chain.details) == 1
            assert "worker-waiter @" in chain.details[0]
            assert f"session {holder_pid} (worker-holder @" in chain.details[0]
            assert "FOR UPDATE" in chain.details[0]  # what the waiter runs
            assert chain.fix is not None and f"pg_terminate_backend({holder_pid})" in chain.fix
            assert findings["sessions holding claims"].status is Status.FAIL  # it holds someone up
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    finally:
        thread.join(timeout=20)
        holder.close()
        waiter.close()
    assert waited == ["done"]  # released by the holder's rollback, not by its lock timeout


# -- the command -------------------------------------------------------------------------------------------
def test_doctor_json_and_exit_codes(tmp_path, capsys):
    work_queue = make_seeded("work_queue", "sqlite", tmp_path)  # the command's output is the same on every database
    args = ["doctor", "--db", work_queue.db_text, "--layout", "work_queue", "--sample", "0"]
    assert main([*args, "--json"]) == 1  # the seed's own dequeue scans the table: a fail
    report = json.loads(capsys.readouterr().out)
    assert report["layout"] == "work_queue" and report["dialect"] == "sqlite"
    statuses = {f["check"]: f["status"] for f in report["findings"]}
    assert statuses["plan: poll: states (full pass)"] == "warn"
    assert statuses["plan: dequeue: the seed's own claim"] == "fail"
    assert set(report["counts"]) == {"ok", "warn", "fail", "unknown"}
    assert main([*args, "--strict"]) == 1
    text = capsys.readouterr().out
    assert "WARN  plan: poll: states (full pass): scans work_queue" in text
    assert "fixes are printed, never run" in text
    assert main([*args, "--sample", "99"]) == 2
    assert "--sample must be from 0 to 60" in capsys.readouterr().err


def test_growth_is_read_between_two_reads(backend: Backend):
    with backend.open() as db:

        def enqueue_meanwhile(_seconds: float) -> None:
            # Another session writes, as a queue's producers do; PostgreSQL flushes a session's statistics at most
            # once a second, and an idle one's only every 10 s, so the writer leaves (which flushes them).
            with backend.open() as writer:
                Queue(writer, backend.layout).enqueue_many("email", 50)
            if db.dialect.name == "postgresql":
                time.sleep(1.2)

        from queuetop.serve.doctor import Doctor

        report = Doctor(db, backend.layout, sample_s=0.01, sleep=enqueue_meanwhile).run()
    size = by_check(report)["size: WorkQueue"]
    assert size.status is Status.OK
    assert "rows/s" in size.summary and "+0.0 rows/s" not in size.summary, size.summary


# -- the dashboard's poller ----------------------------------------------------------------------------------
def test_the_monitor_reads_the_sessions_at_its_own_pace_and_never_on_sqlite(backend: Backend):
    from queuetop.watch.monitor import Monitor

    with backend.open() as db:
        Queue(db, backend.layout).enqueue_many("email", 2)
    clock = [0.0]
    monitor = Monitor(backend.target, backend.layout, clock=lambda: clock[0], blocking_every_s=30)
    worker = _worker(backend, "worker-panel")
    try:
        first = monitor.poll()
        assert first.connected
        with worker.transaction():
            Queue(worker, backend.layout).claim("worker-panel", ["email"])
            time.sleep(5.2)  # idle long enough to count as a holder
            clock[0] = 10.0
            early = monitor.poll()  # within the 30 s: the last read is carried, not a new one
            clock[0] = 31.0
            due = monitor.poll()
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    finally:
        worker.close()
        monitor.close()
    if backend.name == "sqlite":  # the only probe SQLite has takes the write lock: never from the dashboard
        assert first.blocking is None and due.blocking is None
        return
    assert first.blocking is not None and first.blocking.empty
    assert early.blocking is first.blocking
    assert due.blocking is not None and [h.application for h in due.blocking.holders] == ["worker-panel"]


@pytest.mark.parametrize("preset", ["queuesample", "requests", "work_queue", "processed", "job_queue"])
@pytest.mark.parametrize("backend_name", ["sqlite", "postgres"])
def test_every_index_doctor_prints_for_a_seed_fixes_the_reads_it_names(preset, backend_name, tmp_path):
    seeded = make_seeded(preset, backend_name, tmp_path)
    try:
        with seeded.open("monitor") as db:
            before = doctor(db, seeded.layout)
            fixed = {f.check: f.fix for f in before.findings if f.check.startswith("plan:") and f.fix}
            for statement in dict.fromkeys(line for fix in fixed.values() for line in fix.splitlines()):
                db.execute(statement.rstrip(";"))
            after = by_check(doctor(db, seeded.layout))
        assert {check: after[check].status for check in fixed} == dict.fromkeys(fixed, Status.OK)
        if preset != "processed":  # seed 003 has its (PROCESSED, ID) index: nothing to fix
            assert fixed
    finally:
        with seeded.open() as db:
            drop_seed(db, seeded.tables)


def test_doctor_help_teaches_and_an_unusable_target_is_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["doctor", "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert "examples:" in shown and "queuetop doctor --json" in shown and "exit code: 0 nothing failed" in shown
    assert main(["doctor", "--db", str(tmp_path / "missing.db"), "--layout", "work_queue"]) == 2
    assert "missing.db" in capsys.readouterr().err


@pytest.mark.parametrize("backend_name", ["sqlite", "postgres"])
def test_a_long_live_end_is_named_with_the_indexes_that_let_each_family_read_its_own_rows(
        backend_name, tmp_path, monkeypatch) -> None:  # fmt: skip
    """Seed 004 keeps its rows: every poll reads from the oldest job still in a state to the newest, a range of the
    primary key that the plan check calls a seek; its dead jobs from the oldest of them. An old dead job holds its
    family's range open over 40 finished jobs: past the limit (here 20 ids) doctor says how long it is and prints
    the preset's four indexes for it; made, it says they are there (and how the range would close); under the
    limit it is fine."""
    monkeypatch.setattr(live_end, "LIVE_END_WARN_IDS", 20)
    seeded = make_seeded("job_queue", backend_name, tmp_path)
    try:
        with seeded.open("monitor") as db:
            push(db, seeded.tables, payload="dead")  # out of attempts, never finished: dead, at the lowest id
            db.execute(layout_sql(db, seeded.layout, "UPDATE {queue} SET {attempts} = 3"))
            for _ in range(40):  # the seed's own insert, claim and completion
                push(db, seeded.tables, payload="done")
                (job,) = pop(db, seeded.tables, "w1")
                finish(db, seeded.tables, job)
            push(db, seeded.tables, payload="waiting")
            long = by_check(doctor(db, seeded.layout))["live end"]
            for statement in (long.fix or "").splitlines():
                if not statement.startswith("--"):
                    db.execute(statement.rstrip(";"))
            indexed = by_check(doctor(db, seeded.layout))["live end"]
            monkeypatch.setattr(live_end, "LIVE_END_WARN_IDS", 100)
            short = by_check(doctor(db, seeded.layout))["live end"]
    finally:
        with seeded.open() as db:
            drop_seed(db, seeded.tables)
    assert long.status is Status.WARN and "(42)" in long.summary and long.fix is not None
    assert [line.split('"')[1] for line in long.fix.splitlines() if line.startswith("CREATE INDEX")] == [
        "IX_Job_Queue_Unmarked", "IX_Job_Queue_Marked", "IX_Job_Queue_Scheduled", "IX_Job_Queue_Attempts"]
    assert "queuetop dead count" in long.fix
    assert "the dead ones from the oldest of them, ids 1 on (42)" in long.summary  # read apart from the rest (1)
    assert indexed.status is Status.OK and "advised for it are there" in indexed.summary
    assert short.status is Status.OK and short.fix is None


def test_a_long_live_end_that_no_index_narrows_says_how_it_closes(tmp_path, monkeypatch) -> None:
    """A layout of one's own advises nothing: past the limit doctor says how long the live end is and that the
    oldest jobs' leaving is what closes it, with no index to print."""
    monkeypatch.setattr(live_end, "LIVE_END_WARN_IDS", 2)
    layout = layout_from_toml("mine", 'arrivals = "identity"\ndone = "status = 1"\n[tables]\nqueue = "jobs"\n'
                                      '[queue_columns]\nid = "id bigint"\nstatus = "status int"\n[states]\n'
                                      'pending = "status = 0"\n')  # fmt: skip
    with Database.open(parse_target(str(tmp_path / "q.db")), create=True) as db:
        db.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, status INTEGER)")
        for status in (0, 1, 1, 1, 0):
            db.execute("INSERT INTO jobs (status) VALUES (?)", (status,))
        found = by_check(doctor(db, layout))["live end"]
    assert found.status is Status.WARN and "(5)" in found.summary
    assert found.fix is not None and "CREATE INDEX" not in found.fix and "queuetop dead count" in found.fix


@pytest.mark.postgres
def test_a_condition_on_a_later_key_alone_is_an_index_scan_not_a_seek(pg_backend: Backend) -> None:
    """PostgreSQL puts a condition on any key column of an index in its Index Cond: `b > ?` on an index of (a, b)
    reads every entry of it (pg-boss 12's created_on after its queue's name), while `a = ? AND b > ?` reads a
    range. Only the second is a seek; a quoted column counts as named too."""
    from queuetop.db.diagnostics import AccessKind
    from queuetop.db.diagnostics.postgres import PostgresDiagnostics

    schema = f"plans_{time.monotonic_ns()}"
    with pg_backend.open() as db:
        db.execute(f'CREATE SCHEMA {schema}')
        try:
            db.execute(f'CREATE TABLE {schema}.t (id int PRIMARY KEY, a text, b int, "Mixed" int)')
            db.execute(f'CREATE INDEX t_a_b ON {schema}.t (a, b)')
            db.execute(f'CREATE INDEX t_mixed_b ON {schema}.t ("Mixed", b)')
            diagnostics = PostgresDiagnostics(db.dialect)
            diagnostics.prepare(db)
            try:
                kinds = {sql: [(a.kind, a.index) for a in diagnostics.plan(db, sql, ()).accesses] for sql in (
                    f"SELECT count(*) FROM {schema}.t WHERE b > 1",
                    f"SELECT count(*) FROM {schema}.t WHERE a = 'x' AND b > 1",
                    f'SELECT count(*) FROM {schema}.t WHERE "Mixed" = 1 AND b > 1')}
            finally:
                diagnostics.finish(db)
        finally:
            db.execute(f"DROP SCHEMA {schema} CASCADE")
    later, leading, quoted = kinds.values()
    assert later and all(kind is AccessKind.INDEX_SCAN for kind, _ in later), later
    assert leading == [(AccessKind.SEEK, "t_a_b")] and quoted == [(AccessKind.SEEK, "t_mixed_b")], (leading, quoted)
