"""What `--db` / `QUEUETOP_DB` names: an ODBC connection string, a SQLite file, or the embedded default."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from queuetop.core.errors import TargetError
from queuetop.db import connstr

ENV_VAR = "QUEUETOP_DB"
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


@dataclass(frozen=True)
class Target:
    """A parsed database target. `kind` is "odbc" or "sqlite"."""

    kind: str
    value: str  # the connection string, or the SQLite file path

    @property
    def display(self) -> str:
        """The target as it may be shown on screen: passwords masked."""
        return connstr.mask(self.value) if self.kind == "odbc" else self.value


def default_database_path() -> Path:
    """The embedded default: a SQLite file in the user's data directory."""
    from platformdirs import user_data_path

    return user_data_path("queuetop", appauthor=False) / "queuetop.db"


def parse_target(text: str | None) -> Target:
    """Turn `--db`'s value (or the environment's, or nothing) into a Target."""
    if text is None:
        text = os.environ.get(ENV_VAR) or None
    if text is None or not text.strip():
        return Target("sqlite", str(default_database_path()))
    text = text.strip()
    if text.lower().startswith("sqlite:"):
        path = text[len("sqlite:") :].removeprefix("//")
        if not path:
            raise TargetError("`sqlite:` needs a file path", "e.g. --db sqlite:/tmp/queue.db")
        return Target("sqlite", path)
    if "=" in text:
        return Target("odbc", text)
    if text.lower().endswith(SQLITE_SUFFIXES):
        return Target("sqlite", text)
    raise TargetError(
        f"cannot tell what database {text!r} names",
        "give an ODBC connection string (DRIVER={...};SERVER=...), a file ending in .db or .sqlite, "
        "or sqlite:PATH",
    )
