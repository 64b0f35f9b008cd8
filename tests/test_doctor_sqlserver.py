"""`queuetop doctor` and `init` on SQL Server's catalog. The native indexes carry their filter's columns (a
filtered index without them costs a key lookup per row), and an install made by an older queuetop is found by
its columns, not its name: `init` and `doctor` print the DROP_EXISTING statement that upgrades each such index,
and run nothing. Forced parameterization, an ANSI_NULLS default of OFF and code created with QUOTED_IDENTIFIER
or ANSI_NULLS off are said with their fix. No SQL Server here: the catalog's answers come from a stand-in that
answers each catalog view as the server would; the statements themselves are parsed by both T-SQL grammars
(tests/test_tsql.py, tests/test_doctor_tsql.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from queuetop.db.dialects import MSSQLDialect
from queuetop.db.recording import StatementRecorder
from queuetop.layouts import NATIVE
from queuetop.layouts.schema import outdated_indexes
from queuetop.layouts.sql import Statements
from queuetop.serve.doctor_claims import VERDICTS, claim_findings
from queuetop.serve.doctor_sqlserver import outdated_index_findings
from queuetop.serve.findings import Status

OLD = {  # what `queuetop init` made before the indexes carried their filter columns
    "IX_WorkQueue_Pending": ["JobType", "Priority", "AvailableDate", "CreatedDate"],
    "IX_WorkQueue_Claimed": ["JobType", "TimeoutDate", "CreatedDate"],
    "IX_WorkCompleted_Dead": ["JobType"],
}


class Catalog(StatementRecorder):
    """One SQL Server database's catalog: index name -> its columns (an index not listed does not exist), the
    database's settings, and the modules that mention the queue (schema, name, kind, quoted_identifier,
    ansi_nulls)."""

    def __init__(self, indexes: dict[str, list[str]], *, forced: bool = False, ansi_nulls: bool = True,
                 modules: tuple[tuple, ...] = (), triggers: dict[str, list[str]] | None = None) -> None:  # fmt: skip
        super().__init__(MSSQLDialect())
        self.indexes, self.settings, self.modules = indexes, (forced, ansi_nulls), modules
        self.triggers = triggers or {}

    def fetchall(self, sql, params=()):
        super().fetchall(sql, params)
        if "sys.index_columns" in sql:
            return [(column,) for column in self.indexes.get(params[1], [])]
        if "has_filter = 1" in sql:
            return [(name,) for name in self.indexes]
        if "sys.triggers" in sql:
            return [(name,) for name in self.triggers.get(params[0], [])]
        assert "sys.sql_modules" in sql, sql
        return list(self.modules)

    def fetchone(self, sql, params=()):
        super().fetchone(sql, params)
        answers = {"is_read_committed_snapshot_on": (1,), "lock_escalation_desc": ("DISABLE",),
                   "is_parameterization_forced": self.settings, "DB_NAME()": ("jobs",)}  # fmt: skip
        return next(answer for key, answer in answers.items() if key in sql)


def current() -> dict[str, list[str]]:
    statements = Statements(MSSQLDialect(), NATIVE)
    columns = {index.name: statements.index_columns(index) for index in statements.index_definitions()}
    return {name: keys + include for name, (keys, include) in columns.items()}


def test_each_filtered_index_carries_the_columns_of_its_filter():
    columns = current()
    assert "RetrievedDate" in columns["IX_WorkQueue_Pending"] and "RetrievedDate" in columns["IX_WorkQueue_Dequeue"]
    assert {"RetrievedDate", "Attempts"} <= set(columns["IX_WorkQueue_PendingAge"])
    assert {"RetrievedDate", "RetrievedBy"} <= set(columns["IX_WorkQueue_Claimed"])  # the workers screen's claimer
    assert "Outcome" in columns["IX_WorkCompleted_Dead"]


def test_an_index_made_by_an_older_queuetop_is_found_with_the_statement_that_upgrades_it():
    catalog = Catalog({**current(), **OLD, "IX_WorkQueue_Dequeue": []})  # Dequeue absent: init makes it, no upgrade
    found = {step.name: step for step in outdated_indexes(catalog, NATIVE)}
    assert set(found) == set(OLD)
    assert found["IX_WorkQueue_Pending"].lacks == ("RetrievedDate",)
    assert found["IX_WorkQueue_Claimed"].lacks == ("RetrievedDate", "RetrievedBy")
    assert found["IX_WorkCompleted_Dead"].upgrade_sql == (
        "CREATE INDEX [IX_WorkCompleted_Dead] ON [queuetop].[WorkCompleted] ([JobType], [CompletedDate], "
        "[WorkQueueID]) INCLUDE ([Outcome]) WHERE [Outcome] = 'dead' WITH (DROP_EXISTING = ON);")
    assert all(sql.removeprefix("/* queuetop */ ").startswith("SELECT") for sql, _ in catalog.statements)  # reads


def test_the_doctor_warns_of_them_and_prints_every_upgrade_and_is_quiet_when_all_are_current():
    (finding,) = outdated_index_findings(Catalog({**current(), **OLD}), NATIVE)
    assert finding.status is Status.WARN and "IX_WorkQueue_Claimed lacks RetrievedDate, RetrievedBy" in finding.summary
    assert finding.fix is not None and finding.fix.count("WITH (DROP_EXISTING = ON);") == len(OLD)
    (finding,) = outdated_index_findings(Catalog(current()), NATIVE)
    assert finding.status is Status.OK


def test_the_indexes_the_doctor_recommends_for_a_seeds_table_carry_their_filter_columns_too():
    from types import SimpleNamespace

    from queuetop.db.dialects.postgres import PostgresDialect
    from queuetop.layouts import load_layout
    from queuetop.serve.doctor import Doctor

    for name in ("queuesample", "requests"):
        (advice,) = [a for a in load_layout(name).advice if a.where]
        sql = Doctor(SimpleNamespace(dialect=MSSQLDialect()), load_layout(name)).advice_sql(advice)  # type: ignore[arg-type]
        filter_column = sql.split(" WHERE ")[1].split(" IS NULL")[0]
        assert f"INCLUDE ({filter_column})" in sql, sql
        postgres = Doctor(SimpleNamespace(dialect=PostgresDialect()), load_layout(name)).advice_sql(advice)  # type: ignore[arg-type]
        assert "INCLUDE" not in postgres  # a partial index's predicate is read from the index itself there


def findings_of(catalog: Catalog) -> dict[str, object]:
    from queuetop.db.diagnostics.mssql import MSSQLDiagnostics
    from queuetop.serve.doctor_sqlserver import sqlserver_findings

    return {f.check: f for f in sqlserver_findings(catalog, NATIVE, MSSQLDiagnostics(MSSQLDialect()))}


def test_a_well_kept_database_is_ok_on_every_sql_server_check():
    found = findings_of(Catalog(current()))
    assert {check: f.status for check, f in found.items()} == {
        "read-committed snapshot": Status.OK, "lock escalation": Status.OK, "parameterization": Status.OK,
        "ANSI_NULLS default": Status.OK, "native indexes' columns": Status.OK,
        "settings of the code that writes the queue": Status.OK, "triggers": Status.OK}  # fmt: skip


def test_an_enabled_trigger_is_said_with_the_writes_it_breaks():
    found = findings_of(Catalog(current(), triggers={"[queuetop].[WorkCompleted]": ["trg_audit"]}))
    on_completed = found["triggers on the completed table"]
    assert on_completed.status is Status.WARN and on_completed.summary == "WorkCompleted: trg_audit"
    assert "error 331" in on_completed.meaning
    assert on_completed.fix.endswith("DISABLE TRIGGER [trg_audit] ON [queuetop].[WorkCompleted];")
    from .test_doctor_tsql import tsql_violations

    assert tsql_violations(on_completed.fix) == []
    on_queue = findings_of(Catalog(current(), triggers={"[queuetop].[WorkQueue]": ["trg_stamp"]}))
    assert on_queue["triggers on the queue table"].status is Status.OK  # read back through a table variable
    assert "table variable" in on_queue["triggers on the queue table"].meaning


def test_forced_parameterization_and_ansi_nulls_off_are_said_with_their_fix():
    found = findings_of(Catalog(current(), forced=True, ansi_nulls=False))
    assert found["parameterization"].status is Status.WARN and "Outcome = 'dead'" in found["parameterization"].meaning
    assert found["parameterization"].fix == "ALTER DATABASE [jobs] SET PARAMETERIZATION SIMPLE;"
    assert found["ANSI_NULLS default"].fix == "ALTER DATABASE [jobs] SET ANSI_NULLS ON;"


def test_code_created_with_ansi_nulls_or_quoted_identifier_off_fails_on_a_table_with_filtered_indexes():
    modules = (("dbo", "EnqueueJob", "SQL_STORED_PROCEDURE", 1, 0), ("dbo", "TakeJob", "SQL_STORED_PROCEDURE", 0, 1),
               ("dbo", "Fine", "SQL_STORED_PROCEDURE", 1, 1))  # fmt: skip
    finding = findings_of(Catalog(current(), modules=modules))["settings of the code that writes the queue"]
    assert finding.status is Status.FAIL and finding.summary.startswith("2 module(s)")
    assert "dbo.EnqueueJob has ANSI_NULLS off" in finding.fix and "dbo.TakeJob has QUOTED_IDENTIFIER off" in finding.fix
    assert "Fine" not in finding.fix
    quiet = findings_of(Catalog({}, modules=modules))["settings of the code that writes the queue"]
    assert quiet.status is Status.WARN  # no filtered index yet: harmless today


def test_a_check_refused_for_a_permission_names_it_and_prints_the_grant_instead_of_could_not_read():
    from queuetop.db import DatabaseError
    from queuetop.serve.doctor import Doctor

    class Refusing(Catalog):
        def fetchone(self, sql, params=()):
            if "ORIGINAL_LOGIN()" in sql:
                return ("CORP\\svc-queuetop", "svc_queuetop")
            return super().fetchone(sql, params)

    doctor = Doctor(Refusing(current()), NATIVE)  # type: ignore[arg-type]

    def refused(message: str):
        def read():
            raise DatabaseError(f"the database refused the statement: {message}")
        return doctor._guard("sessions", read)

    server = refused("VIEW SERVER STATE permission was denied on object 'server', database 'master'. (300)")
    assert server.status is Status.UNKNOWN
    assert server.summary == "not checked: CORP\\svc-queuetop lacks VIEW SERVER STATE"
    assert "GRANT VIEW SERVER STATE TO [CORP\\svc-queuetop];" in server.fix and "USE master;" in server.fix
    plans = refused("SHOWPLAN permission denied in database 'jobs'. (262)")
    assert plans.fix == "GRANT SHOWPLAN TO [svc_queuetop];"
    other = refused("Invalid column name 'x'. (207)")
    assert other.summary.startswith("could not read") and other.fix is None


# -- the dequeue: each claim form's verdict held to the statement queuetop sends for it (the golden T-SQL) ------
GOLDEN = Path(__file__).parent / "golden" / "tsql"


def sent(preset: str, form: str) -> str:
    """The claim statements a form sends on SQL Server, as the golden file has them."""
    files = sorted(GOLDEN.glob(f"{preset}/claim-*-seed-s-own-claim-{form.replace('_', '-')}.sql")) or \
        sorted(GOLDEN.glob(f"{preset}/claim-batch-*.sql"))  # fmt: skip
    assert files, (preset, form)
    return "\n".join(line for path in files for line in path.read_text().splitlines() if not line.startswith("--"))


def hints(sql: str) -> list[set[str]]:
    return [{hint.strip().upper() for hint in found.split(",")} for found in re.findall(r"WITH \(([^)]*)\)", sql)]


@pytest.mark.parametrize(("preset", "form"), [("native", "batch"), ("work_queue", "select_update"),
                                              ("work_queue", "update_top"), ("processed", "cte")])
def test_a_form_judged_fine_on_sql_server_skips_the_rows_others_hold(preset: str, form: str) -> None:
    assert VERDICTS["mssql"][form].status is Status.OK
    assert all("READPAST" in found for found in hints(sent(preset, form)))
    if form == "select_update":
        assert hints(sent(preset, form)) == [{"UPDLOCK", "READPAST"}]


def test_each_faulty_form_is_what_its_statement_shows_and_names_its_fix() -> None:
    assert hints(sent("work_queue", "unlocked")) == []  # no lock on the pick …
    unguarded = r"UPDATE \S+ SET \S+ = 1 WHERE \S+ = CAST\(\? AS int\);"  # … nor a compare-and-set
    assert re.search(unguarded, sent("work_queue", "unlocked"))
    assert {"READPAST"} in hints(sent("job_queue", "batch_mark"))  # the inner pick: READPAST without UPDLOCK
    assert not any("UPDLOCK" in found and "READPAST" in found for found in hints(sent("job_queue", "batch_mark")))
    assert hints(sent("requests", "move")) == [{"ROWLOCK", "XLOCK"}]  # no READPAST: one consumer at a time
    for form in ("unlocked", "batch_mark", "move"):
        verdict = VERDICTS["mssql"][form]
        assert verdict.status is not Status.OK and verdict.fix and ("UPDLOCK" in verdict.fix or
                                                                     "READPAST" in verdict.fix)  # fmt: skip


def test_the_seeds_default_is_judged_as_it_is_and_the_other_forms_as_if_used() -> None:
    from dataclasses import replace

    from queuetop.layouts import load_layout

    work_queue = {f.check: f for f in claim_findings(load_layout("work_queue"), "mssql")}
    assert work_queue["claim: select_update"].status is Status.OK
    assert work_queue["claim: unlocked"].status is Status.WARN
    assert work_queue["claim: unlocked"].summary.startswith("if your workers use this form")
    layout = load_layout("work_queue")
    unlocked_first = replace(layout, claim=replace(layout.claim, forms=("unlocked",)))
    assert [f.status for f in claim_findings(unlocked_first, "mssql")] == [Status.FAIL]
    assert [f.status for f in claim_findings(load_layout("requests"), "mssql")] == [Status.WARN]
    assert [f.status for f in claim_findings(load_layout("requests"), "postgresql")] == [Status.OK]  # SKIP LOCKED
    assert [f.status for f in claim_findings(load_layout("requests"), "sqlite")] == [Status.OK]
