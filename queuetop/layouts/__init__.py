"""Layouts: which table, view and columns play each role of a queue, as data.

A layout names the queue table, its pending view, the completed table and the column that plays each role
(job type, created, claimed-at, claim token, ...). Dialects build every statement from these roles, so a
queue of another shape is a preset file, not new code. Identifiers are validated here, once; dialects quote
them. Roles a shape lacks (a missing completed table, say) turn the matching metrics off.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType

from queuetop.db.errors import UsageError

QUEUE_ROLES = (
    "id", "type", "info", "priority", "created", "available", "created_by",
    "claimed_at", "claimed_by", "token", "timeout", "attempts",
)  # fmt: skip
COMPLETED_ROLES = (
    "c_id", "c_type", "c_created", "c_claimed_at", "c_completed", "c_claimed_by", "c_attempts", "c_outcome",
)  # fmt: skip
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def check_identifier(name: str, what: str) -> str:
    """Accept only plain identifiers, so a configured name can never carry SQL."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise UsageError(
            f"invalid identifier for {what}: {name!r}",
            "use letters, digits and underscores, starting with a letter or underscore",
        )
    return name


@dataclass(frozen=True)
class Layout:
    """Where a queue lives and which column plays which role."""

    name: str
    schema: str | None
    queue_table: str
    pending_view: str | None
    completed_table: str | None
    columns: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.schema is not None:
            check_identifier(self.schema, f"layout {self.name}: schema")
        check_identifier(self.queue_table, f"layout {self.name}: queue table")
        for label, value in (("pending view", self.pending_view), ("completed table", self.completed_table)):
            if value is not None:
                check_identifier(value, f"layout {self.name}: {label}")
        for role, column in self.columns.items():
            if role not in QUEUE_ROLES + COMPLETED_ROLES:
                raise UsageError(f"layout {self.name}: unknown role {role!r}", f"roles: {', '.join(QUEUE_ROLES)}")
            check_identifier(column, f"layout {self.name}: column for {role}")
        object.__setattr__(self, "columns", MappingProxyType(dict(self.columns)))

    def has(self, *roles: str) -> bool:
        return all(role in self.columns for role in roles)


def load_layout(name: str = "native") -> Layout:
    """Load a preset from queuetop/layouts/presets/NAME.toml."""
    check_identifier(name, "layout name")
    try:
        text = resources.files(__package__).joinpath("presets", f"{name}.toml").read_text("utf-8")
    except FileNotFoundError:
        raise UsageError(f"unknown layout {name!r}", "the presets are in queuetop/layouts/presets/") from None
    return layout_from_toml(name, text)


def layout_from_toml(name: str, text: str) -> Layout:
    data = tomllib.loads(text)
    tables = data.get("tables", {})
    columns = dict(data.get("queue_columns", {}))
    columns.update({f"c_{role}": col for role, col in data.get("completed_columns", {}).items()})
    return Layout(
        name=name,
        schema=tables.get("schema"),
        queue_table=tables["queue"],
        pending_view=tables.get("pending_view"),
        completed_table=tables.get("completed"),
        columns=columns,
    )


NATIVE = load_layout("native")
