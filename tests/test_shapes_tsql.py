"""SQL Server without a server, for every shape: each statement queuetop builds for each preset parses as T-SQL
in two grammars (sqlglot, and sqlfluff's `tsql` dialect), carries as many `?` as parameters, speaks no other
dialect (no LIMIT, no RETURNING), and matches the reviewed golden file `golden/presets.tsql`.

A change to any statement shows as a diff of the golden file, to be read before it is accepted:
`QUEUETOP_UPDATE_GOLDEN=1 ./scripts/test.sh tests/test_shapes_tsql.py` rewrites it.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

import pytest
import sqlglot
from sqlfluff.core import FluffConfig, Linter

from queuetop.db.dialects import MSSQLDialect
from queuetop.layouts import PRESET_NAMES, STATES, Layout, load_layout, with_tables
from queuetop.layouts.sql import Statement, Statements

GOLDEN = Path(__file__).parent / "golden" / "presets.tsql"
SINCE = datetime(2026, 1, 1, 12, 0, 0)


def preset(name: str) -> Layout:
    layout = load_layout(name)
    return with_tables(layout, "dbo.work_items") if layout.table_required else layout


def statements_of(layout: Layout) -> dict[str, Statement]:
    """Every statement the monitor and the actions can send for this layout, by a readable name."""
    s = Statements(MSSQLDialect(), layout)
    states = [name for name in STATES if name in layout.states]
    job_type = "x" if layout.has_job_type else None
    out: dict[str, Statement] = {"state_counts": s.state_counts(states)}
    if layout.arrivals == "identity":
        out["max_id"] = s.max_id()
        out["arrivals_by_id"] = s.arrivals_by_id(10, 1000)
    if layout.has("created"):
        out["arrivals_by_time"] = s.arrivals_by_time(SINCE)
    if layout.completions is not None:
        out["completions_after"] = s.completions_after(SINCE)
        out["recent_completions"] = s.recent_completions(job_type, SINCE, 20)
    for state in states:
        out[f"count_state {state}"] = s.count_state(state, job_type)
    out["pending rows"] = s.rows_in_states(["pending"], job_type, ["id", "created", "info"], ["created", "id"], 20)
    if layout.release is not None:
        out["release ids"] = s.ids_in_state(layout.release.state, job_type, 500)
        if layout.release.action == "clear":
            out["release clear"] = s.clear_claim(layout.release.state, None, 7, "AC351A46-49E4-4F0C-BF8C-F45255012150")
        else:
            insert, delete = s.requeue(layout.release.state, ["a", "b"])
            out["release requeue insert"], out["release requeue delete"] = insert, delete
    if layout.dead_actions:
        if layout.dead_move_back:
            insert, delete = s.requeue("dead", [1, 2], None, layout.dead_move_back)
            out["dead retry insert"], out["dead retry delete"] = insert, delete
        else:
            out["dead retry"] = s.retry_dead(job_type)
        out["dead delete"] = s.delete_state("dead", job_type)
    fields = list(layout.enqueue_fields.values())
    params = tuple(range(len([f for f in fields if f != "available"])))
    out["enqueue"] = (s.insert([f for f in fields if f != "available"], delayed=False), params)
    if "available" in layout.enqueue_fields:
        out["enqueue delayed"] = (s.insert([*[f for f in fields if f != "available"], "available"], delayed=True),
                                  (*params, 5000))
    return out


def every_statement() -> list[tuple[str, str, Statement]]:
    return [(name, label, statement)
            for name in PRESET_NAMES for label, statement in statements_of(preset(name)).items()]


def render_golden() -> str:
    lines = ["-- Every statement queuetop sends to SQL Server for each layout preset (tests/test_shapes_tsql.py).", ""]
    for name, label, (sql, _params) in every_statement():
        lines += [f"-- {name}: {label}", sql + ";", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("name, label, statement", every_statement(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_statement_of_every_preset_parses_as_tsql_with_its_parameters(name, label, statement):
    sql, params = statement
    sqlglot.parse_one(sql, read="tsql")  # raises on anything T-SQL would not accept as written
    assert sql.count("?") == len(params), f"{name} {label}: {sql.count('?')} placeholders, {len(params)} parameters"
    assert sql.startswith("/* queuetop */ ")


def test_every_statement_of_every_preset_parses_in_sqlfluffs_tsql_grammar_too():
    linter = Linter(config=FluffConfig(overrides={"dialect": "tsql"}))
    refused = {}
    for name, label, (sql, _params) in every_statement():
        parsed = linter.parse_string(sql.replace("?", "@p"))  # sqlfluff's T-SQL reads variables, not ODBC markers
        if parsed.violations:
            refused[f"{name}: {label}"] = str(parsed.violations[0])
        assert " LIMIT " not in sql and " RETURNING " not in sql, f"{name}: {label} is not T-SQL"
    assert refused == {}


def test_the_second_grammar_refuses_what_is_not_tsql():
    """The check above can fail: a statement with a broken clause is refused."""
    parsed = Linter(config=FluffConfig(overrides={"dialect": "tsql"})).parse_string("SELECT TOP (@p) FROM WHERE")
    assert parsed.violations


def test_monitor_reads_never_lock_and_times_are_the_servers_own():
    for name in PRESET_NAMES:
        layout = preset(name)
        sql = statements_of(layout)["state_counts"][0]
        assert sql.count("WITH (NOLOCK)") == sql.count(" FROM ")
        assert ("GETDATE()" in sql) == (layout.clock == "local")
        assert "SYSUTCDATETIME()" not in sql or layout.clock == "utc"


def test_the_statements_match_the_reviewed_golden_file():
    text = render_golden()
    if os.environ.get("QUEUETOP_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert GOLDEN.exists(), "no golden file: run with QUEUETOP_UPDATE_GOLDEN=1 once and review it"
    expected = GOLDEN.read_text(encoding="utf-8")
    if text != expected:
        changed = [line for line in text.splitlines() if line not in set(expected.splitlines())]
        pytest.fail("the T-SQL changed; review and rerun with QUEUETOP_UPDATE_GOLDEN=1. New lines:\n"
                    + "\n".join(changed[:10]))


def test_identifiers_are_bracketed_and_no_value_is_pasted():
    for _name, _label, (sql, _params) in every_statement():
        body = sql.removeprefix("/* queuetop */ ")
        for literal in re.findall(r"'([^']*)'", body):
            assert literal in {"now", "queue", "completed", "dead"}, literal
