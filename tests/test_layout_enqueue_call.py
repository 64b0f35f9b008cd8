"""`[enqueue] function`: a job added by the library's own SQL function (graphile_worker.add_job), the one way a
library preset writes. Checked as the layout is read (every name an identifier, every type one of a few, PostgreSQL
only), rendered in named notation with typed parameters. The real call is tested with graphile-worker itself
(tests/libraries/test_graphile_worker.py)."""

from __future__ import annotations

import pytest

from queuetop.core.errors import UsageError
from queuetop.db.dialects import PostgresDialect
from queuetop.layouts import layout_from_toml
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
