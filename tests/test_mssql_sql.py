"""SQL Server without a server: the native schema's T-SQL also parses in sqlglot (every statement is held to the
T-SQL check and the golden file in test_tsql.py), its claim and reads have the right form, the real Microsoft
driver (from the `mssql` extra) loads through pyodbc and fails cleanly against a server that is not there, and
Driver 18's TLS errors say what to change.
"""

from __future__ import annotations

import inspect
import re
from datetime import datetime

import pytest
import sqlglot

from queuetop.db import Conflict, ConnectError, Database, Timeout, TransientError, parse_target
from queuetop.db.connection import _connect_error
from queuetop.db.dialects import MSSQLDialect, PostgresDialect, SQLiteDialect
from queuetop.db.dialects.base import Dialect
from queuetop.db.odbc import bundled_mssql_driver
from queuetop.layouts import NATIVE
from queuetop.layouts.sql import Statements

from .golden.make_tsql import layout_statements, native_statements
from .tsql_check import SQLGLOT_GAPS, assert_tsql

STATEMENTS = [(sql, params) for _layout, _operation, sql, params in native_statements() + layout_statements("native")]


@pytest.mark.parametrize("dialect", [Dialect, MSSQLDialect, PostgresDialect, SQLiteDialect])
def test_a_dialect_is_primitives_only_it_takes_no_layout_and_no_connection(dialect):
    """Issue 19, step 4: statements are built in layouts.sql; a dialect spells pieces of them."""
    for name, member in inspect.getmembers(dialect, inspect.isfunction):
        assert not {"layout", "db"} & set(inspect.signature(member).parameters), f"{dialect.__name__}.{name}"


def parseable(sql: str) -> str:
    """sqlglot 30 cannot parse a schema-qualified `OUTPUT ... INTO [schema].[table]` target (it takes only a
    bare name there), so that one name is unqualified before parsing; the rest of the statement is as sent."""
    return re.sub(r"INTO \[queuetop\]\.(\[\w+\]) \(", r"INTO \1 (", sql) if "OUTPUT" in sql else sql


@pytest.mark.parametrize("sql,params", STATEMENTS, ids=[f"stmt{i}" for i in range(len(STATEMENTS))])
def test_statement_parses_in_sqlglots_tsql_too(sql, params):
    if sql.startswith("/* queuetop */ ALTER TABLE") and "LOCK_ESCALATION" in sql:
        return  # neither grammar knows it; tsql_check.GRAMMAR_GAPS holds its pattern
    if SQLGLOT_GAPS.match(sql):  # still a gap (sqlfluff's grammar reads it): once sqlglot does, this fails
        with pytest.raises(sqlglot.errors.ParseError):
            sqlglot.parse(parseable(sql), read="tsql")
        return
    parsed = sqlglot.parse(parseable(sql), read="tsql")
    assert parsed and all(tree is not None for tree in parsed)


def test_claim_is_the_readpast_cte_form_with_output():
    claim = next(sql for _layout, operation, sql, _ in layout_statements("native")
                 if operation == "claim_batch one type")
    tree = sqlglot.parse_one(claim, read="tsql")
    assert isinstance(tree, sqlglot.exp.Update)
    assert "ROWLOCK, READPAST, UPDLOCK" in claim and "OUTPUT inserted." in claim


DRILL_DOWN = ("rows_in_states", "recent_completions", "job_by_id")  # rows a person reads: READPAST
NOT_THE_MONITOR = ("row_states",)  # the load report's, after the run: it waits for what the workers hold


def test_without_rcsi_counts_read_nolock_and_the_drill_down_reads_past_locked_rows():
    entries = [(op, sql) for _layout, op, sql, _ in native_statements() + layout_statements("native")
               if sql.startswith("/* queuetop */ SELECT") and "[queuetop]" in sql]
    rows = [sql for op, sql in entries if op.startswith(DRILL_DOWN)]
    counts = [sql for op, sql in entries if not op.startswith(DRILL_DOWN + NOT_THE_MONITOR)]
    assert len(rows) == 5 and all("WITH (READPAST)" in sql and "NOLOCK" not in sql for sql in rows)
    assert counts and all("WITH (NOLOCK)" in sql for sql in counts)
    assert MSSQLDialect().reads == "dirty"


class AnswersRCSI:
    """A connection as `Database._configure_reads` sees it: its dialect, and the database's answers (RCSI, and the
    tables with an enabled trigger)."""

    def __init__(self, dialect: MSSQLDialect, on: bool, triggers: tuple[tuple[str, str], ...] = ()) -> None:
        self.dialect, self.on, self.triggers = dialect, on, triggers

    def fetchone(self, sql, params=()):
        assert "is_read_committed_snapshot_on" in sql
        return (self.on,)

    def fetchall(self, sql, params=()):
        assert "sys.triggers" in sql
        return list(self.triggers)


def test_on_a_queue_table_with_a_trigger_what_a_write_reads_back_goes_through_a_table_variable():
    d = MSSQLDialect()
    Database._configure_reads(AnswersRCSI(d, True, (("queuetop", "WorkQueue"), ("dbo", "Audit"))))  # type: ignore[arg-type]
    assert d.has_triggers("queuetop", "workqueue") and not d.has_triggers("queuetop", "WorkCompleted")
    insert = Statements(d, NATIVE).insert(["type"], delayed=False)
    assert insert.startswith("/* queuetop */ DECLARE @qt_out TABLE (qt_0 bigint); INSERT INTO")
    assert "OUTPUT inserted.[WorkQueueID] INTO @qt_out" in insert and insert.endswith("; SELECT * FROM @qt_out")
    assert "@qt_out" not in Statements(MSSQLDialect(), NATIVE).insert(["type"], delayed=False)  # no trigger: as ever


def test_with_rcsi_every_read_is_plain_and_committed():
    d = MSSQLDialect()
    Database._configure_reads(AnswersRCSI(d, True))  # type: ignore[arg-type]
    assert d.reads == "committed" and Statements(d, NATIVE).sql("SELECT 1 FROM {queue}{nolock}").endswith("[WorkQueue]")
    for _layout, _op, sql, params in native_statements(d):
        assert ("NOLOCK" not in sql and "READPAST)" not in sql) or "UPDLOCK" in sql
        assert_tsql(sql, params)
    off = MSSQLDialect()
    Database._configure_reads(AnswersRCSI(off, False))  # type: ignore[arg-type]
    assert off.reads == "dirty" and off.nolock == " WITH (NOLOCK)"


def test_the_bundled_microsoft_driver_loads_and_an_unreachable_server_is_a_clear_error():
    library = bundled_mssql_driver()
    assert library is not None and library.exists(), "pip install 'queuetop[mssql]' provides the driver"
    target = parse_target("DRIVER={ODBC Driver 18 for SQL Server};SERVER=127.0.0.1,1;UID=sa;PWD=hunter2;"
                          "TrustServerCertificate=yes;LoginTimeout=2")  # fmt: skip
    with pytest.raises(ConnectError) as caught:
        Database.open(target)
    message = str(caught.value)
    assert "cannot reach the database server" in message and "check SERVER and PORT" in message
    assert "hunter2" not in message and "Traceback" not in message


# Driver 18's own words, as users reported them (pyodbc issues #610 and #1321, dbt-sqlserver #219, HammerDB #390)
SELF_SIGNED_OPENSSL3 = ("[08001] [Microsoft][ODBC Driver 18 for SQL Server]SSL Provider: "
                        "[error:0A000086:SSL routines::certificate verify failed:self-signed certificate] (-1) "
                        "(SQLDriverConnect)")
SELF_SIGNED_OPENSSL1 = ("[08001] [Microsoft][ODBC Driver 18 for SQL Server]SSL Provider: [error:1416F086:SSL routines:"
                        "tls_process_server_certificate:certificate verify failed:self signed certificate] (-1) "
                        "(SQLDriverConnect)")
UNTRUSTED_CHAIN = ("[08001] [Microsoft][ODBC Driver 18 for SQL Server]SSL Provider: The certificate chain was "
                   "issued by an authority that is not trusted. (-2146893019) (SQLDriverConnect)")
OLD_SERVER = ("[08001] [Microsoft][ODBC Driver 18 for SQL Server]SSL Provider: [error:0A000102:SSL routines::"
              "unsupported protocol] (-1) (SQLDriverConnect)")


@pytest.mark.parametrize("raw", [SELF_SIGNED_OPENSSL3, SELF_SIGNED_OPENSSL1, UNTRUSTED_CHAIN])
def test_a_refused_certificate_says_trust_server_certificate(raw):
    error = _connect_error(Exception("08001", raw), parse_target("DRIVER={x};SERVER=db"), 0.2)
    text = str(error)
    assert "certificate" in text and "TrustServerCertificate=yes" in text and "install the server's CA" in text
    assert "SERVER and PORT" not in text and "(-1)" not in text


def test_the_openssl_reason_is_kept_not_stripped():
    text = str(_connect_error(Exception("08001", SELF_SIGNED_OPENSSL3), parse_target("DRIVER={x};SERVER=db"), 0.2))
    assert "certificate verify failed:self-signed certificate" in text


def test_an_old_servers_tls_says_encrypt_no():
    text = str(_connect_error(Exception("08001", OLD_SERVER), parse_target("DRIVER={x};SERVER=db"), 0.2))
    assert "unsupported protocol" in text and "Encrypt=no" in text and "SERVER and PORT" not in text


def test_init_disables_lock_escalation_on_the_queue_table_and_says_what_filtered_indexes_ask():
    d = MSSQLDialect()
    objects = Statements(d, NATIVE).schema_objects()
    setting = next(obj for obj in objects if obj.kind == "setting")
    assert setting.create_sql.endswith("ALTER TABLE [queuetop].[WorkQueue] SET (LOCK_ESCALATION = DISABLE)")
    assert "lock_escalation_desc = 'DISABLE'" in setting.exists_sql
    assert [obj.kind for obj in objects].index("setting") > [obj.kind for obj in objects].index("table")
    note = " ".join(Statements(d, NATIVE).schema_notes())
    assert "QUOTED_IDENTIFIER ON" in note and "sqlcmd" in note and "-I" in note and "1934" in note
    assert any("QUOTED_IDENTIFIER ON" in sql for sql in d.session_setup("worker"))  # its own sessions are right


class SessionRecorder:
    """Stands in for a pyodbc connection to SQL Server only to see how a session is set up (no data flows)."""

    def __init__(self) -> None:
        self.timeout = None
        self.sent: list[str] = []

    def cursor(self):
        recorder = self

        class Cursor:
            rowcount, description = 0, ()

            def execute(self, sql, params=()):
                recorder.sent.append(sql)

            def fetchall(self):
                return [(datetime(2026, 1, 1),)] if "SYSUTCDATETIME" in recorder.sent[-1] else [(0,)]

            def close(self):
                pass

        return Cursor()


@pytest.mark.parametrize("purpose, timeout_s", [("monitor", 5), ("worker", 60), ("bulk", 0)])
def test_sql_server_sessions_get_a_query_timeout_by_purpose_and_ask_for_rcsi(monkeypatch, purpose, timeout_s):
    recorder = SessionRecorder()
    monkeypatch.setattr("queuetop.db.connection._open_odbc", lambda target: (recorder, MSSQLDialect(), None))
    db = Database.open(parse_target("DRIVER={ODBC Driver 18 for SQL Server};SERVER=db"), purpose=purpose)
    assert recorder.timeout == timeout_s  # pyodbc's Connection.timeout: the ODBC query timeout, in seconds
    assert any("is_read_committed_snapshot_on" in sql for sql in recorder.sent) and db.dialect.reads == "dirty"
    assert ("SET DEADLOCK_PRIORITY LOW" in recorder.sent) == (purpose == "monitor")


@pytest.mark.parametrize("sqlstate, message, kind", [
    ("40001", "[40001] [Microsoft][ODBC Driver 18 for SQL Server][SQL Server]Transaction (Process ID 57) was "
              "deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun "
              "the transaction. (1205) (SQLExecDirectW)", Conflict),
    ("HY000", "[HY000] [Microsoft][ODBC Driver 18 for SQL Server][SQL Server]Lock request time out period "
              "exceeded. (1222) (SQLExecDirectW)", Timeout),
    ("HYT00", "[HYT00] [Microsoft][ODBC Driver 18 for SQL Server]Query timeout expired (0) (SQLExecDirectW)", Timeout),
    # a NOLOCK read that met a page split: the next poll reads again, no reconnect
    ("42000", "[42000] [Microsoft][ODBC Driver 18 for SQL Server][SQL Server]Could not continue scan with NOLOCK due "
              "to data movement. (601) (SQLExecDirectW)", Conflict),
])  # fmt: skip
def test_sql_servers_deadlocks_timeouts_and_nolock_data_movement_are_transient(sqlstate, message, kind):
    db = Database(parse_target("DRIVER={x};SERVER=db"), None, MSSQLDialect())
    error = db._classify(sqlstate, message)
    assert type(error) is kind and isinstance(error, TransientError)
