"""`queuetop doctor` on SQL Server: the settings and objects around the queue table that decide whether claims
and the monitor get in each other's way — read-committed snapshot, lock escalation, the native indexes' columns
(an index made by an older queuetop lacks the filter columns SQL Server needs, see layouts/sql/init.py), and
the procedures and triggers that write the queue (QUOTED_IDENTIFIER, without which a write to a table with a
filtered index fails). Each finding carries the statement that fixes it, printed, never run."""

from __future__ import annotations

from queuetop.db import Database
from queuetop.db.diagnostics import Diagnostics
from queuetop.db.diagnostics.mssql import MSSQLDiagnostics
from queuetop.layouts import Layout
from queuetop.layouts.schema import outdated_indexes
from queuetop.serve.findings import Finding, Status


def sqlserver_findings(db: Database, layout: Layout, diag: Diagnostics) -> list[Finding]:
    """Every SQL Server check, in a DBA's order: reads, lock escalation, the native indexes' columns, the code
    that writes the queue."""
    assert isinstance(diag, MSSQLDiagnostics)
    findings = [*_settings(db, layout, diag)]
    if layout.made_by_init:
        findings += outdated_index_findings(db, layout)
    findings += _writer_findings(db, layout, diag)
    return findings


def _settings(db: Database, layout: Layout, diag: MSSQLDiagnostics) -> list[Finding]:
    findings = []
    if diag.read_committed_snapshot(db):
        findings.append(Finding("read-committed snapshot", Status.OK, "on: plain reads see committed rows "
                                "without waiting for writers"))
    else:
        findings.append(Finding(
            "read-committed snapshot", Status.WARN, "off",
            "readers wait for writers' locks: queuetop's monitor reads with NOLOCK (counts may include "
            "uncommitted rows), and any report or worker that reads the queue plainly blocks on claims",
            "-- ends other sessions' transactions: run in a quiet moment\n"
            + diag.read_committed_snapshot_sql(diag.database_name(db))))
    escalation = diag.lock_escalation(db, layout.schema, layout.queue_table)
    if escalation == "DISABLE":
        findings.append(Finding("lock escalation", Status.OK, f"{layout.queue_table}: DISABLE"))
    else:
        made_here = " (queuetop init sets it on its own table)" if layout.made_by_init else \
            " (queuetop does not alter tables it did not create)"
        findings.append(Finding(
            "lock escalation", Status.WARN, f"{layout.queue_table}: {escalation or '?'}",
            "past ~5,000 locks in one statement (a bulk enqueue, a big release) SQL Server takes a table lock; "
            "READPAST cannot skip it, so every claimer waits and then fails with error 1222" + made_here,
            diag.lock_escalation_sql(layout.schema, layout.queue_table)))
    return findings


def _writer_findings(db: Database, layout: Layout, diag: MSSQLDiagnostics) -> list[Finding]:
    findings = []
    filtered = diag.partial_indexes(db, layout.schema, layout.queue_table)
    writers = diag.writers_without_quoted_identifier(db, layout.queue_table)
    if writers and filtered:
        findings.append(Finding(
            "QUOTED_IDENTIFIER of the code that writes the queue", Status.FAIL,
            f"{len(writers)} module(s) created with QUOTED_IDENTIFIER OFF; the table has filtered index(es) "
            f"{', '.join(sorted(filtered))}",
            "an INSERT, UPDATE or DELETE on a table with a filtered index fails (error 1934) when run with "
            "QUOTED_IDENTIFIER OFF, which these modules keep from their creation (sqlcmd's default is OFF)",
            "\n".join(f"-- {kind.lower()} {schema}.{name}: recreate it with the setting on\nSET QUOTED_IDENTIFIER "
                      f"ON;\nGO\n-- then its CREATE OR ALTER again; its text: EXEC sp_helptext N'{schema}.{name}';"
                      for schema, name, kind in writers)))  # fmt: skip
    elif writers:
        findings.append(Finding(
            "QUOTED_IDENTIFIER of the code that writes the queue", Status.WARN,
            f"{len(writers)} module(s) mentioning {layout.queue_table} were created with QUOTED_IDENTIFIER OFF",
            "harmless today; the day a filtered index is added to the table, their writes fail (error 1934)",
            details=tuple(f"{schema}.{name} ({kind})" for schema, name, kind in writers)))
    else:
        findings.append(Finding("QUOTED_IDENTIFIER of the code that writes the queue", Status.OK,
                                f"no procedure or trigger mentioning {layout.queue_table} has it OFF"))
    return findings


def outdated_index_findings(db: Database, layout: Layout) -> list[Finding]:
    outdated = outdated_indexes(db, layout)
    if not outdated:
        return [Finding("native indexes' columns", Status.OK, "every native index carries the columns it reads, "
                        "its filter's included")]
    return [Finding(
        "native indexes' columns", Status.WARN,
        f"{len(outdated)} index(es) made by an older queuetop lack columns: " + "; ".join(
            f"{step.name} lacks {', '.join(step.lacks)}" for step in outdated),
        "SQL Server reads a filtered index's filter column from the table when the index does not carry it: a key "
        "lookup per row, so each pending or claimed count costs lookups or a scan as the queue grows. "
        "DROP_EXISTING remakes each in one statement (add ONLINE = ON where the edition has it)",
        "\n".join(step.upgrade_sql or "" for step in outdated))]
