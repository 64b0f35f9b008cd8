"""`[enqueue] function`: a job added by the library's own SQL function (graphile_worker.add_job), the one way a
library preset writes. Checked as the layout is read (every name an identifier, every type one of a few, PostgreSQL
only), rendered in named notation with typed parameters. The real call is tested with graphile-worker itself
(tests/libraries/test_graphile_worker.py)."""

from __future__ import annotations

import pytest

from queuetop.core.errors import UsageError
from queuetop.db.dialects import PostgresDialect
from queuetop.layouts import layout_from_toml, load_layout
from queuetop.layouts.sql import Statements

LAYOUT = """
[library]
name = "mine"
databases = ["postgresql"]
[tables]
schema = "lib"
queue = "jobs"
[queue_columns]
id = "id bigint"
type = "task"
[states]
pending = "id > 0"
[enqueue]
function = "add_job"
type = "identifier text"
info = "payload json"
"""


def test_the_call_names_each_argument_and_casts_each_parameter():
    layout = layout_from_toml("mine", LAYOUT)
    assert layout.enqueue_takes == {"type", "info"} and layout.refusal("enqueue") is None
    assert layout.refusal("release") is not None  # declaring enqueue declares nothing else
    sql = Statements(PostgresDialect(), layout).enqueue_call(["type", "info"], delayed=False)
    assert sql.endswith('SELECT ("lib"."add_job"("identifier" => CAST(? AS text), "payload" => CAST(? AS json)))."id"'
                        " FROM (SELECT set_config('search_path', ?, true)) AS qt_path")  # the library's schema first


ROW_LAYOUT = LAYOUT.replace('function = "add_job"', """function = "defer_jobs"
row = "job_to_defer"
row_fields = ["queue_name", "task", "priority", "args", "at"]
returns = "ids"
constants = {queue_name = "default", priority = "0", args = "{}"}""").replace('type = "identifier text"',
                                                                            'type = "task text"').replace(
    'info = "payload json"', 'info = "args jsonb"')


def test_a_row_call_fills_the_rows_attributes_in_order_fields_before_constants_the_rest_null():
    """procrastinate's form: one argument, an array of rows of a composite type; a field given wins over the
    preset's constant for the same attribute, an attribute neither names is NULL, the ids come back unnested."""
    layout = layout_from_toml("mine", ROW_LAYOUT)
    call, statements = layout.enqueue_call, Statements(PostgresDialect(), layout)
    assert call.bind_order(["type"]) == ["constant:queue_name", "type", "constant:priority", "constant:args"]
    assert call.bind_order(["type", "info"]) == ["constant:queue_name", "type", "constant:priority", "info"]
    assert statements.enqueue_call(["type", "info"], delayed=False).endswith(
        'SELECT unnest("lib"."defer_jobs"(ARRAY[ROW(CAST(? AS text), CAST(? AS text), CAST(? AS text), '
        'CAST(? AS jsonb), NULL)::"lib"."job_to_defer"]))'
        " FROM (SELECT set_config('search_path', ?, true)) AS qt_path")


@pytest.mark.parametrize("change, complaint", [
    (('returns = "ids"', 'returns = "id"'), 'returns = "ids"'),
    (('"args", "at"]', '"at"]'), "not \\['args'\\]"),
    (('row = "job_to_defer"', 'row = "job; drop table x"'), "row"),
    (('"queue_name", "task"', '"queue name", "task"'), "row_fields"),
])  # fmt: skip
def test_a_row_call_names_its_attributes_and_every_field_and_constant_is_one_of_them(change, complaint):
    with pytest.raises(UsageError, match=complaint):
        layout_from_toml("mine", ROW_LAYOUT.replace(*change))


def test_constants_without_a_row_are_refused():
    with pytest.raises(UsageError, match="belong to a row"):
        layout_from_toml("mine", LAYOUT.replace('function = "add_job"', 'function = "add_job"\nconstants = {a = "1"}'))


@pytest.mark.parametrize("change, complaint", [
    (('function = "add_job"', 'function = "add_job(); drop table x; --"'), "function"),
    (('info = "payload json"', 'info = "payload json); drop table x; --"'), "payload json"),
    (('info = "payload json"', 'info = "pay;load json"'), "argument for info"),
    (('info = "payload json"', 'queue = "queue_name"'), "a field of type, info, priority, available"),
    (('databases = ["postgresql"]', 'databases = ["sqlite"]'), "PostgreSQL library"),
])  # fmt: skip
def test_a_call_holds_checked_names_and_known_types_only(change, complaint):
    with pytest.raises(UsageError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
        layout_from_toml("mine", LAYOUT.replace(*change))


@pytest.mark.parametrize("preset, options, complaint", [
    ("queuesample", {"priority": 3}, "layout queuesample has no priority column"),
    ("queuesample", {"delay_s": 5.0}, "layout queuesample has no available-at column"),
    ("requests", {"priority": 3}, "layout requests has no priority column"),
    ("graphile_worker", {"priority": 300}, "priority must be a whole number from 0"),
    ("graphile_worker", {"delay_s": -1.0}, "--delay must be zero or more seconds"),
    ("graphile_worker", {"info": "not json"}, "--info must be JSON: graphile-worker's add_job() takes it as payload"),
])  # fmt: skip
def test_enqueue_options_a_layout_cannot_take_are_refused_before_any_sql(preset, options, complaint):
    """The same checks for an insert's columns and a library function's arguments: one line, nothing sent."""
    from queuetop.act.shape_queue import ShapeQueue
    from queuetop.db.recording import StatementRecorder

    layout, recorder = load_layout(preset), StatementRecorder(PostgresDialect())
    job_type = None if not layout.has_job_type else \
        "AC351A46-49E4-4F0C-BF8C-F45255012150" if layout.type_of("type") == "guid" else "fast"
    with pytest.raises(UsageError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
        ShapeQueue(recorder, layout).enqueue_many(job_type, 1, **options)  # type: ignore[arg-type]
    assert recorder.statements == []
