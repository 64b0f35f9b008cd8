"""Reading layouts: a preset by name (`presets/NAME.toml`), a user's file (which may start from a preset and
override any part), each checked as it is read — roles, states and their conditions, the claim — so that a
mistake is one line naming the file, the section and what to write instead."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from queuetop.core.errors import UsageError
from queuetop.layouts.model import (
    CLAIM_FORMS,
    CLAIM_VALUES,
    COMPLETED_ROLES,
    DATABASES,
    ENQUEUE_KEYS,
    FAILURES,
    INTEGER_TYPES,
    QUEUE_ROLES,
    SETTINGS,
    STATES,
    Claim,
    Completions,
    EnqueueCall,
    IndexAdvice,
    Joined,
    Layout,
    Release,
    State,
)
from queuetop.layouts.predicate import parse_predicate, roles_of, settings_of

# The schema queuetop makes, then the seeds' hand-made queues in the seeds' order; every other file in presets/ is a
# job library's, found by its name (a new library is a TOML file and its tests, no line of Python).
_HAND_MADE = ("native", "queuesample", "requests", "work_queue", "processed", "job_queue")
_PRESETS = resources.files(__package__).joinpath("presets")
PRESET_NAMES = _HAND_MADE + tuple(sorted(
    entry.name.removesuffix(".toml") for entry in _PRESETS.iterdir()
    if entry.name.endswith(".toml") and entry.name.removesuffix(".toml") not in _HAND_MADE))


def preset_names(database: str | None = None) -> tuple[str, ...]:
    """The presets, or those whose tables can be in `database` (a dialect's name)."""
    return tuple(name for name in PRESET_NAMES if database is None or database in load_layout(name).databases)


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
    return _PRESETS.joinpath(f"{name}.toml").read_text("utf-8")


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


_JSON = re.compile(r"^json\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\)$")
_PAIR = re.compile(r"^pair\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$")


def _column(spec: str, role: str, where: str) -> tuple[str, str | None, tuple[str, ...]]:
    """(column, SQL type, JSON path): `id bigint`, `task_name`, or `json(message, actor_name)` — the text at a
    path of keys inside a column holding JSON (dramatiq's actor, Celery's `headers.task`). `pair(A, B)` is read by
    `_pair`."""
    text = str(spec).strip()
    if text.lower().startswith("json("):
        match = _JSON.match(text)
        if not match:
            raise UsageError(f"{where}: cannot read {text!r} for role {role}",
                             "write json(COLUMN, KEY) or json(COLUMN, KEY.KEY): plain names only")
        return match.group(1), None, tuple(match.group(2).split("."))
    parts = text.split(None, 1)
    if not parts:
        raise UsageError(f"{where}: no column named for role {role}")
    return parts[0], (parts[1].strip().lower() if len(parts) > 1 else None), ()


def _pair(spec: str, role: str, where: str) -> tuple[str, str]:
    """`pair(queue_name, task_name)`: two columns read as one text, `queue/task` (a job's queue beside its type)."""
    match = _PAIR.match(spec.strip())
    if not match:
        raise UsageError(f"{where}: cannot read {spec.strip()!r} for role {role}",
                         "write pair(COLUMN, COLUMN): two plain column names, read as one text 'first/second'")
    return match.group(1), match.group(2)


def _build(name: str, data: dict[str, Any], where: str) -> Layout:
    tables = data.get("tables", {})
    columns: dict[str, str] = {}
    types: dict[str, str] = {}
    json_paths: dict[str, tuple[str, ...]] = {}
    pairs: dict[str, str] = {}
    for section, prefix in (("queue_columns", ""), ("completed_columns", "c_")):
        for role, spec in data.get(section, {}).items():
            if str(spec).strip().lower().startswith("pair("):  # two columns read as one text: "queue/task"
                columns[prefix + role], pairs[prefix + role] = _pair(str(spec), prefix + role, where)
                continue
            column, sql_type, path = _column(spec, prefix + role, where)
            columns[prefix + role] = column
            if sql_type:
                types[prefix + role] = sql_type
            if path:
                json_paths[prefix + role] = path
    settings = {**SETTINGS, **data.get("settings", {})}
    joined = _joined(data.get("joined_columns", {}), where)

    def state(text: str, label: str) -> State:
        node = parse_predicate(text, f"{where}: {label}")
        roles = roles_of(node)
        unknown = sorted(r for r in roles if r not in columns and r not in joined)
        if unknown:
            raise UsageError(f"{where}: {label} mentions {', '.join(unknown)}, which the layout does not define")
        tables_used = {"completed" if r.startswith("c_") or (r in joined and joined[r].on_completed) else "queue"
                       for r in roles}
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
            if role not in columns and role not in joined:
                raise UsageError(f"{where}: completions use {role!r}, which the layout does not define")
    release = None
    if "release" in data:
        spec = data["release"]
        release = Release(spec["state"], spec["action"], spec.get("what", spec["state"].replace("_", "-")))
        if release.state not in states or release.action not in ("clear", "requeue"):
            raise UsageError(f"{where}: release needs a defined state and the action clear or requeue")
    claim = _claim(data["claim"], data.get("complete", {}), columns, states, where) if "claim" in data else None
    done = state(data["done"], "done") if "done" in data else None
    ended = state(data["ended"], "ended") if "ended" in data else None
    if ended is not None and ended.table != "queue":
        raise UsageError(f"{where}: ended names roles of the completed table", "it says which rows of the queue "
                         "table ended and stay there")
    completed_rows = state(data["completed_rows"], "completed_rows") if "completed_rows" in data else None
    if completed_rows is not None and (completed_rows.table != "completed" or settings_of(completed_rows.condition)):
        raise UsageError(f"{where}: completed_rows names roles of the queue table or a $setting",
                         "it says, with the completed table's roles and texts, which lines of a table that logs each "
                         "step of a job end one")
    monitor_guard = state(data["monitor_guard"], "monitor_guard") if "monitor_guard" in data else None
    if monitor_guard is not None and monitor_guard.table != "queue":
        raise UsageError(f"{where}: monitor_guard names roles of the completed table", "it guards reads of the queue")
    if done is not None:
        if completions is not None or data.get("deletes_finished"):
            raise UsageError(f"{where}: done is for a shape without completion times",
                             "give done, or [completions], or deletes_finished: one of them")
        if data.get("arrivals") != "identity" or any(s.table != "queue" for s in (done, *states.values())):
            raise UsageError(f"{where}: done needs rows that stay in the queue table and arrivals = \"identity\"",
                             "without them, leave done out: completions are then what arrived less what the "
                             "rows grew by (deletes_finished = true)")
    if "sequence" in tables and "." not in str(tables["sequence"]):
        raise UsageError(f"{where}: [tables] sequence names TABLE.COLUMN, the identity the ids come from")
    if "sequence" in tables and not ((data.get("deletes_finished") or data.get("completed_ids") == "own")
                                     and set(data.get("library", {}).get("databases", ())) <= {"postgresql", "sqlite"}
                                     and data.get("library", {}).get("databases")):  # fmt: skip
        raise UsageError(f"{where}: [tables] sequence is for a library whose finished rows leave the queue table",
                         "it needs deletes_finished = true or completed_ids = \"own\", and [library] databases "
                         "among \"postgresql\" and \"sqlite\"")
    if data.get("deletes_finished") and (data.get("arrivals") != "identity" or completions is not None):
        raise UsageError(f"{where}: deletes_finished counts completions from arrivals by identity",
                         "it needs arrivals = \"identity\" and no [completions]")
    if "c_line" in columns and not _numbered(types.get("c_line")):
        raise UsageError(f"{where}: [completed_columns] line is the log's own id, a whole number that grows with each "
                         "line", "give its integer type: line = \"id bigint\"")
    completed_ids = data.get("completed_ids", "moved")
    if completed_ids not in ("moved", "own", "kept"):
        raise UsageError(f"{where}: completed_ids is {completed_ids!r}", "write \"moved\" (a finished job keeps its "
                         "id in the completed table, the default), \"own\" (that table numbers its rows itself) or "
                         "\"kept\" (that table logs each job's steps by its id, and the job's row stays in the queue)")
    kinds = {_numbered(types.get("id")), _numbered(types.get("c_id"))}
    if completed_ids != "own" and "c_id" in columns and None not in kinds and len(kinds) > 1:
        raise UsageError(f"{where}: the completed table's id is {types.get('c_id') or 'untyped'} and the queue's "
                         f"{types.get('id') or 'untyped'}: a job cannot keep its id as it moves there",
                         "where the completed table numbers its rows itself, write completed_ids = \"own\"")
    if "pending" not in states:
        raise UsageError(f"{where}: no pending state", "say which rows wait, e.g. pending = \"claimed_at is null\"")
    if "make_available" in data and not ("scheduled" in states and "available" in columns):
        raise UsageError(f"{where}: [make_available] needs a scheduled state and the role available")
    call = _enqueue_call(data, where) if "function" in data.get("enqueue", {}) else None
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
        json_paths=json_paths,
        pairs=pairs,
        joined=joined,
        description=data.get("description", ""),
        seed=data.get("seed"),
        advice=tuple(_advice(spec, where) for spec in data.get("advice", ())),
        clock=data.get("clock", "utc"),
        made_by_init=bool(data.get("made_by_init", False)),
        library=data.get("library", {}).get("name"),
        library_versions=data.get("library", {}).get("versions", ""),
        databases=tuple(data.get("library", {}).get("databases", DATABASES)),
        unknown_because={str(k): str(v) for k, v in data.get("cannot_know", {}).items()},
        states=states,
        arrivals=data.get("arrivals"),
        completions=completions,
        deletes_finished=bool(data.get("deletes_finished", False)),
        completed_ids_own=completed_ids == "own",
        completed_ids_kept=completed_ids == "kept",
        sequence=tuple(tables["sequence"].split(".", 1)) if "sequence" in tables else None,  # type: ignore[arg-type]
        done=done,
        ended=ended,
        completed_rows=completed_rows,
        monitor_guard=monitor_guard,
        release=release,
        dead_actions=bool(data.get("dead_actions", False)) or "dead_retry" in data,
        enqueue_fields={source: role for role, source in data.get("enqueue", {}).items()
                        if isinstance(source, str) and role not in ENQUEUE_KEYS and not call},
        enqueue_constants={role: int(v) for role, v in data.get("enqueue", {}).items()
                           if not isinstance(v, str) and role not in ENQUEUE_KEYS and not call},
        enqueue_defaults={name: int(v) for name, v in data.get("enqueue", {}).get("defaults", {}).items()},
        enqueue_stamped=tuple(data.get("enqueue", {}).get("stamped", ())),
        enqueue_call=call,
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


def _numbered(sql_type: str | None) -> bool | None:
    """Whether a role's declared SQL type is an integer's (None: not declared)."""
    return None if sql_type is None else sql_type.lower() in INTEGER_TYPES


def _joined(spec: Mapping[str, Any], where: str) -> dict[str, Joined]:
    """`[joined_columns]`: NAME = {table, column, key, by}, a value read from another table by key."""
    joined = {}
    for name, fields in spec.items():
        if not isinstance(fields, Mapping) or not {"table", "column", "key", "by"} <= set(fields) <= {
                "table", "column", "key", "by", "when"} or not isinstance(fields.get("when", {}), Mapping):
            raise UsageError(f"{where}: [joined_columns] {name} needs table, column, key and by (and may say when), "
                             "and nothing else",
                             f'{name} = {{table = "workers", column = "last_heartbeat", key = "id", by = '
                             '"claimed_by"}: the column of the row whose key equals the queue row\'s claimed_by; '
                             'when = {status = "picked"}: only the rows that hold those texts (a list: any of them)')
        when = tuple((str(column), tuple(str(v) for v in value) if isinstance(value, list) else (str(value),))
                     for column, value in fields.get("when", {}).items())  # fmt: skip
        joined[name] = Joined(**{key: str(value) for key, value in fields.items() if key != "when"}, when=when)
    return joined


def _advice(spec: Mapping[str, Any], where: str) -> IndexAdvice:
    """One `[[advice]]` entry; its condition parsed now, so a mistake is the layout's, not doctor's."""
    if spec["table"] not in ("queue", "completed"):
        raise UsageError(f"{where}: [[advice]] {spec['name']}: table is queue or completed, not {spec['table']!r}")
    condition = spec.get("where")
    if condition is not None:
        parse_predicate(condition, f"{where}: [[advice]] {spec['name']}")
    return IndexAdvice(table=spec["table"], name=str(spec["name"]), keys=tuple(spec["keys"]),
                       where=condition, serves=tuple(spec.get("serves", ())))


def _enqueue_call(data: Mapping[str, Any], where: str) -> EnqueueCall:
    """`[enqueue]` naming the library's function: `function`, `returns` (the id's column in the row it returns),
    and per enqueue field `"ARGUMENT TYPE"` (text when the type is left out); or `row` (its one argument's
    composite type), `row_fields` (its attributes in order), `constants` and `returns = "ids"`. PostgreSQL only."""
    spec = data["enqueue"]
    if data.get("library", {}).get("databases") != ["postgresql"]:
        raise UsageError(f"{where}: [enqueue] function is for a PostgreSQL library",
                         'it needs [library] databases = ["postgresql"]')
    args = {}
    for name, value in spec.items():
        if name in ("function", "returns", "row", "row_fields", "constants"):
            continue
        argument, _, sql_type = str(value).partition(" ")
        args[name] = (argument, sql_type.strip() or "text")
    row = spec.get("row")
    return EnqueueCall(function=str(spec["function"]), args=MappingProxyType(args),
                       returns=str(spec.get("returns", "id")), row=None if row is None else str(row),
                       row_fields=tuple(str(name) for name in spec.get("row_fields", ())),
                       constants=MappingProxyType({str(k): str(v) for k, v in spec.get("constants", {}).items()}))


def _check_own_columns(layout: Layout, where: str) -> None:
    """A column that plays no role must be one a condition, the completions, the drill-down or the claim use:
    otherwise it is a role's name mistyped (`creatd`), which must not pass as a column of its own."""
    own = [name for name in (*layout.columns, *layout.joined) if name not in QUEUE_ROLES + COMPLETED_ROLES]
    if not own:
        return
    used = set(layout.detail)
    for state in (*layout.states.values(), layout.done, layout.ended, layout.monitor_guard, layout.completed_rows,
                  layout.completions.where if layout.completions else None):  # fmt: skip
        if state is not None:
            used |= roles_of(state.condition)
    if layout.completions is not None:
        used |= {*(layout.completions.wait or ()), *(layout.completions.processing or ())}
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
