"""Several queue systems in one database, found without being told: procrastinate and pg-boss side by side (each
made by the real library) open one dashboard with a section each, as several targets do; with one system, or
with --layout, the dashboard is the usual one. A database of its own, so other tests' tables stay out of it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

import queuetop.tui
from queuetop.cli import main
from queuetop.db import Database, connstr, parse_target
from tests.conftest import PG_TARGET
from tests.libraries import LibraryApp

pytestmark = pytest.mark.postgres


@pytest.fixture
def database() -> Iterator[str]:
    name = f"qt_several_{uuid.uuid4().hex[:10]}"
    with Database.open(parse_target(PG_TARGET)) as db:
        db.execute(f"CREATE DATABASE {name}")
    try:
        yield name
    finally:
        with Database.open(parse_target(PG_TARGET)) as db:
            db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_procrastinate_and_pgboss_in_one_database_open_one_dashboard_with_a_section_each(
        database: str, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    env = {"QUEUETOP_LIB_PG": f"host=127.0.0.1 port=5432 dbname={database} user=postgres",
           "QUEUETOP_LIB_PG_URL": f"postgres://postgres@127.0.0.1:5432/{database}"}  # fmt: skip
    procrastinate, pgboss = LibraryApp("procrastinate", env), LibraryApp("pgboss", env)
    target = connstr.with_value(PG_TARGET, "database", database)
    with Database.open(parse_target(target)) as db:
        db.execute(f"CREATE SCHEMA {procrastinate.schema}")
    procrastinate.run("schema")
    shown: list = []
    monkeypatch.setattr(queuetop.tui, "run_multi_dashboard", lambda targets, **_: shown.append(targets) or 0)
    monkeypatch.setattr(queuetop.tui, "run_dashboard", lambda *_, **kw: shown.append([kw["layout"]]) or 0)
    monkeypatch.setenv("QUEUETOP_DB", target)
    assert main(["--no-history"]) == 0  # one system: the usual dashboard, on its layout
    assert [layout.name for layout in shown.pop()] == ["procrastinate"]
    pgboss.run("schema")
    assert main(["--no-history"]) == 0
    sections = shown.pop()
    assert sorted((s.name, s.layout.name, s.target.value) for s in sections) == [
        (f"pg-boss {pgboss.schema}.job", "pgboss", target),
        (f"procrastinate {procrastinate.schema}.procrastinate_jobs", "procrastinate", target)]  # fmt: skip
    assert all(s.note.startswith("found ") for s in sections)
    assert main(["--no-history", "--layout", "pgboss", "--table", f"{pgboss.schema}.job"]) == 0
    assert [layout.name for layout in shown.pop()] == ["pgboss"]  # chosen: one section
