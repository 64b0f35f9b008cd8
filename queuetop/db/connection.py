"""Opening a database and running statements on it, with every driver error turned into a clear one.

A `Database` is one connection, used by one thread (pyodbc's threadsafety is 1; sqlite3 connections are not
shared either). It runs in autocommit: each statement is its own transaction unless `transaction()` says
otherwise, so the monitor never leaves one open. `now()` is the server's UTC clock, read once at connect
and then kept by the local clock: the monitor's arithmetic uses it (ages, rate windows). Queue operations
never do: their times (claim, lease end, completion) are the database's own, computed in the statement.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from queuetop.core.errors import (
    Conflict,
    ConnectError,
    ConnectionLost,
    DatabaseError,
    DriverMissing,
    ErrorKind,
    NotAnswering,
    QueuetopError,
    SchemaMissing,
    TargetError,
    Timeout,
)
from queuetop.db.dialects import Dialect, SQLiteDialect, dialect_for_dbms
from queuetop.db.target import Target
from queuetop.db.watchdog import WATCHDOG, Watch, named_socket_cutter, read_deadline_s, socket_cutter, socket_names

Clock = Callable[[], datetime]
LOGIN_TIMEOUT_S = 5
# SQLite: how long a statement waits for another connection's write lock (its busy timeout). A worker waits as
# long as a PostgreSQL worker's statement may run. SQLite's busy handler is not fair: one that has waited long
# tries every 100 ms, a newcomer after 1, 2, 5 ms, so under a saturated load a consumer could miss the lock for 5 s,
# six times over with the retries, and stop the whole load run with "database is locked".
SQLITE_BUSY_TIMEOUT_MS = {"monitor": 5_000, "worker": 60_000, "bulk": 60_000}
# As PostgreSQL's statement_timeout in its session setup; "bulk" (benchmarks' and tests' builds): none.
STATEMENT_TIMEOUT_S: dict[str, float | None] = {"monitor": 5, "worker": 60, "bulk": None}
# Past its statement timeout, how long a server has to say so before the watchdog cuts the connection (it has
# stopped answering: db/watchdog.py). A monitor's deadline is 8 s, a worker's 65 s ($QUEUETOP_READ_DEADLINE_S
# shortens both).
DEADLINE_GRACE_S = {"monitor": 3.0, "worker": 5.0}


def utc_now() -> datetime:
    """Naive UTC, as the queue tables store it."""
    return datetime.now(UTC).replace(tzinfo=None)


def clean_driver_message(message: str) -> str:
    """'[08001] [unixODBC]could not connect ... (101) (SQLDriverConnect)' -> 'could not connect ...'."""
    text = re.sub(r"\[[^\]]*\]", "", message)
    text = re.sub(r"\(\d+\)\s*\(SQL\w+\)\s*$", "", text.strip())
    text = re.sub(r"\(SQL\w+\)", "", text)
    text = re.sub(r"\s+", " ", text).strip(" ;.")
    return text.removeprefix("ERROR: ").strip()


class Database:
    """One open connection to the queue's database."""

    def __init__(self, target: Target, connection: Any, dialect: Dialect, clock: Clock | None = None) -> None:
        self.target = target
        self.dialect = dialect
        self._connection = connection
        self._offset = timedelta(0)
        self._clock = clock
        self._in_transaction = False
        self._deadline = float("inf")
        self._statement_timeout_s: float | None = None
        self.busy_timeout_ms = 0  # SQLite: how long a statement waits for another connection's write lock
        self._watch: Watch | None = None  # the deadline the server cannot enforce (ODBC connections)
        self.client_port: int | None = None  # this connection's local TCP port, when watched
        self._session: set[str] = set()  # the session settings a layout's clock asked for (use_clock)

    # -- opening -----------------------------------------------------------------------------------------
    @classmethod
    def open(cls, target: Target, *, purpose: str = "worker", create: bool = False,
             clock: Clock | None = None, deadline_s: float | None = None) -> Database:  # fmt: skip
        """Connect. `purpose` is "monitor" (short timeouts, low priority), "worker", or "bulk" (no statement
        timeout: the builds of benchmarks). `deadline_s`: a shorter deadline for every statement than the
        purpose's (db/watchdog.py)."""
        timeout_s = STATEMENT_TIMEOUT_S.get(purpose, STATEMENT_TIMEOUT_S["worker"])
        if target.kind == "sqlite":
            busy_ms = SQLITE_BUSY_TIMEOUT_MS.get(purpose, SQLITE_BUSY_TIMEOUT_MS["worker"])
            db = cls(target, _open_sqlite(target, create, busy_ms), SQLiteDialect(), clock)
            db.busy_timeout_ms = busy_ms
            if timeout_s is not None:
                db._limit_sqlite_statements(timeout_s)
        else:
            connection, dialect, socket_name = _open_odbc(target)
            if dialect.name == "mssql":
                connection.timeout = int(timeout_s or 0)  # the ODBC query timeout (0: none): no session setting
            db = cls(target, connection, dialect, clock)
            limit = read_deadline_s(timeout_s, DEADLINE_GRACE_S.get(purpose, DEADLINE_GRACE_S["worker"]))
            if deadline_s is not None:
                limit = deadline_s if limit is None else min(limit, deadline_s)
            db._watch_reads(limit, socket_name)
        for statement in db.dialect.session_setup(purpose):
            db.execute(statement)
        db._configure_reads()
        if target.kind != "sqlite" and clock is None:
            db._measure_clock_offset()
        return db

    def _limit_sqlite_statements(self, timeout_s: float) -> None:
        """SQLite has no statement timeout: a progress handler interrupts a statement that runs past it (a
        monitor read of a table with no index to help must not stall the dashboard)."""
        self._statement_timeout_s = timeout_s
        self._connection.set_progress_handler(lambda: time.monotonic() > self._deadline, 10_000)

    def _watch_reads(self, limit_s: float | None, socket_name: str | None) -> None:
        """Give every statement a deadline the watchdog keeps: past it, the connection's socket is cut. The socket
        is the one the connect opened (`socket_name`), else the one with the ports the server reports (not ours
        through a proxy or NAT); with neither, the driver's own timeout is all there is."""
        if limit_s is None:
            return
        sql = self.dialect.client_port_sql()
        ports: tuple[Any, ...] = ()
        if sql is not None:
            try:
                ports = self.fetchone(sql)
            except (DatabaseError, SchemaMissing):  # e.g. SQL Server without VIEW SERVER STATE
                ports = ()
        known = len(ports) == 2 and ports[0] is not None and ports[1] is not None  # NULL: a Unix socket
        if known:
            self.client_port = int(ports[0])
        if socket_name is not None:
            cut = named_socket_cutter(socket_name)
        elif known:
            cut = socket_cutter(int(ports[0]), int(ports[1]))
        else:
            return
        self._watch = Watch(limit_s, cut)
        WATCHDOG.add(self._watch)

    def abandon(self) -> bool:
        """Cut the connection if a statement is in flight on it (from another thread: an owner that stops
        waiting); that statement then fails as NotAnswering. Whether one was cut."""
        return self._watch is not None and self._watch.fire()

    def _arm(self) -> None:
        if self._statement_timeout_s is not None:
            self._deadline = time.monotonic() + self._statement_timeout_s
        if self._watch is not None:
            self._watch.arm()

    def use_clock(self, clock: str) -> None:
        """Read a layout's times in its clock on this connection: times that carry their zone ("zoned") come back
        in UTC, as the snapshot's are, wherever the database would convert them to the session's zone."""
        sql = self.dialect.zoned_session_sql() if clock == "zoned" else None
        if sql is not None and sql not in self._session:
            self.execute(sql)
            self._session.add(sql)

    def _configure_reads(self) -> None:
        """Settle, once per connection, how the monitor's reads avoid blocking writers: where the database may
        answer that its reads are snapshots (SQL Server's read-committed snapshot), ask it; and which tables have
        an enabled trigger, where a statement may not read back what it wrote without a table variable."""
        question = self.dialect.read_snapshot_sql()
        if question is None:
            return
        row = self.fetchone(question)
        if row and row[0]:
            self.dialect.reads_committed_snapshot()
        triggers = self.dialect.triggered_tables_sql()
        if triggers is not None:
            found = self.fetchall(triggers)
            self.dialect.tables_with_triggers = frozenset(  # type: ignore[attr-defined]
                (str(row[0]).lower(), str(row[1]).lower()) for row in found if len(row) >= 2)

    def _measure_clock_offset(self) -> None:
        before = utc_now()
        server = self.dialect.decode_time(self.fetchone(self.dialect.server_now_sql())[0])
        after = utc_now()
        self._offset = server - (before + (after - before) / 2)

    def now(self) -> datetime:
        """The server's current UTC time, as measured at connect: for the monitor's figures, never for a lease."""
        return self._clock() if self._clock else utc_now() + self._offset

    def close(self) -> None:
        if self._watch is not None:
            WATCHDOG.remove(self._watch)
        with suppress(Exception):  # closing a broken connection has nothing left to report
            self._connection.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running statements ------------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; the number of rows it changed."""
        with self._translate():
            cursor = self._connection.cursor()
            try:
                cursor.execute(sql, tuple(params))
                return cursor.rowcount
            finally:
                cursor.close()

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._translate():
            cursor = self._connection.cursor()
            try:
                cursor.execute(sql, tuple(params))
                # A batch's statements before its rows have none (SQL Server's DECLARE, an UPDATE's count: see
                # `through_table`); psqlODBC: a RETURNING that matched no row has no result set
                while cursor.description is None:
                    if not getattr(cursor, "nextset", None) or not cursor.nextset():
                        return []
                return [tuple(row) for row in cursor.fetchall()]
            finally:
                cursor.close()

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...]:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else ()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Several statements as one. SQLite takes the write lock at once (BEGIN IMMEDIATE)."""
        if self._in_transaction:
            yield
            return
        begin = "BEGIN IMMEDIATE" if self.target.kind == "sqlite" else None
        self._in_transaction = True
        try:
            if begin:
                self.execute(begin)
            else:
                self._connection.autocommit = False
            yield
            self._finish("COMMIT")
        except BaseException:
            self._finish("ROLLBACK")
            raise
        finally:
            self._in_transaction = False

    def _finish(self, verb: str) -> None:
        with self._translate():
            if self.target.kind == "sqlite":
                if self._connection.in_transaction:
                    self._connection.execute(verb)
            else:
                (self._connection.commit if verb == "COMMIT" else self._connection.rollback)()
                self._connection.autocommit = True

    @contextmanager
    def _translate(self) -> Iterator[None]:
        """One call to the driver: under its deadline, and any driver error turned into a QueuetopError."""
        self._arm()
        try:
            yield
        except QueuetopError:
            raise
        except sqlite3.Error as exc:
            raise self._classify("", str(exc)) from exc
        except Exception as exc:
            if type(exc).__module__ != "pyodbc":
                raise
            if self._watch is not None and self._watch.fired_after_s is not None:
                raise self._not_answering() from exc
            sqlstate = str(exc.args[0]) if exc.args else ""
            message = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
            raise self._classify(sqlstate, message) from exc
        finally:
            if self._watch is not None:
                self._watch.disarm()

    def _not_answering(self) -> NotAnswering:
        assert self._watch is not None and self._watch.fired_after_s is not None
        silent = self._watch.fired_after_s
        return NotAnswering(f"the database is not answering: no reply for {silent:.0f} s (a stalled server or "
                            "network); its connection was closed", silent_s=silent)

    def _classify(self, sqlstate: str, message: str) -> QueuetopError:
        text = clean_driver_message(message)
        kind = self.dialect.error_kind(sqlstate, message)
        if kind is ErrorKind.SCHEMA:
            return SchemaMissing(self.target.display)
        if kind is ErrorKind.TIMEOUT:
            return Timeout(f"the database did not answer in time: {text}", "the queue may be busy; try again")
        if kind is ErrorKind.CONFLICT:
            return Conflict(f"the database rolled the statement back to resolve a conflict: {text}",
                            "nothing was changed; running it again is safe")
        if kind is ErrorKind.ENDED:
            return ConnectionLost(f"lost the connection to the database (the server ended it: {_first_clause(text)})")
        if sqlstate.startswith("08") or sqlstate == "HYT01" or "connection has been lost" in message.lower():
            return ConnectionLost(f"lost the connection to the database ({_first_clause(text)})")
        return DatabaseError(f"the database refused the statement: {text}")


def _first_clause(text: str) -> str:
    """'FATAL: terminating connection due to administrator command; The connection has been lost' -> the cause."""
    first = text.split(";")[0].split(" This probably means")[0].strip()  # libpq's guess after the fact: dropped
    for prefix in ("FATAL:", "ERROR:", "PANIC:"):
        first = first.removeprefix(prefix).strip()
    return re.sub(r"\s+", " ", first) or text


def _open_sqlite(target: Target, create: bool, busy_ms: int) -> sqlite3.Connection:
    path = Path(target.value).expanduser()
    # WAL (readers never wait for the writer) is a property of the file that outlives the connection: only on a
    # file queuetop owns, the embedded default or one it creates now (`init`, `demo` on a new path). A database
    # queuetop only watches or acts on keeps its journal mode; `queuetop doctor` says when WAL would help.
    owned = not path.exists() or path.stat().st_size == 0 or _is_embedded_default(path)
    if not path.exists():
        if not create:
            raise SchemaMissing(f"{path} (the file does not exist)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TargetError(f"cannot create {path.parent}: {exc.strerror}") from exc
    elif path.is_dir():
        raise TargetError(f"{path} is a directory, not a SQLite file", "give the path of a .db file")
    try:
        connection = sqlite3.connect(str(path), timeout=busy_ms / 1000, isolation_level=None,
                                     check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {busy_ms}")
        if owned:
            _use_wal(connection, busy_ms)
    except sqlite3.DatabaseError as exc:
        raise ConnectError(f"cannot open {path} as SQLite: {exc}", "is it a SQLite database file?") from exc
    return connection


def _is_embedded_default(path: Path) -> bool:
    from queuetop.db.target import default_database_path

    try:
        return path.resolve() == default_database_path().resolve()
    except OSError:
        return False


def _use_wal(connection: sqlite3.Connection, busy_ms: int) -> None:
    """Switch a file queuetop owns to WAL. The switch needs the file to itself and SQLite answers "locked" at once,
    without its busy handler, when another connection opens it at the same moment (several `init`s): try again
    until the busy timeout."""
    deadline = time.monotonic() + busy_ms / 1000
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    connection.execute("PRAGMA synchronous = NORMAL")  # safe with WAL: a crash may lose the last commits only


def _open_odbc(target: Target) -> tuple[Any, Dialect, str | None]:
    """The connection, its dialect, and the socket it opened: the one socket new in this process once the connect
    has returned (None when another thread opened one meanwhile, or there is no /proc)."""
    from queuetop.db.odbc import import_pyodbc, resolve_driver, with_driver_defaults

    pyodbc = import_pyodbc()
    connection_string = with_driver_defaults(resolve_driver(target.value, pyodbc.drivers()), pyodbc.dataSources)
    started = time.monotonic()
    before = socket_names()
    try:
        connection = pyodbc.connect(connection_string, autocommit=True, timeout=LOGIN_TIMEOUT_S)
    except pyodbc.Error as exc:
        raise _connect_error(exc, target, time.monotonic() - started) from exc
    opened = socket_names() - before
    socket_name = next(iter(opened)) if len(opened) == 1 else None
    dbms = connection.getinfo(pyodbc.SQL_DBMS_NAME) or "?"
    dialect = dialect_for_dbms(dbms)
    if dialect is None:
        connection.close()
        raise TargetError(f"unsupported database {dbms!r}", "queuetop speaks SQL Server, PostgreSQL and SQLite")
    return connection, dialect, socket_name


LOGIN_REFUSED = ("password", "login failed", "authentication failed", "role \"", "no pg_hba.conf entry")
# OpenSSL's reason inside ODBC Driver 18's "SSL Provider: [error:0A000086:SSL routines::certificate verify
# failed:self-signed certificate]": the part a user can act on
_OPENSSL_REASON = re.compile(r"\[error:[0-9A-Fa-f]+:SSL routines:[^:\]]*:([^\]]+)\]")


def tls_failure(raw: str) -> QueuetopError | None:
    """The TLS handshake of ODBC Driver 18 (which encrypts by default) failed: say why and what to change. The
    generic message would keep only "SSL Provider: (-1)" and send the user to check SERVER and PORT."""
    if "SSL Provider" not in raw and "SSL routines" not in raw:
        return None
    match = _OPENSSL_REASON.search(raw)
    reason = match.group(1).strip() if match else clean_driver_message(raw.split("SSL Provider:", 1)[-1])
    lowered = reason.lower()
    if "certificate" in lowered or "not trusted" in lowered:
        return ConnectError(f"the server's TLS certificate was refused: {reason}",
                            "add TrustServerCertificate=yes to the connection string, or install the server's CA "
                            "on this machine; ODBC Driver 18 encrypts and checks the certificate by default")
    if "protocol" in lowered or "version" in lowered:
        return ConnectError(f"the server offers no TLS version this client accepts: {reason}",
                            "an old server (TLS 1.0/1.1): add Encrypt=no to the connection string, or enable TLS "
                            "1.2 on the server")
    return ConnectError(f"the TLS handshake with the server failed: {reason}",
                        "try TrustServerCertificate=yes, or Encrypt=no for an old server")


def _connect_error(exc: Exception, target: Target, elapsed: float) -> QueuetopError:
    sqlstate = str(exc.args[0]) if exc.args else ""
    raw = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
    text = clean_driver_message(raw)
    if sqlstate in ("IM002", "IM003") or "Can't open lib" in raw or "file not found" in raw:
        return DriverMissing(f"the ODBC driver cannot be loaded: {text}",
                             "check DRIVER= in the connection string; `odbcinst -q -d` lists installed drivers")
    tls = tls_failure(raw)
    if tls is not None:
        return tls
    lowered = raw.lower()
    if sqlstate.startswith("28") or any(sign in lowered for sign in LOGIN_REFUSED):
        return ConnectError(f"the server refused the login: {text}", "check UID and PWD in the connection string")
    if sqlstate == "3D000" or ("database" in raw and "does not exist" in raw):
        return ConnectError(f"the database does not exist: {text}", "create it, or fix DATABASE= in the target")
    return ConnectError(f"cannot reach the database server ({elapsed:.1f} s): {text}",
                        "check SERVER and PORT in the connection string and that the server is running")
