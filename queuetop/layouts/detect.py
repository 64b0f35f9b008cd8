"""Which layout fits the tables a database really has: detection, and the check of a layout against the catalog.

One read of the catalog (tables, views and their columns) answers both questions:

- `detect(db)`: the base tables whose columns hold every column a preset names (compared without regard to
  case), most specific preset first (the native queue table holds seed 000's columns too, so a table fitting
  several presets is given the one naming the most columns). One candidate → use it; several → the user chooses
  with `--layout/--table`; none → nothing to watch.
- `check_layout(db, layout)`: the layout's tables exist and have every column it names; spellings are taken
  from the catalog (a PostgreSQL table created without quotes has lower-case names), and a missing column is one
  clear error naming the table, the column, and the preset that does fit the table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from queuetop.core.errors import QueuetopError, SchemaMissing, UsageError
from queuetop.db import Database
from queuetop.layouts import PRESET_NAMES, Layout, load_layout, with_tables
from queuetop.layouts.sql.init import ADDED_ROLES


@dataclass(frozen=True)
class Table:
    schema: str | None
    name: str
    columns: dict[str, str]  # lower-case name -> the catalog's spelling
    is_view: bool

    @property
    def display(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name


@dataclass(frozen=True)
class Candidate:
    """A table (and its completed table) that a preset fits."""

    preset: str
    table: Table
    completed: Table | None
    layout: Layout

    @property
    def sentence(self) -> str:
        """What was found, as the dashboard and `stats` say it: the library by name where the tables are one's."""
        library = self.layout.library
        what = f"{library} {self.layout.library_versions.split(' ')[0]} ({self.table.display})" if library \
            else self.table.display
        return f"found {what}: layout {self.preset}"

    @property
    def options(self) -> str:
        """The command-line options that choose this candidate."""
        completed = f" --completed-table {self.completed.name}" if self.completed else ""
        return f"--layout {self.preset} --table {self.table.display}{completed}"


class SeveralQueues(UsageError):
    """More than one queue table fits a preset and nothing chooses one: the candidates travel with the error, so the
    dashboard can show them all (a section each) where the other commands say how to choose."""

    def __init__(self, candidates: list[Candidate]) -> None:
        listed = "; ".join(f"{c.table.display} ({c.options})" for c in candidates[:8])
        super().__init__(f"{len(candidates)} queue tables found: {listed}", "choose one with --layout and --table")
        self.candidates = tuple(candidates)


class Catalog:
    """The database's tables and views with their columns, read once; `names`: only those called one of these (in
    any schema, any case), where the caller knows what it looks for (a database of thousands of tables, a schema
    per tenant, has far more catalog than a command that names its table needs)."""

    def __init__(self, db: Database, names: Iterable[str] = ()) -> None:
        wanted = sorted({name.lower() for name in names})
        columns: dict[tuple[str | None, str], dict[str, str]] = defaultdict(dict)
        views: set[tuple[str | None, str]] = set()
        for schema, table, column, is_view in db.fetchall(db.dialect.catalog_sql(len(wanted)), wanted):
            columns[(schema, table)][str(column).lower()] = str(column)
            if int(is_view):  # 1/0 from every database (a driver may spell a boolean as text)
                views.add((schema, table))
        self.tables = [Table(schema, name, cols, (schema, name) in views) for (schema, name), cols in columns.items()]

    def find(self, schema: str | None, name: str, default_schemas: tuple[str | None, ...]) -> Table | None:
        """The table called `name` in `schema` (or, with none given, in the default schemas), by any case."""
        wanted = {s.lower() if s else s for s in ((schema,) if schema else default_schemas)}
        matches = [t for t in self.tables if t.name.lower() == name.lower()
                   and (t.schema.lower() if t.schema else t.schema) in wanted]  # fmt: skip
        exact = [t for t in matches if t.name == name]
        return (exact or matches or [None])[0]


def _queue_columns(layout: Layout) -> dict[str, str]:
    return {role: col for role, col in layout.columns.items() if not role.startswith("c_")}


def _completed_columns(layout: Layout) -> dict[str, str]:
    return {role: col for role, col in layout.columns.items() if role.startswith("c_")}


def _fits(table: Table, columns: dict[str, str], layout: Layout | None = None) -> bool:
    """The table holds every column; a job library's table must also bear the library's own name (its columns
    alone, `status`, `attempts`, say too little)."""
    if layout is not None and layout.library:  # its documented view (graphile_worker.jobs) is as good as a table
        return table.name.lower() == layout.queue_table.lower() and all(
            col.lower() in table.columns for col in columns.values())  # fmt: skip
    return not table.is_view and all(col.lower() in table.columns for col in columns.values())


def default_schemas(db: Database) -> tuple[str | None, ...]:
    return {"postgresql": ("public",), "mssql": ("dbo",)}.get(db.dialect.name, (None,))


def detect(db: Database, catalog: Catalog | None = None) -> list[Candidate]:
    """Every table a preset fits, the most specific preset per table, in a stable order."""
    catalog = catalog or Catalog(db)
    here = [p for p in map(load_layout, PRESET_NAMES) if db.dialect.name in p.databases]  # each preset read once
    presets = sorted(here, key=lambda p: -len(p.columns))
    found: list[Candidate] = []
    claimed: set[tuple[str | None, str]] = set()
    for preset in presets:
        for table in sorted(catalog.tables, key=lambda t: t.display):
            if (table.schema, table.name) in claimed or not _fits(table, _queue_columns(preset), preset):
                continue
            completed = None
            if preset.completed_table:
                completed = catalog.find(table.schema, preset.completed_table, (table.schema,))
                if completed is None or completed == table or not _fits(completed, _completed_columns(preset)):
                    continue  # (a completed table holds the queue's columns too: it is not a queue of its own)
                claimed.add((completed.schema, completed.name))
            layout = with_tables(preset, _qualified(db, table), completed.name if completed else None)
            if preset.pending_view and catalog.find(table.schema, preset.pending_view, (table.schema,)) is None:
                layout = replace(layout, pending_view=None)
            found.append(Candidate(preset.name, table, completed, _spelled(layout, table, completed)))
            claimed.add((table.schema, table.name))
    return sorted(found, key=lambda c: (c.preset != "native", c.table.display))


def _qualified(db: Database, table: Table) -> str:
    return f"{table.schema}.{table.name}" if table.schema and db.dialect.supports_schemas else table.name


def _spelled(layout: Layout, table: Table, completed: Table | None) -> Layout:
    """The layout with every column as the catalog spells it (so quoting matches what exists)."""
    columns = {}
    for role, col in layout.columns.items():
        source = completed if role.startswith("c_") else table
        columns[role] = source.columns.get(col.lower(), col) if source else col
    return replace(layout, columns=columns)


def choose(db: Database, catalog: Catalog | None = None) -> tuple[Layout, str]:
    """The one layout the database holds, with the sentence that says so; a clear error otherwise."""
    candidates = detect(db, catalog)
    if not candidates:
        raise SchemaMissing(db.target.display)
    natives = [c for c in candidates if c.preset == "native"]
    if len(natives) == 1:  # the schema `queuetop init` made wins over tables it merely resembles
        candidates = natives
    if len(candidates) > 1:
        raise SeveralQueues(candidates)
    (found,) = candidates
    return found.layout, found.sentence


def check_layout(db: Database, layout: Layout, catalog: Catalog | None = None) -> Layout:
    """The layout, spelled as the catalog spells its tables and columns; a clear error if one is missing."""
    if db.dialect.name not in layout.databases:
        runs_on = " and ".join(layout.databases)
        raise UsageError(f"layout {layout.name} is for {runs_on}, not {db.dialect.name}",
                         f"{layout.library or 'its library'} keeps its tables in {runs_on} only")
    catalog = catalog or Catalog(db, [name for name in (layout.queue_table, layout.completed_table) if name])
    defaults = default_schemas(db)
    schema = db.dialect.schema_for(layout.schema)
    table = catalog.find(schema, layout.queue_table, defaults)
    if table is None:
        shown = ".".join(p for p in (schema, layout.queue_table) if p)
        if layout.made_by_init:
            raise SchemaMissing(db.target.display)
        raise QueuetopError(f"table {shown} not found in {db.target.display} (layout {layout.name})",
                            "name it with --table [SCHEMA.]NAME; `queuetop detect` shows the queue tables found")
    completed = None
    if layout.completed_table:
        completed = catalog.find(table.schema, layout.completed_table, (table.schema,))
        if completed is None:
            raise QueuetopError(f"table {layout.completed_table} not found beside {table.display} "
                                f"(layout {layout.name} needs it)", "name it with --completed-table NAME")
    for source, columns in ((table, _queue_columns(layout)), (completed, _completed_columns(layout))):
        if source is None:
            continue
        for role, col in columns.items():
            if layout.made_by_init and role in ADDED_ROLES:
                continue  # an install made before has the native schema without it: init adds it, writes say so
            if col.lower() not in source.columns:
                raise UsageError(f"table {source.display} has no column {col} (the {role.removeprefix('c_')} of "
                                 f"layout {layout.name})", _fitting_hint(source))
    spelled = _spelled(layout, table, completed)
    return replace(spelled, queue_table=table.name, completed_table=completed.name if completed else None)


def _fitting_hint(table: Table) -> str:
    fits = [name for name in PRESET_NAMES if _fits(table, _queue_columns(layout := load_layout(name)), layout)]
    if fits:
        return f"this table fits layout {fits[-1]}: use --layout {fits[-1]}"
    return "no preset fits it: write a layout file (`queuetop detect` or `queuetop layouts --show NAME` prints one)"
