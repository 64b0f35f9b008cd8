"""`queuetop init` run several times at once, on one PostgreSQL schema and one SQLite file: every one succeeds, and
the schema is made exactly once."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from queuetop.db import Database, parse_target
from queuetop.layouts import NATIVE
from queuetop.layouts.schema import init_schema, schema_present
from tests.conftest import PG_TARGET

AT_ONCE = 6


def init_at_once(target_text: str, layout=NATIVE) -> list[list]:
    """AT_ONCE threads, each with its own connection, released together into init."""
    target = parse_target(target_text)
    barrier = threading.Barrier(AT_ONCE)
    results: list = [None] * AT_ONCE

    def run(n: int) -> None:
        try:
            with Database.open(target, create=True) as db:
                barrier.wait(10)
                results[n] = init_schema(db, layout)
        except BaseException as exc:  # reported below, with the others'
            results[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(AT_ONCE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    failures = [r for r in results if not isinstance(r, list)]
    assert not failures, failures
    return results


def created_once(results: list[list]) -> None:
    """Each object was created by exactly one of the inits; the others found it. A column added since the first
    release comes with its table on a fresh install: created by none."""
    for i, step in enumerate(results[0]):
        assert sum(steps[i].created for steps in results) == (0 if step.kind == "column" else 1), step


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_inits_at_once_all_succeed_and_make_each_object_once(backend: str, tmp_path: Path) -> None:
    if backend == "sqlite":
        created_once(init_at_once(str(tmp_path / "q.db")))
        return
    layout = dataclasses.replace(NATIVE, schema=f"qt_{uuid.uuid4().hex[:12]}")
    try:
        results = init_at_once(PG_TARGET, layout)
        created_once(results)
        with Database.open(parse_target(PG_TARGET)) as db:
            assert schema_present(db, layout)
    finally:
        with Database.open(parse_target(PG_TARGET)) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {db.dialect.quote(layout.schema)} CASCADE")


def test_six_init_commands_at_once_on_a_new_postgresql_database() -> None:
    """As the issue ran it: six processes, the native schema `queuetop`, a database of their own."""
    name = f"qt_init_{uuid.uuid4().hex[:10]}"
    with Database.open(parse_target(PG_TARGET)) as db:
        db.execute(f"CREATE DATABASE {name}")
    try:
        text = PG_TARGET.replace("DATABASE=queuetop_test", f"DATABASE={name}")
        assert text != PG_TARGET
        env = {**os.environ, "QUEUETOP_DB": "", "QUEUETOP_LAYOUT": ""}
        runs = [subprocess.Popen([sys.executable, "-m", "queuetop", "init", "--db", text], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env) for _ in range(AT_ONCE)]  # fmt: skip
        outcomes = [(run.wait(60), *run.communicate()) for run in runs]
        assert [code for code, _, _ in outcomes] == [0] * AT_ONCE, [err for _, _, err in outcomes]
        assert sum("schema ready: 11 object(s) created" in out for _, out, _ in outcomes) == 1, outcomes
    finally:
        with Database.open(parse_target(PG_TARGET)) as db:
            db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
