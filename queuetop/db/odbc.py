"""pyodbc, imported only when an ODBC target is used, and the drivers it needs.

The embedded default never touches this module, so a machine without unixODBC runs queuetop fine. When a
connection string names Microsoft's `ODBC Driver 18 for SQL Server` and unixODBC does not know it, the
driver library shipped in the `mssql-python-odbc` wheel (`pip install 'queuetop[mssql]'`) is used by path.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

from queuetop.errors import DriverMissing

MSSQL_DRIVER_NAME = "ODBC Driver 18 for SQL Server"
_DRIVER_KEY = re.compile(r"(?i)(^|;)\s*driver\s*=\s*(\{[^}]*\}|[^;]*)")


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
    match = _DRIVER_KEY.search(connection_string)
    return match.group(2).strip().strip("{}").strip() if match else None


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
        return _DRIVER_KEY.sub(lambda m: f"{m.group(1)}DRIVER={{{library}}}", connection_string, count=1)
    hint = "install it, e.g. `sudo apt install odbc-postgresql` for PostgreSQL"
    if known_drivers:
        hint += f"; unixODBC knows: {', '.join(known_drivers)}"
    raise DriverMissing(f"the ODBC driver {name!r} is not installed", hint)
