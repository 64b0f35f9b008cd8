"""A layout as data: the roles a column can play, the states, the claim forms and failures, the actions a layout
may declare, and the frozen `Layout` with its checks (identifiers validated here, once). Reading it from a
preset or a file is `files.py`'s job."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from queuetop.core.errors import UsageError
from queuetop.layouts.predicate import KEYWORDS, Compare, Junction, Node, Role, texts_of

QUEUE_ROLES = (
    "id", "type", "info", "priority", "created", "available", "created_by",
    "claimed_at", "claimed_by", "token", "timeout", "attempts", "finished",
)  # fmt: skip
COMPLETED_ROLES = (
    "c_id", "c_type", "c_info", "c_created", "c_claimed_at", "c_completed", "c_claimed_by", "c_attempts",
    "c_outcome", "c_line",
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
# Roles a joined column may play, where the table keeps no such column: a time kept in another table
# (procrastinate's creation time is its job's 'deferred' line in procrastinate_events), the type of a log's line kept
# in the job's row (procrastinate_events has none: the job's task_name). Read only, as every joined name.
JOINABLE_ROLES = ("created", "c_type")
_WHEN_TEXT = re.compile(r"[A-Za-z0-9_ .-]{0,64}")  # a joined column's `when` texts: the condition grammar's texts
# The declared SQL types of a role whose values are whole numbers (an id that can be a watermark, a range)
INTEGER_TYPES = frozenset({"bigint", "int", "integer", "smallint", "tinyint"})
_TYPE = re.compile(r"^(bigint|int|smallint|tinyint|bit|guid|datetime2?|text|xml|interval|n?varchar\((\d{1,4}|max)\))$")


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


CALL_FIELDS = ("type", "info", "priority", "available")  # what `enqueue` gives a library's function
CALL_TYPES = ("text", "json", "jsonb", "int", "smallint", "bigint", "timestamptz")


@dataclass(frozen=True)
class EnqueueCall:
    """`[enqueue] function`: a job added by the library's own SQL function, the way its documentation says to
    add one from SQL (graphile_worker.add_job), never by an INSERT queuetop made up. PostgreSQL, named notation:
    each of enqueue's fields goes to the argument `args` names, cast to its type; the rest keep their defaults.

    With `row`, the function takes one argument, an array of rows of that composite type, and returns the new
    ids (procrastinate_defer_jobs_v1, as procrastinate's own defer sends it): `args` then name the row's
    attributes, `constants` give others a value of the preset's (unless a field gives one), the rest are NULL."""

    function: str  # in the layout's schema
    args: Mapping[str, tuple[str, str]]  # enqueue field (CALL_FIELDS) → (argument or attribute, its type)
    returns: str  # the column of the row the function returns that holds the new job's id ("ids" with `row`)
    row: str | None = None  # the composite type of the function's one argument (an array of them), in the schema
    row_fields: tuple[str, ...] = ()  # its attributes, in order
    constants: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # attribute → text value

    def row_values(self, fields: Sequence[str]) -> list[str | None]:
        """With `row`, what fills each attribute, in the row's order: the enqueue field given for it, else its
        constant (as `constant:NAME`), else None (NULL)."""
        given = {self.args[name][0]: name for name in fields}
        return [given.get(attribute) or (f"constant:{attribute}" if attribute in self.constants else None)
                for attribute in self.row_fields]

    def bind_order(self, fields: Sequence[str]) -> list[str]:
        """The call's parameters in the order its SQL takes them (`Statements.enqueue_call`): the enqueue fields
        given, and with `row` each constant an attribute keeps (as `constant:NAME`), in the row's order."""
        if self.row is None:
            return list(fields)
        return [name for name in self.row_values(fields) if name is not None]


@dataclass(frozen=True)
class Joined:
    """`[joined_columns]`: a value a library keeps in another table of its own, read for each queue row by key
    (procrastinate's worker heartbeat: `procrastinate_workers.last_heartbeat` of the worker that the job's
    `worker_id` names). Rendered as a scalar subquery wherever the name is read, so every statement reads it
    alike: NULL where no row matches, the greatest where several do. In the layout's schema; read only."""

    table: str
    column: str  # the value, in `table`
    key: str  # the column of `table` that matches
    by: str  # the role (or column of its own) whose value it matches: of the queue table, or (c_) the completed one
    # Only the rows of `table` whose columns hold one of these texts (pgqueuer_log's line with status 'picked':
    # when the job was taken; procrastinate's 'deferred', 'deferred_for_retry' or 'retried' line: when it last
    # began to wait). Written as literals, as a condition's texts are: the layout grammar's texts, no quote.
    when: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def on_completed(self) -> bool:
        """Read for each row of the completed table (`by` is one of its roles), not of the queue table."""
        return self.by.startswith("c_")


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
class IndexAdvice:
    """`[[advice]]`: an index the shape's own tables lack for the monitor's reads, which `doctor` prints where a
    read it names scans (bench/README measured each): on `table` ("queue" or "completed"), named `name` ({queue}
    and {completed} stand for the tables' names), keyed by roles, filtered by a condition in the layouts'
    language (literal values only), serving the doctor's probes `serves` names."""

    table: str
    name: str
    keys: tuple[str, ...]
    where: str | None
    serves: tuple[str, ...]


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
    # Roles read from inside a column that holds JSON: role → the path of keys to a text (dramatiq's job type is
    # `message->>'actor_name'`). Read only: no write may set such a role.
    json_paths: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Roles read as two columns joined into one text, `first/second` (`pair(queue_name, task_name)`: a job's queue
    # beside its type, a second dimension): role → the second column (the first is `columns[role]`). Read only.
    pairs: Mapping[str, str] = field(default_factory=dict)
    joined: Mapping[str, Joined] = field(default_factory=dict)  # names read from another table by key
    description: str = ""
    seed: str | None = None
    advice: tuple[IndexAdvice, ...] = ()  # the indexes its own tables lack for the monitor's reads (doctor)
    clock: str = "utc"
    made_by_init: bool = False  # its tables are the ones `queuetop init` makes (native): init and doctor know them
    # The job library whose tables these are (procrastinate), and the versions the preset was checked against:
    # detection then asks for the library's table name as well as its columns, and says what it found.
    library: str | None = None
    library_versions: str = ""
    databases: tuple[str, ...] = DATABASES  # where its tables can be: a library's own databases
    # Why it cannot know a figure, in its own words (`[cannot_know]`: procrastinate's times are in another table);
    # `cannot_know` adds the general reason for every other figure it lacks.
    unknown_because: Mapping[str, str] = field(default_factory=dict)
    states: Mapping[str, State] = field(default_factory=dict)
    arrivals: str | None = None  # "identity" (ids above the last seen) | "created" (times past a watermark)
    completions: Completions | None = None
    # Finished rows are deleted, and no completion time is kept anywhere (graphile-worker): completions are what
    # arrived less what the rows in every state grew by between two polls, so a job that arrived and ended between
    # them still counts (arrivals come from the identity).
    deletes_finished: bool = False
    # The table and column whose identity hands out its ids (`[tables] sequence = "TABLE.COLUMN"`: graphile-worker's
    # view reads _private_jobs.id), where rows are deleted: the ids handed out tell how many jobs came and went
    # between two polls unseen (`watermarks.VanishedWatch`). PostgreSQL and SQLite (an AUTOINCREMENT key).
    sequence: tuple[str, str] | None = None
    # The completed table's ids are its own, not the queue row's (`completed_ids = "own"`: django_q_task's id is the
    # task's uuid, the queue row's an autoincrement): arrivals by id read the queue table alone, and a job's id is
    # looked up in each table as that table's.
    completed_ids_own: bool = False
    # The completed table logs each job's steps by the job's own id, and the job's row stays in the queue table
    # (`completed_ids = "kept"`: procrastinate_events beside procrastinate_jobs): arrivals by id read the queue
    # table alone (a job's id in the log is no second arrival).
    completed_ids_kept: bool = False
    # No times, but the rows a claim finished stay, in a state of their own (seeds 002, 003): completions are
    # those rows counted from a base id that follows the queue's live end (`watermarks.FinishedWatch`).
    done: State | None = None
    # Rows that ended and stay in the queue table, counted neither in a state nor as completions (dramatiq-pg's
    # 'done', pg-boss's 'cancelled'): kept out of the rows in no state (`in_no_state`), which are shown, never dropped.
    ended: State | None = None
    # The rows of the completed table that each stand for one job that ended, where that table is a log with a line
    # per step of a job (pgqueuer_log: queued, picked, then successful): arrivals by id and a job looked up there
    # read only these. None: every row of the completed table is a job (native's WorkCompleted).
    completed_rows: State | None = None
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
    enqueue_call: EnqueueCall | None = None  # or: jobs are added by the library's own function
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
        for label, value in (("pending view", self.pending_view), ("completed table", self.completed_table),
                             *(("sequence", part) for part in self.sequence or ())):
            if value is not None:
                check_identifier(value, f"{where}: {label}")
        for role, column in self.columns.items():
            if role not in QUEUE_ROLES + COMPLETED_ROLES:  # a column of its own (a status): a name conditions use
                check_identifier(role, f"{where}: the name of a column")
                if role.lower() in KEYWORDS or role.startswith("qt_"):
                    raise UsageError(f"{where}: {role!r} cannot name a column", "choose another name")
            check_identifier(column, f"{where}: column for {role}")
        if self.enqueue_call is not None:
            _check_call(self.enqueue_call, where)
        for advice in self.advice:
            check_identifier(advice.name.format(queue=self.queue_table, completed=self.completed_table or ""),
                             f"{where}: [[advice]] name")  # fmt: skip
            missing = [role for role in advice.keys if role not in self.columns]
            if missing:
                raise UsageError(f"{where}: [[advice]] {advice.name}: {', '.join(missing)}: no such role here")
        for name, joined in self.joined.items():
            check_identifier(name, f"{where}: the name of a joined column")
            if (name in QUEUE_ROLES + COMPLETED_ROLES and name not in JOINABLE_ROLES) or name in self.columns \
                    or name.lower() in KEYWORDS or name.startswith("qt_"):  # fmt: skip
                raise UsageError(f"{where}: [joined_columns] {name}: the name is taken",
                                 "a joined column is a name of its own, for the states and the drill-down, or "
                                 f"one of the roles {', '.join(JOINABLE_ROLES)} where the table keeps none")
            for label, value in (("table", joined.table), ("column", joined.column), ("key", joined.key)):
                check_identifier(value, f"{where}: [joined_columns] {name}'s {label}")
            if joined.by not in self.columns or joined.by in self.json_paths or joined.by in self.pairs:
                raise UsageError(f"{where}: [joined_columns] {name} is matched by {joined.by!r}, which is not a "
                                 "column of the queue or the completed table",
                                 "by names a role of [queue_columns] (claimed_by) or [completed_columns] (c_id)")
            for column, values in joined.when:
                check_identifier(column, f"{where}: [joined_columns] {name}'s when")
                if not values:
                    raise UsageError(f"{where}: [joined_columns] {name}: when {column} lists no text",
                                     "one text, or a list of the texts any of which a row may hold")
                for value in values:
                    if not _WHEN_TEXT.fullmatch(value):
                        raise UsageError(f"{where}: [joined_columns] {name}: when {column} = {value!r} is not a short "
                                         "text", "letters, digits, space . _ - (up to 64), as a condition's 'texts'")
        for role, path in self.json_paths.items():
            for key in path:
                check_identifier(key, f"{where}: a key of {role}'s JSON path")
        for role, second in self.pairs.items():
            check_identifier(second, f"{where}: the second column of {role}")
        for role, sql_type in self.types.items():
            if not _TYPE.match(sql_type):
                raise UsageError(f"{where}: unknown type {sql_type!r} for {role}",
                                 "types: bigint int smallint tinyint bit guid datetime datetime2 text xml interval "
                                 "varchar(N) nvarchar(N)")
        if not self.databases or any(name not in DATABASES for name in self.databases):
            raise UsageError(f"{where}: databases must name some of {', '.join(DATABASES)}")
        if self.clock not in CLOCKS:
            raise UsageError(f"{where}: clock must be one of {', '.join(CLOCKS)}, not {self.clock!r}")
        if self.completed_table is None and any(r.startswith("c_") for r in self.columns):
            raise UsageError(f"{where}: completed-table columns are given but no completed table")
        object.__setattr__(self, "columns", MappingProxyType(dict(self.columns)))
        object.__setattr__(self, "types", MappingProxyType(dict(self.types)))
        object.__setattr__(self, "json_paths", MappingProxyType(dict(self.json_paths)))
        object.__setattr__(self, "pairs", MappingProxyType(dict(self.pairs)))
        object.__setattr__(self, "joined", MappingProxyType(dict(self.joined)))
        object.__setattr__(self, "states", MappingProxyType(dict(self.states)))
        object.__setattr__(self, "settings", MappingProxyType({**SETTINGS, **self.settings}))
        object.__setattr__(self, "enqueue_fields", MappingProxyType(dict(self.enqueue_fields)))
        object.__setattr__(self, "enqueue_constants", MappingProxyType(dict(self.enqueue_constants)))
        object.__setattr__(self, "dead_retry", MappingProxyType(dict(self.dead_retry)))
        object.__setattr__(self, "unknown_because", MappingProxyType(dict(self.unknown_because)))
        known = [figure for figure in self.unknown_because if self.provides.get(figure, True)]
        if known:
            raise UsageError(f"{where}: [cannot_know] names {known[0]!r}, which it can know",
                             f"figures it cannot know: {', '.join(f for f, ok in self.provides.items() if not ok)}")
        for role in (*self.enqueue_fields.values(), *self.enqueue_constants, *self.dead_retry):
            if role in self.joined:
                raise UsageError(f"{where}: enqueue or dead retry names {role!r}, which is read from another table",
                                 "a joined column is for watching: name a column of the queue table")
            if role not in self.columns:
                raise UsageError(f"{where}: enqueue or dead retry names {role!r}, which the layout does not define")
            if role in self.json_paths or role in self.pairs:
                raise UsageError(f"{where}: enqueue or dead retry names {role!r}, which is read from inside JSON or "
                                 "from two columns", "such a role is for watching: name a column of its own")

    @property
    def finished_rows_leave(self) -> bool:
        """A job's row leaves the queue table as it ends and nothing else stays there: deleted with its times
        (`deletes_finished`: graphile-worker), or deleted once its result is saved in a table numbered apart
        (`completed_ids_own`: django-q2). Every row of the queue table is then waiting or running work."""
        return self.deletes_finished or self.completed_ids_own

    @property
    def log_lines(self) -> bool:
        """The completions are lines of a log that numbers its lines in order (`c_line`: procrastinate_events' id, a
        bigserial): a poll reads them from the highest line an earlier poll saw on, a range of the log's key,
        where their time alone (not indexed) would read the whole log."""
        return self.completions is not None and self.completions.table == "completed" and self.has("c_line")

    @property
    def depth_tracked(self) -> bool:
        """Can the depth be tracked? The jobs in any state change only by arrivals and completions where both are
        read (completions by their time, or, without times, as the rows in the layout's `done` state) and pending is
        a state of the queue table; a shape that takes its throughput from the depth must have the depth counted,
        and so must one whose results are numbered apart from its jobs (`completed_ids_own`): a result there need
        not mean the job left (django-q2 saves a failure and keeps the task's row to run it again)."""
        pending = self.states.get("pending")
        return (pending is not None and pending.table == "queue"
                and (self.completions is not None or self.done is not None)
                and self.arrivals in ("identity", "created") and not self.finished_rows_leave)

    @property
    def accounted(self) -> tuple[Node, ...]:
        """The conditions that account for a row of the queue table: its states there, `done`, `ended`, and the
        completions it keeps (their `where`, or their time set). A row that meets none is in no state: the monitor
        counts it apart (`in_no_state`), so a value the layout does not name is shown, never dropped."""
        spec = self.completions
        kept = None
        if spec is not None and spec.table == "queue":
            kept = spec.where.condition if spec.where is not None else Compare(Role(spec.at), "is not null")
        return tuple(node for node in (*(s.condition for s in self.states.values() if s.table == "queue"),
                                       *(s.condition for s in (self.done, self.ended) if s is not None), kept)
                     if node is not None)  # fmt: skip

    @property
    def library_words(self) -> Mapping[str, str]:
        """Per state, and "ended" (the rows that ended: `done`, the completions' `where`, `ended`, `completed_rows`),
        the values of the library's own columns it reads (procrastinate: claimed is "doing"; pg-boss: pending is
        "created, retry"), to show beside queuetop's words; none for a hand-made queue, or for a state read from
        times alone (graphile-worker keeps no status)."""
        if self.library is None:
            return MappingProxyType({})
        finished = (self.done, self.completions.where if self.completions is not None else None, self.ended,
                    self.completed_rows)
        words = {}
        for name, conditions in (*((name, [state]) for name, state in self.states.items()), ("ended", finished)):
            texts = [text for state in conditions if state is not None
                     for role, found in texts_of(state.condition).items()
                     if role not in QUEUE_ROLES + COMPLETED_ROLES for text in found]  # fmt: skip
            if texts:
                words[name] = ", ".join(dict.fromkeys(texts))
        return MappingProxyType(words)

    @property
    def cannot_know(self) -> Mapping[str, str]:
        """Every figure this shape cannot know, with why: `--json`'s "cannot_know", so a null is never a mystery."""
        general = {
            "depth": "no pending state", "oldest_age_s": "no creation time of a waiting job (role created)",
            "arrivals": "no identity or creation time to count arrivals by",
            "completions": "no completion time, done state or count of rows that left",
            "wait": "no pair of times from arrival to start ([completions] wait)",
            "processing": "no pair of times from start to end ([completions] processing)",
        }  # fmt: skip
        return MappingProxyType({figure: self.unknown_because.get(figure) or general.get(
            figure, f"no {figure.replace('_', ' ')} state") for figure, known in self.provides.items() if not known})

    def indexable(self, advice: IndexAdvice) -> bool:
        """Can the advised index be made as written: every key a plain column? A role read from JSON, from two
        columns (a file's own `pair(...)` over a preset) or from another table has no column of its own to index."""
        return not any(key in self.json_paths or key in self.pairs or key in self.joined for key in advice.keys)

    @property
    def completion_where(self) -> Node | None:
        """Which rows of the completions' table are completions: `[completions] where`, and, in the completed
        table, `completed_rows` (a log's lines that end a job)."""
        spec = self.completions
        if spec is None:
            return None
        parts = [node.condition for node in (spec.where, self.completed_rows if spec.table == "completed" else None)
                 if node is not None]  # fmt: skip
        return parts[0] if len(parts) == 1 else Junction("and", tuple(parts)) if parts else None

    def has(self, *roles: str) -> bool:
        return all(role in self.columns or role in self.joined for role in roles)

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
    def enqueue_takes(self) -> frozenset[str]:
        """The fields `enqueue` fills (type, info, priority, available): its insert's, or its function's."""
        return frozenset(self.enqueue_call.args if self.enqueue_call is not None else self.enqueue_fields)

    def enqueue_goes_to(self, field_name: str) -> str:
        """Where an enqueue field is stored, for a form's label: its column, or the function's argument."""
        if self.enqueue_call is not None:
            return f"{self.enqueue_call.function}({self.enqueue_call.args[field_name][0]})"
        return self.columns.get(self.enqueue_fields[field_name], field_name)

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
        completions = self.completions is not None or self.deletes_finished or self.done is not None
        return {
            "depth": pending is not None,
            "oldest_age_s": pending is not None and self.has("created" if pending.table == "queue" else "c_created"),
            **{name: name in self.states for name in ("scheduled", "claimed", "timed_out", "dead", "lost")},
            "arrivals": self.arrivals is not None,
            "completions": completions,
            "wait": self.completions is not None and self.completions.wait is not None,
            "processing": self.completions is not None and self.completions.processing is not None,
        }

    def table_names(self, schema: bool = True) -> list[str]:
        """The tables as a user would name them: schema.table (or the table alone)."""
        prefix = f"{self.schema}." if self.schema and schema else ""
        return [prefix + t for t in (self.queue_table, self.pending_view, self.completed_table) if t]


def _check_call(call: EnqueueCall, where: str) -> None:
    """`[enqueue] function`'s names are identifiers, its types known ones, a row's attributes its own."""
    check_identifier(call.function, f"{where}: [enqueue] function")
    for name, (argument, sql_type) in call.args.items():
        if name not in CALL_FIELDS or sql_type not in CALL_TYPES:
            raise UsageError(f"{where}: [enqueue] {name} = {argument} {sql_type}: a field of "
                             f"{', '.join(CALL_FIELDS)} given to an argument of type {', '.join(CALL_TYPES)}")
        check_identifier(argument, f"{where}: [enqueue] argument for {name}")
    if call.row is None:
        check_identifier(call.returns, f"{where}: [enqueue] returns")
        if call.constants or call.row_fields:
            raise UsageError(f"{where}: [enqueue] constants and row_fields belong to a row", "add row = \"TYPE\"")
        return
    check_identifier(call.row, f"{where}: [enqueue] row")
    for attribute in call.row_fields:
        check_identifier(attribute, f"{where}: [enqueue] row_fields")
    named = [argument for argument, _ in call.args.values()] + list(call.constants)
    strays = sorted({attribute for attribute in named if attribute not in call.row_fields})
    if call.returns != "ids" or strays or not call.row_fields:
        raise UsageError(f"{where}: [enqueue] row = {call.row!r} takes row_fields (its attributes, in order), "
                         f"fields and constants among them{f' (not {strays})' if strays else ''}, and "
                         'returns = "ids"')

