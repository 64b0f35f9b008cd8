"""The bottom layer: targets, connections, dialects and errors. Knows nothing of queues' meaning."""

from queuetop.db.connection import Database, utc_now
from queuetop.db.target import Target, parse_target
from queuetop.errors import (
    ConnectError,
    DatabaseError,
    DriverMissing,
    LeaseLost,
    QueuetopError,
    SchemaMissing,
    TargetError,
    Timeout,
    UsageError,
)

__all__ = [
    "ConnectError", "Database", "DatabaseError", "DriverMissing", "LeaseLost", "QueuetopError",
    "SchemaMissing", "Target", "TargetError", "Timeout", "UsageError", "parse_target", "utc_now",
]  # fmt: skip
