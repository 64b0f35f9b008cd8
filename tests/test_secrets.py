"""Secrets never show: a password written with ODBC's brace escapes, psqlODBC's SSLPassword and libpq options,
or one from the environment, is masked in every output, the history file and the log; the files queuetop keeps
are its user's alone; a config file others can write is named in a warning."""

from __future__ import annotations

import json
import logging
import stat

import pytest

from queuetop.db import parse_target
from queuetop.layouts import NATIVE
from queuetop.store.history_store import HistoryStore
from queuetop.store.model import history_path, layout_identity, target_identity
from queuetop.tui import logging_to

from .conftest import PG_TARGET
from .test_cli import assert_clean_failure, queuetop

# PostgreSQL here trusts loopback logins, so a connection carrying these secrets still logs in and every command
# runs to the end: what it prints is what a user with a real password would see.
SECRET = "s3cr3t-VALUE"
ESCAPED = f"PWD={{a}}}}{SECRET}}};SSLPassword={{k;{SECRET}}};pqopt={{sslpassword='{SECRET}' connect_timeout=5}}"
OUTPUTS = [("stats",), ("stats", "--json"), ("check", "--max-depth", "9"), ("check", "--json", "--max-depth", "9"),
           ("doctor",), ("config",),
           ("config", "--json"), ("load", "--jobs", "20", "--rate", "unlimited", "--work", "fixed:0"),
           ("load", "--jobs", "20", "--rate", "unlimited", "--work", "fixed:0", "--json")]  # fmt: skip


@pytest.mark.parametrize("command", OUTPUTS, ids=lambda c: " ".join(c[:2]))
def test_no_output_shows_any_part_of_a_password(command, pg_backend, tmp_path):
    db = f"{PG_TARGET};{ESCAPED}"
    table = f"{pg_backend.layout.schema}.{pg_backend.layout.queue_table}"
    result = queuetop(*command, "--db", db, "--table", table)
    assert result.returncode in (0, 1), result.stderr  # 1: a check or load verdict, not an error
    shown = result.stdout + result.stderr
    assert "PWD=***" in shown or "--json" in command
    for piece in (SECRET, "VALUE", "s3cr3t", "k;s3"):
        assert piece not in shown, shown


def test_a_password_from_the_environment_is_masked_in_config_and_stats(tmp_path, pg_backend):
    config = tmp_path / "config.toml"
    config.write_text(f'[targets.prod]\ndb = "{PG_TARGET};PWD=${{QT_PW}}"\n'
                      f'[targets.braced]\ndb = "{PG_TARGET};PWD={{${{QT_PW}}}}"\n', encoding="utf-8")  # fmt: skip
    config.chmod(0o600)
    for target, password in (("prod", "{a}}b;c" + SECRET + "}"), ("braced", "a}b;c" + SECRET)):
        for command in (("config", "--json"), ("stats", "--json", "--table",
                                                 f"{pg_backend.layout.schema}.{pg_backend.layout.queue_table}")):
            result = queuetop("--config", str(config), "-t", target, *command, env_extra={"QT_PW": password})
            assert result.returncode == 0, result.stderr
            assert SECRET not in result.stdout + result.stderr and "b;c" not in result.stdout
            assert "PWD=***" in result.stdout


def test_the_history_file_keeps_the_target_masked_and_is_its_owner_s_alone(tmp_path):
    target = parse_target(f"DRIVER={{PostgreSQL Unicode}};SERVER=db1;DATABASE=jobs;{ESCAPED}")
    path = history_path(target, NATIVE, tmp_path / "history")
    store = HistoryStore(path, target=target_identity(target), layout=layout_identity(NATIVE))
    store.close()
    assert SECRET not in path.read_bytes().decode("latin-1") and "PWD=***" in store.meta["target"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.name.startswith("db1-jobs.native.")  # the readable hint, read by the tokenizer


def test_the_log_file_is_its_owner_s_alone_even_when_an_older_one_was_not(tmp_path):
    log = tmp_path / "state" / "queuetop.log"
    with logging_to(log):
        logging.getLogger("queuetop").warning("a line")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600 and "a line" in log.read_text()
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    log.chmod(0o644)
    with logging_to(log):
        pass
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


@pytest.mark.parametrize("written", ["PWD={${QT_PW}}", "PWD=${QT_PW}", " pwd = ${QT_PW} "])
def test_a_config_file_may_name_a_secret_from_the_environment_in_braces(tmp_path, written):
    db = tmp_path / "q.db"
    config = tmp_path / "config.toml"
    config.write_text(f'[targets.prod]\ndb = "DRIVER={{PostgreSQL Unicode}};SERVER=db1;{written}"\n'
                      f'[targets.local]\ndb = "{db}"\n', encoding="utf-8")  # fmt: skip
    config.chmod(0o600)
    result = queuetop("--config", str(config), "config", "-t", "prod", env_extra={"QT_PW": "x;y}z"})
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "PWD=***" in result.stdout.replace("pwd = ***", "PWD=***")


@pytest.mark.parametrize("written", ["SSLPassword=hunter2", "PWD={${QT_PW}x}", "AccessToken={t;k}"])
def test_a_secret_written_into_the_config_file_is_still_refused(tmp_path, written):
    config = tmp_path / "config.toml"
    config.write_text(f'[targets.prod]\ndb = "DRIVER={{x}};SERVER=db1;{written}"\n', encoding="utf-8")
    assert_clean_failure(queuetop("--config", str(config), "config"), "db holds a password", "written into the file")


def test_a_config_file_others_can_write_is_named_in_one_warning(tmp_path):
    db = tmp_path / "q.db"
    config = tmp_path / "config.toml"
    config.write_text(f'[targets.local]\ndb = "{db}"\n', encoding="utf-8")
    config.chmod(0o666)
    result = queuetop("--config", str(config), "config", "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["config_file"] == str(config)
    warning = result.stderr.strip()
    assert warning.startswith("queuetop: warning: ") and "\n" not in warning
    assert str(config) in warning and "mode 0666" in warning and "chmod go-w" in warning
    config.chmod(0o644)
    assert queuetop("--config", str(config), "config").stderr == ""


def test_a_config_file_that_is_not_utf8_is_one_line(tmp_path):
    config = tmp_path / "config.toml"
    config.write_bytes(b'interval = 2\n# caf\xe9\n')
    assert_clean_failure(queuetop("--config", str(config), "config"), "is not UTF-8 text", "line 2", "save it as UTF-8")
