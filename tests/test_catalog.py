"""The catalog every command reads to find its tables (`Dialect.catalog_sql`), on a real PostgreSQL: the rows
information_schema gives, read from pg_catalog (the view works out privileges and types for every column of the
database: 10-20 ms here, far more on a catalog of thousands of tables), for the superuser and for a role that may
read only part of a schema."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from queuetop.db import Database, parse_target
from queuetop.layouts.detect import Catalog

from .conftest import PG_TARGET

INFORMATION_SCHEMA = ("SELECT c.table_schema, c.table_name, c.column_name, "
                      "CASE WHEN t.table_type = 'VIEW' THEN 1 ELSE 0 END "
                      "FROM information_schema.columns AS c JOIN information_schema.tables AS t "
                      "ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
                      "WHERE c.table_schema = ?")  # fmt: skip


@pytest.fixture
def schema() -> Iterator[tuple[Database, str, str]]:
    """A schema of every kind of relation, and a role granted part of it."""
    name = f"qt_cat_{uuid.uuid4().hex[:10]}"
    with Database.open(parse_target(PG_TARGET)) as db:
        for statement in (
            f"CREATE SCHEMA {name}", f"CREATE ROLE {name} NOLOGIN", f"GRANT USAGE ON SCHEMA {name} TO {name}",
            f"CREATE TABLE {name}.jobs (id bigint PRIMARY KEY, kind text, gone int)",
            f"ALTER TABLE {name}.jobs DROP COLUMN gone",
            f"CREATE VIEW {name}.jobs_v AS SELECT id, kind FROM {name}.jobs",
            f"CREATE TABLE {name}.parts (id bigint, at date) PARTITION BY RANGE (at)",
            f"CREATE TABLE {name}.parts_2026 PARTITION OF {name}.parts FOR VALUES FROM ('2026-01-01') TO "
            "('2027-01-01')",
            f"CREATE MATERIALIZED VIEW {name}.counted AS SELECT count(*) AS jobs FROM {name}.jobs",
            f"CREATE TABLE {name}.secret (id bigint, pin text)",
            f"CREATE TABLE {name}.half (id bigint, shown text, hidden text)",
            f"GRANT SELECT ON {name}.jobs, {name}.jobs_v, {name}.parts TO {name}",
            f"GRANT SELECT (id, shown) ON {name}.half TO {name}",
        ):
            db.execute(statement)
        try:
            yield db, name, name
        finally:
            db.execute("RESET ROLE")
            db.execute(f"DROP SCHEMA {name} CASCADE")
            db.execute(f"DROP ROLE {name}")


def rows(db: Database, sql: str, schema: str, params: tuple = ()) -> set[tuple[str, str, str, int]]:
    return {(str(s), str(t), str(c), int(v)) for s, t, c, v in db.fetchall(sql, params) if s == schema}


def test_the_catalog_is_information_schemas_rows_for_whoever_reads_it(schema: tuple[Database, str, str]) -> None:
    db, name, role = schema
    everything = rows(db, db.dialect.catalog_sql(), name)
    assert everything == rows(db, INFORMATION_SCHEMA, name, (name,))
    tables = {table for _, table, _, _ in everything}
    assert tables == {"jobs", "jobs_v", "parts", "parts_2026", "secret", "half"}  # no materialized view
    assert (name, "jobs_v", "kind", 1) in everything and (name, "jobs", "kind", 0) in everything
    assert not any(column == "gone" or "dropped" in column for _, _, column, _ in everything)

    named = rows(db, db.dialect.catalog_sql(2), name, ("jobs", "half"))  # a command that names its tables
    assert named == {row for row in everything if row[1] in ("jobs", "half")}

    db.execute(f"SET ROLE {role}")
    granted = rows(db, db.dialect.catalog_sql(), name)
    assert granted == rows(db, INFORMATION_SCHEMA, name, (name,))
    assert {(table, column) for _, table, column, _ in granted} == {
        ("jobs", "id"), ("jobs", "kind"), ("jobs_v", "id"), ("jobs_v", "kind"), ("parts", "id"), ("parts", "at"),
        ("half", "id"), ("half", "shown")}  # fmt: skip


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_catalog_of_named_tables_holds_those_in_any_case_and_no_other(kind: str, tmp_path: Path) -> None:
    """`check_layout` reads only the tables its layout names: a database of thousands of tables (a schema per
    tenant) costs it their rows no more."""
    schema = f"qt_cat_{uuid.uuid4().hex[:10]}"
    target = str(tmp_path / "q.db") if kind == "sqlite" else PG_TARGET
    prefix = "" if kind == "sqlite" else f"{schema}."
    with Database.open(parse_target(target), create=True) as db:
        if kind == "postgres":
            db.execute(f"CREATE SCHEMA {schema}")
        try:
            for table in ("WorkQueue", "WorkCompleted", "Other", "WorkQueueOld"):
                db.execute(f'CREATE TABLE {prefix}"{table}" (id bigint PRIMARY KEY, kind text)')
            found = Catalog(db, ["workqueue", "WORKCOMPLETED"])
            mine = sorted(t.name for t in found.tables if t.schema in (None, schema))
            assert mine == ["WorkCompleted", "WorkQueue"]
            assert found.find(schema if kind == "postgres" else None, "WorkQueue", (None,)) is not None
            assert sorted(t.name for t in Catalog(db).tables if t.schema in (None, schema)) == [
                "Other", "WorkCompleted", "WorkQueue", "WorkQueueOld"]  # fmt: skip
        finally:
            if kind == "postgres":
                db.execute(f"DROP SCHEMA {schema} CASCADE")
