"""SQL Server without a server, for every shape: each statement queuetop builds for each preset parses as T-SQL in
sqlglot too (the golden file and the sqlfluff check are in test_tsql.py), reads without locks, and takes its times
from the server's clock of the layout's kind."""

from __future__ import annotations

import re

import pytest
import sqlglot

from queuetop.layouts import STATES, preset_names

from .golden.make_tsql import layout_statements, preset
from .test_mssql_sql import parseable
from .tsql_check import SQLGLOT_GAPS

STATEMENTS = [entry for name in preset_names("mssql") for entry in layout_statements(name)]


# sqlglot's T-SQL mode cannot read UPDATE TOP (n) (seed 000's GetNextJob and seed 002's SQL Server 2008
# alternative, sent as the seeds wrote them): those are held to sqlfluff's grammar alone (test_tsql.py).


@pytest.mark.parametrize("name, label, sql, params", STATEMENTS, ids=lambda v: v if isinstance(v, str) else "")
def test_every_statement_of_every_preset_parses_in_sqlglots_tsql_too(name, label, sql, params):
    assert sql.startswith("/* queuetop */ ")
    if SQLGLOT_GAPS.match(sql):  # still a gap: once sqlglot reads it, this fails and the exception can go
        with pytest.raises(sqlglot.errors.ParseError):
            sqlglot.parse_one(sql, read="tsql")
        return
    sqlglot.parse_one(parseable(sql), read="tsql")  # raises on anything its T-SQL mode would not accept as written


def test_monitor_reads_never_lock_and_times_are_the_servers_own():
    for name in preset_names("mssql"):
        layout = preset(name)
        sql = next(sql for layout_name, label, sql, _ in STATEMENTS if layout_name == name and label == "state_counts")
        assert sql.count("WITH (NOLOCK)") == sql.count(" FROM ")
        assert ("GETDATE()" in sql) == (layout.clock == "local")
        assert "SYSUTCDATETIME()" not in sql or layout.clock == "utc"


def test_no_statement_judges_a_claims_timeout_by_the_clients_clock():
    """A timeout is compared with the server's now in the statement, never with a time the client sends: worker
    and monitor hosts whose clocks drift still agree on which claims timed out."""
    for name in preset_names("mssql"):
        layout = preset(name)
        if not layout.has("timeout"):
            continue
        column = re.escape(f"[{layout.columns['timeout']}]")
        for layout_name, label, sql, _ in STATEMENTS:
            if layout_name == name:
                assert not re.search(rf"{column} *[<>]=? *(CAST\(\?|\?)", sql), (name, label)


def test_identifiers_are_bracketed_and_no_value_is_pasted():
    for _name, _label, sql, _params in STATEMENTS:
        body = sql.removeprefix("/* queuetop */ ")
        for literal in re.findall(r"'([^']*)'", body):
            # the poll's arm names, the state names the load report's CASE answers with, the epoch that
            # truncates a time to its second (mssql.second_sql), init's sp_getapplock modes: constants of the code
            assert literal in {"now", "queue", "completed", "done", "past", "overlap", "arrived", "heads", "finished",
                               "2000-01-01", "Exclusive", "Transaction", *STATES}, literal
