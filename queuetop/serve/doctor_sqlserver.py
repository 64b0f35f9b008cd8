"""`queuetop doctor` on SQL Server: the settings and objects around the queue table that decide whether claims
and the monitor get in each other's way — read-committed snapshot, lock escalation, the native indexes' columns
(an index made by an older queuetop lacks the filter columns SQL Server needs, see layouts/sql/init.py), forced
parameterization (a filtered index's literal never matches a parameter) and the ANSI_NULLS default, and the
procedures and triggers that write the queue (QUOTED_IDENTIFIER and ANSI_NULLS, without which a write to a table
with a filtered index fails). Each finding carries the statement that fixes it, printed, never run."""

from __future__ import annotations

import re

from queuetop.db import Database, QueuetopError
from queuetop.db.diagnostics import Diagnostics
from queuetop.db.diagnostics.mssql import MSSQLDiagnostics
from queuetop.layouts import Layout
from queuetop.layouts.schema import outdated_indexes
from queuetop.serve.findings import Finding, Status


def sqlserver_findings(db: Database, layout: Layout, diag: Diagnostics) -> list[Finding]:
    """Every SQL Server check, in a DBA's order: reads, lock escalation, parameterization and ANSI_NULLS, the
    native indexes' columns, the code that writes the queue."""
    assert isinstance(diag, MSSQLDiagnostics)
    findings = [*_settings(db, layout, diag), *_database_findings(db, diag)]
    if layout.made_by_init:
        findings += outdated_index_findings(db, layout)
    findings += _writer_findings(db, layout, diag)
    findings += _trigger_findings(db, layout, diag)
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
    check = "settings of the code that writes the queue"
    filtered = diag.partial_indexes(db, layout.schema, layout.queue_table)
    writers = diag.writers_without_index_settings(db, layout.queue_table)
    if not writers:
        return [Finding(check, Status.OK, f"no procedure or trigger mentioning {layout.queue_table} has "
                                          "QUOTED_IDENTIFIER or ANSI_NULLS off")]
    if not filtered:
        return [Finding(
            check, Status.WARN, f"{len(writers)} module(s) mentioning {layout.queue_table} were created with "
                                "QUOTED_IDENTIFIER or ANSI_NULLS off",
            "harmless today; the day a filtered index is added to the table, their writes fail (error 1934)",
            details=tuple(f"{schema}.{name} ({kind}: {off} off)" for schema, name, kind, off in writers))]
    return [Finding(
        check, Status.FAIL, f"{len(writers)} module(s) created with QUOTED_IDENTIFIER or ANSI_NULLS off; the table "
                            f"has filtered index(es) {', '.join(sorted(filtered))}",
        "an INSERT, UPDATE or DELETE on a table with a filtered index fails (error 1934) when run with either "
        "setting off, which these modules keep from their creation (sqlcmd's QUOTED_IDENTIFIER default is OFF)",
        "\n".join(f"-- {kind.lower()} {schema}.{name} has {off} off: recreate it with them on\n"
                  f"SET QUOTED_IDENTIFIER ON;\nSET ANSI_NULLS ON;\nGO\n-- then its CREATE OR ALTER again; its text: "
                  f"EXEC sp_helptext N'{schema}.{name}';" for schema, name, kind, off in writers))]


def _trigger_findings(db: Database, layout: Layout, diag: MSSQLDiagnostics) -> list[Finding]:
    """Enabled triggers on the queue's tables. On the queue table SQL Server refuses OUTPUT without INTO (error
    334): queuetop's enqueue and claims read back what they wrote through a table variable there instead
    (`StatementsBase.through_table`). On the completed table it refuses OUTPUT INTO it (error 331): each move of a
    finished job is one, so those fail. Watching is unaffected either way."""
    on_queue = diag.enabled_triggers(db, layout.schema, layout.queue_table)
    on_completed = diag.enabled_triggers(db, layout.schema, layout.completed_table) if layout.completed_table else []
    findings = []
    if on_queue:
        findings.append(Finding(
            "triggers on the queue table", Status.OK, f"{layout.queue_table}: {', '.join(on_queue)}",
            "SQL Server refuses OUTPUT without INTO on it (error 334): queuetop's enqueue and claims read back what "
            "they wrote through a table variable there"))
    if on_completed:
        findings.append(Finding(
            "triggers on the completed table", Status.WARN, f"{layout.completed_table}: {', '.join(on_completed)}",
            "each move of a finished job into it (complete, fail, a release's burial) is an OUTPUT INTO it, which "
            "SQL Server refuses on a table with an enabled trigger (error 331): those writes fail; watching is "
            "unaffected",
            "\n".join(f"-- only if the trigger's work can move elsewhere (or while a load test runs):\nDISABLE TRIGGER "
                      f"{db.dialect.quote(trigger)} ON {db.dialect.qualify(layout.schema, layout.completed_table)};"
                      for trigger in on_completed)))  # fmt: skip
    if not findings:
        findings.append(Finding("triggers", Status.OK, "no enabled trigger on the queue's tables"))
    return findings


def _database_findings(db: Database, diag: MSSQLDiagnostics) -> list[Finding]:
    forced, ansi_nulls = diag.database_settings(db)
    findings = []
    if forced:
        findings.append(Finding(
            "parameterization", Status.WARN, "FORCED",
            "SQL Server turns the literals of every query into parameters, and a parameter never matches a filtered "
            "index's predicate: counts that lean on one (dead jobs: `Outcome = 'dead'`, a seed's flag column) read "
            "the table instead. If FORCED was chosen for other queries, keep it and expect these reads to scan",
            diag.parameterization_sql(diag.database_name(db))))
    else:
        findings.append(Finding("parameterization", Status.OK, "SIMPLE: the filtered indexes' literals match"))
    if ansi_nulls:
        findings.append(Finding("ANSI_NULLS default", Status.OK, "ON"))
    else:
        findings.append(Finding(
            "ANSI_NULLS default", Status.WARN, "OFF",
            "a session that does not set ANSI_NULLS itself (ODBC and queuetop do; some old clients and tools do not) "
            "fails its writes to a table with a filtered index (error 1934)",
            diag.ansi_nulls_sql(diag.database_name(db))))
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


# SQL Server's words for a refused permission: "VIEW SERVER STATE permission was denied on object 'server', ..."
# (error 300), "SHOWPLAN permission denied in database 'jobs'." (262)
_DENIED = re.compile(r"\b([A-Z][A-Z ]*[A-Z]) permission (?:was )?denied")


def permission_finding(db: Database, diag: Diagnostics, check: str, error: QueuetopError) -> Finding | None:
    """A check SQL Server refused for want of a permission, as a finding that names it and prints the GRANT,
    instead of "could not read"; None for any other error."""
    assert isinstance(diag, MSSQLDiagnostics)
    denied = _DENIED.search(str(error))
    if denied is None:
        return None
    permission = denied.group(1)
    try:
        login, user = diag.principals(db)
    except QueuetopError:
        login = user = "the monitor's login"
    return Finding(check, Status.UNKNOWN, f"not checked: {login} lacks {permission}",
                   f"SQL Server refused this check's read ({permission}); queuetop needs it for this check only, "
                   "and watches the queue without it", diag.grant_sql(permission, login, user))
