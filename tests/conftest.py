"""Shared fixtures: real databases only.

`backend` runs a test on the embedded SQLite file and on the PostgreSQL server (through pyodbc and
psqlODBC), plus SQL Server when QUEUETOP_TEST_MSSQL holds a connection string. Each test gets its own schema
(a copy of the native layout under a fresh schema name), so tests never see each other's jobs. PostgreSQL
must be reachable: a test that needs it fails, it never skips.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from queuetop.db import Database, Target, parse_target
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.schema import init_schema

from .helpers import native_queue_file
from .seedshapes import create_seed, push

PG_DEFAULT = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=5432;DATABASE=queuetop_test;UID=postgres"
PG_TARGET = os.environ.get("QUEUETOP_TEST_PG", PG_DEFAULT)
MSSQL_TARGET = os.environ.get("QUEUETOP_TEST_MSSQL")
BACKENDS = ["sqlite", "postgres"] + (["mssql"] if MSSQL_TARGET else [])


@pytest.fixture(autouse=True)
def history_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test keeps its history files (the dashboard's, `queuetop history`'s) in a folder of its own, never in
    the user's data directory."""
    folder = tmp_path_factory.mktemp("history")
    monkeypatch.setenv("QUEUETOP_HISTORY_DIR", str(folder))
    yield folder


@dataclass(frozen=True)
class Backend:
    """A real database with a fresh, initialised queue schema of its own."""

    name: str
    target: Target
    layout: Layout

    def open(self, purpose: str = "worker") -> Database:
        return Database.open(self.target, purpose=purpose)


@pytest.fixture(autouse=True)
def _as_in_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """`main()` in this process runs as from a terminal, whatever pytest made of stdout: bare `queuetop` is the
    dashboard (tests of a pipe run the command in a process of its own, its stdout a real pipe)."""
    monkeypatch.setattr("queuetop.cli._stdout_is_terminal", lambda: True)


@pytest.fixture(autouse=True, scope="session")
def _no_user_config_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A developer's own ~/.config/queuetop/config.toml (a default_target, SLOs) must not steer the tests: the
    config directory is an empty one, for this process and the commands it starts."""
    saved = {name: os.environ.get(name) for name in ("XDG_CONFIG_HOME", "QUEUETOP_CONFIG")}
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config-home"))
    os.environ.pop("QUEUETOP_CONFIG", None)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_report_header(config: pytest.Config) -> list[str]:
    mssql = "SQL Server: " + ("QUEUETOP_TEST_MSSQL is set, running" if MSSQL_TARGET else
                              "not run (set QUEUETOP_TEST_MSSQL to a connection string to run it)")
    return [f"queuetop backends: {', '.join(BACKENDS)}; PostgreSQL: {PG_TARGET}", mssql]


def _fresh_layout() -> Layout:
    return dataclasses.replace(NATIVE, schema=f"qt_{uuid.uuid4().hex[:12]}")


def make_backend(name: str, tmp_path, pg_text: str = PG_TARGET) -> Backend:
    if name == "sqlite":
        return Backend(name, parse_target(native_queue_file(tmp_path / "queue.db")), NATIVE)
    target = parse_target(pg_text if name == "postgres" else MSSQL_TARGET)
    layout = _fresh_layout()
    with Database.open(target) as db:
        init_schema(db, layout)
    return Backend(name, target, layout)


def drop_backend(backend: Backend) -> None:
    if backend.name == "sqlite":
        return
    with backend.open() as db:
        schema = db.dialect.quote(backend.layout.schema)
        if backend.name == "postgres":
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        else:
            for table in ("WorkQueue_Pending", "WorkQueue", "WorkCompleted"):
                kind = "VIEW" if table.endswith("Pending") else "TABLE"
                db.execute(f"DROP {kind} IF EXISTS {schema}.{db.dialect.quote(table)}")
            db.execute(f"DROP SCHEMA IF EXISTS {schema}")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path) -> Iterator[Backend]:
    made = make_backend(request.param, tmp_path)
    yield made
    drop_backend(made)


@pytest.fixture
def sqlite_backend(tmp_path) -> Backend:
    return make_backend("sqlite", tmp_path)


@pytest.fixture
def pg_backend(tmp_path) -> Iterator[Backend]:
    made = make_backend("postgres", tmp_path)
    yield made
    drop_backend(made)


@pytest.fixture
def seed_file(tmp_path):
    """Seed 003's table on a SQLite file, four jobs waiting: a shape with no times, whose completions are the
    growth of its processed rows between two polls."""
    path = tmp_path / "work.db"
    with Database.open(parse_target(str(path)), create=True) as db:
        tables = create_seed(db, "processed")
        for _ in range(4):
            push(db, tables)
    return path
