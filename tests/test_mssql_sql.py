"""SQL Server without a server: every T-SQL statement queuetop can issue is parsed, and the real Microsoft
driver (from the `mssql` extra) loads through pyodbc and fails cleanly against a server that is not there.

Statements are captured by running every SQL-issuing method of the SQL Server dialect on a recorder that
stands in for the connection (it only records; nothing here claims the queue works: the integration suite
does that on a real server when QUEUETOP_TEST_MSSQL is set). Each statement must parse as T-SQL with
sqlglot and carry exactly as many `?` as parameters.
"""

from __future__ import annotations

import inspect
import re
from contextlib import contextmanager
from datetime import datetime

import pytest
import sqlglot

from queuetop.db import ConnectError, Database, parse_target
from queuetop.db.connection import _connect_error
from queuetop.db.dialects import MSSQLDialect
from queuetop.db.dialects.base import Dialect
from queuetop.db.odbc import bundled_mssql_driver
from queuetop.layouts import NATIVE

NOW = datetime(2026, 1, 1, 12, 0, 0)


class RecordingConnection:
    """Takes statements instead of running them."""

    dialect = MSSQLDialect()

    def __init__(self) -> None:
        self.statements: list[tuple[str, tuple]] = []

    def execute(self, sql, params=()):
        self.statements.append((sql, tuple(params)))
        return 1

    def fetchall(self, sql, params=()):
        self.statements.append((sql, tuple(params)))
        return []

    def fetchone(self, sql, params=()):
        self.statements.append((sql, tuple(params)))
        return (1, 1)

    @contextmanager
    def transaction(self):
        yield

    def now(self):
        return NOW


def every_statement() -> tuple[list[tuple[str, tuple]], set[str]]:
    d, db, n = MSSQLDialect(), RecordingConnection(), NATIVE
    calls = {
        "enqueue": lambda: d.enqueue(db, n, ("email", "info", 128, NOW, NOW, "cli"), 500),
        "claim": lambda: (d.claim(db, n, worker="w", token="t", job_types=[], batch=1, now=NOW, timeout=NOW),
                          d.claim(db, n, worker="w", token="t", job_types=["a", "b"], batch=10, now=NOW,
                                  timeout=NOW)),
        "move_to_completed": lambda: (d.move_to_completed(db, n, job_id=1, token="t", outcome="succeeded", now=NOW),
                                      d.move_to_completed(db, n, job_id=1, token="t", outcome="dead", now=NOW,
                                                          min_attempts=3)),
        "unclaim": lambda: d.unclaim(db, n, job_id=1, token="t"),
        "retry_later": lambda: d.retry_later(db, n, job_id=1, token="t", available=NOW, max_attempts=3),
        "release_timed_out": lambda: (d.release_timed_out(db, n, job_type=None, now=NOW, max_attempts=3),
                                      d.release_timed_out(db, n, job_type="email", now=NOW, max_attempts=3)),
        "count_timed_out": lambda: (d.count_timed_out(db, n, None, NOW), d.count_timed_out(db, n, "email", NOW)),
        "queued_job_types": lambda: d.queued_job_types(db, n),
        "has_job_type": lambda: d.has_job_type(db, n, "email"),
        "pending_by_type": lambda: d.pending_by_type(db, n),
        "pending_heads": lambda: d.pending_heads(db, n, [("email", True), ("report", False)], 201),
        "claimed_by_type": lambda: d.claimed_by_type(db, n, NOW),
        "dead_by_type": lambda: d.dead_by_type(db, n),
        "max_job_id": lambda: d.max_job_id(db, n),
        "arrivals_after": lambda: (d.arrivals_after(db, n, 10, []), d.arrivals_after(db, n, 10, [3, 7])),
        "arrivals_since": lambda: d.arrivals_since(db, n, NOW),
        "completions_since": lambda: d.completions_since(db, n, NOW),
        "count_completed_between": lambda: d.count_completed_between(db, n, NOW, NOW),
        "oldest_pending": lambda: d.oldest_pending(db, n, "email", 20),
        "current_claims": lambda: d.current_claims(db, n, "email", 20),
        "recent_completions": lambda: d.recent_completions(db, n, "email", NOW, 20),
    }  # fmt: skip
    for call in calls.values():
        call()
    statements = list(db.statements)
    for obj in d.schema_objects(n):
        statements += [(obj.exists_sql, obj.exists_params), (obj.create_sql, ())]
    statements += [(sql, ()) for sql in d.session_setup("monitor") + d.session_setup("worker")]
    statements.append((d.server_now_sql(), ()))
    return statements, set(calls)


def test_every_sql_issuing_dialect_method_is_exercised():
    """A new statement in the dialect must join the list above, so it gets parsed too."""
    issuing = {
        name for name, member in inspect.getmembers(MSSQLDialect, inspect.isfunction)
        if "db" in inspect.signature(member).parameters and not name.startswith("_")
    }  # fmt: skip
    assert issuing == every_statement()[1]
    assert issuing >= {name for name, m in inspect.getmembers(Dialect, inspect.isfunction)
                       if "db" in inspect.signature(m).parameters}  # fmt: skip


STATEMENTS = every_statement()[0]


def parseable(sql: str) -> str:
    """sqlglot 30 cannot parse a schema-qualified `OUTPUT ... INTO [schema].[table]` target (it takes only a
    bare name there), so that one name is unqualified before parsing; the rest of the statement is as sent."""
    return re.sub(r"INTO \[queuetop\]\.(\[\w+\]) \(", r"INTO \1 (", sql) if "OUTPUT" in sql else sql


@pytest.mark.parametrize("sql,params", STATEMENTS, ids=[f"stmt{i}" for i in range(len(STATEMENTS))])
def test_statement_parses_as_tsql_with_matching_parameters(sql, params):
    parsed = sqlglot.parse(parseable(sql), read="tsql")
    assert parsed and all(tree is not None for tree in parsed)
    placeholders = len(re.findall(r"\?", re.sub(r"'[^']*'", "", sql)))
    assert placeholders == len(params), sql


def test_claim_is_the_readpast_cte_form_with_output():
    claim = next(sql for sql, _ in STATEMENTS if "UPDATE c SET" in sql and "READPAST" in sql and "TOP (?)" in sql)
    tree = sqlglot.parse_one(claim, read="tsql")
    assert isinstance(tree, sqlglot.exp.Update)
    assert "ROWLOCK, READPAST, UPDLOCK" in claim and "OUTPUT inserted." in claim


def test_monitor_reads_never_lock():
    reads = [sql for sql, _ in STATEMENTS if sql.startswith("/* queuetop */ SELECT") and "[queuetop]" in sql]
    assert reads and all("WITH (NOLOCK)" in sql for sql in reads)


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
    objects = d.schema_objects(NATIVE)
    setting = next(obj for obj in objects if obj.kind == "setting")
    assert setting.create_sql.endswith("ALTER TABLE [queuetop].[WorkQueue] SET (LOCK_ESCALATION = DISABLE)")
    assert "lock_escalation_desc = 'DISABLE'" in setting.exists_sql
    assert [obj.kind for obj in objects].index("setting") > [obj.kind for obj in objects].index("table")
    note = " ".join(d.schema_notes(NATIVE))
    assert "QUOTED_IDENTIFIER ON" in note and "sqlcmd" in note and "-I" in note and "1934" in note
    assert any("QUOTED_IDENTIFIER ON" in sql for sql in d.session_setup("worker"))  # its own sessions are right
