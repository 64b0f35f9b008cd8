"""`queuetop doctor` on SQL Server without a server: every statement it sends and every fix it prints parses in
sqlfluff's T-SQL grammar with no unparsable segment, carries `/* queuetop */` where it is sent, and the showplan
reader tells a seek from a scan in plan XML as SQL Server writes it.

Self-contained on purpose: when the shared T-SQL checker of issue 9 lands, `tsql_violations` is the one function
to point at it."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from sqlfluff.core import FluffConfig, Linter

from queuetop.db.diagnostics import AccessKind
from queuetop.db.diagnostics import mssql as m
from queuetop.db.dialects import MSSQLDialect
from queuetop.layouts import load_layout, preset_names, with_tables
from queuetop.serve.doctor import Doctor

LINTER = Linter(config=FluffConfig(overrides={"dialect": "tsql"}))


def tsql_violations(sql: str) -> list[str]:
    """What sqlfluff's T-SQL grammar cannot parse in `sql` (each `?` read as a variable @p1, @p2, ...)."""
    parts = sql.split("?")
    numbered = "".join(f"{part}@p{n}" for n, part in enumerate(parts[:-1], 1)) + parts[-1]
    parsed = LINTER.parse_string(numbered)
    return [str(v) for v in parsed.violations]


SENT = {
    "read-committed snapshot": m.READ_COMMITTED_SNAPSHOT_SQL, "lock escalation": m.LOCK_ESCALATION_SQL,
    "filtered indexes": m.FILTERED_INDEXES_SQL, "writers": m.WRITERS_SQL, "size": m.SIZE_SQL,
    "ghost records": m.GHOSTS_SQL, "agent jobs": m.AGENT_JOBS_SQL, "sessions, one table": m.sessions_sql(1),
    "sessions, two tables": m.sessions_sql(2), "database settings": m.DATABASE_SETTINGS_SQL,
    "principals": m.PRINCIPALS_SQL, "triggers": m.TRIGGERS_SQL, "index keys": m.INDEX_KEYS_SQL,
    "rows estimate": m.ROWS_ESTIMATE_SQL,
}  # fmt: skip


# Valid T-SQL that sqlfluff's grammar does not know: checked as exact text instead.
BEYOND_THE_GRAMMAR = {
    "lock escalation": "ALTER TABLE [dbo].[Job_Queue] SET (LOCK_ESCALATION = DISABLE);",
    "kill": "KILL 53;",
}


def printed_fixes() -> dict[str, str]:
    diag = m.MSSQLDiagnostics(MSSQLDialect())
    fixes = {
        "read-committed snapshot": diag.read_committed_snapshot_sql("jobs"),
        "retention utc": diag.retention_sql("queuetop", "WorkCompleted", "CompletedDate", "utc", 7, None),
        "parameterization": diag.parameterization_sql("jobs"), "ansi nulls": diag.ansi_nulls_sql("jobs"),
        "grant view server state": diag.grant_sql("VIEW SERVER STATE", "ops", "ops_user"),
        "grant showplan": diag.grant_sql("SHOWPLAN", "ops", "ops_user"),
    }
    for name in preset_names("mssql"):
        layout = load_layout(name)
        layout = with_tables(layout, "dbo.work_items") if layout.table_required else layout
        doctor = Doctor(SimpleNamespace(dialect=MSSQLDialect()), layout)  # type: ignore[arg-type]
        for advice in layout.advice:  # every preset's [[advice]], libraries' among them
            fixes[f"{name}: {advice.name}"] = doctor.advice_sql(advice)
        retention = doctor.retention_fix()
        if retention is not None:
            fixes[f"{name}: retention"] = retention
    return fixes


@pytest.mark.parametrize("name", sorted(SENT))
def test_every_statement_doctor_sends_to_sql_server_parses_as_tsql(name):
    sql = SENT[name]
    assert sql.startswith("/* queuetop */ ")
    assert tsql_violations(sql) == []
    assert " LIMIT " not in sql and "RETURNING" not in sql


def test_every_fix_doctor_prints_for_sql_server_parses_as_tsql():
    fixes = printed_fixes()
    assert len(fixes) >= 12
    refused = {name: tsql_violations(sql) for name, sql in fixes.items() if tsql_violations(sql)}
    assert refused == {}
    assert fixes["job_queue: IX_{queue}_LastAttemptEnd"] == \
        "CREATE INDEX [IX_Job_Queue_LastAttemptEnd] ON [dbo].[Job_Queue] ([Last_Attempt_End_Date]);"
    assert fixes["queuesample: IX_{queue}_PendingAge"].endswith("WHERE [RetrievedDate] IS NULL;")
    diag = m.MSSQLDiagnostics(MSSQLDialect())
    assert {"lock escalation": diag.lock_escalation_sql("dbo", "Job_Queue"), "kill": diag.terminate_sql("53")} \
        == BEYOND_THE_GRAMMAR
    assert diag.terminate_sql("53; DROP TABLE x") is None  # a session id is a number or nothing


def test_the_checker_refuses_what_is_not_tsql():
    assert tsql_violations("SELECT TOP (?) FROM WHERE")
    assert tsql_violations("ALTER TABLE t SET LOCK_ESCALATION DISABLE")


SEEK_THEN_SCAN = """<?xml version="1.0" encoding="utf-16"?>
<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564" Build="16.0.1000.6">
 <BatchSequence><Batch><Statements>
  <StmtSimple StatementText="SELECT ..." StatementId="1" StatementType="SELECT"><QueryPlan>
   <RelOp NodeId="0" PhysicalOp="Nested Loops" LogicalOp="Inner Join">
    <OutputList/>
    <NestedLoops Optimized="false">
     <RelOp NodeId="1" PhysicalOp="Index Seek" LogicalOp="Index Seek">
      <OutputList>
       <ColumnReference Database="[qt]" Schema="[queuetop]" Table="[WorkQueue]" Column="JobType"/>
      </OutputList>
      <IndexScan Ordered="true" ScanDirection="FORWARD" ForcedIndex="false" ForceSeek="false" NoExpandHint="false">
       <DefinedValues/>
       <Object Database="[qt]" Schema="[queuetop]" Table="[WorkQueue]" Index="[IX_WorkQueue_Pending]" Filtered="true"
               IndexKind="NonClustered"/>
       <SeekPredicates/>
      </IndexScan>
     </RelOp>
     <RelOp NodeId="2" PhysicalOp="Sort" LogicalOp="TopN Sort">
      <OutputList/>
      <Sort Distinct="false">
       <RelOp NodeId="3" PhysicalOp="Clustered Index Scan" LogicalOp="Clustered Index Scan">
        <OutputList/>
        <IndexScan Ordered="false" ForcedIndex="false" NoExpandHint="false">
         <Object Database="[qt]" Schema="[dbo]" Table="[Job_Queue]" Index="[PK_Job_Queue]" IndexKind="Clustered"/>
        </IndexScan>
       </RelOp>
      </Sort>
     </RelOp>
    </NestedLoops>
   </RelOp>
  </QueryPlan></StmtSimple>
 </Statements></Batch></BatchSequence>
</ShowPlanXML>"""


def test_the_showplan_reader_tells_a_seek_from_a_table_scan():
    plan = m.parse_showplan(SEEK_THEN_SCAN.replace('encoding="utf-16"', ""))
    assert [(a.table, a.kind, a.index) for a in plan.accesses] == [
        ("WorkQueue", AccessKind.SEEK, "IX_WorkQueue_Pending"),
        ("Job_Queue", AccessKind.TABLE_SCAN, "PK_Job_Queue"),
    ]
    assert plan.sorts


def test_a_key_lookup_is_read_apart_from_the_seeks_and_the_doctor_warns_of_it():
    from queuetop.serve.doctor import Probe

    looked_up = SEEK_THEN_SCAN.replace('encoding="utf-16"', "").replace(
        '<RelOp NodeId="3" PhysicalOp="Clustered Index Scan" LogicalOp="Clustered Index Scan">',
        '<RelOp NodeId="3" PhysicalOp="Clustered Index Seek" LogicalOp="Clustered Index Seek">').replace(
        '<IndexScan Ordered="false" ForcedIndex="false" NoExpandHint="false">',
        '<IndexScan Lookup="1" Ordered="true" ForcedIndex="false" NoExpandHint="false">')  # fmt: skip
    plan = m.parse_showplan(looked_up)
    assert [(a.table, a.kind) for a in plan.accesses] == [("WorkQueue", AccessKind.SEEK)]
    assert [(a.table, a.index) for a in plan.lookups] == [("Job_Queue", "PK_Job_Queue")]
    doctor = Doctor(SimpleNamespace(dialect=MSSQLDialect()), load_layout("native"))  # type: ignore[arg-type]
    finding = doctor.judge(Probe("poll: states (full pass)", "SELECT 1", ()), replace(plan, sorts=False), set(), {})
    assert finding.status.value == "warn" and "key lookup per row into Job_Queue" in finding.summary
    assert doctor.judge(Probe("poll", "SELECT 1", ()), replace(plan, sorts=False, lookups=()), set(), {}).status.value \
        == "ok"  # fmt: skip
