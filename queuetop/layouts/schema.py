"""`queuetop init`: make sure the native schema exists, creating only what is missing."""

from __future__ import annotations

from dataclasses import dataclass

from queuetop.db import Database
from queuetop.layouts import NATIVE, Layout
from queuetop.layouts.sql import Statements


@dataclass(frozen=True)
class SchemaStep:
    kind: str
    name: str
    created: bool


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
    return steps


def schema_present(db: Database, layout: Layout = NATIVE) -> bool:
    """True when every object of the native schema is there."""
    objects = Statements(db.dialect, layout).schema_objects()
    return all(db.fetchone(obj.exists_sql, obj.exists_params) for obj in objects)
