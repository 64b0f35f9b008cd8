"""The SQL of each database queuetop speaks, one module per dialect."""

from queuetop.db.dialects.base import Dialect
from queuetop.db.dialects.mssql import MSSQLDialect
from queuetop.db.dialects.postgres import PostgresDialect
from queuetop.db.dialects.sqlite import SQLiteDialect

__all__ = ["Dialect", "MSSQLDialect", "PostgresDialect", "SQLiteDialect", "dialect_for_dbms"]


def dialect_for_dbms(dbms_name: str) -> Dialect | None:
    """The dialect for an ODBC data source's SQL_DBMS_NAME, or None if queuetop does not speak it."""
    lowered = dbms_name.lower()
    if "postgres" in lowered:
        return PostgresDialect()
    if "microsoft sql server" in lowered or "sql server" in lowered:
        return MSSQLDialect()
    return None
