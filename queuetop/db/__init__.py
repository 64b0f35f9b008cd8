"""The bottom layer: targets, connections, dialects and errors. Knows nothing of queues' meaning."""

from queuetop.core.errors import (
    Conflict,
    ConnectError,
    ConnectionLost,
    DatabaseError,
    DriverMissing,
    LeaseLost,
    NotAnswering,
    QueuetopError,
    SchemaMissing,
    TargetError,
    Timeout,
    TransientError,
    UsageError,
)
from queuetop.db.connection import Database, utc_now
from queuetop.db.retry import retry_transient
from queuetop.db.target import Target, parse_target

__all__ = [
    "Conflict", "ConnectError", "ConnectionLost", "Database", "DatabaseError", "DriverMissing", "LeaseLost",
    "NotAnswering", "QueuetopError", "SchemaMissing", "Target", "TargetError", "Timeout", "TransientError",
    "UsageError", "parse_target", "retry_transient", "utc_now",
]  # fmt: skip
