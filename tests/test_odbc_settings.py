"""psqlODBC's settings that queuetop chooses: no savepoint before each statement, no server-side plan per statement.

Both cost a round trip per statement (bench/driver_vs_pgbench.py measured seed 001's move at 9 round trips a job
instead of 5). These tests hold the connection string rule, show on a real server that the settings are in effect,
and that parameters inlined by the driver (which UseServerSidePrepare=0 means) arrive intact.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from queuetop.db import DatabaseError
from queuetop.db.odbc import with_driver_defaults

PG = "DRIVER={PostgreSQL Unicode};SERVER=db;DATABASE=q"


def test_psqlodbc_connection_strings_get_queuetops_settings():
    assert with_driver_defaults(PG, dict) == PG + ";Protocol=7.4-1;UseServerSidePrepare=0"
    assert with_driver_defaults(PG + ";", dict) == PG + ";Protocol=7.4-1;UseServerSidePrepare=0"
    assert with_driver_defaults("DSN=queue;UID=ops", lambda: {"queue": "PostgreSQL Unicode"}).endswith(
        ";Protocol=7.4-1;UseServerSidePrepare=0")


def test_the_dsn_list_is_read_only_for_a_connection_string_without_a_driver():
    def no_ini_read() -> dict[str, str]:
        raise AssertionError("unixODBC's DSN list read for a string that names its driver")

    assert "Protocol=7.4-1" in with_driver_defaults(PG, no_ini_read)


def test_a_users_own_setting_wins_in_full_or_abbreviated():
    own = PG + ";protocol=7.4-2;C8=1"
    assert with_driver_defaults(own, dict) == own


@pytest.mark.parametrize("other", ["DRIVER={ODBC Driver 18 for SQL Server};SERVER=db", "DSN=unknown;UID=x",
                                   "DSN=mssql", "SERVER=db"])
def test_other_drivers_are_left_alone(other):
    assert with_driver_defaults(other, lambda: {"mssql": "ODBC Driver 18 for SQL Server"}) == other


def test_a_failed_statement_ends_the_transaction_as_postgresql_does(pg_backend):
    """Protocol=7.4-1: no savepoint before each statement, so an error rolls the whole transaction back (with the
    driver's default, statement-level rollback, the row inserted before the error would survive)."""
    with pg_backend.open() as db:
        db.execute("CREATE TEMPORARY TABLE probe (n integer)")
        db._connection.autocommit = False  # one transaction by hand: Database.transaction() rolls back on error
        try:
            db.execute("INSERT INTO probe VALUES (1)")
            with pytest.raises(DatabaseError):
                db.execute("SELECT 1 / (SELECT COUNT(*) - 1 FROM probe)")
            assert db.fetchone("SELECT COUNT(*) FROM probe")[0] == 0
        finally:
            db._connection.rollback()
            db._connection.autocommit = True


def test_parameters_are_inlined_by_the_driver_and_arrive_intact(pg_backend):
    """UseServerSidePrepare=0: the driver writes each parameter into the statement as a literal (a bare one is
    of type unknown), quoting it so that no value can change the statement."""
    nasty = "O'Brien; DROP TABLE x; -- \\' \" ? $1 漢字 🙂"
    moment = datetime(2026, 11, 24, 3, 4, 5, 123456)
    with pg_backend.open() as db:
        assert db.fetchone("SELECT CAST(pg_typeof(?) AS text)", ("x",))[0] == "unknown"
        row = db.fetchone("SELECT CAST(? AS text), CAST(? AS timestamp), CAST(? AS bigint), CAST(? AS text), "
                          "CAST(? AS double precision)", (nasty, moment, 2**62, None, 0.1))  # fmt: skip
    assert row == (nasty, moment, 2**62, None, 0.1)


def test_the_monitors_postgresql_session_never_jit_compiles_a_poll(pg_backend):
    """A poll's count over a big table passes jit_above_cost, and compiling it cost more than running it
    (bench/README: pg-boss at 10^6 jobs, 622 -> 313 ms); workers keep the server's setting."""
    with pg_backend.open(purpose="monitor") as monitor, pg_backend.open() as worker:
        assert monitor.fetchone("SHOW jit")[0] == "off"
        assert worker.fetchone("SHOW jit")[0] == worker.fetchone("SELECT reset_val FROM pg_settings WHERE name = "
                                                                 "'jit'")[0]  # fmt: skip


def test_a_batchs_rows_are_read_past_the_statements_before_them(pg_backend):
    """What SQL Server's table-variable form relies on (`StatementsBase.through_table`: DECLARE; a write with
    OUTPUT ... INTO; SELECT), through a real ODBC driver: the rows of the batch's SELECT, not "no results"."""
    with pg_backend.open() as db:
        batch = "CREATE TEMPORARY TABLE qt_probe (n integer); INSERT INTO qt_probe VALUES (7); SELECT n FROM qt_probe"
        assert db.fetchall(batch) == [(7,)]
