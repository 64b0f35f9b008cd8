"""Every T-SQL statement queuetop can send, for every layout: the source of the golden files in `tests/golden/tsql/`,
one file per layout and operation (`tsql/job_queue/claim-one-type.sql`), as sqlfluff keeps a fixture per statement:
a changed statement is a one-file diff.

Regenerate the golden files after a change to any statement, then read their diff before committing:

    .venv/bin/python -m tests.golden.make_tsql

Statements are enumerated from the code. The native schema's come from running every SQL-issuing method of the
SQL Server dialect (a method that takes `db`) on a recorder standing in for the connection; the other layouts'
from every `Statements` method that returns a statement. A method is called through its recipe in RECIPES /
DIALECT_CALLS when it has one, else with sample arguments chosen by parameter name (SAMPLES). A new method
whose parameters have no sample makes `uncovered()` name it, and tests/test_tsql.py fails until it has a
recipe or a sample — so no statement can be added without landing in the golden file and the T-SQL check.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from queuetop.db.dialects import MSSQLDialect
from queuetop.layouts import NATIVE, STATES, Layout, load_layout, preset_names, with_tables
from queuetop.layouts.sql import Statement, Statements
from queuetop.watch.firstlook import sample_windows

PRESET_NAMES = preset_names("mssql")  # a job library's preset for PostgreSQL alone has no T-SQL
GOLDEN = Path(__file__).parent / "tsql"
NOW = datetime(2026, 1, 1, 12, 0, 0)
TOKEN = "AC351A46-49E4-4F0C-BF8C-F45255012150"
Entry = tuple[str, str, str, tuple[Any, ...]]  # (layout, operation, sql as sent, parameters)


# -- the native schema: the statements a connection and `init` send -----------------------------------------------
# The dialect's own statements: the only SQL a dialect writes (every other statement is built in layouts.sql).
DIALECT_STATEMENTS = ("session_setup", "server_now_sql", "catalog_sql", "read_snapshot_sql", "client_port_sql",
                      "zoned_session_sql", "sequence_sql", "triggered_tables_sql")  # fmt: skip
# (sequence_sql: PostgreSQL's, for graphile-worker; SQL Server's raises: no preset reads an identity's sequence there)


def dialect_statement_methods(cls: type = MSSQLDialect) -> set[str]:
    """A dialect's methods that return a statement of its own (`*_sql`, no argument but optional ones): each must
    be listed."""
    def no_argument_needed(member: Callable) -> bool:
        self, *rest = inspect.signature(member).parameters.values()
        return self.name == "self" and all(p.default is not p.empty for p in rest)

    return {name for name, member in inspect.getmembers(cls, inspect.isfunction)
            if name.endswith("_sql") and no_argument_needed(member)}  # fmt: skip


def native_statements(d: MSSQLDialect | None = None) -> list[Entry]:
    d = d or MSSQLDialect()
    out: list[Entry] = []
    out += [("native", "session setup", sql, ()) for sql in dict.fromkeys(d.session_setup("monitor")
                                                                         + d.session_setup("worker"))]
    out.append(("native", "server clock", d.server_now_sql(), ()))
    out.append(("native", "catalog (detect)", d.catalog_sql(), ()))
    out.append(("native", "catalog of the tables a layout names", d.catalog_sql(2), ("workqueue", "workcompleted")))
    for obj in Statements(d, NATIVE).schema_objects():
        out.append(("native", f"init: is there {obj.kind} {obj.name}", obj.exists_sql, obj.exists_params))
        out.append(("native", f"init: create {obj.kind} {obj.name}", obj.create_sql, ()))
    for index in Statements(d, NATIVE).index_definitions():  # printed by init and doctor for an older index
        out.append(("native", f"init: upgrade index {index.name}", Statements(d, NATIVE).create_index_sql(
            index, upgrade=True), ()))
    out.append(("native", "configure_reads read-committed snapshot?", d.read_snapshot_sql() or "", ()))
    out.append(("native", "configure_reads tables with triggers", d.triggered_tables_sql() or "", ()))
    out.append(("native", "watchdog: client port", d.client_port_sql() or "", ()))
    if d.zoned_session_sql() is not None:  # SQL Server sends datetimeoffset as it is: nothing to set
        out.append(("native", "zoned clock: read in UTC", d.zoned_session_sql() or "", ()))
    return out


# -- every layout: the statement model ---------------------------------------------------------------------------
def preset(name: str) -> Layout:
    layout = load_layout(name)
    return with_tables(layout, "dbo.work_items") if layout.table_required else layout


def recipes(s: Statements) -> dict[str, list[tuple[str, Callable[[], Any]]]]:
    """How to call each Statements method for this layout: (what the variant is, the call). A method a layout
    cannot serve has no entry for it."""
    layout = s.layout
    states = [name for name in STATES if name in layout.states]
    job_type = "x" if layout.has_job_type else None
    fields = [f for f in layout.enqueue_fields.values() if f != "available"]
    params = tuple(range(len(fields)))
    out: dict[str, list[tuple[str, Callable[[], Any]]]] = {
        "state_counts": [("", lambda: s.state_counts(states))],
        "count_state": [(state, lambda state=state: s.count_state(state, job_type)) for state in states],
        "rows_in_states": [("pending rows", lambda: s.rows_in_states(["pending"], job_type, ["id", "created", "info"],
                                                                     ["created", "id"], 20))],
        "insert": [("", lambda: (s.insert(fields, delayed=False), params))],
    }
    if "pending" in layout.states:  # `queuetop jobs`: the first page, and the page after a job (keyset)
        roles = [role for role in layout.columns if not role.startswith("c_")]
        order = ["created", "id"] if layout.has("created") else ["id"]
        after = [NOW, 10][-len(order):]
        page = (job_type, roles, order)  # bound now: the names are used again below
        out["rows_in_states"].append(("pending, after a job (queuetop jobs' keyset)", lambda p=page: s.rows_in_states(
            ["pending"], *p, 50, after=after)))
        out["job_by_id"] = [("queue", lambda r=roles: s.job_by_id("queue", r, 7))]
        if layout.completed_table:
            finished = [role for role in layout.columns if role.startswith("c_")]
            out["job_by_id"].append(("completed", lambda r=finished: s.job_by_id("completed", r, 7)))
    if layout.made_by_init:  # the schema `init` makes: its turns, and the columns of each index it finds
        out["schema_lock"] = [("", s.schema_lock)]
        out["index_columns_sql"] = [(index.name, lambda index=index: s.index_columns_sql(index))
                                    for index in s.index_definitions()]  # fmt: skip
    if s.ranged:
        out["state_counts"].append(("from the live end", lambda: s.state_counts(states, low_id=5)))
    if layout.done is not None:
        out["state_counts"].append(("first poll: finished rows from the lowest live id",
                                    lambda: s.state_counts(states, finished=True)))
    if layout.arrivals == "identity":
        out["max_id"] = [("", s.max_id)]
        out["arrivals_by_id"] = [("", lambda: s.arrivals_by_id(10, 1000))]
    if layout.has("created"):
        out["arrivals_by_time"] = [("", lambda: s.arrivals_by_time(NOW))]
    if layout.completions is not None:
        out["completions_after"] = [("", lambda: s.completions_after(NOW))]
        out["recent_completions"] = [("", lambda: s.recent_completions(job_type, NOW, 20))]
    if "available" in layout.enqueue_fields:
        out["insert"].append(("delayed", lambda: (s.insert([*fields, "available"], delayed=True), (*params, 5000))))
    if layout.release is not None:
        out["ids_in_state"] = [("release", lambda: s.ids_in_state(layout.release.state, job_type, 500))]
        if layout.release.action == "clear":
            out["clear_claim"] = [("release", lambda: s.clear_claim(layout.release.state, None, 7, TOKEN))]
        else:
            out["requeue"] = [("release", lambda: s.requeue(layout.release.state, ["a", "b"]))]
    out["clock"] = [("", s.clock)]
    identity = (10, 5) if layout.arrivals == "identity" else None
    created = NOW if layout.arrivals == "created" else None
    completed = (NOW, 5 if s.ranged else None) if layout.completions is not None else None
    out["shape_poll"] = [("", lambda: s.shape_poll(states, None, None, identity, created, completed))]
    if s.ranged:
        out["shape_poll"].append(("from the live end", lambda: s.shape_poll(states, None, 5, identity, created,
                                                                             completed)))
    if layout.depth_tracked:  # the depth tracked: pending read capped, per type, and the background count
        others = [state for state in states if state != "pending"]
        kinds = ["A6A3C1E0-0000-4000-8000-000000000001", "A6A3C1E0-0000-4000-8000-000000000002"]
        types = kinds if layout.has_job_type else [None]
        low = 5 if s.ranged else None
        finished = (3, 5) if layout.done is not None else None  # no times: finished rows from two bases
        out["shape_poll"].append(("tracked depth: pending heads capped", lambda: s.shape_poll(
            others, None, low, identity, created, completed, (types, 201, [True, False]), finished)))
        out["shape_heads"] = [("a new type", lambda: s.shape_heads(types[:1], 201, low))]
        if s.heads_by_type_list:  # no index begins with (type, created): each type's oldest in one grouped pass
            grouped = Statements(s.dialect, layout)
            grouped.oldest_grouped = True
            out["shape_heads"].append(("oldest grouped", lambda: grouped.shape_heads(types, 201, low)))
        if layout.arrivals == "identity" and not s.ranged:  # a deep queue's first look (watch/firstlook.py)
            out["id_span"] = [("first look", s.id_span)]
            out["pending_sample"] = [("first look", lambda: s.pending_sample(sample_windows(1, 10**6)))]
        out["shape_recount"] = [("off the poll", lambda: s.shape_recount(
            states, None, 10 if identity else None, created, NOW if layout.completions else None,
            3 if layout.done is not None else None))]
    out.update(seed_dequeue_recipes(s))
    if not layout.made_by_init:  # `queuetop demo --layout X` makes the shape's tables (native: `init`'s own schema)
        ddl = s.create_tables()
        out["create_tables"] = [(f"demo: create ({i + 1} of {len(ddl)})", lambda sql=sql: (sql, ())) for i, sql in
                                enumerate(ddl)]  # fmt: skip
    if layout.dead_actions:
        if layout.dead_move_back:
            out.setdefault("requeue", []).append(("dead retry", lambda: s.requeue("dead", [1, 2], None,
                                                                                  layout.dead_move_back)))
        else:
            out["retry_dead"] = [("", lambda: s.retry_dead(job_type)),
                                 ("in batches", lambda: s.retry_dead(job_type, batch=1000))]
        out["delete_state"] = [("dead", lambda: s.delete_state("dead", job_type)),
                               ("dead in batches", lambda: s.delete_state("dead", job_type, batch=1000))]
    one_job = [(f"{action} one {state} job", lambda a=action, st=state: s.change_job(a, st, 7))
               for action, state, offered in (("retry", "dead", layout.dead_actions and not layout.dead_move_back),
                                              ("delete", "dead", layout.dead_actions),
                                              ("make_available", "scheduled", "scheduled" in layout.states
                                               and layout.has("available"))) if offered]  # fmt: skip
    if one_job:
        out["change_job"] = one_job
    if "scheduled" in layout.states and layout.has("available"):
        out["make_available"] = [("", lambda: s.make_available(job_type)),
                                 ("in batches", lambda: s.make_available(job_type, batch=1000))]
    return out


SEED_OWN = "seed's own"  # a statement written as the seed wrote it: queuetop's own hint rule does not apply


def seed_dequeue_recipes(s: Statements) -> dict[str, list[tuple[str, Callable[[], Any]]]]:
    """`queuetop load` on a shape: the seed's own claim in each of its forms, its completion, the report's reads."""
    layout, claim = s.layout, s.layout.claim
    if claim is None:
        return {}
    values: dict[str, Any] = {"__worker": "w", "__token": TOKEN, "__lease": 900, "__batch": 10}
    if claim.by_type and layout.has_job_type:
        values["__type"] = TOKEN
    out: dict[str, list[tuple[str, Callable[[], Any]]]] = {}
    for form in claim.forms:
        label = f"{SEED_OWN} claim ({form})"
        if form == "batch":  # lease_recipes
            continue
        if form in ("update_top", "cte"):
            out.setdefault("claim_one", []).append((label, lambda f=form: s.claim_one(f, values)))
        elif form == "batch_mark":
            out["claim_mark"] = [(label, lambda: s.claim_mark(values))]
            out["claimed_by_token"] = [(f"{label}: read back by the mark", lambda: s.claimed_by_token(TOKEN))]
        else:
            out.setdefault("claim_pick", []).append((label, lambda f=form: s.claim_pick(f, values)))
            if form == "move":
                out["move_delete"] = [(label, lambda: s.move_delete(TOKEN))]
                out["move_insert"] = [(label, lambda: s.move_insert([TOKEN, "request", NOW]))]
            else:
                out.setdefault("claim_set", []).append((label, lambda: s.claim_set({**values, "__id": 7})))
    if claim.finish:
        out["finish"] = [(f"{SEED_OWN} completion", lambda: s.finish(7, TOKEN))]
    out.update(lease_recipes(s))
    identity = layout.arrivals == "identity"
    out["row_states"] = [(f"load report: {table}", lambda t=table: s.row_states(t, None, 5 if identity else None,
                                                                                 None if identity else 90.0))
                         for table in ("queue", "completed") if table == "queue" or layout.completed_table]
    return out


def lease_recipes(s: Statements) -> dict[str, list[tuple[str, Callable[[], Any]]]]:
    """A leased queue's worker side (`[claim] forms = ["batch"]`, the native schema's): claims of one, several or any
    job types, the moves with an outcome, retries, give-backs and releases."""
    layout, claim = s.layout, s.layout.claim
    if claim is None or "batch" not in claim.forms:
        return {}
    values: dict[str, Any] = {"__worker": "w", "__token": TOKEN, "__lease": 30, "__batch": 10}
    state = layout.release.state if layout.release is not None else "timed_out"

    def numbered(label: str, statements: list[Statement]) -> list[tuple[str, Callable[[], Any]]]:
        return [(f"{label} ({i + 1})" if len(statements) > 1 else label, lambda st=st: st)
                for i, st in enumerate(statements)]  # fmt: skip

    bury, back = s.release_state(state, "email", 3, NOW)
    bury_all, back_all = s.release_state(state, None, 3, NOW)
    bury_batch, back_batch = s.release_state(state, "email", 3, batch=1000)
    bury_one, back_one = s.release_state(state, None, 3, job_id=1)
    return {
        "claim_batch": [("any type", lambda: s.claim_batch([], values)),
                        ("one type", lambda: s.claim_batch(["a"], values)),
                        ("two types", lambda: s.claim_batch(["a", "b"], values))],
        "move_finished": [*numbered("succeeded", s.move_finished(1, TOKEN, "succeeded")),
                          *numbered("dead", s.move_finished(1, TOKEN, "dead", 3))],
        "retry_later": [("", lambda: s.retry_later(1, TOKEN, 10, 3))],
        "bury_in_state": numbered("timed out", s.bury_in_state(1, TOKEN, state, 3)),
        "give_back": [("", lambda: s.give_back(1, TOKEN))],
        "release_state": [*numbered("one type: dead", bury), ("one type: back to pending", lambda: back),
                          *numbered("any type: dead", bury_all), ("any type: back to pending", lambda: back_all),
                          *numbered("in batches: dead", bury_batch),
                          ("in batches: back to pending", lambda: back_batch),
                          *numbered("one job: dead", bury_one), ("one job: back to pending", lambda: back_one)],
        "has_type": [("", lambda: s.has_type("email"))],
        "max_job_id": [("", s.max_job_id)],
        "arrivals_after": [("", lambda: s.arrivals_after(10, [])), ("late ids", lambda: s.arrivals_after(10, [3, 7]))],
        "completions_since": [("", lambda: s.completions_since(NOW))],
        "queued_types": [("", s.queued_types)],
        "insert_rows": [("", lambda: s.insert_rows(list(layout.enqueue_fields.values())[:3], ["email", "i", 128], 0.0,
                                                   500))],
    }


def samples(layout: Layout) -> dict[str, Any]:
    """Arguments by parameter name, for a Statements method that has no recipe yet."""
    states = [name for name in STATES if name in layout.states]
    return {
        "states": states, "state_names": states[:1], "state_name": states[0], "settings": None, "low_id": None,
        "job_type": "x" if layout.has_job_type else None, "job_types": ["a", "b"] if layout.has_job_type else [],
        "limit": 20, "batch": 10, "after_id": 10, "since": NOW, "job_id": 7, "token": TOKEN, "ids": [1, 2],
        "worker": "w", "lease_s": 30, "outcome": "succeeded", "delay_s": 10, "max_attempts": 3,
        "recent_s": 60, "seen_s": 3600, "settle_id": 5, "upto_id": 10, "after_completed": NOW, "mark": NOW,
        "check_from": NOW, "after": NOW, "upto": NOW, "share": 0.25,
    }  # fmt: skip


def statement_methods() -> list[str]:
    """The Statements methods that return one statement or a pair: the SQL they build goes to the server."""
    hints = {name: typing.get_type_hints(member).get("return")
             for name, member in inspect.getmembers(Statements, inspect.isfunction) if not name.startswith("_")}
    return sorted(name for name, hint in hints.items()
                  if hint in (Statement, Statement | None, tuple[Statement, Statement], list[Statement],
                              tuple[list[Statement], Statement]) or name == "insert")


def auto_call(s: Statements, name: str) -> Callable[[], Any] | None:
    method = getattr(s, name)
    given, pool = {}, samples(s.layout)
    for param in inspect.signature(method).parameters.values():
        if param.name in pool:
            given[param.name] = pool[param.name]
        elif param.default is inspect.Parameter.empty:
            return None
    return lambda: method(**given)


def with_recipes() -> set[str]:
    """The Statements methods some layout has a recipe for: the others are new, and called by samples."""
    return {method for name in PRESET_NAMES for method in recipes(Statements(MSSQLDialect(), preset(name)))}


def uncovered() -> list[str]:
    """Methods that issue SQL but that the golden file cannot call: each needs a recipe or a sample."""
    missing = [f"MSSQLDialect.{name}" for name in sorted(dialect_statement_methods() - set(DIALECT_STATEMENTS))]
    s = Statements(MSSQLDialect(), NATIVE)
    missing += [f"Statements.{name}" for name in statement_methods()
                if name not in with_recipes() and auto_call(s, name) is None]
    return missing


# The statements that read back what they wrote with OUTPUT: on a queue table with an enabled trigger they go
# through a table variable (`StatementsBase.through_table`), a form of their own in the golden file.
THROUGH_TABLE = ("claim_one", "claim_batch", "insert", "insert_rows")


def layout_statements(name: str) -> list[Entry]:
    s = Statements(MSSQLDialect(), preset(name))
    calls, known = recipes(s), with_recipes()
    for method in statement_methods():
        if method not in known and (call := auto_call(s, method)) is not None:
            calls[method] = [("", call)]
    triggered, layout = MSSQLDialect(), s.layout
    triggered.tables_with_triggers = frozenset({((triggered.schema_for(layout.schema) or "dbo").lower(),
                                                 layout.queue_table.lower())})  # fmt: skip
    for method, variants in recipes(Statements(triggered, layout)).items():
        if method in THROUGH_TABLE:
            calls[method] += [(f"{variant} through a table variable".strip(), call) for variant, call in variants]
    out: list[Entry] = []
    for method in sorted(calls):
        for variant, call in calls[method]:
            try:
                made = call()
            except (AssertionError, KeyError):  # the method asked of a layout that lacks what it needs
                continue
            pair = isinstance(made, tuple) and len(made) == 2 and isinstance(made[0], tuple)
            for i, (sql, params) in enumerate(made if pair else [made]):
                label = " ".join(part for part in (method, variant, ("insert", "delete")[i] if pair else "") if part)
                out.append((name, label, sql, tuple(params)))
    return out


def every_statement() -> list[Entry]:
    return native_statements() + [entry for name in PRESET_NAMES for entry in layout_statements(name)]


def golden_file(layout: str, operation: str) -> str:
    """Where a statement's golden text lives, relative to GOLDEN: `layout/operation-in-words.sql`."""
    return f"{layout}/{re.sub(r'[^a-z0-9]+', '-', operation.lower()).strip('-')}.sql"


def render() -> dict[str, str]:
    """Every golden file's text, by its path under GOLDEN: the statements of one layout and operation, in the
    order the generator makes them, each under a comment naming it."""
    files: dict[str, list[str]] = {}
    for layout, operation, sql, _params in every_statement():
        files.setdefault(golden_file(layout, operation), []).append(f"-- {layout}: {operation}\n{sql.strip()};\n")
    return {path: "\n".join(blocks) for path, blocks in files.items()}


def on_disk() -> dict[str, str]:
    return {path.relative_to(GOLDEN).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(GOLDEN.glob("*/*.sql"))}  # fmt: skip


def main() -> None:
    missing = uncovered()
    if missing:
        raise SystemExit("these issue SQL but cannot be called: give each a recipe or a sample in "
                         f"tests/golden/make_tsql.py: {', '.join(missing)}")
    files = render()
    for stale in set(on_disk()) - set(files):
        (GOLDEN / stale).unlink()
    for path, text in files.items():
        (GOLDEN / path).parent.mkdir(parents=True, exist_ok=True)
        (GOLDEN / path).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} files in {GOLDEN} ({len(every_statement())} statements): review `git diff {GOLDEN}` "
          "before committing")


if __name__ == "__main__":
    main()
