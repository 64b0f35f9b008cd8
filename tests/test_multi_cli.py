"""`queuetop -t a -t b` and `queuetop watch --all`: the command line of the multi-target dashboard (the dashboard
itself is Pilot-tested in tests/tui/test_multi_dashboard.py): clear errors, and each target's settings wired in."""

from __future__ import annotations

from pathlib import Path

import pytest

from queuetop.watch.slo import Slo

from .helpers import native_queue_file
from .test_cli import assert_clean_failure, queuetop


@pytest.fixture
def config(tmp_path: Path) -> Path:
    for name in ("a", "b"):
        native_queue_file(tmp_path / f"{name}.db")
    path = tmp_path / "config.toml"
    path.write_text(f"""
interval = 2
[targets.a]
db = "{tmp_path / "a.db"}"
[targets.b]
db = "{tmp_path / "b.db"}"
interval = 5
read_only = true
[targets.b.slo]
max_depth = 9
""", encoding="utf-8")  # fmt: skip
    return path


def test_an_unknown_target_among_several_is_one_line_naming_the_known_ones(config: Path) -> None:
    assert_clean_failure(queuetop("--config", str(config), "-t", "a", "-t", "prod"),
                         "no target named 'prod'", "targets: a, b")  # fmt: skip
    assert_clean_failure(queuetop("--config", str(config), "watch", "-t", "prod", "-t", "b"), "no target named 'prod'")


def test_db_beside_several_targets_is_refused(config: Path, tmp_path: Path) -> None:
    other = str(tmp_path / "a.db")
    assert_clean_failure(queuetop("--config", str(config), "-t", "a", "-t", "b", "--db", other),
                         "--db names one database and the -t options name 2 targets")  # fmt: skip
    assert_clean_failure(queuetop("--config", str(config), "watch", "--all", "--db", other),
                         "--db names one database and --all names 2 targets")  # fmt: skip
    assert_clean_failure(queuetop("--config", str(config), "-t", "a", "--db", other),
                         "-t a and --db both name a database")  # fmt: skip


def test_a_load_beside_several_targets_and_all_without_targets_are_refused(config: Path, tmp_path: Path) -> None:
    assert_clean_failure(queuetop("--config", str(config), "-t", "a", "-t", "a", "-t", "b", "watch", "--with-load"),
                         "--with-load drives one target, and the -t options name 2")  # fmt: skip
    empty = tmp_path / "empty.toml"
    empty.write_text("interval = 1\n", encoding="utf-8")
    assert_clean_failure(queuetop("--config", str(empty), "watch", "--all"), "--all: the config file names no targets")


def test_each_target_gets_its_own_settings_slos_and_history_file(config: Path, tmp_path: Path, monkeypatch) -> None:
    from queuetop import tui as dashboard_package
    from queuetop.cli import main

    seen: dict = {}
    monkeypatch.setattr(dashboard_package, "run_multi_dashboard",
                        lambda targets, **kwargs: seen.update(kwargs, targets=targets) or 0)  # fmt: skip
    monkeypatch.setattr(dashboard_package, "run_dashboard", lambda target, **kwargs: seen.update(single=target) or 0)
    assert main(["--config", str(config), "-t", "a", "-t", "b", "--type", "email"]) == 0
    a, b = seen["targets"]
    assert (a.name, a.target.value, a.interval, a.read_only) == ("a", str(tmp_path / "a.db"), 2.0, False)
    assert (b.name, b.target.value, b.interval, b.read_only) == ("b", str(tmp_path / "b.db"), 5.0, True)
    assert b.slos.limit_for("email", Slo.MAX_DEPTH).value == 9 and not a.slos
    assert a.history_path is not None and b.history_path is not None and a.history_path != b.history_path
    assert seen["job_types"] == ["email"]
    seen.clear()
    assert main(["--config", str(config), "watch", "--all", "--interval", "0.5", "--no-history"]) == 0
    assert [t.name for t in seen["targets"]] == ["a", "b"] and {t.interval for t in seen["targets"]} == {0.5}
    assert all(t.history_path is None for t in seen["targets"])
    seen.clear()
    assert main(["--config", str(config), "-t", "b", "-t", "b"]) == 0  # one target, named twice: the usual dashboard
    assert seen["single"].value == str(tmp_path / "b.db") and "targets" not in seen


def test_targets_named_like_commands_open_the_dashboard_on_both(tmp_path: Path, monkeypatch) -> None:
    from queuetop import tui as dashboard_package
    from queuetop.cli import main

    for name in ("release", "up"):
        native_queue_file(tmp_path / f"{name}.db")
    config = tmp_path / "config.toml"
    config.write_text(f'[targets.release]\ndb = "{tmp_path / "release.db"}"\n'
                      f'[targets.up]\ndb = "{tmp_path / "up.db"}"\n', encoding="utf-8")  # fmt: skip
    seen: dict = {}
    monkeypatch.setattr(dashboard_package, "run_multi_dashboard", lambda targets, **_: seen.update(targets=targets))
    assert main(["--config", str(config), "-t", "release", "-t", "up"]) is None
    assert [t.name for t in seen["targets"]] == ["release", "up"]
    seen.clear()
    assert main(["--config", str(config), "--target=release", "--interval", "2", "-t", "up"]) is None
    assert [t.name for t in seen["targets"]] == ["release", "up"]
