"""Who holds claims in open transactions, and who waits on whom: the sessions around the queue's tables.

One read (pg_locks + pg_stat_activity on PostgreSQL, sys.dm_tran_locks + sys.dm_exec_sessions on SQL Server;
SQLite can only say that some connection holds the write lock) turned into one immutable `Blocking` value:
the sessions idle in a transaction while holding locks on the queue (a worker that claimed jobs and stopped
talking: its rows stay locked, claimers skip them), and the chains of sessions waiting for another's locks,
each with its application and host so a DBA knows whom to call. `queuetop doctor` reports it; the dashboard
shows it as a panel when there is any. Pure Python: no Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass

from queuetop.db import Database
from queuetop.db.diagnostics import Diagnostics, SessionRow, diagnostics_for
from queuetop.layouts import Layout

IDLE_HOLDER_S = 5.0  # idle this long in a transaction that holds queue locks: worth a line


@dataclass(frozen=True)
class Wait:
    """A session waiting for locks another session holds: one link of a blocking chain."""

    waiter: SessionRow
    blockers: tuple[SessionRow, ...]  # as far as they could be read (a blocker may have just finished)

    @property
    def head(self) -> str:
        return ", ".join(b.session for b in self.blockers) or "?"


@dataclass(frozen=True)
class Blocking:
    """The sessions around the queue's tables at one moment. `seen` is False where the database cannot show
    them (then the lists are empty and mean nothing)."""

    holders: tuple[SessionRow, ...] = ()  # idle in a transaction, holding locks on the queue's tables
    waits: tuple[Wait, ...] = ()  # sessions waiting on others' locks, with the sessions they wait for
    seen: bool = True

    @property
    def empty(self) -> bool:
        return not self.holders and not self.waits

    def lines(self) -> list[str]:
        """One line per holder and per wait, in a DBA's words (the panel and the doctor's text both use them)."""
        out = [f"session {s.session} · {who(s)} · idle in a transaction {seconds(s.idle_s)} (open "
               f"{seconds(s.transaction_s)})" + (f" · last: {s.query}" if s.query else "") for s in self.holders]
        for wait in self.waits:
            blockers = "; ".join(f"session {b.session} ({who(b)}, {state(b)})" for b in wait.blockers) or \
                f"session {', '.join(wait.waiter.blocked_by)}"
            out.append(f"session {wait.waiter.session} · {who(wait.waiter)} · waits {seconds(wait.waiter.wait_s)} "
                       f"for {blockers}" + (f" · running: {wait.waiter.query}" if wait.waiter.query else ""))
        return out


def who(session: SessionRow) -> str:
    """'billing-worker @ 10.0.0.7 (ops)': the application, the host, the user."""
    user = f" ({session.user})" if session.user else ""
    return f"{session.application or 'no application name'} @ {session.host or '?'}{user}"


def state(session: SessionRow) -> str:
    return "idle in a transaction" if session.idle_in_transaction else "running"


def seconds(value: float | None) -> str:
    if value is None:
        return "? s"
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.0f} min"


def queue_tables(layout: Layout) -> list[tuple[str | None, str]]:
    tables = [(layout.schema, layout.queue_table)]
    if layout.completed_table:
        tables.append((layout.schema, layout.completed_table))
    return tables


def read_blocking(db: Database, layout: Layout, diagnostics: Diagnostics | None = None, *,
                  idle_holder_s: float = IDLE_HOLDER_S) -> Blocking:  # fmt: skip
    """One read of the sessions around the layout's tables."""
    diagnostics = diagnostics or diagnostics_for(db.dialect)
    rows = diagnostics.sessions(db, queue_tables(layout))
    if rows is None:
        return Blocking(seen=False)
    return blocking_from(rows, idle_holder_s)


def blocking_from(rows: list[SessionRow], idle_holder_s: float = IDLE_HOLDER_S) -> Blocking:
    by_id = {row.session: row for row in rows}
    holders = tuple(row for row in rows if row.idle_in_transaction and row.touches_queue
                    and (row.idle_s is None or row.idle_s >= idle_holder_s))  # fmt: skip
    waits = tuple(Wait(row, tuple(by_id[b] for b in row.blocked_by if b in by_id)) for row in rows if row.blocked_by)
    return Blocking(holders=holders, waits=waits)
