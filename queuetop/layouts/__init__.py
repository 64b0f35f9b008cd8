"""Layouts: a queue's shape as data — its tables, the column playing each role, and its state machine.

A layout (a TOML preset in `presets/`, or a user's file) names the queue table, an optional pending view and
completed table, the column that plays each role with its SQL type (job type, created, claimed-at, claim
token, timeout, attempts, completed-at, ...), which clock its times use (the database's local time, as the
seeds' `GETDATE()`, UTC, or times that carry their zone), and the rule that puts a row in each state (pending,
scheduled, claimed, timed out, dead, lost) as a condition over the roles (see `predicate.py`). It also says how
arrivals and completions are seen, so rates and latencies can be read, what `release` does on this shape, and,
for a job library's tables, which library and versions they are.

Every figure and action states what it needs (`Layout.provides`): a shape that lacks it shows null / "—",
never a fake 0. Identifiers are validated once, in `model.py` (the data); `files.py` reads presets and files;
`detect.py` finds the tables a preset fits; `sql/` builds every statement. This module gathers them, and
overrides where a layout's tables are (`--table`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from queuetop.core.errors import UsageError
from queuetop.layouts.files import PRESET_NAMES, layout_from_toml, load_layout, preset_names, preset_text
from queuetop.layouts.model import (
    ACTIONS,
    CLAIM_FORMS,
    CLAIM_VALUES,
    CLOCKS,
    COMPLETED_ROLES,
    DATABASES,
    FAILURES,
    FIGURES,
    INTEGER_TYPES,
    QUEUE_ROLES,
    SETTINGS,
    STATES,
    Claim,
    Completions,
    Layout,
    Release,
    State,
    check_identifier,
)

__all__ = [
    "ACTIONS", "CLAIM_FORMS", "CLAIM_VALUES", "CLOCKS", "COMPLETED_ROLES", "DATABASES", "FAILURES", "FIGURES",
    "INTEGER_TYPES", "NATIVE", "PRESET_NAMES", "QUEUE_ROLES", "SETTINGS", "STATES", "Claim", "Completions", "Layout",
    "Release", "State", "check_identifier", "layout_from_toml", "load_layout", "preset_names", "preset_text",
    "require_table", "split_table", "with_tables",
]  # fmt: skip


# -- overriding where the tables are ---------------------------------------------------------------------
def split_table(text: str, what: str) -> tuple[str | None, str]:
    """'[SCHEMA.]NAME' → (schema or None, name), each part a checked identifier."""
    parts = text.split(".")
    if len(parts) > 2 or not all(parts):
        raise UsageError(f"{what} must be NAME or SCHEMA.NAME, not {text!r}")
    if len(parts) == 1:
        return None, check_identifier(parts[0], what)
    return check_identifier(parts[0], what), check_identifier(parts[1], what)


def with_tables(layout: Layout, table: str | None = None, completed_table: str | None = None) -> Layout:
    """The layout with its queue table (and its schema) and completed table named by the user. The pending view
    follows the schema; a queue table given without a schema keeps the preset's schema."""
    changes: dict[str, Any] = {}
    if table:
        schema, name = split_table(table, "--table")
        changes.update(queue_table=name, table_required=False)
        if schema is not None:
            changes["schema"] = schema
    if completed_table:
        if layout.completed_table is None:
            raise UsageError(f"layout {layout.name} has no completed table", "drop --completed-table")
        schema, name = split_table(completed_table, "--completed-table")
        if schema is not None and schema != changes.get("schema", layout.schema):
            raise UsageError("--completed-table must be in the queue table's schema",
                             "give both tables with the same SCHEMA.")
        changes["completed_table"] = name
    return replace(layout, **changes) if changes else layout


def require_table(layout: Layout) -> Layout:
    if layout.table_required:
        raise UsageError(f"layout {layout.name} needs the queue table's name (its seed names none)",
                         "add --table [SCHEMA.]NAME")
    return layout


NATIVE = load_layout("native")
