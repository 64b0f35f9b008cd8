"""Layouts as data: the presets, the condition language, files that start from a preset, table overrides, and
the statements built from them (no database: the SQL text and its parameters)."""

from __future__ import annotations

import sqlite3

import pytest

from queuetop.core.errors import UsageError
from queuetop.db.dialects import MSSQLDialect, PostgresDialect, SQLiteDialect
from queuetop.layouts import (
    PRESET_NAMES,
    layout_from_toml,
    load_layout,
    preset_names,
    require_table,
    split_table,
    with_tables,
)
from queuetop.layouts.predicate import parse_predicate, roles_of, settings_of
from queuetop.layouts.sql import Statements

from .test_cli import assert_clean_failure, queuetop

DIALECTS = [SQLiteDialect(), PostgresDialect(), MSSQLDialect()]


def test_every_preset_loads_names_its_seed_and_says_what_it_cannot_know():
    seeds = {}
    for name in PRESET_NAMES:
        layout = load_layout(name)
        seeds[name] = layout.seed
        assert layout.description and layout.provides["depth"]
    assert seeds == {"native": None, "queuesample": "000", "requests": "001", "work_queue": "002", "processed": "003",
                     "job_queue": "004", "procrastinate": None, "graphile_worker": None,
                     "pgboss": None, "pgqueuer": None, "django_tasks": None, "huey": None,
                     "celery_sqlalchemy": None, "dramatiq_pg": None, "django_q2": None,
                     "pgboss11": None, "pgboss12_12": None, "pgboss12": None}  # fmt: skip
    assert {name: load_layout(name).library for name in PRESET_NAMES if load_layout(name).library} == {
        "procrastinate": "procrastinate", "graphile_worker": "graphile-worker", "pgboss": "pg-boss",
        "pgqueuer": "pgqueuer", "django_tasks": "django-tasks-db", "huey": "huey",
        "celery_sqlalchemy": "Celery", "dramatiq_pg": "dramatiq-pg", "django_q2": "django-q2",
        "pgboss11": "pg-boss", "pgboss12_12": "pg-boss", "pgboss12": "pg-boss"}
    assert not load_layout("work_queue").provides["oldest_age_s"]  # no times at all
    assert load_layout("work_queue").provides["completions"]  # from the depth's change between polls
    assert load_layout("requests").provides["lost"] and not load_layout("requests").provides["dead"]
    assert load_layout("job_queue").provides["scheduled"] and not load_layout("job_queue").provides["lost"]
    assert not load_layout("queuesample").provides["claimed"]  # retrieval is final
    assert load_layout("job_queue").clock == "local" and load_layout("native").clock == "utc"


def test_conditions_parse_with_precedence_and_name_their_roles_and_settings():
    node = parse_predicate("token is null and (attempts = 0 or attempts < $max_attempts) "
                           "or timeout <= now - $lost_after")
    assert node.kind == "or" and node.parts[0].kind == "and"
    assert roles_of(node) == {"token", "attempts", "timeout"}
    assert settings_of(node) == {"max_attempts", "lost_after"}


@pytest.mark.parametrize("text, complaint", [
    ("claimed_at is null; drop table x", "cannot read"),
    ("claimed_at = 'x'' or 1=1 --'", "cannot read"),
    ("claimed_at is nul", "expected null"),
    ("claimed_at like 'a%'", "cannot read|expected a comparison"),
    ("(claimed_at is null", "expected \\)"),
    ("now - 5 > created", "shifted by a \\$setting"),
    ("", "empty"),
    pytest.param("(" * 2000 + "claimed_at is null" + ")" * 2000, "nested more than 32 deep", id="2000 parens"),
    pytest.param("not " * 2000 + "claimed_at is null", "nested more than 32 deep", id="2000 nots"),
])  # fmt: skip
def test_a_condition_that_is_not_the_language_is_refused_naming_what(text, complaint):
    with pytest.raises(UsageError, match=complaint):
        parse_predicate(text, "state pending")


def test_a_layout_file_with_a_condition_nested_2000_deep_is_one_line(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text(NESTED_LAYOUT.replace("CONDITION", "(" * 2000 + "claimed_at is null" + ")" * 2000))
    with sqlite3.connect(tmp_path / "q.db") as db:
        db.execute("CREATE TABLE q (id INTEGER PRIMARY KEY, claimed_at TEXT)")
    result = queuetop("stats", "--db", str(tmp_path / "q.db"), "--layout", str(path))
    assert_clean_failure(result, "nested more than 32 deep")
    assert len(result.stderr) < 300


NESTED_LAYOUT = """
[tables]
queue = "q"
[queue_columns]
id = "id"
claimed_at = "claimed_at"
[states]
pending = "CONDITION"
"""


def test_a_state_must_use_known_roles_known_settings_and_one_table():
    head = '[tables]\nqueue = "q"\ncompleted = "c"\n[queue_columns]\nid = "id"\nflag = "done"\n'
    head = head.replace('flag = "done"', 'finished = "done bit"') + '[completed_columns]\nid = "id"\n'
    with pytest.raises(UsageError, match="mentions colour"):
        layout_from_toml("x", head + '[states]\npending = "colour = 1"\n')
    with pytest.raises(UsageError, match=r"\$nope, which is not a setting"):
        layout_from_toml("x", head + '[states]\npending = "finished < $nope"\n')
    with pytest.raises(UsageError, match="mixes roles"):
        layout_from_toml("x", head + '[states]\npending = "finished = 0 and c_id > 0"\n')
    with pytest.raises(UsageError, match="unknown state 'waiting'"):
        layout_from_toml("x", head + '[states]\npending = "finished = 0"\nwaiting = "finished = 1"\n')
    with pytest.raises(UsageError, match="unknown type 'money'"):
        layout_from_toml("x", head.replace("done bit", "done money") + '[states]\npending = "finished = 0"\n')


def test_done_is_for_rows_that_stay_with_an_identity_and_no_completion_times():
    assert layout_from_toml("mine", 'preset = "processed"\n[tables]\nqueue = "jobs"\n').done is not None
    with pytest.raises(UsageError, match="done needs rows that stay in the queue table"):
        layout_from_toml("mine", 'preset = "processed"\narrivals = "created"\n[tables]\nqueue = "jobs"\n')
    with pytest.raises(UsageError, match="done is for a shape without completion times"):
        layout_from_toml("mine", 'preset = "job_queue"\ndone = "finished is not null"\n')
    with pytest.raises(UsageError, match="mentions colour"):
        layout_from_toml("mine", 'preset = "processed"\ndone = "colour = 1"\n[tables]\nqueue = "jobs"\n')


def test_a_file_may_start_from_a_preset_and_override_tables_and_columns():
    layout = layout_from_toml("mine", 'preset = "job_queue"\n[tables]\nschema = "ops"\nqueue = "jobs"\n'
                                      '[queue_columns]\ninfo = "Body nvarchar(400)"\n')  # fmt: skip
    assert (layout.schema, layout.queue_table) == ("ops", "jobs")
    assert layout.columns["info"] == "Body" and layout.types["info"] == "nvarchar(400)"
    assert layout.columns["token"] == "Processing_Mark" and "timed_out" in layout.states  # the rest: the preset's
    with pytest.raises(UsageError, match="unknown preset 'nope'"):
        layout_from_toml("mine", 'preset = "nope"\n')
    with pytest.raises(UsageError, match="not valid TOML"):
        layout_from_toml("mine", "preset = \n")


def test_a_layout_file_is_read_by_path(tmp_path):
    path = tmp_path / "ops.toml"
    path.write_text('preset = "work_queue"\n[tables]\nqueue = "jobs"\n')
    assert load_layout(str(path)).queue_table == "jobs"
    with pytest.raises(UsageError, match="cannot read the layout file"):
        load_layout(str(tmp_path / "missing.toml"))
    with pytest.raises(UsageError, match=r"unknown layout 'nope'.*presets: native"):
        load_layout("nope")


def test_table_overrides_are_checked_identifiers():
    layout = with_tables(load_layout("work_queue"), "ops.jobs")
    assert (layout.schema, layout.queue_table) == ("ops", "jobs")
    assert with_tables(load_layout("work_queue"), "jobs").schema == "dbo"  # the preset's schema stays
    requests = with_tables(load_layout("requests"), "q.In", "Out")
    assert (requests.schema, requests.queue_table, requests.completed_table) == ("q", "In", "Out")
    for bad in ("a.b.c", "x;drop", "a.", '"x"'):
        with pytest.raises(UsageError):
            split_table(bad, "--table")
    with pytest.raises(UsageError, match="has no completed table"):
        with_tables(load_layout("job_queue"), None, "Done")
    with pytest.raises(UsageError, match="needs the queue table's name"):
        require_table(load_layout("processed"))
    assert require_table(with_tables(load_layout("processed"), "work_items")).queue_table == "work_items"


def test_dbo_is_the_default_schema_except_on_sql_server():
    layout = load_layout("job_queue")
    assert Statements(PostgresDialect(), layout).table("queue") == '"Job_Queue"'
    assert Statements(MSSQLDialect(), layout).table("queue") == "[dbo].[Job_Queue]"
    assert Statements(SQLiteDialect(), layout).table("queue") == '"Job_Queue"'
    assert Statements(PostgresDialect(), load_layout("queuesample")).table("queue") == '"QueueSample"."WorkQueue"'


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_states_use_the_databases_own_clock_of_the_layouts_kind(dialect):
    local = Statements(dialect, load_layout("job_queue")).state_counts(["pending", "timed_out"])[0]
    utc = Statements(dialect, with_tables(load_layout("work_queue"), "jobs")).state_counts(["pending"])[0]
    local_now, utc_now = dialect.now_sql("local"), dialect.now_sql("utc")
    assert local_now != utc_now and local_now in local and utc_now not in local and utc_now in utc


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_settings_and_values_travel_as_parameters(dialect):
    statements = Statements(dialect, load_layout("job_queue"))
    sql, params = statements.state_counts(["pending", "timed_out", "dead"], {"max_attempts": 5})
    assert set(params) == {5} and "5" not in sql.replace("Last_Attempt", "")
    sql, params = Statements(dialect, load_layout("requests")).state_counts(["lost"], {"lost_after": 90})
    assert len(set(params)) == 1 and len(params) == sql.count("?") and "90" not in sql
    assert sql.startswith("/* queuetop */ ")


def test_a_layout_whose_rows_stay_reads_only_the_live_range_of_its_primary_key():
    statements = Statements(PostgresDialect(), load_layout("job_queue"))
    assert statements.ranged and not Statements(PostgresDialect(), load_layout("requests")).ranged
    sql, params = statements.state_counts(["pending", "claimed"], low_id=1234)
    assert sql.endswith('AND "ID" >= CAST(? AS bigint)') and params[-1] == 1234 and sql.count("?") == len(params)
    sql, params = statements.completions_after("since", low_id=1234)
    assert 'AND "ID" >= CAST(? AS bigint)' in sql and params == ("since", 1234)


def test_a_bit_flag_is_compared_as_each_database_spells_a_bit():
    layout = with_tables(load_layout("processed"), "jobs")
    assert '"PROCESSED" = false' in Statements(PostgresDialect(), layout).state_counts(["pending"])[0]
    assert "[PROCESSED] = 0" in Statements(MSSQLDialect(), layout).state_counts(["pending"])[0]
    assert '"PROCESSED" = 0' in Statements(SQLiteDialect(), layout).state_counts(["pending"])[0]


def test_parameters_are_typed_as_the_column_they_meet():
    """SQL Server seeks a varchar index only if the parameter is varchar too; PostgreSQL needs a type at all."""
    guid = "AC351A46-49E4-4F0C-BF8C-F45255012150"
    pg = Statements(PostgresDialect(), load_layout("queuesample")).count_state("pending", guid)[0]
    ms = Statements(MSSQLDialect(), load_layout("queuesample")).count_state("pending", "x")[0]
    assert '"JobType" = CAST(? AS uuid)' in pg and "[JobType] = CAST(? AS uniqueidentifier)" in ms
    insert = Statements(MSSQLDialect(), load_layout("job_queue")).insert(["info", "priority"], delayed=False)
    assert "CAST(? AS varchar(100))" in insert and "CAST(? AS tinyint)" in insert and "OUTPUT inserted.[ID]" in insert


STATUS_LAYOUT = """
[tables]
queue = "jobs"
[queue_columns]
id = "id bigint"
type = "kind"
available = "run_at"
state = "status"
[states]
pending = "state = 'todo' and (available is null or available <= now)"
claimed = "state in ('doing', 'running')"
dead = "state not in ('todo', 'doing', 'running', 'succeeded')"
"""


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_a_status_column_of_its_own_and_in_lists_render_as_literals_the_indexes_can_match(dialect):
    layout = layout_from_toml("mine", STATUS_LAYOUT)
    assert layout.columns["state"] == "status" and layout.has_job_type
    sql, params = Statements(dialect, layout).state_counts(["pending", "claimed", "dead"])
    status = dialect.quote("status")
    assert f"{status} IN ('doing', 'running')" in sql
    assert f"{status} NOT IN ('todo', 'doing', 'running', 'succeeded')" in sql
    assert f"{status} = 'todo'" in sql and len(params) == sql.count("?")


@pytest.mark.parametrize("text, complaint", [
    ("state in ('a' 'b')", "expected , or \\)"),
    ("state in (available)", "holds 'texts' and numbers"),
    ("state in ()", "holds 'texts' and numbers"),
    ("state in ('a',)", "holds 'texts' and numbers"),
    ("state in ('a'); drop table jobs", "cannot read"),
    ("state in (" + ", ".join(f"'v{i}'" for i in range(40)) + ")", "at most 32 values"),
])  # fmt: skip
def test_an_in_list_holds_only_texts_and_numbers(text, complaint):
    with pytest.raises(UsageError, match=complaint):
        parse_predicate(text, "state pending")


def test_a_column_of_its_own_must_be_used_and_cannot_take_a_keywords_name():
    with pytest.raises(UsageError, match="'stat' is not a role, and no state, done or detail uses it"):
        layout_from_toml("mine", STATUS_LAYOUT.replace('state = "status"', 'state = "status"\nstat = "x"'))
    with pytest.raises(UsageError, match="'now' cannot name a column"):
        layout_from_toml("mine", '[tables]\nqueue = "jobs"\n[queue_columns]\nid = "id"\nnow = "x"\n'
                                 '[states]\npending = "id > 0"\n')


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_a_zoned_clock_compares_with_the_databases_now_as_an_instant(dialect):
    layout = load_layout("procrastinate")
    assert layout.clock == "zoned" and layout.read_clock == "utc"
    sql = Statements(dialect, layout).state_counts(["pending", "scheduled"])[0]
    expected = {"postgresql": "statement_timestamp()", "mssql": "SYSDATETIMEOFFSET()"}.get(
        dialect.name, dialect.now_sql("utc"))  # fmt: skip
    assert dialect.now_sql("zoned") == expected and expected in sql


def test_a_library_preset_names_its_library_and_is_refused_where_the_library_cannot_be(tmp_path):
    layout = load_layout("procrastinate")
    assert (layout.library, layout.databases) == ("procrastinate", ("postgresql",))
    assert layout.declares == frozenset({"enqueue"})  # through its own defer function, nothing else
    assert "procrastinate" not in preset_names("sqlite") and "procrastinate" in preset_names("postgresql")
    sqlite3.connect(tmp_path / "q.db").close()
    result = queuetop("stats", "--db", str(tmp_path / "q.db"), "--layout", "procrastinate")
    assert_clean_failure(result, "layout procrastinate is for postgresql, not sqlite")


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_now_shifted_by_each_rows_own_seconds_is_rendered_per_database(dialect):
    layout = layout_from_toml("mine", STATUS_LAYOUT.replace('state = "status"', 'state = "status"\nttl = "ttl_s int"')
                              + 'timed_out = "state = \'doing\' and available < now - ttl"\n')  # fmt: skip
    sql = Statements(dialect, layout).state_counts(["timed_out"])[0]
    ttl = dialect.quote("ttl_s")
    expected = {"postgresql": f"- {ttl} * INTERVAL '1 second')", "mssql": f"DATEADD(second, -{ttl}, ",
                "sqlite": f"printf('%+f seconds', -{ttl})"}[dialect.name]  # fmt: skip
    assert expected in sql


def test_an_interval_column_is_postgresqls_alone():
    pgboss = load_layout("pgboss")
    assert pgboss.types["expire_in"] == "interval"
    sql = Statements(PostgresDialect(), pgboss).state_counts(["claimed", "timed_out"])[0]
    assert '(statement_timestamp() - "expire_in")' in sql
    with pytest.raises(UsageError, match="SQL Server has no interval type"):
        Statements(MSSQLDialect(), pgboss).state_counts(["timed_out"])
    with pytest.raises(UsageError, match="now can only be shifted by"):
        parse_predicate("claimed_at < now - 5", "state timed_out")


def test_what_a_shape_cannot_know_says_why_and_a_reason_for_a_known_figure_is_refused():
    assert dict(load_layout("work_queue").cannot_know) == {
        "oldest_age_s": "no creation time of a waiting job (role created)", "scheduled": "no scheduled state",
        "claimed": "no claimed state", "timed_out": "no timed out state", "dead": "no dead state",
        "lost": "no lost state", "wait": "no pair of times from arrival to start ([completions] wait)",
        "processing": "no pair of times from start to end ([completions] processing)"}  # fmt: skip
    assert load_layout("graphile_worker").cannot_know["wait"] == "a job that succeeds is deleted with its times"
    with pytest.raises(UsageError, match="\\[cannot_know\\] names 'depth', which it can know"):
        layout_from_toml("mine", STATUS_LAYOUT + '[cannot_know]\ndepth = "why not"\n')


def test_a_library_preset_names_each_state_in_the_librarys_own_words():
    """The words are the texts a state compares the library's own columns with (not a role's: django-tasks-db's
    '9999-01-01' is a date), outside any `not`; a hand-made queue and a library without a status have none."""
    assert dict(load_layout("pgboss").library_words) == {
        "pending": "created, retry", "scheduled": "created, retry", "claimed": "active", "timed_out": "active",
        "dead": "failed", "ended": "completed, failed, cancelled"}  # fmt: skip
    assert dict(load_layout("django_tasks").library_words) == {
        "pending": "READY", "scheduled": "READY", "claimed": "RUNNING", "dead": "FAILED",
        "ended": "SUCCESSFUL, FAILED"}  # fmt: skip
    assert not load_layout("graphile_worker").library_words and not load_layout("job_queue").library_words
    mine = layout_from_toml("mine", '[library]\nname = "mine"\n[tables]\nqueue = "q"\n[queue_columns]\nid = "id"\n'
                            'status = "status"\n[states]\npending = "status = \'new\' or (status = \'retry\' and '
                            'not status in (\'x\'))"\ndead = "not status = \'gone\'"\n')  # fmt: skip
    assert dict(mine.library_words) == {"pending": "new, retry"}


def test_a_completed_table_numbering_its_rows_itself_says_so_and_arrivals_by_id_read_the_queue_alone():
    """A finished job keeps its id as it moves to the completed table (native, pgqueuer's log), so arrivals by id
    read both tables; where that table numbers its rows itself (django-q2's task uuids), a layout says
    completed_ids = "own", and ids of another kind than the queue's are refused without it, naming what to write."""
    head = ('[tables]\nqueue = "q"\ncompleted = "r"\n[queue_columns]\nid = "id bigint"\ntype = "key"\n'
            '[completed_columns]\nid = "id varchar(32)"\ntype = "cluster"\ncompleted = "stopped"\n'
            '[states]\npending = "true"\n[completions]\nat = "c_completed"\n')
    with pytest.raises(UsageError, match=r"varchar.32. and the queue's bigint.*completed_ids = .own."):
        layout_from_toml("mine", 'arrivals = "identity"\n' + head)
    with pytest.raises(UsageError, match="completed_ids is 'theirs'"):
        layout_from_toml("mine", 'arrivals = "identity"\ncompleted_ids = "theirs"\n' + head)
    own = layout_from_toml("mine", 'arrivals = "identity"\ncompleted_ids = "own"\n' + head)
    moved = layout_from_toml("mine", 'arrivals = "identity"\n' + head.replace("varchar(32)", "bigint"))
    # a log of each job's steps by its id, the job's row staying in the queue (procrastinate_events): no second arrival
    kept = layout_from_toml("mine", 'arrivals = "identity"\ncompleted_ids = "kept"\n'
                            + head.replace("varchar(32)", "bigint"))  # fmt: skip
    for dialect in DIALECTS:
        assert Statements(dialect, own).identity_tables() == [("", "queue")]
        assert Statements(dialect, kept).identity_tables() == [("", "queue")]
        assert Statements(dialect, moved).identity_tables() == [("", "queue"), ("c_", "completed")]
    assert own.finished_rows_leave and not moved.finished_rows_leave and not kept.finished_rows_leave
    with pytest.raises(UsageError, match=r"varchar.32. and the queue's bigint.*completed_ids = .own."):
        layout_from_toml("mine", 'arrivals = "identity"\ncompleted_ids = "kept"\n' + head)  # a job's id is one kind
    # such a log's own id, which grows with each line, is the range its completions are read from: a whole number
    logged = head.replace("varchar(32)", "bigint").replace('type = "cluster"', 'type = "cluster"\nline = "n {}"')
    with pytest.raises(UsageError, match="line is the log's own id, a whole number"):
        layout_from_toml("mine", 'arrivals = "identity"\ncompleted_ids = "kept"\n' + logged.format("varchar(9)"))
    assert layout_from_toml("mine", 'arrivals = "identity"\ncompleted_ids = "kept"\n'
                            + logged.format("bigint")).log_lines  # fmt: skip
    with pytest.raises(UsageError, match="sequence is for a library whose finished rows leave the queue table"):
        layout_from_toml("mine", 'arrivals = "identity"\n[library]\nname = "x"\ndatabases = ["sqlite"]\n'
                         + head.replace('completed = "r"', 'completed = "r"\nsequence = "q.id"')
                         .replace("varchar(32)", "bigint"))
