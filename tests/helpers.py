"""Test helpers: a settable clock (for the monitor), time travel for the queue's own rows (its operations take
the database's clock), and direct reads of the queue tables (to check what really is there)."""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from queuetop.act.queue import Queue
from queuetop.db import Database, parse_target
from queuetop.layouts import Layout
from queuetop.layouts.sql import Statements
from queuetop.watch.collector import ShapeCollector

if TYPE_CHECKING:
    from tests.conftest import Backend

BASE = datetime(2026, 1, 1, 12, 0, 0)


class FakeClock:
    """The server clock, frozen and moved by hand: `clock.at(7)` is BASE + 7 s."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.now = BASE + timedelta(seconds=seconds)

    def at(self, seconds: float) -> FakeClock:
        self.now = BASE + timedelta(seconds=seconds)
        return self

    def __call__(self) -> datetime:
        return self.now


def queue_rows(db: Database, layout: Layout) -> dict[int, tuple]:
    """id -> (type, claimed_at, token, attempts) of every row in the queue table."""
    sql = layout_sql(db, layout, "SELECT {id}, {type}, {claimed_at}, {token}, {attempts} FROM {queue}")
    return {int(r[0]): tuple(r[1:]) for r in db.fetchall(sql)}


def completed_rows(db: Database, layout: Layout) -> dict[int, tuple]:
    """id -> (type, outcome, attempts) of every row in the completed table."""
    sql = layout_sql(db, layout, "SELECT {c_id}, {c_type}, {c_outcome}, {c_attempts} FROM {completed}")
    return {int(r[0]): tuple(r[1:]) for r in db.fetchall(sql)}


def completed_ids_with_repeats(db: Database, layout: Layout) -> list[int]:
    sql = layout_sql(db, layout, "SELECT {c_id} FROM {completed}")
    return [int(r[0]) for r in db.fetchall(sql)]


QUEUE_TIMES = ("created", "available", "claimed_at", "timeout")
COMPLETED_TIMES = ("c_created", "c_claimed_at", "c_completed")


def travel(db: Database, layout: Layout, seconds: float) -> None:
    """Move the queue `seconds` into the future: every time stored in its tables goes that much into the past, as
    if the database's clock had run on (the queue's operations take their times from it, not from the client)."""
    dialect = db.dialect
    for table, roles in (("queue", QUEUE_TIMES), ("completed", COMPLETED_TIMES)):
        sets = ", ".join(f"{{{role}}} = {_earlier(dialect.name, '{' + role + '}')}" for role in roles)
        sql = Statements(dialect, layout).sql(f"UPDATE {{{table}}} SET {sets}")
        db.execute(sql, (_shift(dialect.name, seconds),) * len(roles))


def _earlier(dialect: str, column: str) -> str:
    if dialect == "sqlite":
        return f"strftime('%Y-%m-%d %H:%M:%f', {column}, ?)"
    if dialect == "postgresql":
        return f"{column} - CAST(? AS double precision) * INTERVAL '1 second'"
    return f"DATEADD(millisecond, -CAST(? AS int), {column})"


def _shift(dialect: str, seconds: float) -> object:
    if dialect == "sqlite":
        return f"{-seconds:+.3f} seconds"
    return round(seconds * 1000) if dialect == "mssql" else seconds


def backend_pid(target, client_port: int) -> int:
    """The PostgreSQL backend serving the connection whose local port is `client_port` (read on a connection of
    its own, so the test thread never touches the one under test)."""
    with Database.open(target, purpose="monitor") as admin:
        rows = admin.fetchall("SELECT pid FROM pg_stat_activity WHERE client_port = ?", (client_port,))
    assert rows, f"no backend for client port {client_port}"
    return int(rows[0][0])


@contextmanager
def stopped_backend(target, client_port: int) -> Iterator[int]:
    """A server that stops answering: SIGSTOP on the backend of that connection, SIGCONT whatever happens."""
    pid = backend_pid(target, client_port)
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGCONT)


def terminate_backend(target, client_port: int) -> None:
    """The server ends that connection, as an administrator (or a restart) would."""
    with Database.open(target, purpose="monitor") as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port = ?", (client_port,))


def server_port(target) -> int:
    """The PostgreSQL port a target's connection string names (5432 when it names none)."""
    found = re.search(r"(?:^|;)\s*PORT\s*=\s*(\d+)", target.value, re.IGNORECASE)
    return int(found.group(1)) if found else 5432


def pg_client_ports(pid: int, port: int = 5432) -> set[int]:
    """The local ports of process `pid`'s TCP connections to the PostgreSQL server (Linux: /proc)."""
    if not os.path.exists(f"/proc/{pid}/net/tcp"):
        return set()  # the process is gone
    owned = set()
    for name in (os.listdir(f"/proc/{pid}/fd") if os.path.isdir(f"/proc/{pid}/fd") else ()):
        with suppress(OSError):
            owned.add(os.readlink(f"/proc/{pid}/fd/{name}"))
    ports = set()
    for table in (f"/proc/{pid}/net/tcp", f"/proc/{pid}/net/tcp6"):
        with suppress(OSError), open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                local, remote = fields[1].rsplit(":", 1)[1], fields[2].rsplit(":", 1)[1]
                if int(remote, 16) == port and fields[3] == "01" and f"socket:[{fields[9]}]" in owned:
                    ports.add(int(local, 16))
    return ports


@contextmanager
def stopped_backends_of(target, pid: int) -> Iterator[list[int]]:
    """Every backend serving process `pid` (this one, or a command under test) stopped with SIGSTOP: a server
    that stops answering; SIGCONT whatever happens. Connections it opens afterwards are served as usual."""
    ports = pg_client_ports(pid, server_port(target))
    assert ports, f"process {pid} has no connection to the server"
    pids = [backend_pid(target, port) for port in ports]
    for backend in pids:
        os.kill(backend, signal.SIGSTOP)
    try:
        yield pids
    finally:
        for backend in pids:
            os.kill(backend, signal.SIGCONT)


def terminate_backends_of(target, pid: int) -> int:
    """pg_terminate_backend on every backend serving process `pid`; how many."""
    ports = pg_client_ports(pid, server_port(target))
    with Database.open(target, purpose="monitor") as admin:
        for port in ports:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port = ?", (port,))
    return len(ports)


class SilentProxy:
    """A TCP proxy to PostgreSQL on loopback that can go silent, as a network partition without a reset, a NAT or a
    pgbouncer whose other side froze: the client's connection stays open and nothing comes back. The ports the
    server sees are the proxy's, not the client's. It runs in a process of its own (tests/silent_proxy.py), so its
    sockets are not this process's; SIGUSR1 makes it silent."""

    def __init__(self) -> None:
        import subprocess
        import sys

        self._process = subprocess.Popen([sys.executable, "-m", "tests.silent_proxy"], stdout=subprocess.PIPE,
                                         text=True)  # fmt: skip
        assert self._process.stdout is not None
        self.port = int(self._process.stdout.readline())

    def go_silent(self) -> None:
        self._process.send_signal(signal.SIGUSR1)
        time.sleep(0.2)  # the signal is handled before the next statement is sent

    def target_text(self, connection_string: str) -> str:
        """`connection_string` pointed at the proxy."""
        from queuetop.db import connstr

        with_server = connstr.with_value(connection_string, "server", "127.0.0.1")
        return connstr.with_value(with_server, "port", str(self.port))

    def close(self) -> None:
        self._process.kill()
        self._process.wait()


def full_count_now(collector: ShapeCollector) -> None:
    """Make the periodic full count due (it comes every 60 s), so the next poll starts it."""
    collector._recount.schedule.next_at = collector._recount.schedule.earliest_at = 0.0


def unclaimed_and_held(db: Database, layout: Layout, job_type: str) -> tuple[int, int]:
    """(rows not claimed, rows claimed) of one type of the native queue table, counted by hand."""
    row = db.fetchone(layout_sql(db, layout, "SELECT SUM(CASE WHEN {claimed_at} IS NULL THEN 1 ELSE 0 END), "
                                             "SUM(CASE WHEN {claimed_at} IS NULL THEN 0 ELSE 1 END) FROM {queue} "
                                             "WHERE {type} = ?"), (job_type,))  # fmt: skip
    return int(row[0] or 0), int(row[1] or 0)


def layout_sql(db: Database, layout: Layout, template: str) -> str:
    """A test's own statement on a layout's tables, written with role names (`{queue}`, `{claimed_at}`)."""
    return Statements(db.dialect, layout).sql(template)


def native_queue_file(path: object) -> str:
    """A SQLite file with the native schema, made in this process as `queuetop init --db PATH` makes it: a test's
    setup (the command under test runs as users run it, in a process of its own; what it starts from need not)."""
    from queuetop.layouts.schema import init_schema

    with Database.open(parse_target(str(path)), create=True) as db:
        init_schema(db)
    return str(path)


def enqueue(backend: Backend, job_type: str, count: int) -> None:
    """`count` jobs of `job_type` into a test backend's queue, in this process (a test's setup)."""
    with backend.open() as db:
        Queue(db, backend.layout).enqueue_many(job_type, count)


def enqueue_into(path: object, job_type: str, count: int) -> None:
    """The same into the native queue of a SQLite file (`native_queue_file`'s)."""
    with Database.open(parse_target(str(path))) as db:
        Queue(db).enqueue_many(job_type, count)
