"""`queuetop doctor` reads the dequeue: how each claim form a layout declares (CLAIM_FORMS) takes its rows, and
what that does to workers that claim at once. A form is data — queuetop renders each exactly as its seed wrote it
(layouts/sql/claim.py) — so its verdict is data too, per database: SQL Server runs the seed's own hints,
PostgreSQL the same claim with FOR UPDATE SKIP LOCKED in place of READPAST/UPDLOCK/XLOCK, SQLite every claim
under BEGIN IMMEDIATE (one writer at a time: claims take turns, and none can take a row twice). Each finding
names the fix; tests/test_doctor_sqlserver.py holds each SQL Server verdict to the statement in the golden file."""

from __future__ import annotations

from dataclasses import dataclass

from queuetop.layouts import Layout
from queuetop.serve.findings import Finding, Status


@dataclass(frozen=True)
class Verdict:
    status: Status
    summary: str
    meaning: str = ""
    fix: str | None = None


_UNLOCKED = Verdict(
    Status.FAIL, "the pick takes no lock and the UPDATE is no compare-and-set",
    "two workers that pick at once both read the same row and both mark it: one job runs twice (seed 002's "
    "'Discovering the Problem')",
    "-- the seed's own fix (claim form select_update): lock the row you pick, skip the ones others hold\n"
    "SELECT TOP (1) ... FROM ... WITH (UPDLOCK, READPAST) WHERE ...;\n"
    "-- or make the UPDATE a compare-and-set and take the row only when it changed one:\n"
    "UPDATE ... SET processed_flag = 1 WHERE id = @id AND processed_flag = 0;")
_FINE = {
    "batch": "reads WITH (ROWLOCK, READPAST, UPDLOCK): claimers skip each other's rows and never wait",
    "update_top": "one UPDATE TOP (1) ... WITH (READPAST): claimers skip each other's rows",
    "cte": "one UPDATE of a TOP (1) ... WITH (READPAST) pick: claimers skip each other's rows",
    "select_update": "a pick WITH (UPDLOCK, READPAST), then the UPDATE of that row, in one transaction",
}
VERDICTS: dict[str, dict[str, Verdict]] = {
    "mssql": {
        **{form: Verdict(Status.OK, text) for form, text in _FINE.items()},
        "unlocked": _UNLOCKED,
        "batch_mark": Verdict(
            Status.WARN, "the pick reads WITH (READPAST) but without UPDLOCK, and a separate UPDATE marks the rows",
            "claimers that pick at once read the same ids (nothing locks them until the UPDATE); the later one then "
            "waits on the earlier one's marks and marks fewer rows than it asked for: concurrent claimers "
            "under-claim, and the batch size is a ceiling, not a size",
            "-- lock what the pick reads, so each claimer skips the others' rows:\n"
            "... INNER JOIN (SELECT TOP (@n) [ID] FROM [dbo].[Job_Queue] WITH (UPDLOCK, READPAST) WHERE ...) ..."),
        "move": Verdict(
            Status.WARN, "the pick reads WITH (ROWLOCK, XLOCK) without READPAST",
            "each consumer's pick waits for the row the consumer before it locked, until that one commits: the "
            "consumers run one at a time, however many there are",
            "-- skip the rows others hold:\nSELECT TOP (1) ... FROM [dbo].[RequestsQueue] WITH (ROWLOCK, XLOCK, "
            "READPAST);"),
    },
    "postgresql": {
        "unlocked": _UNLOCKED,
        **{form: Verdict(Status.OK, "FOR UPDATE SKIP LOCKED in place of the seed's hints: claimers skip each "
                                    "other's rows") for form in (*_FINE, "batch_mark", "move")},
    },
}
_SQLITE = Verdict(Status.OK, "BEGIN IMMEDIATE: one claimer at a time holds the write lock, so none takes a row twice "
                             "(claims take turns: SQLite has one writer)")


def claim_findings(layout: Layout, dialect: str) -> list[Finding]:
    """One finding per claim form the layout declares. The first is the seed's own dequeue, judged as it is; the
    others are forms its document also shows (seed 002's unlocked 'problem'), which a team may run or not: at
    worst a warning, said as "if your workers use it"."""
    if layout.claim is None:
        return []
    findings = []
    for rank, form in enumerate(layout.claim.forms):
        verdict = VERDICTS.get(dialect, {}).get(form, _SQLITE)
        status, summary = verdict.status, verdict.summary
        if rank and status is Status.FAIL:
            status, summary = Status.WARN, f"if your workers use this form: {summary}"
        findings.append(Finding(f"claim: {form}", status, summary, verdict.meaning, verdict.fix))
    return findings
