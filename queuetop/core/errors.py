"""One error hierarchy for everything a user can get wrong or a database can refuse.

Every error carries a one-line message naming the cause and, where there is one, the fix. The CLI prints
it on stderr and exits 2; the dashboard shows it in the status line or a notification.
"""

from __future__ import annotations

import signal
from enum import Enum


class QueuetopError(Exception):
    """An error with a message fit for the user: cause, then what to do."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(QueuetopError):
    """Bad arguments: a value out of range, an unknown job type."""


class TargetError(QueuetopError):
    """The --db target cannot be understood, or names an unsupported database."""


class DriverMissing(QueuetopError):
    """A system library or ODBC driver the target needs is not installed."""


class ConnectError(QueuetopError):
    """The server cannot be reached or refused the login."""


class ConnectionLost(ConnectError):
    """A connection that was open is gone: the server ended it (terminated, restarted), the network dropped it,
    or it stopped answering. Whoever holds it opens a new one; never "the database refused the statement"."""


class NotAnswering(ConnectionLost):
    """A statement went past its deadline without a word from the server (a stalled server or network, which
    cannot enforce its own timeout): queuetop cut the connection (db/watchdog.py)."""

    def __init__(self, message: str, hint: str | None = None, silent_s: float = 0.0) -> None:
        super().__init__(message, hint)
        self.silent_s = silent_s  # how long the server had said nothing when the connection was cut


class SchemaMissing(QueuetopError):
    """The queue tables are not there."""

    def __init__(self, where: str) -> None:
        super().__init__(f"the queue schema is missing in {where}", "run `queuetop init` to create it")


class LeaseLost(QueuetopError):
    """A worker tried to finish a job whose claim it no longer holds."""


class DatabaseError(QueuetopError):
    """Any other error the database reported."""


class TransientError(DatabaseError):
    """The database gave up on a statement for a reason that passes by itself, and rolled it back: running it
    again is the fix (`queuetop.db.retry.retry_transient`). Never a lost connection: the connection is fine."""


class Timeout(TransientError):
    """A statement ran into the statement or lock timeout, or SQLite stayed busy past its busy timeout."""


class Conflict(TransientError):
    """The database rolled the statement back to break a deadlock (SQL Server 1205, PostgreSQL 40P01) or a
    serialization conflict (40001)."""


class ErrorKind(Enum):
    """What a driver error means, as a dialect classifies it (`Dialect.error_kind`)."""

    SCHEMA = "schema"  # a table or schema is missing
    TIMEOUT = "timeout"  # statement or lock timeout; SQLite busy
    CONFLICT = "conflict"  # deadlock victim, serialization failure
    ENDED = "ended"  # the server ended the session (terminated, shutting down, restarted)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Ctrl-C raises KeyboardInterrupt: every command stops as on Ctrl-C (claims
    handed back, the verdict printed where there is one) and exits 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @staticmethod
    def signal_of(interrupt: KeyboardInterrupt) -> int:
        """The signal behind an interrupt: SIGTERM or SIGHUP for a Stopped, else Ctrl-C's SIGINT."""
        return interrupt.signum if isinstance(interrupt, Stopped) else signal.SIGINT


# What stops a command as Ctrl-C does: Ctrl-C itself, systemd's and docker's stop, a closed terminal.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
