"""`queuetop init`: make sure the native schema exists, creating only what is missing."""

from __future__ import annotations

from dataclasses import dataclass

from queuetop.db import Database, UsageError
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.sql import Statements
from queuetop.layouts.sql.base import TAG


@dataclass(frozen=True)
class SchemaStep:
    kind: str
    name: str
    created: bool
    lacks: tuple[str, ...] = ()  # an index found that lacks columns of its definition (made by an older queuetop)
    upgrade_sql: str | None = None  # the statement that remakes it with them: printed, never run here


def outdated_indexes(db: Database, layout: Layout = NATIVE) -> list[SchemaStep]:
    """Native indexes that exist without every column their definition has now, each with the statement that
    upgrades it. Rebuilding an index of a busy queue table is a DBA's choice of moment (and of ONLINE = ON where
    the edition has it), so `init` and `doctor` print it and run nothing."""
    statements, found = Statements(db.dialect, layout), []
    for index in statements.index_definitions():
        read = statements.index_columns_sql(index)
        if read is None:
            continue
        present = {str(row[0]).lower() for row in db.fetchall(*read)}
        keys, include = statements.index_columns(index)
        lacks = tuple(column for column in keys + include if column.lower() not in present)
        if present and lacks:  # no column at all: the index is not there (init makes it)
            found.append(SchemaStep("index", index.name, False, lacks,
                                    statements.create_index_sql(index, upgrade=True).removeprefix(TAG) + ";"))
    return found


def init_schema(db: Database, layout: Layout = NATIVE) -> list[SchemaStep]:
    """Create the schema objects that are missing; report each one as created or found. One transaction, taken in
    turns (`Statements.schema_lock`): inits run at once all succeed, each finding what the one before made."""
    steps, statements = [], Statements(db.dialect, layout)
    with db.transaction():
        lock = statements.schema_lock()
        if lock is not None:
            db.fetchall(*lock)
        for obj in statements.schema_objects():
            exists = bool(db.fetchone(obj.exists_sql, obj.exists_params))
            if not exists:
                db.execute(obj.create_sql)
            steps.append(SchemaStep(obj.kind, obj.name, created=not exists))
    outdated = {step.name: step for step in outdated_indexes(db, layout)}
    return [outdated.get(step.name, step) if step.kind == "index" else step for step in steps]


def schema_present(db: Database, layout: Layout = NATIVE) -> bool:
    """True when the native schema is there: every object but the columns added since its first release (an
    install made before is still the native schema; `missing_columns` names what `init` would add to it)."""
    objects = [obj for obj in Statements(db.dialect, layout).schema_objects() if obj.kind != "column"]
    return all(db.fetchone(obj.exists_sql, obj.exists_params) for obj in objects)


def schema_current(db: Database, layout: Layout = NATIVE) -> bool:
    """True when every object of the native schema is there, the columns added since included."""
    return schema_present(db, layout) and not missing_columns(db, layout)


def missing_columns(db: Database, layout: Layout = NATIVE) -> list[str]:
    """The columns this queuetop's native schema has and this install lacks ("WorkCompleted.JobInfo")."""
    return [obj.name for obj in Statements(db.dialect, layout).schema_objects()
            if obj.kind == "column" and not db.fetchone(obj.exists_sql, obj.exists_params)]  # fmt: skip


def require_current(db: Database, layout: Layout) -> None:
    """Refuse a write to a native schema made by an older queuetop, before any SQL of it is sent: the writes carry
    the columns added since (a dead job's payload), and would fail on each with the database's own words."""
    if not layout.made_by_init:
        return
    missing = missing_columns(db, layout)
    if missing:
        raise UsageError(f"the queue schema was made by an older queuetop: it lacks {', '.join(missing)}",
                         "run `queuetop init` once: it adds what is missing and changes nothing else")
