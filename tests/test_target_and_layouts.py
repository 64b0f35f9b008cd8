"""Targets and layouts: what --db means, masked secrets, and identifiers that can never carry SQL."""

from __future__ import annotations

import dataclasses

import pytest

from queuetop.core import format as fmt
from queuetop.db import TargetError, UsageError, parse_target
from queuetop.db.odbc import resolve_driver
from queuetop.layouts import NATIVE, Layout, layout_from_toml, load_layout


def test_target_kinds(monkeypatch, tmp_path):
    monkeypatch.delenv("QUEUETOP_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert parse_target("DRIVER={PostgreSQL Unicode};SERVER=x").kind == "odbc"
    assert parse_target("jobs.sqlite").value == "jobs.sqlite"
    assert parse_target("sqlite:/var/lib/q").value == "/var/lib/q"
    assert parse_target(None).value == str(tmp_path / "queuetop" / "queuetop.db")
    monkeypatch.setenv("QUEUETOP_DB", "env.db")
    assert parse_target(None).value == "env.db"
    with pytest.raises(TargetError, match="cannot tell what database"):
        parse_target("localhost")


def test_passwords_are_masked_for_display():
    target = parse_target("DRIVER={x};SERVER=db;UID=ops;PWD={se;cret};Encrypt=yes;password=plain")
    assert target.display == "DRIVER={x};SERVER=db;UID=ops;PWD=***;Encrypt=yes;password=***"


def test_unknown_odbc_driver_lists_what_is_installed():
    with pytest.raises(Exception, match=r"'Nope' is not installed.*knows: PostgreSQL Unicode"):
        resolve_driver("DRIVER={Nope};SERVER=x", ["PostgreSQL Unicode"])
    assert resolve_driver("DRIVER={PostgreSQL Unicode};SERVER=x", ["PostgreSQL Unicode"]).startswith("DRIVER={Postg")


def test_the_microsoft_driver_is_found_in_the_wheel_when_unixodbc_does_not_know_it():
    resolved = resolve_driver("Driver={ODBC Driver 18 for SQL Server};Server=db", [])
    assert resolved.startswith("Driver={/") and "libmsodbcsql-18" in resolved and resolved.endswith(";Server=db")


@pytest.mark.parametrize("bad", ["Work Queue", "x;drop table y", 'a"b', "1abc", "", "a" * 129, "t]--"])
def test_layout_identifiers_are_validated(bad):
    with pytest.raises(UsageError, match="invalid identifier"):
        dataclasses.replace(NATIVE, queue_table=bad)
    with pytest.raises(UsageError, match="invalid identifier"):
        Layout("x", None, "q", None, None, {"type": bad})


def test_layouts_are_data():
    assert load_layout("native") == NATIVE
    assert NATIVE.columns["token"] == "ProcessingMark" and NATIVE.has("claimed_at", "c_outcome")
    text = '[tables]\nqueue = "work_queue"\n[queue_columns]\nid = "work_queue_id"\nfinished = "processed_flag bit"\n'
    seed002 = layout_from_toml("seed002", text + '[states]\npending = "finished = 0"\n')
    assert seed002.schema is None and not seed002.has("created") and seed002.types["finished"] == "bit"
    with pytest.raises(UsageError, match="no pending state"):
        layout_from_toml("seed002", text)
    with pytest.raises(UsageError, match="unknown layout"):
        load_layout("nope")
    with pytest.raises(UsageError, match="'creatd' is not a role, and no state, done or detail uses it"):
        layout_from_toml("typo", text + 'creatd = "created_at"\n[states]\npending = "finished = 0"\n')


def test_human_units():
    assert [fmt.duration(s) for s in (None, 0.25, 12.34, 245, 7980, 273600)] == [
        "—", "250ms", "12.3s", "4m05s", "2h13m", "3d04h"]  # fmt: skip
    assert [fmt.rate(r) for r in (None, 0, 0.25, 3.456, 120.4, 1234)] == ["—", "0", "0.25", "3.46", "120", "1.2k"]
    assert fmt.count(12345, estimate=True) == "≈12,345"
    assert fmt.drain("draining", 90) == "1m30s" and fmt.drain("never", None) == "never"
