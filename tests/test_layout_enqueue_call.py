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
    assert sql.endswith('SELECT ("lib"."add_job"("identifier" => CAST(? AS text), "payload" => CAST(? AS json)))."id"')


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
