"""Layouts: a queue's shape as data — its tables, the column playing each role, and its state machine.

A layout (a TOML preset in `presets/`, or a user's file) names the queue table, an optional pending view and
completed table, the column that plays each role with its SQL type (job type, created, claimed-at, claim
token, timeout, attempts, completed-at, ...), which clock its times use (the database's local time, as the
seeds' `GETDATE()`, or UTC), and the rule that puts a row in each state (pending, scheduled, claimed, timed
out, dead, lost) as a condition over the roles (see `predicate.py`). It also says how arrivals and
completions are seen, so rates and latencies can be read, and what `release` does on this shape.

Every figure and action states what it needs (`Layout.provides`): a shape that lacks it shows null / "—",
never a fake 0. Identifiers are validated here, once; the statement builders quote them.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from queuetop.core.errors import UsageError
from queuetop.layouts.predicate import KEYWORDS, Node, parse_predicate, roles_of, settings_of

QUEUE_ROLES = (
    "id", "type", "info", "priority", "created", "available", "created_by",
    "claimed_at", "claimed_by", "token", "timeout", "attempts", "finished",
)  # fmt: skip
COMPLETED_ROLES = (
    "c_id", "c_type", "c_info", "c_created", "c_claimed_at", "c_completed", "c_claimed_by", "c_attempts",
    "c_outcome",
)  # fmt: skip
STATES = ("pending", "scheduled", "claimed", "timed_out", "dead", "lost")
# How a seed's own dequeue takes rows (`[claim] forms`), each rendered per dialect by layouts/sql/:
CLAIM_FORMS = {
    "update_top": "UPDATE TOP (1) ... WITH (READPAST) ... OUTPUT: one statement takes one row",
    "cte": "WITH cte AS (SELECT TOP (1) ... WITH (READPAST)) UPDATE cte ... OUTPUT: one statement, one row",
    "select_update": "a transaction: SELECT TOP (1) ... WITH (UPDLOCK, READPAST), then UPDATE that row",
    "unlocked": "the same transaction without lock hints (seed 002's 'Discovering the Problem'): it hands one row "
                "to two workers, and the verdict must catch it",
    "batch_mark": "UPDATE of up to --batch rows stamping a fresh GUID (READPAST), then SELECT by that GUID",
    "move": "a transaction: SELECT TOP (1) ... WITH (ROWLOCK, XLOCK), DELETE it; then INSERT it into the completed "
            "table",
    "batch": "WITH c AS (SELECT TOP (@n) ... WITH (ROWLOCK, READPAST, UPDLOCK) ORDER BY ...) UPDATE c ... OUTPUT: up "
             "to --batch rows in one statement, one index seek per job type (PostgreSQL: FOR UPDATE SKIP LOCKED)",
}
# What a claim writes into a role: the database's clock, the clock plus the lease, the worker, the claim's fresh
# token, the attempt count plus one, or a constant.
CLAIM_VALUES = ("now", "now + $lease", "$worker", "$token", "attempts + 1")
FAILURES = {
    "timeout": "a failed attempt is left unfinished: the claim times out and is taken again, dead after "
               "$max_attempts",
    "lost": "a failed request is never completed: it shows as lost, and `release` moves it back",
    "retry": "a failed attempt is given back, available again after a delay; one that had $max_attempts moves to "
             "the completed table as dead (and so does a timed-out claim that `release` finds out of attempts)",
}
FIGURES = ("depth", "oldest_age_s", "scheduled", "claimed", "timed_out", "dead", "lost", "arrivals",
           "completions", "wait", "processing")  # fmt: skip
SETTINGS = {"max_attempts": 3, "lost_after": 60}  # $settings a condition may use, with their defaults
# Every write queuetop can make, and the section of a layout that declares it. A layout that does not declare an
# action is refused it before any SQL is sent: a hand-written layout for a library's table must never get a row
# queuetop made up. native.toml (the schema `queuetop init` makes) declares them all.
ACTIONS = {  # action: (its section, what queuetop would not know how to do without it)
    "enqueue": ("[enqueue]", "write a job into its table"),
    "release": ("[release]", "release its claims"),
    "dead retry": ("[dead_retry]", "put its dead jobs back to pending"),
    "dead delete": ("[dead_retry]", "delete its dead jobs"),  # or dead_actions = true: deleted, never retried
    "make available": ("[make_available]", "make its scheduled jobs available now"),
    "load": ("[claim]", "take jobs from it as its workers do"),
}
# How a layout's times read: "utc" (times without a zone, in UTC: native), "local" (without a zone, in the server's
# local time: the seeds' GETDATE()), "zoned" (times that carry their zone, PostgreSQL's timestamptz: the job
# libraries'; compared with the database's now as instants, read in UTC).
CLOCKS = ("utc", "local", "zoned")
DATABASES = ("mssql", "postgresql", "sqlite")  # the dialects' names
ENQUEUE_KEYS = ("stamped", "defaults")  # [enqueue] keys that name no role: stamped roles, the form's defaults
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_TYPE = re.compile(r"^(bigint|int|smallint|tinyint|bit|guid|datetime2?|text|xml|n?varchar\((\d{1,4}|max)\))$")
PRESET_NAMES = ("native", "queuesample", "requests", "work_queue", "processed", "job_queue", "procrastinate")


def preset_names(database: str | None = None) -> tuple[str, ...]:
    """The presets, or those whose tables can be in `database` (a dialect's name)."""
    return tuple(name for name in PRESET_NAMES if database is None or database in load_layout(name).databases)


def check_identifier(name: str, what: str) -> str:
    """Accept only plain identifiers, so a configured name can never carry SQL."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise UsageError(
            f"invalid identifier for {what}: {name!r}",
            "use letters, digits and underscores, starting with a letter or underscore",
        )
    return name


@dataclass(frozen=True)
class State:
    """The rows of one table that are in one state."""

    table: str  # "queue" | "completed"
    condition: Node
    text: str


@dataclass(frozen=True)
class Completions:
    """How a finished job shows: the role stamping its completion, and the pairs of roles whose difference is its
    wait (enqueued → taken) and its processing time (taken → finished). All in one table."""

    at: str
    wait: tuple[str, str] | None = None
    processing: tuple[str, str] | None = None
    where: State | None = None  # completed rows only (job_queue: the last attempt ended)

    @property
    def table(self) -> str:
        return "completed" if self.at.startswith("c_") else "queue"


@dataclass(frozen=True)
class Release:
    """What `release` does: clear the claim of rows in `state` (compare-and-set on the token), or move them
    from the completed table back into the queue (`requeue`)."""

    state: str
    action: str  # "clear" | "requeue"
    what: str  # the noun a user sees: "timed-out claims", "lost requests"


@dataclass(frozen=True)
class Claim:
    """The seed's own dequeue, as `queuetop load` drives it: which rows it takes (`states`, in `order`, of one
    job type at a time when `by_type`), what it writes (`sets`: role -> one of CLAIM_VALUES or a constant), and
    the forms it can take (CLAIM_FORMS; the first is the default). `finish` says how a job is completed (role ->
    value, "now" only), `finish_guard` whether the completion must still hold the claim's token; `failure` what
    a failed attempt does (FAILURES), None where the seed has no failure path."""

    forms: tuple[str, ...]
    states: tuple[str, ...]
    sets: Mapping[str, str | int]
    order: tuple[str, ...] = ()
    by_type: bool = False
    through_view: bool = False
    lease_s: float | None = None  # the seed's claim timeout, where its claims have one
    finish: Mapping[str, str] = field(default_factory=dict)
    finish_guard: bool = False
    failure: str | None = None
    # `[complete] move = true`: a finished job moves to the completed table with its outcome (the native queue)
    finish_move: bool = False
    # The roles a claim handed back (given back, retried, released) is cleared of: the token alone where the
    # state machine reads only the token (seed 004), every mark of the claim where it reads them (native).
    clear: tuple[str, ...] = ("token",)

    @property
    def leased(self) -> bool:
        return any(value == "now + $lease" for value in self.sets.values())

    @property
    def taken_back(self) -> str:
        """How a claim its worker abandoned comes back: "timeout" (taken again once its lease ran out, seed 004),
        "release" (lost until a release moves it back, seed 001), or "never" (taking is final: 000, 002, 003)."""
        if self.leased:
            return "timeout"
        return "release" if self.failure == "lost" else "never"

    @property
    def table(self) -> str:
        """Where a claim leaves its mark: "completed" for a shape that moves the row there (seed 001)."""
        return "completed" if "move" in self.forms else "queue"

    @property
    def finish_table(self) -> str:
        return "completed" if any(role.startswith("c_") for role in self.finish) else "queue"


@dataclass(frozen=True)
class Layout:
    """Where a queue lives, which column plays which role, and what state a row is in."""

    name: str
    schema: str | None
    queue_table: str
    pending_view: str | None
    completed_table: str | None
    columns: Mapping[str, str] = field(default_factory=dict)
    types: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    seed: str | None = None
    clock: str = "utc"
    made_by_init: bool = False  # its tables are the ones `queuetop init` makes (native): init and doctor know them
    # The job library whose tables these are (procrastinate), and the versions the preset was checked against:
    # detection then asks for the library's table name as well as its columns, and says what it found.
    library: str | None = None
    library_versions: str = ""
    databases: tuple[str, ...] = DATABASES  # where its tables can be: a library's own databases
    states: Mapping[str, State] = field(default_factory=dict)
    arrivals: str | None = None  # "identity" (ids above the last seen) | "created" (times past a watermark)
    completions: Completions | None = None
    throughput_from_depth: bool = False  # no times: completions = arrivals − Δdepth between polls
    # No times, but the rows a claim finished stay, in a state of their own (seeds 002, 003): completions are
    # those rows counted from a base id that follows the queue's live end (`watermarks.FinishedWatch`).
    done: State | None = None
    # A condition every row meets, which the monitor's capped reads of pending rows add to theirs: it lets the
    # database use an index whose filter says it (native: IX_WorkQueue_PendingAge's `Attempts >= 0`, written there
    # so that a claim, which never says it, cannot pick that index). None: the reads say only the state.
    monitor_guard: State | None = None
    release: Release | None = None
    dead_actions: bool = False  # dead jobs can be retried or deleted
    enqueue_fields: Mapping[str, str] = field(default_factory=dict)  # form field → role it fills
    enqueue_constants: Mapping[str, int] = field(default_factory=dict)  # role → value every insert sets
    enqueue_stamped: tuple[str, ...] = ()  # roles every insert sets to the database's now (native: created)
    enqueue_defaults: Mapping[str, int] = field(default_factory=dict)  # form field → the value the form starts with
    dead_retry: Mapping[str, int | None] = field(default_factory=dict)  # role → value that makes a dead job pending
    dead_move_back: tuple[str, ...] = ()  # or: roles copied back from the completed table into the queue
    detail: tuple[str, ...] = ()  # roles the drill-down shows beside the times
    settings: Mapping[str, int] = field(default_factory=lambda: dict(SETTINGS))
    table_required: bool = False  # the seed names no table: --table must
    claim: Claim | None = None  # the seed's own dequeue, for `queuetop load`; None: native, or none described
    declares: frozenset[str] = frozenset()  # the ACTIONS its sections declare (native: all)

    def __post_init__(self) -> None:
        where = f"layout {self.name}"
        if self.schema is not None:
            check_identifier(self.schema, f"{where}: schema")
        check_identifier(self.queue_table, f"{where}: queue table")
        for label, value in (("pending view", self.pending_view), ("completed table", self.completed_table)):
            if value is not None:
                check_identifier(value, f"{where}: {label}")
        for role, column in self.columns.items():
            if role not in QUEUE_ROLES + COMPLETED_ROLES:  # a column of its own (a status): a name conditions use
                check_identifier(role, f"{where}: the name of a column")
                if role.lower() in KEYWORDS or role.startswith("qt_"):
                    raise UsageError(f"{where}: {role!r} cannot name a column", "choose another name")
            check_identifier(column, f"{where}: column for {role}")
        for role, sql_type in self.types.items():
            if not _TYPE.match(sql_type):
                raise UsageError(f"{where}: unknown type {sql_type!r} for {role}",
                                 "types: bigint int smallint tinyint bit guid datetime datetime2 text xml "
                                 "varchar(N) nvarchar(N)")
        if not self.databases or any(name not in DATABASES for name in self.databases):
            raise UsageError(f"{where}: databases must name some of {', '.join(DATABASES)}")
        if self.clock not in CLOCKS:
            raise UsageError(f"{where}: clock must be one of {', '.join(CLOCKS)}, not {self.clock!r}")
        if self.completed_table is None and any(r.startswith("c_") for r in self.columns):
            raise UsageError(f"{where}: completed-table columns are given but no completed table")
        object.__setattr__(self, "columns", MappingProxyType(dict(self.columns)))
        object.__setattr__(self, "types", MappingProxyType(dict(self.types)))
        object.__setattr__(self, "states", MappingProxyType(dict(self.states)))
        object.__setattr__(self, "settings", MappingProxyType({**SETTINGS, **self.settings}))
        object.__setattr__(self, "enqueue_fields", MappingProxyType(dict(self.enqueue_fields)))
        object.__setattr__(self, "enqueue_constants", MappingProxyType(dict(self.enqueue_constants)))
        object.__setattr__(self, "dead_retry", MappingProxyType(dict(self.dead_retry)))
        for role in (*self.enqueue_fields.values(), *self.enqueue_constants, *self.dead_retry):
            if role not in self.columns:
                raise UsageError(f"{where}: enqueue or dead retry names {role!r}, which the layout does not define")

    def has(self, *roles: str) -> bool:
        return all(role in self.columns for role in roles)

    def refusal(self, action: str) -> str | None:
        """Why this layout may not `action` (one of ACTIONS), in one line naming the section it lacks; None when it
        declares it."""
        if action in self.declares:
            return None
        section, what = ACTIONS[action]
        return f"layout {self.name} declares no {section} section, so queuetop does not know how to {what}"

    def require(self, action: str) -> None:
        """Raise the refusal of an action this layout does not declare, before any SQL is sent."""
        reason = self.refusal(action)
        if reason is not None:
            raise UsageError(reason, f"add {ACTIONS[action][0]} to the layout file (`queuetop layouts --show "
                             "job_queue` shows one), or use a preset that has it")

    @property
    def batch_claims(self) -> bool:
        """Whether its jobs are claimed in batches and finished by a move with an outcome (`[claim] forms =
        ["batch"]`, `[complete] move`: native's): the leased queue `queue.Queue` works, in bulk."""
        return self.claim is not None and "batch" in self.claim.forms

    @property
    def release_buries(self) -> bool:
        """Whether a release sends the claims it finds out of attempts to the completed table as dead (a failure
        that is retried: `[claim] failure = "retry"`), so its result has a dead count worth saying."""
        return self.release is not None and self.claim is not None and self.claim.failure == "retry"


    @property
    def read_clock(self) -> str:
        """The clock its times are read in: "local", or "utc" (zoned times are read in UTC: `Database.use_clock`)."""
        return "local" if self.clock == "local" else "utc"

    @property
    def has_job_type(self) -> bool:
        return "type" in self.columns

    def type_of(self, role: str) -> str | None:
        return self.types.get(role)

    @property
    def provides(self) -> Mapping[str, bool]:
        """For every figure, whether this shape can know it."""
        pending = self.states.get("pending")
        completions = self.completions is not None or self.throughput_from_depth or self.done is not None
        return {
            "depth": pending is not None,
            "oldest_age_s": pending is not None and self.has("created" if pending.table == "queue" else "c_created"),
            **{name: name in self.states for name in ("scheduled", "claimed", "timed_out", "dead", "lost")},
            "arrivals": self.arrivals is not None,
            "completions": completions,
            "wait": self.completions is not None and self.completions.wait is not None,
            "processing": self.completions is not None and self.completions.processing is not None,
        }

    def table_names(self) -> list[str]:
        """The tables as a user would name them: schema.table."""
        prefix = f"{self.schema}." if self.schema else ""
        return [prefix + t for t in (self.queue_table, self.pending_view, self.completed_table) if t]


# -- reading presets and files ---------------------------------------------------------------------------
def load_layout(name_or_path: str = "native") -> Layout:
    """A preset by name (presets/NAME.toml) or a layout file (*.toml) that may start from a preset."""
    if name_or_path.endswith(".toml") or "/" in name_or_path or "\\" in name_or_path:
        path = Path(name_or_path).expanduser()
        try:
            text = path.read_text("utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read the layout file {path}: {exc.strerror}",
                             "give a preset name or the path of a .toml file") from None
        return layout_from_toml(path.stem, text, source=str(path))
    if name_or_path not in PRESET_NAMES:
        raise UsageError(f"unknown layout {name_or_path!r}",
                         f"presets: {', '.join(PRESET_NAMES)}; or a .toml file (`queuetop layouts` lists them)")
    return layout_from_toml(name_or_path, preset_text(name_or_path))


def preset_text(name: str) -> str:
    return resources.files(__package__).joinpath("presets", f"{name}.toml").read_text("utf-8")


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, Mapping) and isinstance(
            merged.get(key), dict) else value  # fmt: skip
    return merged


def layout_from_toml(name: str, text: str, source: str | None = None) -> Layout:
    where = f"layout {source or name}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where} is not valid TOML: {exc}") from None
    base = data.pop("preset", None)
    if base is not None:
        if base not in PRESET_NAMES:
            raise UsageError(f"{where}: unknown preset {base!r}", f"presets: {', '.join(PRESET_NAMES)}")
        data = _merge(tomllib.loads(preset_text(base)), data)
        name = data.get("name", base if source is None else name)
    try:
        return _build(name, data, where)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{where}: {exc!s} is missing or malformed", "compare with `queuetop layouts --show native`"
                         ) from None


def _column(spec: str, role: str, where: str) -> tuple[str, str | None]:
    parts = str(spec).split(None, 1)
    if not parts:
        raise UsageError(f"{where}: no column named for role {role}")
    return parts[0], (parts[1].strip().lower() if len(parts) > 1 else None)


def _build(name: str, data: dict[str, Any], where: str) -> Layout:
    tables = data.get("tables", {})
    columns: dict[str, str] = {}
    types: dict[str, str] = {}
    for section, prefix in (("queue_columns", ""), ("completed_columns", "c_")):
        for role, spec in data.get(section, {}).items():
            column, sql_type = _column(spec, prefix + role, where)
            columns[prefix + role] = column
            if sql_type:
                types[prefix + role] = sql_type
    settings = {**SETTINGS, **data.get("settings", {})}

    def state(text: str, label: str) -> State:
        node = parse_predicate(text, f"{where}: {label}")
        roles = roles_of(node)
        unknown = sorted(r for r in roles if r not in columns)
        if unknown:
            raise UsageError(f"{where}: {label} mentions {', '.join(unknown)}, which the layout does not define")
        tables_used = {"completed" if r.startswith("c_") else "queue" for r in roles}
        if len(tables_used) > 1:
            raise UsageError(f"{where}: {label} mixes roles of the queue and the completed table")
        missing = sorted(settings_of(node) - set(settings))
        if missing:
            raise UsageError(f"{where}: {label} uses ${missing[0]}, which is not a setting",
                             f"settings: {', '.join(sorted(settings))}")
        return State(tables_used.pop() if tables_used else "queue", node, text)

    states = {key: state(text, f"state {key}") for key, text in data.get("states", {}).items()}
    unknown_states = sorted(set(states) - set(STATES))
    if unknown_states:
        raise UsageError(f"{where}: unknown state {unknown_states[0]!r}", f"states: {', '.join(STATES)}")
    completions = None
    if "completions" in data:
        spec = data["completions"]
        completions = Completions(
            at=spec["at"],
            wait=tuple(spec["wait"]) if "wait" in spec else None,
            processing=tuple(spec["processing"]) if "processing" in spec else None,
            where=state(spec["where"], "completions.where") if "where" in spec else None,
        )  # type: ignore[arg-type]
        for role in (completions.at, *(completions.wait or ()), *(completions.processing or ())):
            if role not in columns:
                raise UsageError(f"{where}: completions use {role!r}, which the layout does not define")
    release = None
    if "release" in data:
        spec = data["release"]
        release = Release(spec["state"], spec["action"], spec.get("what", spec["state"].replace("_", "-")))
        if release.state not in states or release.action not in ("clear", "requeue"):
            raise UsageError(f"{where}: release needs a defined state and the action clear or requeue")
    claim = _claim(data["claim"], data.get("complete", {}), columns, states, where) if "claim" in data else None
    done = state(data["done"], "done") if "done" in data else None
    monitor_guard = state(data["monitor_guard"], "monitor_guard") if "monitor_guard" in data else None
    if monitor_guard is not None and monitor_guard.table != "queue":
        raise UsageError(f"{where}: monitor_guard names roles of the completed table", "it guards reads of the queue")
    if done is not None:
        if completions is not None or data.get("throughput_from_depth"):
            raise UsageError(f"{where}: done is for a shape without completion times",
                             "give done, or [completions], or throughput_from_depth: one of them")
        if data.get("arrivals") != "identity" or any(s.table != "queue" for s in (done, *states.values())):
            raise UsageError(f"{where}: done needs rows that stay in the queue table and arrivals = \"identity\"",
                             "without them, leave done out: completions are then the depth's change "
                             "(throughput_from_depth = true)")
    if "pending" not in states:
        raise UsageError(f"{where}: no pending state", "say which rows wait, e.g. pending = \"claimed_at is null\"")
    if "make_available" in data and not ("scheduled" in states and "available" in columns):
        raise UsageError(f"{where}: [make_available] needs a scheduled state and the role available")
    sections = {"enqueue": "enqueue" in data, "release": release is not None, "dead retry": "dead_retry" in data,
                "dead delete": "dead_retry" in data or bool(data.get("dead_actions", False)),
                "make available": "make_available" in data, "load": claim is not None}  # fmt: skip
    layout = Layout(
        name=data.get("name", name),
        schema=tables.get("schema"),
        queue_table=tables.get("queue", "TABLE_NAME_REQUIRED"),
        pending_view=tables.get("pending_view"),
        completed_table=tables.get("completed"),
        columns=columns,
        types=types,
        description=data.get("description", ""),
        seed=data.get("seed"),
        clock=data.get("clock", "utc"),
        made_by_init=bool(data.get("made_by_init", False)),
        library=data.get("library", {}).get("name"),
        library_versions=data.get("library", {}).get("versions", ""),
        databases=tuple(data.get("library", {}).get("databases", DATABASES)),
        states=states,
        arrivals=data.get("arrivals"),
        completions=completions,
        throughput_from_depth=bool(data.get("throughput_from_depth", False)),
        done=done,
        monitor_guard=monitor_guard,
        release=release,
        dead_actions=bool(data.get("dead_actions", False)) or "dead_retry" in data,
        enqueue_fields={source: role for role, source in data.get("enqueue", {}).items()
                        if isinstance(source, str) and role not in ENQUEUE_KEYS},
        enqueue_constants={role: int(v) for role, v in data.get("enqueue", {}).items()
                           if not isinstance(v, str) and role not in ENQUEUE_KEYS},
        enqueue_defaults={name: int(v) for name, v in data.get("enqueue", {}).get("defaults", {}).items()},
        enqueue_stamped=tuple(data.get("enqueue", {}).get("stamped", ())),
        dead_retry={role: (None if v == "null" else int(v)) for role, v in data.get("dead_retry", {}).items()
                    if role != "move_back"},
        dead_move_back=tuple(data.get("dead_retry", {}).get("move_back", ())),
        detail=tuple(data.get("detail", ())),
        settings=settings,
        table_required="queue" not in tables,
        claim=claim,
        declares=frozenset(action for action, declared in sections.items() if declared),
    )
    _check_own_columns(layout, where)
    return layout


def _check_own_columns(layout: Layout, where: str) -> None:
    """A column that plays no role must be one a condition, the completions, the drill-down or the claim use:
    otherwise it is a role's name mistyped (`creatd`), which must not pass as a column of its own."""
    own = [name for name in layout.columns if name not in QUEUE_ROLES + COMPLETED_ROLES]
    if not own:
        return
    used = set(layout.detail)
    for state in (*layout.states.values(), layout.done, layout.monitor_guard,
                  layout.completions.where if layout.completions else None):  # fmt: skip
        if state is not None:
            used |= roles_of(state.condition)
    if layout.claim is not None:
        used |= {*layout.claim.order, *layout.claim.sets, *layout.claim.finish}
    for name in own:
        if name not in used:
            raise UsageError(f"{where}: {name!r} is not a role, and no state, done or detail uses it",
                             f"roles: {', '.join(QUEUE_ROLES)} (completed table: the same with c_); a column of "
                             "your own is named for a condition to use")


def _claim(spec: Mapping[str, Any], complete: Mapping[str, Any], columns: Mapping[str, str],
           states: Mapping[str, State], where: str) -> Claim:  # fmt: skip
    """The `[claim]` and `[complete]` sections, checked against the layout's roles and states."""
    forms = tuple(spec.get("forms", ()))
    if not forms or any(form not in CLAIM_FORMS for form in forms):
        raise UsageError(f"{where}: [claim] forms must name one or more of {', '.join(CLAIM_FORMS)}")
    claim_states = tuple(spec.get("states", ("pending",)))
    unknown = [name for name in claim_states if name not in states]
    if unknown:
        raise UsageError(f"{where}: [claim] takes rows in state {unknown[0]!r}, which the layout does not define")
    sets = dict(spec.get("set", {}))
    finish = dict(complete.get("set", {}))
    for role, value in (*sets.items(), *finish.items()):
        if role not in columns:
            raise UsageError(f"{where}: [claim] or [complete] sets {role!r}, which the layout does not define")
        if not (isinstance(value, int) and not isinstance(value, bool)) and value not in CLAIM_VALUES:
            raise UsageError(f"{where}: [claim] or [complete] sets {role} to {value!r}",
                             f"values: {', '.join(CLAIM_VALUES)}, or a whole number")
    if any(value != "now" for value in finish.values()):
        raise UsageError(f"{where}: [complete] can only set roles to \"now\"")
    order = tuple(spec.get("order", ()))
    for role in order:
        if role not in columns:
            raise UsageError(f"{where}: [claim] orders by {role!r}, which the layout does not define")
    failure = spec.get("failure")
    if failure is not None and failure not in FAILURES:
        raise UsageError(f"{where}: [claim] failure must be one of {', '.join(FAILURES)}")
    clear = tuple(spec.get("clear", ("token",) if "token" in sets else ()))
    unknown = [role for role in clear if role not in sets]
    if unknown:
        raise UsageError(f"{where}: [claim] clear names {unknown[0]!r}, which the claim does not set")
    finish_move = bool(complete.get("move", False))
    if finish_move and not {"c_id", "c_completed", "c_outcome"} <= set(columns):
        raise UsageError(f"{where}: [complete] move needs a completed table with id, completed and outcome columns")
    if (failure == "retry" or "batch" in forms) and not (finish_move and "attempts" in sets and "token" in sets):
        raise UsageError(f"{where}: a batch claim and the retry failure need a claim that sets the token and "
                         "attempts, and a completion that moves the row ([complete] move = true)")
    claim = Claim(forms=forms, states=claim_states, sets=MappingProxyType(sets), order=order,
                  by_type=bool(spec.get("by_type", False)), through_view=bool(spec.get("through_view", False)),
                  lease_s=float(spec["lease_s"]) if "lease_s" in spec else None, finish=MappingProxyType(finish),
                  finish_guard=bool(complete.get("guard_token", False)), failure=failure, finish_move=finish_move,
                  clear=clear)  # fmt: skip
    if "move" in forms and len(forms) > 1:
        raise UsageError(f"{where}: a [claim] that moves rows has no other form")
    if claim.finish_guard and "token" not in sets:
        raise UsageError(f"{where}: [complete] guards on the token, which [claim] does not set")
    return claim


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
