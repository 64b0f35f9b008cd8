"""pyodbc, imported only when an ODBC target is used, and the drivers it needs.

The embedded default never touches this module, so a machine without unixODBC runs queuetop fine. When a
connection string names Microsoft's `ODBC Driver 18 for SQL Server` and unixODBC does not know it, the
driver library shipped in the `mssql-python-odbc` wheel (`pip install 'queuetop[mssql]'`) is used by path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType

from queuetop.core.errors import DriverMissing
from queuetop.db import connstr

MSSQL_DRIVER_NAME = "ODBC Driver 18 for SQL Server"

# psqlODBC's defaults cost every statement round trips of its own: in a transaction a SAVEPOINT before each
# statement (statement-level rollback), and for each statement with parameters a named server-side plan,
# DEALLOCATEd when its cursor closes. queuetop rolls a failed transaction back itself and casts every parameter
# in its SQL, so neither earns its cost: with both off a claim + complete through seed 001's move sends 5 round
# trips instead of 9 and costs the server half the CPU (bench/driver_vs_pgbench.py). A connection string that sets
# either keeps its own (full name or psqlODBC's abbreviation).
PSQLODBC_DEFAULTS = (("Protocol", "A1", "7.4-1"), ("UseServerSidePrepare", "C8", "0"))


def import_pyodbc() -> ModuleType:
    try:
        import pyodbc
    except ImportError as exc:
        if "libodbc" in str(exc):
            raise DriverMissing(
                "the ODBC driver manager (libodbc.so.2) is not installed",
                "install it with `sudo apt install unixodbc`",
            ) from exc
        raise DriverMissing(f"pyodbc cannot be loaded: {exc}", "reinstall queuetop with pip") from exc
    return pyodbc


def driver_name(connection_string: str) -> str | None:
    return connstr.get(connection_string, "driver")


def is_psqlodbc(connection_string: str, dsn_drivers: Callable[[], Mapping[str, str]]) -> bool:
    """Whether the connection goes through psqlODBC: named by DRIVER=, or by a DSN whose driver it is
    (`dsn_drivers` is asked only then: it reads unixODBC's ini files)."""
    name = driver_name(connection_string)
    if name is None:
        dsn = connstr.get(connection_string, "dsn")
        name = dsn_drivers().get(dsn, "") if dsn else ""
    lowered = name.lower()
    return "postgres" in lowered or "psqlodbc" in lowered


def with_driver_defaults(connection_string: str, dsn_drivers: Callable[[], Mapping[str, str]]) -> str:
    """The connection string with queuetop's psqlODBC settings added where it leaves them to the driver."""
    if not is_psqlodbc(connection_string, dsn_drivers):
        return connection_string
    keys = connstr.keys(connection_string)
    extra = [f"{name}={value}" for name, short, value in PSQLODBC_DEFAULTS
             if name.lower() not in keys and short.lower() not in keys]  # fmt: skip
    return ";".join([connection_string.rstrip(";"), *extra]) if extra else connection_string


def bundled_mssql_driver() -> Path | None:
    """The Microsoft ODBC Driver 18 library inside the mssql-python-odbc wheel, if installed."""
    try:
        import mssql_python_odbc
    except ImportError:
        return None
    base = Path(mssql_python_odbc.__file__).parent / "libs" / "linux"
    for distro in ("debian_ubuntu", "rhel", "suse"):
        found = sorted((base / distro).glob("*/lib/libmsodbcsql-18*.so*"))
        if found:
            return found[-1]
    return None


def resolve_driver(connection_string: str, known_drivers: list[str]) -> str:
    """Point a connection string at a driver unixODBC can load, or explain which one is missing."""
    name = driver_name(connection_string)
    if name is None or name in known_drivers or name.startswith("/"):
        return connection_string
    if name.lower() == MSSQL_DRIVER_NAME.lower():
        library = bundled_mssql_driver()
        if library is None:
            raise DriverMissing(
                f"the ODBC driver {name!r} is not installed",
                "install it with `pip install 'queuetop[mssql]'` (or Microsoft's msodbcsql18 package)",
            )
        return connstr.with_value(connection_string, "driver", f"{{{library}}}")
    hint = "install it, e.g. `sudo apt install odbc-postgresql` for PostgreSQL"
    if known_drivers:
        hint += f"; unixODBC knows: {', '.join(known_drivers)}"
    raise DriverMissing(f"the ODBC driver {name!r} is not installed", hint)
