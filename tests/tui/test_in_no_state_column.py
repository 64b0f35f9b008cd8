"""The dashboard shows rows in no state: a "no state" column (yellow) while some row is in none of the layout's
states, gone once none is; the drill-down's summary says it. On a real SQLite file, a hand-written layout."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

from textual.widgets import Static

from queuetop.db import parse_target
from queuetop.layouts import layout_from_toml
from queuetop.tui.detail import DetailScreen
from queuetop.tui.table import QueueTable
from queuetop.watch import unaccounted
from tests.test_in_no_state import LAYOUT, ROWS
from tests.tui.conftest import SIZE, AppFactory, text, wait_for


async def test_a_no_state_column_while_some_row_is_in_no_state(tmp_path, make_app: AppFactory, monkeypatch) -> None:
    monkeypatch.setattr(unaccounted, "EVERY_S", 0.5)  # a count every half second, not every minute
    path = tmp_path / "q.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT, status TEXT)")
        connection.executemany("INSERT INTO jobs (kind, status) VALUES (?, ?)", ROWS)
    app = make_app(SimpleNamespace(target=parse_target(str(path)), layout=layout_from_toml("mine", LAYOUT)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.main.query_one(QueueTable)
        await wait_for(pilot, lambda: table.rows and table.totals is not None and table.totals.in_no_state,
                       "a poll with the rows in no state counted")  # fmt: skip
        assert "in_no_state" in [column.key for column in table.shown]
        assert {row.job_type: row.in_no_state for row in table.rows} == {"report": 1, "ghost": 2, "email": 1}
        table.select_type("ghost")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen), "the drill-down")
        assert "in no state 2" in text(app.screen.query_one("#summary", Static))
        await pilot.press("escape")
        with sqlite3.connect(path) as connection:
            connection.execute("DELETE FROM jobs WHERE status = 'paused' OR status IS NULL")
        await wait_for(pilot, lambda: "in_no_state" not in [column.key for column in table.shown],
                       "the column gone once no row is in no state")  # fmt: skip
