"""Every seed's own table, watched and steered by queuetop, on a real SQLite file and a real PostgreSQL server.

The tables are made by the seed's own DDL (tests/seedshapes.py, translated faithfully; not by queuetop) and
driven by the seed's own enqueue and dequeue from worker threads with their own connections. queuetop's figures
are then compared with counts taken straight from the tables by SQL written here from the seeds' texts, and
every action is checked on the rows it changed (and on those it must not have changed).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from queuetop.db import Database, Target, parse_target
from queuetop.layouts import Layout, load_layout, with_tables
from queuetop.watch.collector import collector_for
from tests import forked_cli
from tests.conftest import PG_TARGET
from tests.seedshapes import PG_TZ_TARGET, SeedTables, create_seed, drop_seed, finish, pop, push

PRESET_OF = {"queuesample": "000", "requests": "001", "work_queue": "002", "processed": "003", "job_queue": "004"}
GUID_A, GUID_B = "AC351A46-49E4-4F0C-BF8C-F45255012150", "FB0F15E0-2A97-46A3-951B-6655E4D7A06A"


@dataclass
class Seeded:
    """A seed's tables, made by the seed's DDL, and the layout that points queuetop at them."""

    backend: str
    target: Target
    tables: SeedTables
    layout: Layout
    db_text: str

    def open(self, purpose: str = "worker") -> Database:
        return Database.open(self.target, purpose=purpose)

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        table = f"{self.tables.schema}.{self.tables.queue}" if self.tables.schema else self.tables.queue
        env = {**os.environ, "QUEUETOP_DB": "", "QUEUETOP_LAYOUT": ""}
        return forked_cli.run([*args, "--db", self.db_text, "--layout", self.layout.name, "--table", table], env=env,
                              timeout=60)  # fmt: skip

    def stats(self, *extra: str) -> dict:
        result = self.cli("stats", "--json", *extra)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def count(self, sql: str, params: tuple = ()) -> int:
        """A count straight from the tables, by SQL written in the test."""
        with self.open() as db:
            return int(db.fetchone(sql, params)[0])

    def q(self, name: str) -> str:
        """A table's name as this database spells it, quoted."""
        with self.open() as db:
            return db.dialect.qualify(self.tables.schema, name)


def make_seeded(preset: str, backend: str, tmp_path, pg_text: str = PG_TARGET) -> Seeded:
    if backend == "sqlite":
        text = str(tmp_path / f"{preset}.db")
        target = parse_target(text)
        with Database.open(target, create=True) as db:
            tables = create_seed(db, preset)
    else:
        text, target = pg_text, parse_target(pg_text)
        with Database.open(target) as db:
            tables = create_seed(db, preset, schema=f"qt_{uuid.uuid4().hex[:12]}")
    queue = f"{tables.schema}.{tables.queue}" if tables.schema else tables.queue
    layout = with_tables(load_layout(preset), queue, tables.completed)
    return Seeded(backend, target, tables, layout, text)


@pytest.fixture(params=["sqlite", "postgres"])
def backend_name(request) -> str:
    return request.param


def seeded_fixture(preset: str):
    @pytest.fixture
    def fixture(backend_name, tmp_path) -> Iterator[Seeded]:
        made = make_seeded(preset, backend_name, tmp_path)
        yield made
        with made.open() as db:
            drop_seed(db, made.tables)

    return fixture


job_queue = seeded_fixture("job_queue")
requests = seeded_fixture("requests")
queuesample = seeded_fixture("queuesample")
work_queue = seeded_fixture("work_queue")
processed = seeded_fixture("processed")


def run_workers(seeded: Seeded, workers: int, stop_when_empty: bool = True, finish_jobs: bool = True,
                job_type: str | None = None, batch: int = 1) -> list:  # fmt: skip
    """The seed's own dequeue from `workers` threads, each with its own connection, until the queue is empty."""
    taken: list = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            with seeded.open() as db:
                while True:
                    jobs = pop(db, seeded.tables, f"w{n}", job_type=job_type, batch=batch)
                    if not jobs:
                        return
                    for job in jobs:
                        if finish_jobs:
                            finish(db, seeded.tables, job)
                    with lock:
                        taken.extend(job["id"] for job in jobs)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return taken


# -- job_queue (seed 004) --------------------------------------------------------------------------------
def job_queue_truth(s: Seeded) -> dict[str, int]:
    """The seed's own rules, from usp_API_Get_Job's WHERE, written here independently of the preset."""
    t = s.q(s.tables.queue)
    now = "LOCALTIMESTAMP" if s.backend == "postgres" else "strftime('%Y-%m-%d %H:%M:%f','now','localtime')"
    never = "CAST('2000-01-01' AS timestamp)" if s.backend == "postgres" else "'2000-01-01'"
    claimable = (f'(("Processing_Mark" IS NULL AND "Attempts" = 0 AND "Available_Date" <= {now}) OR '
                 f'(COALESCE("Last_Attempt_End_Date", {never}) < "Last_Attempt_Start_Date" '
                 f'AND COALESCE("Timeout_Date", "Available_Date") <= {now} AND "Attempts" < 3))')
    return {
        "claimable_unmarked": s.count(f'SELECT COUNT(*) FROM {t} WHERE {claimable} AND "Processing_Mark" IS NULL'),
        "claimable_marked": s.count(f'SELECT COUNT(*) FROM {t} WHERE {claimable} AND "Processing_Mark" IS NOT NULL'),
        "done": s.count(f'SELECT COUNT(*) FROM {t} WHERE "Last_Attempt_End_Date" >= "Last_Attempt_Start_Date"'),
        "rows": s.count(f"SELECT COUNT(*) FROM {t}"),
    }


def test_job_queue_figures_match_the_seeds_own_rules(job_queue: Seeded):
    s = job_queue
    with s.open() as db:
        for i in range(30):
            push(db, s.tables, payload=f"job {i}", priority=(i % 3) * 50)
        push(db, s.tables, payload="later", available_in_s=3600)
        done = pop(db, s.tables, "w1", batch=10)
        for job in done:
            finish(db, s.tables, job)
        pop(db, s.tables, "w2", batch=4)  # claimed, 15 min lease
        pop(db, s.tables, "w3", batch=3, lease_s=0.2)  # will time out
    time.sleep(0.5)
    data = s.stats()
    truth = job_queue_truth(s)
    (row,) = data["types"]
    assert data["layout"] == "job_queue" and data["clock"] == "local" and data["figures"]["lost"] is False
    assert row["job_type"] == s.tables.queue and row["lost"] is None
    assert row["depth"] == truth["claimable_unmarked"] == 13
    assert row["timed_out"] == truth["claimable_marked"] == 3
    assert row["claimed"] == 4 and row["scheduled"] == 1 and row["dead"] == 0
    assert row["depth"] + row["timed_out"] + row["claimed"] + row["scheduled"] + truth["done"] == truth["rows"]
    assert 0 <= row["oldest_age_s"] < 60  # the server's local clock minus the server's local clock
    assert row["completions_60s_per_s"] == pytest.approx(10 / 60)  # the first poll looks back one window
    assert row["processing_p50_s"] is not None and row["processing_p50_s"] < 5


def test_job_queue_release_clears_only_claims_still_timed_out(job_queue: Seeded):
    s = job_queue
    with s.open() as db:
        for i in range(6):
            push(db, s.tables, payload=f"job {i}")
        stale = pop(db, s.tables, "w1", batch=6, lease_s=0.2)
    time.sleep(0.4)
    with s.open() as db:  # the seed's own dequeue takes two timed-out jobs again: they must keep the new claim
        retaken = pop(db, s.tables, "w2", batch=2)
    dry = s.cli("release", "--dry-run")
    assert dry.returncode == 0 and "4 timed-out claims would be released (dry run" in dry.stdout
    marks_before = {r[0]: r[1] for r in _marks(s)}
    done = s.cli("release")
    assert done.returncode == 0 and "released 4 of 4 timed-out claims" in done.stdout, done.stdout + done.stderr
    marks = {r[0]: r[1] for r in _marks(s)}
    retaken_ids = {job["id"] for job in retaken}
    assert len(stale) == 6 and len(retaken_ids) == 2
    for job_id, mark in marks.items():
        if job_id in retaken_ids:
            assert mark is not None and mark == marks_before[job_id]  # never stolen
        else:
            assert mark is None
    data = s.stats()
    assert data["types"][0]["depth"] == 4 and data["types"][0]["timed_out"] == 0 and data["types"][0]["claimed"] == 2


def _marks(s: Seeded) -> list[tuple]:
    with s.open() as db:
        return db.fetchall(f'SELECT "ID", "Processing_Mark" FROM {s.q(s.tables.queue)}')


def test_job_queue_dead_jobs_count_retry_and_delete(job_queue: Seeded):
    s = job_queue
    with s.open() as db:
        for i in range(3):
            push(db, s.tables, payload=f"job {i}")
        for _ in range(3):  # three attempts, each timing out: dead
            pop(db, s.tables, "w", batch=3, lease_s=0.1)
            time.sleep(0.25)
    assert s.stats()["types"][0]["dead"] == 3
    assert "3 dead job(s)" in s.cli("dead", "count").stdout
    refused = s.cli("dead", "retry")
    assert refused.returncode == 2 and "add --yes" in refused.stderr
    assert s.stats()["types"][0]["dead"] == 3  # nothing changed
    assert "3 dead job(s) back to pending" in s.cli("dead", "retry", "--yes").stdout
    data = s.stats()["types"][0]
    assert data["dead"] == 0 and data["depth"] == 3
    with s.open() as db:  # the seed's dequeue takes them again, as new
        assert len(pop(db, s.tables, "w", batch=5)) == 3


def test_job_queue_a_last_attempt_handed_back_is_dead_at_once_not_in_no_state(job_queue: Seeded):
    """A claim cleared on its last attempt (a load run's hand-back at stop) leaves Attempts = 3 and no mark: the
    seed never takes it again, so it is dead now, not only once its 15-minute Timeout_Date has passed (it was in
    no state meanwhile, and a load run reported it LOST)."""
    from queuetop.act.shape_worker import ShapeWorker

    s = job_queue
    with s.open() as db:
        push(db, s.tables, payload="last")
        for _ in range(2):
            pop(db, s.tables, "w", lease_s=0.1)
            time.sleep(0.25)
        worker = ShapeWorker(db, s.layout)
        (job,) = worker.claim("w")
        assert job.attempts == 3
        worker.give_back(job)
    data = s.stats()["types"][0]
    assert (data["dead"], data["depth"], data["claimed"], data["timed_out"]) == (1, 0, 0, 0)


def test_job_queue_enqueue_writes_the_seeds_row_and_refuses_what_it_has_no_column_for(job_queue: Seeded):
    s = job_queue
    out = s.cli("enqueue", "-n", "3", "--info", "resize 42", "--priority", "7")
    assert out.returncode == 0 and "enqueued 3 jobs into Job_Queue" in out.stdout, out.stderr
    later = s.cli("enqueue", "--info", "later", "--delay", "600")
    assert later.returncode == 0, later.stderr
    with s.open() as db:
        rows = db.fetchall(f'SELECT "Payload", "Priority", "Attempts", "Processing_Mark" FROM {s.q(s.tables.queue)} '
                           'ORDER BY "ID"')
    assert [tuple(r) for r in rows[:3]] == [("resize 42", 7, 0, None)] * 3
    data = s.stats()["types"][0]
    assert data["depth"] == 3 and data["scheduled"] == 1
    for args, phrase in ((("--type", "email"), "has no job type column"), (("--priority", "300"), "priority must"),
                         (("--count", "0"), "count must")):  # fmt: skip
        bad = s.cli("enqueue", *args)
        assert bad.returncode == 2 and phrase in bad.stderr and "Traceback" not in bad.stderr
    assert s.count(f"SELECT COUNT(*) FROM {s.q(s.tables.queue)}") == 4  # nothing written


# -- requests (seed 001) ---------------------------------------------------------------------------------
def test_requests_in_flight_lost_and_release_back_into_the_queue(requests: Seeded):
    s = requests
    with s.open() as db:
        for i in range(8):
            push(db, s.tables, payload=f"request {i}")
        taken = [pop(db, s.tables, "w")[0] for _ in range(5)]
        for job in taken[:2]:
            finish(db, s.tables, job)
    time.sleep(1.2)
    data = s.stats("--lost-after", "1")
    (row,) = data["types"]
    assert (row["depth"], row["claimed"], row["lost"]) == (3, 0, 3)
    assert row["timed_out"] is None and row["dead"] is None and data["figures"]["dead"] is False
    assert row["completions_60s_per_s"] == pytest.approx(2 / 60)
    assert row["wait_p50_s"] is not None and row["processing_p50_s"] is not None
    assert s.stats("--lost-after", "600")["types"][0]["lost"] == 0  # in flight, not lost yet
    released = s.cli("release", "--lost-after", "1")
    assert released.returncode == 0 and "released 3 of 3 lost requests back into the queue" in released.stdout
    queue, completed = s.q(s.tables.queue), s.q(s.tables.completed)
    assert s.count(f"SELECT COUNT(*) FROM {queue}") == 6
    assert s.count(f"SELECT COUNT(*) FROM {completed}") == 2
    lost_ids = {str(job["id"]).lower() for job in taken[2:]}
    with s.open() as db:
        back = {str(r[0]).lower() for r in db.fetchall(f'SELECT "id" FROM {queue}')}
    assert lost_ids <= back  # the same requests, not copies: nothing duplicated, nothing lost
    drained = run_workers(s, 3)
    assert len(drained) == len(set(drained)) == 6
    assert s.stats("--lost-after", "1")["types"][0]["depth"] == 0


def test_requests_refuse_a_type(requests: Seeded):
    bad = requests.cli("enqueue", "--type", "email", "--info", "x")
    assert bad.returncode == 2 and "no job type column" in bad.stderr
    assert requests.count(f"SELECT COUNT(*) FROM {requests.q(requests.tables.queue)}") == 0


# -- queuesample (seed 000) ------------------------------------------------------------------------------
def test_queuesample_per_guid_type_and_nothing_to_release(queuesample: Seeded):
    s = queuesample
    with s.open() as db:
        for i in range(6):
            push(db, s.tables, job_type=GUID_A if i % 3 else GUID_B, payload=f"<info><key>{i}</key></info>")
        pop(db, s.tables, "w", job_type=GUID_A)
    data = s.stats()
    depths = {row["job_type"].upper(): row["depth"] for row in data["types"]}
    assert depths == {GUID_A: 3, GUID_B: 2}
    assert all(row["claimed"] is None and row["dead"] is None for row in data["types"])
    assert data["totals"]["completions_60s_per_s"] == pytest.approx(1 / 60)  # a retrieval is its completion
    bad = s.cli("enqueue", "--type", "email")
    assert bad.returncode == 2 and "is not a GUID" in bad.stderr
    ok = s.cli("enqueue", "--type", GUID_B.lower(), "--info", "<info><key>9</key></info>")
    assert ok.returncode == 0, ok.stderr
    assert {row["job_type"].upper(): row["depth"] for row in s.stats()["types"]}[GUID_B] == 3
    nothing = s.cli("release")
    assert nothing.returncode == 2 and "nothing to release: retrieval is final" in nothing.stderr


# -- work_queue and processed (seeds 002, 003): no times at all --------------------------------------------
@pytest.mark.parametrize("shape", ["work_queue", "processed"])
def test_flag_shapes_depth_and_throughput_from_the_change_between_polls(shape, backend_name, tmp_path):
    s = make_seeded(shape, backend_name, tmp_path)
    try:
        with s.open() as db:
            for i in range(40):
                push(db, s.tables, payload=f"item {i}")
        with s.open("monitor") as db:
            collector = collector_for(db, s.layout)
            first = collector.poll()
            assert first.totals.depth == 40 and first.totals.completions_60s_per_s is None  # no rate yet: not 0
            assert first.totals.oldest_age_s is None and first.types[0].claimed is None
            with s.open() as writer:
                for i in range(10):
                    push(writer, s.tables, payload=f"more {i}")
                taken = 0
                while taken < 25:
                    taken += len(pop(writer, s.tables, "w"))
            time.sleep(0.3)
            second = collector.poll()
        elapsed = (second.taken_at - first.taken_at).total_seconds()
        assert second.totals.depth == 25
        assert second.totals.completions_60s_per_s * elapsed == pytest.approx(25, rel=1e-3)
        assert second.totals.arrivals_60s_per_s * elapsed == pytest.approx(10, rel=1e-3)
        flag = s.layout.columns["finished"]
        assert s.count(f'SELECT COUNT(*) FROM {s.q(s.tables.queue)} WHERE "{flag}" = '
                       f'{"false" if backend_name == "postgres" else "0"}') == 25
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)


def test_flag_shapes_enqueue_with_the_flag_at_zero(work_queue: Seeded):
    out = work_queue.cli("enqueue", "-n", "5", "--info", "A")
    assert out.returncode == 0, out.stderr
    assert work_queue.stats()["totals"]["depth"] == 5
    nothing = work_queue.cli("release")
    assert nothing.returncode == 2 and "processed flag is final" in nothing.stderr


# -- concurrent workers: figures against the tables --------------------------------------------------------
@pytest.mark.parametrize("shape", list(PRESET_OF))
def test_concurrent_seed_workers_while_queuetop_polls(shape, backend_name, tmp_path):
    s = make_seeded(shape, backend_name, tmp_path)
    try:
        types = [GUID_A, GUID_B] if shape == "queuesample" else [None]
        with s.open() as db:
            for i in range(120):
                push(db, s.tables, job_type=types[i % len(types)], payload=f"job {i}")
        snapshots = []
        with s.open("monitor") as db:
            collector = collector_for(db, s.layout, settings={"lost_after": 600})
            snapshots.append(collector.poll())
            workers = threading.Thread(target=lambda: [run_workers(s, 4, job_type=t) for t in types])
            workers.start()
            while workers.is_alive():
                snapshots.append(collector.poll())
                time.sleep(0.05)
            workers.join()
            snapshots.append(collector.poll())
        last = snapshots[-1]
        assert last.totals.depth == 0  # exact at rest
        assert all(snap.totals.depth <= 120 for snap in snapshots)
        if s.layout.completions is None:  # no times (002, 003): counted at each poll, since the first
            elapsed = (last.taken_at - snapshots[0].taken_at).total_seconds()
            assert last.totals.completions_60s_per_s * elapsed == pytest.approx(120, rel=1e-3)
        else:
            assert last.totals.completions_60s_per_s * 60 == pytest.approx(120)  # every completion once
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)


# -- detection and checks --------------------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QUEUETOP_DB": "", "QUEUETOP_LAYOUT": ""}
    return forked_cli.run(args, env=env, timeout=60)


def test_detection_picks_the_one_seed_table_and_says_so(tmp_path):
    s = make_seeded("job_queue", "sqlite", tmp_path)
    with s.open() as db:
        push(db, s.tables, payload="x")
    result = _cli("stats", "--json", "--db", s.db_text)
    assert result.returncode == 0, result.stderr
    assert "found Job_Queue: layout job_queue" in result.stderr
    assert json.loads(result.stdout)["layout"] == "job_queue"
    assert 'preset = "job_queue"' in _cli("detect", "--db", s.db_text).stdout


def test_several_candidates_are_listed_with_the_options_that_choose(tmp_path):
    s = make_seeded("job_queue", "sqlite", tmp_path)
    with s.open() as db:
        create_seed(db, "work_queue")
    result = _cli("stats", "--db", s.db_text)
    assert result.returncode == 2
    assert "2 queue tables found" in result.stderr and "--layout job_queue --table Job_Queue" in result.stderr
    assert "--layout work_queue --table work_queue" in result.stderr


def test_a_missing_column_names_the_table_the_column_and_the_preset_that_fits(tmp_path):
    s = make_seeded("work_queue", "sqlite", tmp_path)
    result = _cli("stats", "--db", s.db_text, "--layout", "job_queue", "--table", "work_queue")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "table work_queue has no column" in result.stderr and "use --layout work_queue" in result.stderr
    missing = _cli("stats", "--db", s.db_text, "--layout", "job_queue")
    assert missing.returncode == 2 and "table Job_Queue not found" in missing.stderr


def test_load_says_clearly_when_a_layout_file_describes_no_dequeue(tmp_path):
    s = make_seeded("work_queue", "sqlite", tmp_path)
    own = tmp_path / "mine.toml"  # seed 002's table described by hand, without a [claim] section
    own.write_text('[tables]\nqueue = "work_queue"\n[queue_columns]\nid = "work_queue_id int"\n'
                   'finished = "processed_flag bit"\n[states]\npending = "finished = 0"\n')
    for command in ("load", "demo"):
        result = _cli(command, "--db", s.db_text, "--layout", str(own))
        assert result.returncode == 2 and "describes no dequeue" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


# -- clocks: the server's own, never the client's ----------------------------------------------------------
@pytest.mark.parametrize("shape", ["job_queue", "queuesample"])
def test_ages_use_the_servers_local_clock_in_a_non_utc_session(shape, tmp_path):
    s = make_seeded(shape, "postgres", tmp_path, pg_text=PG_TZ_TARGET)
    try:
        with s.open() as db:
            assert db.fetchone("SHOW TimeZone")[0] == "America/St_Johns"
            push(db, s.tables, job_type=GUID_A if shape == "queuesample" else None, payload="<info/>")
        time.sleep(0.2)
        data = s.stats()
        assert data["clock"] == "local"
        assert 0.1 <= data["totals"]["oldest_age_s"] < 30  # not hours: UTC vs St John's is 2.5 or 3.5 h
        if shape == "job_queue":
            assert data["totals"]["depth"] == 1 and data["totals"]["scheduled"] == 0
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)


def test_a_sqlite_monitor_statement_stops_at_the_statement_timeout(tmp_path, monkeypatch):
    """SQLite has no statement timeout of its own: a slow scan of a table with no helpful index must end as a
    clear timeout, not stall the dashboard (PostgreSQL has statement_timeout, SQL Server the ODBC query timeout)."""
    import queuetop.db.connection as connection

    monkeypatch.setitem(connection.STATEMENT_TIMEOUT_S, "monitor", 0.2)
    with Database.open(parse_target(str(tmp_path / "slow.db")), purpose="monitor", create=True) as db:
        started = time.monotonic()
        with pytest.raises(Exception, match="did not answer in time") as caught:
            db.fetchall("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) "
                        "SELECT COUNT(*) FROM n")
        assert type(caught.value).__name__ == "Timeout" and time.monotonic() - started < 2
        assert db.fetchall("SELECT 1") == [(1,)]  # the connection goes on


def test_layout_and_db_are_accepted_before_and_after_the_subcommand(tmp_path):
    s = make_seeded("job_queue", "sqlite", tmp_path)
    with s.open() as db:
        push(db, s.tables, payload="x")
    for args in (("--db", s.db_text, "--layout", "job_queue", "stats", "--json"),
                 ("--layout", "job_queue", "stats", "--json", "--db", s.db_text),
                 ("stats", "--json", "--db", s.db_text, "--layout", "job_queue")):  # fmt: skip
        result = _cli(*args)
        assert result.returncode == 0, (args, result.stderr)
        assert json.loads(result.stdout)["layout"] == "job_queue" and "found" not in result.stderr
    env_chosen = forked_cli.run(["stats", "--json", "--db", s.db_text], timeout=60,
                                env={**os.environ, "QUEUETOP_DB": "", "QUEUETOP_LAYOUT": "work_queue"})
    assert env_chosen.returncode == 2 and "table work_queue not found" in env_chosen.stderr  # $QUEUETOP_LAYOUT


def test_a_ranged_poll_reads_the_live_end_and_a_full_count_corrects_a_change_below_it(job_queue: Seeded):
    """Rows of seed 004 stay for good: after the first poll only ids from the lowest live one are read. A row
    changed by hand below that range shows once the next full count (every 60 s, in the background) has seen
    it: the range then starts from it."""
    s = job_queue
    with s.open() as db:
        for i in range(300):
            push(db, s.tables, payload=f"job {i}")
        for job in pop(db, s.tables, "w", batch=290):
            finish(db, s.tables, job)
    with s.open("monitor") as db:
        collector = collector_for(db, s.layout)
        assert collector.poll().totals.depth == 10
        with s.open() as writer:  # ids 291..300 are live; id 5 is finished history, made pending again by hand
            writer.execute(f'UPDATE {s.q(s.tables.queue)} SET "Attempts" = 0, "Processing_Mark" = NULL, '
                           '"Last_Attempt_End_Date" = NULL, "Last_Attempt_Start_Date" = NULL WHERE "ID" = 5')
            push(writer, s.tables, payload="new")
        ranged = collector.poll()
        assert ranged.totals.depth == 11  # the new job, read in the range; id 5 lies below it
        schedule = collector._recount.schedule
        schedule.next_at = schedule.earliest_at = 0  # the full count is due (it comes every 60 s)
        collector.poll()  # starts it, off the poll
        collector.settle()
        assert collector.poll().totals.depth == 12


def test_detect_prints_a_layout_file_that_watches_the_table_as_it_is(backend_name, tmp_path):
    s = make_seeded("requests", backend_name, tmp_path)
    try:
        with s.open() as db:
            push(db, s.tables, payload="r")
        detected = _cli("detect", "--db", s.db_text)
        assert detected.returncode == 0, detected.stderr
        blocks = ["# queuetop layout" + b for b in detected.stdout.split("# queuetop layout") if b.strip()]
        ours = [b for b in blocks if 'preset = "requests"' in b and (s.tables.schema is None
                                                                     or f'schema = "{s.tables.schema}"' in b)]
        assert len(ours) == 1, detected.stdout  # the shared test database may hold other tables too
        path = tmp_path / "mine.toml"
        path.write_text(ours[0])
        result = _cli("stats", "--json", "--db", s.db_text, "--layout", str(path))
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["totals"]["depth"] == 1
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)


def test_detection_skips_the_pending_view_and_the_completed_table(backend_name, tmp_path):
    """Seed 000's view and seed 001's completed table hold the queue's columns too: neither is a queue."""
    from queuetop.layouts.detect import detect

    s = make_seeded("queuesample", backend_name, tmp_path)
    try:
        with s.open() as db:
            requests_tables = create_seed(db, "requests", schema=s.tables.schema)
            found = detect(db)
        mine = {(c.preset, c.table.name, c.completed.name if c.completed else None) for c in found
                if c.table.schema == s.tables.schema}
        assert mine == {("queuesample", "WorkQueue", None), ("requests", "RequestsQueue", "RequestsCompleted")}
    finally:
        with s.open() as db:
            drop_seed(db, requests_tables)
            drop_seed(db, s.tables)


def test_a_poll_over_the_statement_timeout_names_the_missing_index(tmp_path, monkeypatch):
    import queuetop.db.connection as connection
    from queuetop.db import Timeout

    s = make_seeded("job_queue", "sqlite", tmp_path)
    with s.open() as db:
        db.execute('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) '
                   'INSERT INTO "Job_Queue" ("Payload") SELECT \'x\' FROM n')
    monkeypatch.setitem(connection.STATEMENT_TIMEOUT_S, "monitor", 0.0)
    with s.open("monitor") as db, pytest.raises(Timeout, match="layout job_queue: a poll read more of Job_Queue") \
            as caught:
        collector_for(db, s.layout).poll()
    assert "an index on the columns of its states" in str(caught.value)
