"""`queuetop doctor`: what a DBA checks before a load test, for any target and any layout, as findings.

Each finding says ok / warn / fail (or unknown, where the database cannot tell), what it means for the queue,
and the exact statement that would fix it — printed for a person to read and run, never run here. The checks:

- plans: every statement the monitor's poll, the drill-down and the dequeue send (the real ones: the native
  dialect's, or the layout's statement model for other shapes) is planned, not run — SQL Server's estimated plan
  (SHOWPLAN_XML), PostgreSQL's EXPLAIN with sequential scans priced out (so the answer holds at any table size),
  SQLite's EXPLAIN QUERY PLAN — and must reach its table through an index. A scan names the index that fixes it
  (the native schema's own, or the one bench/README.md measured for each seed's table);
- SQL Server (doctor_sqlserver.py): read-committed snapshot, lock escalation on the queue table (DISABLE
  recommended for a table it did not create), native indexes made by an older queuetop without the columns they
  now carry, and the procedures/triggers that write the queue created with QUOTED_IDENTIFIER OFF, which fail on a
  table with a filtered index;
- size and growth of the queue and completed tables (two reads `sample_s` apart), whether a retention rule can
  be seen, dead tuples / ghost records / SQLite free pages;
- sessions holding locks on the queue in an open transaction, and blocking chains (see `blocking.py`);
- the dequeue: each claim form the layout declares, judged for workers that claim at once (doctor_claims.py).

Pure Python over the db layer's diagnostics: no Textual, no SQL text of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from queuetop.db import Database, QueuetopError
from queuetop.db.diagnostics import AccessKind, Diagnostics, Plan, TableSize, diagnostics_for
from queuetop.db.diagnostics.mssql import MSSQLDiagnostics
from queuetop.db.diagnostics.sqlite import SQLiteDiagnostics
from queuetop.db.recording import StatementRecorder
from queuetop.layouts import STATES, Layout
from queuetop.layouts.model import IndexAdvice
from queuetop.layouts.predicate import Bool, parse_predicate, roles_of
from queuetop.layouts.schema import missing_columns
from queuetop.layouts.sql import Statements
from queuetop.serve.doctor_claims import claim_findings
from queuetop.serve.doctor_sqlserver import permission_finding, sqlserver_findings
from queuetop.serve.findings import Finding, Report, Status
from queuetop.serve.live_end import CHECK, live_end_finding
from queuetop.watch.blocking import IDLE_HOLDER_S, Blocking, queue_tables, read_blocking
from queuetop.watch.recount import DEPTH_EXACT_UP_TO

SAMPLE_S = 2.0  # between the two size reads that give growth
RETENTION_DAYS = 7  # in the suggested retention DELETE
RETENTION_SCHEDULERS = {"postgresql": "pg_cron", "mssql": "SQL Server Agent"}  # where a retention job is looked for
DEAD_SHARE = 0.2  # dead tuples / ghost records above this share of the live rows (and DEAD_MIN) are worth a vacuum
DEAD_MIN = 10_000
FREE_SHARE = 0.25  # SQLite: free pages above this share of the file (and FREE_MIN pages)
FREE_MIN = 1_000
DOCTOR_WORKER = "queuetop-doctor"


# -- the statements to plan --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Probe:
    """One statement queuetop sends, to be planned."""

    name: str
    sql: str
    params: tuple[Any, ...]
    limited: bool = False  # it wants the first rows only: a sort before them reads every match
    dequeue: bool = False  # a claim: a scan here holds workers up, not only the monitor
    expected: frozenset[str] = frozenset()  # native: the indexes made for it (any one of them will do)


def recorder_for(db: Database) -> StatementRecorder:
    """Reads the statements code would send to `db`, at `db`'s time, instead of running them."""
    return StatementRecorder(db.dialect, target=db.target, now=db.now(), changed=0)


def native_probes(db: Database, layout: Layout, settings: dict[str, Any] | None = None) -> list[Probe]:
    """The statements the poll (the one engine's, as for every layout), the drill-down and `Queue.claim` send to
    the native schema, each with the indexes `queuetop init` made for it."""
    from queuetop.act.queue import Queue

    d, rec = db.dialect, recorder_for(db)
    job_type, since = "doctor", datetime(2000, 1, 1)  # a plan, not a read
    pending, age, dequeue = "IX_WorkQueue_Pending", "IX_WorkQueue_PendingAge", "IX_WorkQueue_Dequeue"
    claimed, scheduled, completed = "IX_WorkQueue_Claimed", "IX_WorkQueue_Scheduled", "IX_WorkCompleted_Completed"
    dead = "IX_WorkCompleted_Dead"
    expected = {"poll: states (full pass)": [pending, age, dequeue, scheduled, claimed, dead],
                "poll: completions past the watermark": [completed], EVERY_POLL_PROBE: [age, scheduled, claimed, dead]}
    poll = [p for p in shape_probes(db, layout, settings) if p.name.startswith("poll: ")]
    s, others = Statements(d, layout), [name for name in STATES if name in layout.states and name != "pending"]
    poll.append(Probe(EVERY_POLL_PROBE, *s.shape_poll(others, settings, None, (0, 0), None, (since, None),
                                                      ([job_type], DEPTH_EXACT_UP_TO + 1))))

    def probe(name: str, call: Callable[[Any], object], indexes: Sequence[str] = (), **kind: bool) -> Probe:
        sql, params = rec.take(call)
        return Probe(name, sql, params, expected=frozenset(indexes), **kind)

    return [replace(p, expected=frozenset(expected.get(p.name, ()))) for p in poll] + [
        Probe("drill-down: oldest pending jobs", *s.rows_in_states(
            ["pending"], job_type, ["id", "created", "available", "priority", "attempts", "info"], ["created", "id"],
            20, settings), limited=True, expected=frozenset([age, pending])),
        probe("dequeue: claim one type", lambda r: Queue(r, layout).claim(DOCTOR_WORKER, [job_type]),
              [pending, dequeue], limited=True, dequeue=True),
        probe("dequeue: claim any type", lambda r: Queue(r, layout).claim(DOCTOR_WORKER),
              [dequeue, pending], limited=True, dequeue=True),
    ]  # fmt: skip


def shape_probes(db: Database, layout: Layout, settings: dict[str, Any] | None = None) -> list[Probe]:
    """The statements the shape collector and the drill-down send for this layout."""
    s, d = Statements(db.dialect, layout), db.dialect
    states = [name for name in STATES if name in layout.states]
    since = datetime(2000, 1, 1)  # a plan, not a read: the value only has to be of the right type
    probes = [Probe("poll: states (full pass)", *s.state_counts(states, settings))]
    if s.ranged:
        probes.insert(0, Probe("poll: states (live end, every poll)", *s.state_counts(states, settings, low_id=0)))
    if layout.arrivals == "identity":
        probes.append(Probe("poll: arrivals past the last id", *s.arrivals_by_id(0, 1000), limited=True))
    elif layout.arrivals == "created":
        probes.append(Probe("poll: arrivals past the watermark",
                            *s.arrivals_by_time(d.encode_value(layout.type_of("created"), since))))
    if layout.completions is not None:
        at = d.encode_value(layout.type_of(layout.completions.at), since)
        # read as the poll reads them: a log's lines from the last line a poll saw on (`Layout.log_lines`)
        probes.append(Probe("poll: completions past the watermark",
                            *s.completions_after(at, settings, 0 if layout.log_lines else None)))
    job_type = None
    if layout.has_job_type:
        job_type = "00000000-0000-0000-0000-000000000000" if layout.type_of("type") == "guid" else "doctor"
    probes.append(Probe("drill-down: pending rows", *s.rows_in_states(
        ["pending"], job_type, ["id"], ["created", "id"], 20, settings), limited=True))
    if layout.claim is not None:  # the seed's own dequeue, as `queuetop load` sends it: its first statement
        from queuetop.act.shape_worker import ShapeWorker

        def claim(recorder: Any) -> None:
            ShapeWorker(recorder, layout, None, settings).claim(DOCTOR_WORKER, [job_type] if job_type else [])

        probes.append(Probe(DEQUEUE_PROBE, *recorder_for(db).take(claim), limited=True, dequeue=True))
    return probes


DEQUEUE_PROBE = "dequeue: the seed's own claim"
EVERY_POLL_PROBE = "poll: every poll (states, pending heads, arrivals, completions)"


class Doctor:
    """Runs every check over one connection (a monitor connection: short timeouts, never a lock held)."""

    def __init__(self, db: Database, layout: Layout, *, settings: dict[str, Any] | None = None,
                 sample_s: float = SAMPLE_S, sleep: Callable[[float], None] = time.sleep,
                 idle_holder_s: float = IDLE_HOLDER_S) -> None:  # fmt: skip
        self.db = db
        self.idle_holder_s = idle_holder_s
        self.layout = layout
        self.settings = dict(settings or {})
        self.sample_s = sample_s
        self._sleep = sleep
        self.diagnostics: Diagnostics = diagnostics_for(db.dialect)

    def run(self) -> Report:
        findings: list[Finding] = []
        # the sessions first: who holds what at the moment the DBA asked, before the doctor's own reads
        blocking = self._guard("sessions", lambda: read_blocking(self.db, self.layout, self.diagnostics,
                                                                     idle_holder_s=self.idle_holder_s))
        findings += self._session_findings(blocking)
        if isinstance(self.diagnostics, MSSQLDiagnostics):
            findings += self._guarded("SQL Server settings", lambda: sqlserver_findings(self.db, self.layout,
                                                                                    self.diagnostics))
        if self.layout.made_by_init:
            findings += self._guarded("native schema", self._schema_findings)
        findings += claim_findings(self.layout, self.db.dialect.name)
        findings += self._guarded("plans", self._plan_findings)
        live_end = self._guard(CHECK, lambda: live_end_finding(self.db, self.layout, self.settings, self.diagnostics,
                                                                 self.advice_sql))
        findings += [live_end] if live_end is not None else []
        findings += self._guarded("table sizes", self._size_findings)
        return Report(self.db.target.display, self.db.dialect.name, self.layout.name, tuple(findings),
                      blocking if isinstance(blocking, Blocking) else Blocking(seen=False))  # fmt: skip

    def _guard(self, what: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except QueuetopError as exc:
            if isinstance(self.diagnostics, MSSQLDiagnostics):
                refused = permission_finding(self.db, self.diagnostics, what, exc)
                if refused is not None:
                    return refused
            return Finding(what, Status.UNKNOWN, f"could not read: {exc}", "this check did not run")

    def _guarded(self, what: str, call: Callable[[], list[Finding]]) -> list[Finding]:
        result = self._guard(what, call)
        return [result] if isinstance(result, Finding) else result

    # -- plans -------------------------------------------------------------------------------------------
    def probes(self) -> list[Probe]:
        if self.layout.made_by_init:  # the indexes `queuetop init` made, each expected where it serves
            return native_probes(self.db, self.layout, self.settings)
        return shape_probes(self.db, self.layout, self.settings)

    def _plan_findings(self) -> list[Finding]:
        self.diagnostics.prepare(self.db)
        try:
            return self._plans()
        finally:
            self.diagnostics.finish(self.db)

    def _plans(self) -> list[Finding]:
        partial = {name for _schema, table in queue_tables(self.layout)
                   for name in self.diagnostics.partial_indexes(self.db, _schema, table)}  # fmt: skip
        missing = self._missing_native_indexes() if self.layout.made_by_init else {}
        findings = []
        for probe in self.probes():
            try:
                plan = self.diagnostics.plan(self.db, probe.sql, probe.params)
            except QueuetopError as exc:
                findings.append(Finding(f"plan: {probe.name}", Status.UNKNOWN, f"could not plan it: {exc}",
                                        "the database refused to plan the statement", details=(probe.sql,)))
                continue
            findings.append(self.judge(probe, plan, partial, missing))
        return findings

    def judge(self, probe: Probe, plan: Plan, partial: set[str], missing: dict[str, str]) -> Finding:
        """ok when every table read goes through an index (a seek, or a scan of a partial index or under a row
        limit) on the index made for it (native); else warn, or fail for the dequeue."""
        check = f"plan: {probe.name}"
        backlog = self.backlog_tables()
        reads = "; ".join(a.describe() + (" (it holds the backlog only)" if a.table.lower() in backlog
                                          and a.kind is AccessKind.TABLE_SCAN else "")
                          for a in plan.accesses) or "no table read"  # fmt: skip
        scans = [a for a in plan.accesses if a.kind is AccessKind.TABLE_SCAN and a.table.lower() not in backlog]
        whole = [a for a in plan.accesses if a.kind is AccessKind.INDEX_SCAN and a.index not in partial
                 and not probe.limited and a.table.lower() not in backlog]  # fmt: skip
        bad = Status.FAIL if probe.dequeue else Status.WARN
        details = (probe.sql,)
        if scans or whole:
            tables = sorted({a.table for a in scans + whole})
            meaning = (f"{'each claim' if probe.dequeue else 'this read'} goes through every row of "
                       f"{', '.join(tables)}: its cost grows with the table, not with the work waiting"
                       + (", and a claimer holds its locks the while" if probe.dequeue else ""))
            fix = self._index_fix(probe, missing)
            if fix is None and probe.name == "poll: states (full pass)" and Statements(self.db.dialect,
                                                                                     self.layout).ranged:
                meaning += ("; no one index is known to serve this shape's states (bench/README.md), but every other "
                            "poll reads only the live end of the table by its primary key, and this full pass runs "
                            "at most once a minute")
            return Finding(check, bad, reads, meaning, fix, details)
        if probe.limited and plan.sorts:
            return Finding(check, bad, f"{reads}, then sorts", "every matching row is read and sorted before the "
                           "first is taken: the cost grows with the backlog" + self._no_index_missing(probe, missing),
                           self._index_fix(probe, missing, statistics=False), details)
        if plan.lookups:
            tables = sorted({a.table for a in plan.lookups})
            return Finding(check, Status.WARN, f"{reads}; a key lookup per row into {', '.join(tables)}",
                           "the index this read seeks lacks columns it reads, so each row it finds costs a second "
                           "seek into the table: the cost grows with the rows read, and the lookups share the "
                           "table's locks with the claims" + ("; the finding on the native indexes' columns "
                                                              "prints the upgrade" if self.layout.made_by_init else ""),
                           None, details)  # fmt: skip
        used = {a.index for a in plan.accesses if a.index}
        if probe.expected and not used & probe.expected:
            wanted = " or ".join(sorted(probe.expected))
            gone = any(name in missing for name in probe.expected)
            return Finding(check, Status.WARN, f"{reads}; not {wanted}",
                           f"the index made for this read is not used{' (it is missing)' if gone else ''}",
                           self._index_fix(probe, missing), details)  # fmt: skip
        return Finding(check, Status.OK, reads, details=details)

    def backlog_tables(self) -> set[str]:
        """Tables that hold waiting and running work only (seed 001's RequestsQueue: every row is pending; a
        library whose finished rows leave its queue table, `Layout.finished_rows_leave`): reading all of one reads
        the backlog, which a count must read anyway, never finished history."""
        pending = self.layout.states.get("pending")
        if self.layout.finished_rows_leave or (pending is not None and pending.table == "queue"
                                               and pending.condition == Bool(True)):  # fmt: skip
            return {self.layout.queue_table.lower()}
        return set()

    def _schema_findings(self) -> list[Finding]:
        """The columns this queuetop's native schema has that an install made by an older one lacks."""
        missing = missing_columns(self.db, self.layout)
        if not missing:
            return [Finding("native schema's columns", Status.OK, "every column of this queuetop's schema is there")]
        added = [obj.create_sql.removeprefix("/* queuetop */ ") + ";" for obj in
                 Statements(self.db.dialect, self.layout).schema_objects() if obj.name in missing]  # fmt: skip
        return [Finding("native schema's columns", Status.WARN,
                        f"made by an older queuetop: lacks {', '.join(missing)}",
                        "every move of a finished job into the completed table carries it, so completions, releases "
                        "and dead retries fail until it is added (a dead job retried keeps its payload in it); "
                        "`queuetop init` adds it and changes nothing else", "\n".join(added))]

    def _missing_native_indexes(self) -> dict[str, str]:
        """Native indexes the schema lacks, with the statement `queuetop init` would run for each."""
        return {obj.name: obj.create_sql.removeprefix("/* queuetop */ ") + ";"
                for obj in Statements(self.db.dialect, self.layout).schema_objects()
                if obj.kind == "index" and not self.db.fetchone(obj.exists_sql, obj.exists_params)}

    def _no_index_missing(self, probe: Probe, missing: dict[str, str]) -> str:
        if not self.layout.made_by_init or any(name in missing for name in probe.expected):
            return ""
        return ("; the indexes `queuetop init` makes are all there, so the statement as written cannot use them "
                "(a queuetop defect: please report it)")

    def _index_fix(self, probe: Probe, missing: dict[str, str], statistics: bool = True) -> str | None:
        if self.layout.made_by_init:
            wanted = [missing[name] for name in sorted(probe.expected) if name in missing]
            if wanted:
                return "\n".join(wanted)
            return f"-- the indexes are there: refresh the statistics\n{self._analyze_sql()}" if statistics else None
        advice = [a for a in self.layout.advice if probe.name in a.serves and self.layout.indexable(a)]  # [[advice]]
        return "\n".join(self.advice_sql(a) for a in advice) or None

    def advice_sql(self, advice: IndexAdvice) -> str:
        layout, where = self.layout, None
        table = layout.queue_table if advice.table == "queue" else layout.completed_table
        assert table is not None
        include: list[str] = []
        if advice.where:
            binds: list = []
            condition = parse_predicate(advice.where, "advice")
            where = Statements(self.db.dialect, layout).condition(condition, binds)
            assert not binds  # a literal condition: the printed statement carries no parameter
            if self.db.dialect.name == "mssql":  # its filter's columns, as the native indexes (IndexDefinition)
                include = [layout.columns[role] for role in sorted(roles_of(condition)) if role not in advice.keys]
        name = advice.name.format(queue=layout.queue_table, completed=layout.completed_table)
        keys = [layout.columns[role] for role in advice.keys]
        return self.diagnostics.create_index_sql(layout.schema, table, name, keys, where, include)

    def _analyze_sql(self) -> str:
        table = self.db.dialect.qualify(self.layout.schema, self.layout.queue_table)
        return {"postgresql": f"ANALYZE {table};", "mssql": f"UPDATE STATISTICS {table};"}.get(
            self.db.dialect.name, "ANALYZE;")

    # -- sizes, growth, retention, dead rows -------------------------------------------------------------
    def _size_findings(self) -> list[Finding]:
        tables = queue_tables(self.layout)
        first = {t: self.diagnostics.table_size(self.db, *t) for t in tables}
        started = time.monotonic()
        if self.sample_s > 0:
            self._sleep(self.sample_s)
        elapsed = max(time.monotonic() - started, 1e-9)
        findings = []
        for table in tables:
            second = self.diagnostics.table_size(self.db, *table) if self.sample_s > 0 else first[table]
            findings.append(self._size_finding(table[1], first[table], second, elapsed))
            dead = self._dead_finding(table, second)
            if dead is not None:
                findings.append(dead)
        findings.append(self._retention_finding())
        if isinstance(self.diagnostics, SQLiteDiagnostics):
            findings += [self._free_pages_finding(), self._journal_finding(self.diagnostics.journal_mode(self.db))]
        return findings

    @staticmethod
    def _journal_finding(mode: str) -> Finding:
        if mode == "wal":
            return Finding("journal mode", Status.OK, "wal: readers never wait for the writer")
        return Finding("journal mode", Status.WARN, f"{mode}: a reader (the dashboard's poll) and the writer "
                       "(enqueue, claim, complete) wait for each other", "queuetop keeps the mode of a file it "
                       "watches; WAL would let them run at once", "-- once, by the file's owner (it stays WAL):\n"
                       "PRAGMA journal_mode = WAL;")  # fmt: skip

    @staticmethod
    def growth(first: TableSize, second: TableSize, elapsed: float) -> float | None:
        """Rows per second between two reads (PostgreSQL: from its insert and delete counters)."""
        if first.inserted is not None and second.inserted is not None:
            return ((second.inserted - first.inserted) - ((second.deleted or 0) - (first.deleted or 0))) / elapsed
        if first.rows is None or second.rows is None:
            return None
        return (second.rows - first.rows) / elapsed

    def _size_finding(self, table: str, first: TableSize, second: TableSize, elapsed: float) -> Finding:
        rows = "?" if second.rows is None else f"{'' if second.rows_exact else '≈'}{second.rows:,} rows"
        size = "" if second.bytes is None else f", {second.bytes / 2**20:,.1f} MiB with its indexes"
        rate = self.growth(first, second, elapsed) if self.sample_s > 0 else None
        grows = "" if rate is None else f", {rate:+,.1f} rows/s over {elapsed:.1f} s"
        return Finding(f"size: {table}", Status.OK, f"{rows}{size}{grows}")

    def _dead_finding(self, table: tuple[str | None, str], size: TableSize) -> Finding | None:
        if size.dead_rows is None:
            return None
        name = self.db.dialect.qualify(*table)
        live, dead = size.rows or 0, size.dead_rows
        word = "ghost records" if isinstance(self.diagnostics, MSSQLDiagnostics) else "dead tuples"
        vacuum = "" if size.since_vacuum_s is None else f"; last vacuum {size.since_vacuum_s / 60:,.0f} min ago"
        summary = f"{dead:,} {word} beside ≈{live:,} live rows{vacuum}"
        if dead < max(DEAD_MIN, DEAD_SHARE * live):
            return Finding(f"{word}: {table[1]}", Status.OK, summary)
        if isinstance(self.diagnostics, MSSQLDiagnostics):
            return Finding(f"{word}: {table[1]}", Status.WARN, summary,
                           "every seek steps over deleted rows not yet cleaned up; a long open transaction (or "
                           "snapshot isolation's versions) keeps them", f"ALTER INDEX ALL ON {name} REORGANIZE;")
        return Finding(f"{word}: {table[1]}", Status.WARN, summary,
                       "every claim and count steps over dead row versions; autovacuum is behind (or an open "
                       "transaction keeps them)", f"VACUUM (ANALYZE) {name};")  # fmt: skip

    def history_table(self) -> tuple[str, str | None, str | None]:
        """(table, time column role, extra condition) where finished rows pile up."""
        layout, spec = self.layout, self.layout.completions
        if layout.completed_table and layout.has("c_completed"):
            return layout.completed_table or "", "c_completed", None
        if spec is not None and spec.table == "queue":
            return layout.queue_table, spec.at, spec.where.text if spec.where else None
        return layout.queue_table, None, None

    def _retention_finding(self) -> Finding:
        layout, diag = self.layout, self.diagnostics
        table, role, _ = self.history_table()
        check = f"retention: {table}"
        if layout.library:  # its rows are the library's to delete: never a DELETE from queuetop
            return Finding(check, Status.OK, f"{layout.library} keeps and removes its own rows", "its own "
                           "maintenance or cleanup deletes finished jobs; queuetop prints no DELETE for its tables")
        jobs = diag.retention_jobs(self.db, layout.schema, table)
        if jobs:
            return Finding(check, Status.OK, f"{len(jobs)} scheduled job(s) mention {table}",
                           "check that one deletes finished rows", details=tuple(jobs))
        where = "" if jobs is None else f" in {RETENTION_SCHEDULERS.get(self.db.dialect.name, 'the database')}"
        looked = f"no job mentioning {table} found{where}" if jobs is not None else \
            "no scheduler queuetop can read here (it reads pg_cron and SQL Server Agent)"
        fix = self.retention_fix()
        return Finding(check, Status.UNKNOWN, looked,
                       f"finished rows stay in {table} until something deletes them; check cron, SQL Server Agent or "
                       "your workers for a job that does" + ("" if role else
                       " (the shape keeps no time, so rows cannot be aged: delete processed rows below an id)"),
                       fix)  # fmt: skip

    def retention_fix(self) -> str | None:
        """The batch DELETE of finished rows older than RETENTION_DAYS, for the table where they pile up."""
        layout = self.layout
        table, role, extra = self.history_table()
        if role is None or layout.library:
            return None
        condition = None
        if extra:
            binds: list = []
            condition = Statements(self.db.dialect, layout).condition(parse_predicate(extra, "retention"), binds)
        return (f"-- on a schedule, until it deletes no row (keeps {RETENTION_DAYS} days):\n"
                + self.diagnostics.retention_sql(layout.schema, table, layout.columns[role], layout.clock,
                                                 RETENTION_DAYS, condition))  # fmt: skip

    def _free_pages_finding(self) -> Finding:
        diag = self.diagnostics
        assert isinstance(diag, SQLiteDiagnostics)
        free, total, page = diag.free_pages(self.db)
        summary = f"{free:,} free of {total:,} pages ({free * page / 2**20:,.1f} MiB reusable)"
        if free >= max(FREE_MIN, FREE_SHARE * total):
            return Finding("free pages", Status.WARN, summary, "deleted rows left the file this much bigger than "
                           "its data; SQLite reuses the space, it does not give it back",
                           "-- rewrites the whole file and blocks writers while it runs:\nVACUUM;")
        return Finding("free pages", Status.OK, summary)

    # -- sessions ----------------------------------------------------------------------------------------
    def _session_findings(self, blocking: Blocking | Finding) -> list[Finding]:
        if isinstance(blocking, Finding):
            return [blocking]
        if not blocking.seen:
            return [Finding("sessions holding claims", Status.UNKNOWN, "this database does not show its sessions")]
        sqlite = isinstance(self.diagnostics, SQLiteDiagnostics)
        diag = self.diagnostics
        findings = []
        if blocking.holders:
            blocks = {b.session for w in blocking.waits for b in w.blockers}
            kills = [sql for s in blocking.holders if (sql := diag.terminate_sql(s.session))]
            findings.append(Finding(
                "sessions holding claims", Status.FAIL if blocks & {s.session for s in blocking.holders}
                else Status.WARN,
                f"{len(blocking.holders)} session(s) idle in a transaction that holds locks on the queue"
                if not sqlite else "another connection holds the write lock (SQLite cannot say which)",
                "the rows they claimed stay locked until they commit or roll back: claimers skip them (READPAST / "
                "SKIP LOCKED), releases cannot touch them, and vacuum cannot clean behind them"
                if not sqlite else "every writer (enqueue, claim, complete) waits for it, up to its busy timeout",
                "-- ends the session and rolls its transaction back (its claims return to the queue):\n"
                + "\n".join(kills) if kills else None,
                tuple(blocking.lines()[: len(blocking.holders)])))  # fmt: skip
        else:
            findings.append(Finding("sessions holding claims", Status.OK,
                                    "no session idle in a transaction holds locks on the queue"))
        if sqlite:
            findings.append(Finding("blocking chains", Status.UNKNOWN, "SQLite does not show waiting connections",
                                    "a writer waiting for the lock above waits up to its busy timeout, then fails"))
        elif blocking.waits:
            heads = sorted({b for w in blocking.waits for b in w.waiter.blocked_by}
                           - {w.waiter.session for w in blocking.waits})  # fmt: skip
            kills = [sql for head in heads if (sql := diag.terminate_sql(head))]
            findings.append(Finding(
                "blocking chains", Status.FAIL, f"{len(blocking.waits)} session(s) waiting for another's locks",
                "a worker or a report waits on rows another session holds; a claim with READPAST / SKIP LOCKED "
                "never waits, so a waiting claimer is reading the queue without it",
                "-- ends the session(s) at the head of the chain:\n" + "\n".join(kills) if kills else None,
                tuple(blocking.lines()[len(blocking.holders):])))  # fmt: skip
        else:
            findings.append(Finding("blocking chains", Status.OK, "no session waits for another's locks on the queue"))
        return findings


def run_doctor(db: Database, layout: Layout, *, settings: dict[str, Any] | None = None,
               sample_s: float = SAMPLE_S, idle_holder_s: float = IDLE_HOLDER_S) -> Report:  # fmt: skip
    return Doctor(db, layout, settings=settings, sample_s=sample_s, idle_holder_s=idle_holder_s).run()


# -- text --------------------------------------------------------------------------------------------------
MARKS = {Status.OK: "ok", Status.WARN: "WARN", Status.FAIL: "FAIL", Status.UNKNOWN: "?"}


def render_text(report: Report, verbose: bool = False) -> str:
    """The report for a terminal: one line per finding, the meaning and fix under those that need them."""
    out = [f"queuetop doctor: {report.target} ({report.dialect}, layout {report.layout})", ""]
    for f in report.findings:
        out.append(f"{MARKS[f.status]:<5} {f.check}: {f.summary}")
        if f.status is not Status.OK or verbose:
            if f.meaning:
                out.append(f"      means: {f.meaning}")
            for line in f.details if (f.status is not Status.OK and not f.check.startswith("plan:")) or verbose \
                    else ():
                out.append(f"      - {line}")
            if f.fix:
                out.append("      fix:")
                out += [f"        {line}" for line in f.fix.splitlines()]
    counts = ", ".join(f"{report.count(s)} {s.value}" for s in Status)
    out += ["", counts + " (fixes are printed, never run)"]
    return "\n".join(out)

