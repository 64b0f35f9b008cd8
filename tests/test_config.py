"""The config file: named targets, `${VAR}` secrets from the environment, precedence (command line, then
environment, then file, then default), `queuetop config` with origins and masked passwords, `-t NAME` on every
command, read-only targets, and SLOs from the file, on real queues where a command runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from queuetop.act.queue import Queue
from queuetop.cli.config import Origin, load_config, resolve
from queuetop.core.errors import UsageError
from queuetop.watch.slo import Slo

from .conftest import PG_TARGET
from .helpers import native_queue_file
from .test_cli import assert_clean_failure, queuetop, snapshot_of_tables

NO_CLI = {"db": None, "layout": None, "table": None, "completed_table": None, "interval": None, "read_only": None,
          "lost_after": None}  # fmt: skip


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


FILE = """
interval = 2
default_target = "local"
[slo]
max_oldest_age_s = 300
[targets.local]
db = "{db}"
interval = 3
[targets.local.slo]
max_depth = 5000
[targets.local.slo.types.email]
max_depth = 10
[targets.prod]
db = "DRIVER={{PostgreSQL Unicode}};SERVER=db1;DATABASE=jobs;UID=ops;PWD=${{PROD_QUEUE_PWD}}"
layout = "job_queue"
read_only = true
"""


@pytest.fixture
def config(tmp_path) -> Path:
    return write(tmp_path, FILE.format(db=tmp_path / "local.db"))


def test_each_setting_comes_from_the_command_line_then_the_environment_then_the_file_then_the_default(config):
    file = load_config(config, required=True)
    env = {"PROD_QUEUE_PWD": "s3cret"}
    local = resolve(NO_CLI, file, None, environ=env)  # no -t: the file's default_target
    assert local.target == "local" and local.target_origin.startswith("default_target")
    assert (local["interval"], local.settings["interval"].origin) == (3.0, Origin.FILE)  # the target's, over the top
    assert (local["lost_after"], local.settings["lost_after"].origin) == (60.0, Origin.DEFAULT)
    assert resolve({**NO_CLI, "interval": 0.5}, file, None, environ=env).settings["interval"].origin is \
        Origin.COMMAND_LINE  # fmt: skip
    # $QUEUETOP_DB beats a default_target (a file setting) ...
    from_env = resolve(NO_CLI, file, None, environ={"QUEUETOP_DB": "other.db"})
    assert from_env.target is None and from_env.settings["db"].origin is Origin.ENVIRONMENT
    # ... but not a target named with -t, which is the command line's choice; $QUEUETOP_LAYOUT neither.
    prod = resolve(NO_CLI, file, "prod", environ={**env, "QUEUETOP_DB": "other.db", "QUEUETOP_LAYOUT": "native"})
    assert prod["db"].endswith("PWD=s3cret") and prod.settings["db"].origin is Origin.FILE
    assert prod["layout"] == "job_queue" and prod["read_only"] is True
    assert prod["interval"] == 2.0  # prod has none of its own: the file's top level
    with pytest.raises(UsageError, match="-t prod and --db both name a database"):
        resolve({**NO_CLI, "db": "x.db"}, file, "prod", environ=env)


def test_slos_add_up_limit_by_limit_and_the_command_line_s_win(config):
    from queuetop.cli.config import slo_from_option
    from queuetop.watch.slo import Slos

    file = load_config(config, required=True)
    cli = Slos((slo_from_option("email:max_depth=20"),))
    slos = resolve(NO_CLI, file, "local", cli_slos=cli, environ={}).slos
    assert slos.limit_for("email", Slo.MAX_DEPTH).value == 20  # command line over the target's type limit
    assert slos.limit_for("report", Slo.MAX_DEPTH).value == 5000  # the target's default
    assert slos.limit_for("report", Slo.MAX_OLDEST_AGE).value == 300  # the file's top level
    assert slos.limit_for("email", Slo.MAX_DEPTH).source == "command line (--slo)"


def test_queuetop_config_says_where_each_value_came_from_and_masks_the_password(config):
    result = queuetop("--config", str(config), "config", "-t", "prod", "--interval", "7",
                      env_extra={"PROD_QUEUE_PWD": "s3cret-value"})  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "s3cret-value" not in out and "PWD=***" in out
    line = {row.split()[0]: row for row in out.splitlines() if row.startswith("  ") and row.split()}
    assert "config file" in line["db"] and "[targets.prod] (chosen on the command line)" in line["db"]
    assert "command line: --interval" in line["interval"] and " 7 " in line["interval"]
    assert "true" in line["read_only"] and "[targets.prod]" in line["read_only"]
    assert "default: built in" in line["lost_after"]
    assert "targets in the file: local, prod" in out
    as_json = json.loads(queuetop("--config", str(config), "config", "--all", "--json",
                                  env_extra={"PROD_QUEUE_PWD": "s3cret-value"}).stdout)  # fmt: skip
    assert [t["target"] for t in as_json["targets"]] == ["local", "prod"]
    assert "s3cret-value" not in json.dumps(as_json)
    assert {"slo": "max_depth", "job_type": None, "limit": 5000.0,
            "source": "config file [targets.local.slo]"} in as_json["targets"][0]["slos"]  # fmt: skip


def test_a_missing_environment_variable_is_one_line_naming_it_and_the_target(config):
    result = queuetop("--config", str(config), "-t", "prod", "stats")
    assert_clean_failure(result, "[targets.prod] db needs $PROD_QUEUE_PWD", "not set in the environment",
                         "export PROD_QUEUE_PWD=")


@pytest.mark.parametrize(("text", "phrases"), [
    ('[targets.a]\ndb = "DRIVER=x;UID=u;PWD=hunter2"', ("[targets.a]: db holds a password", "PWD=${")),
    ('[targets.a]\ndb = "a.db"\ninterva = 3', ("unknown setting 'interva'", "known: db, layout")),
    ('[targets.a]\ndb = "a.db"\ninterval = "fast"', ("interval must be a number",)),
    ('interval = 0.01\n[targets.a]\ndb = "a.db"', ("config.toml: interval must be from 0.1 to 3600 seconds",)),
    ('[targets.a]\nlayout = "native"', ("[targets.a] has no db",)),
    ('[slo]\nmax_depht = 3', ("unknown SLO 'max_depht'", "known: max_oldest_age_s")),
    ('[slo.types.email]\nmax_depth = -1', ("[slo].types.email: max_depth must be a number, zero or more",)),
    ('default_target = "nope"\n[targets.a]\ndb = "a.db"', ("default_target 'nope' is not one of its targets",)),
    ("interval = [", ("is not valid TOML",)),
])  # fmt: skip
def test_a_bad_config_file_is_one_clear_line(tmp_path, text, phrases):
    result = queuetop("--config", str(write(tmp_path, text)), "stats")
    assert_clean_failure(result, *phrases)


def test_a_named_config_file_that_is_not_there_and_an_unknown_target_are_clear(tmp_path, config):
    assert_clean_failure(queuetop("--config", str(tmp_path / "nope.toml"), "stats"), "nope.toml does not exist")
    assert_clean_failure(queuetop("--config", str(config), "-t", "stage", "stats"),
                         "no target named 'stage'", "targets: local, prod")  # fmt: skip
    assert_clean_failure(queuetop("--config", str(config), "-t", "local", "-t", "prod", "stats"),
                         "works on one target, not 2")  # fmt: skip


def test_t_names_the_target_for_every_command_before_or_after_it(tmp_path, config):
    assert queuetop("--config", str(config), "-t", "local", "init").returncode == 0
    assert queuetop("--config", str(config), "-t", "local", "enqueue", "-t", "email", "-n", "3").returncode == 0
    for args in (("-t", "local", "stats", "--json"), ("stats", "--json", "-t", "local"), ("stats", "--json")):
        result = queuetop("--config", str(config), *args)  # the last: default_target
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["target"] == str(tmp_path / "local.db") and report["types"][0]["depth"] == 3


def test_a_read_only_target_refuses_every_command_that_writes_and_changes_nothing(tmp_path):
    db = tmp_path / "ro.db"
    native_queue_file(db)
    config = write(tmp_path, f'[targets.ro]\ndb = "{db}"\nread_only = true\n')
    before = snapshot_of_tables(db)
    for args in (("enqueue", "--type", "x"), ("release",), ("dead", "delete", "--yes"), ("init",), ("load",)):
        assert_clean_failure(queuetop("--config", str(config), "-t", "ro", *args), "target ro is read-only")
    assert queuetop("--config", str(config), "-t", "ro", "release", "--dry-run").returncode == 0  # reads only
    assert snapshot_of_tables(db) == before


def test_check_takes_its_slos_from_the_target_s_section_on_postgres(tmp_path, pg_backend):
    with pg_backend.open() as db:
        Queue(db, pg_backend.layout).enqueue_many("email", 12)
        Queue(db, pg_backend.layout).enqueue_many("report", 12)
    config = write(tmp_path, f"""
[targets.pg]
db = "{PG_TARGET};PWD=${{PG_PASSWORD}}"
layout = "native"
table = "{pg_backend.layout.schema}.WorkQueue"
[targets.pg.slo]
max_depth = 100
[targets.pg.slo.types.email]
max_depth = 10
""")
    result = queuetop("--config", str(config), "check", "-t", "pg", env_extra={"PG_PASSWORD": ""})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "email depth 12 > 10" in result.stdout and "report depth" not in result.stdout
    relaxed = queuetop("--config", str(config), "check", "-t", "pg", "--slo", "email:max_depth=50",
                       env_extra={"PG_PASSWORD": ""})  # fmt: skip
    assert relaxed.returncode == 0, relaxed.stdout


def test_the_dashboard_gets_the_target_s_interval_read_only_and_slos(tmp_path, monkeypatch):
    """`queuetop -t NAME` wires the file's settings into the dashboard (run_dashboard itself is Pilot-tested)."""
    from queuetop import tui as dashboard_package
    from queuetop.cli import main

    db = tmp_path / "w.db"
    native_queue_file(db)
    config = write(tmp_path, f'[targets.w]\ndb = "{db}"\ninterval = 5\nread_only = true\n'
                             '[targets.w.slo.types.email]\nmax_depth = 7\n')  # fmt: skip
    seen = {}
    monkeypatch.setattr(dashboard_package, "run_dashboard",
                        lambda target, **kwargs: seen.update(kwargs, target=target) or 0)  # fmt: skip
    assert main(["--config", str(config), "-t", "w", "--no-bell"]) == 0
    assert seen["target"].value == str(db) and seen["interval"] == 5.0 and seen["read_only"] is True
    assert seen["slos"].limit_for("email", Slo.MAX_DEPTH).value == 7 and seen["bell"] is False
    assert main(["--config", str(config), "watch", "-t", "w", "--interval", "0.5"]) == 0
    assert seen["interval"] == 0.5 and seen["bell"] is True
