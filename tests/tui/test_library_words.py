"""A job library's drill-down says each state in the library's own words beside queuetop's (procrastinate: claimed
is "doing"), read from the states of its preset, so the words are the ones the figures count; `stats --json`
gives them to scripts. On procrastinate's real tables, its own worker holding a job."""

from __future__ import annotations

import json
from types import SimpleNamespace

from textual.widgets import Static

from queuetop.db import Database, parse_target
from queuetop.layouts.detect import detect
from queuetop.tui.detail import DetailScreen
from queuetop.tui.table import QueueTable
from tests.conftest import PG_TARGET
from tests.libraries import made_by, queuetop_cli
from tests.libraries import wait_for as wait_until
from tests.tui.conftest import SIZE, AppFactory, text, wait_for

WORDS = ("in procrastinate's words: pending = todo · later = todo · claimed = doing · timed out = doing · "
         "dead = failed · ended = succeeded, cancelled, aborted")  # fmt: skip


async def test_the_drill_down_says_each_state_in_procrastinates_words(make_app: AppFactory) -> None:
    with made_by("procrastinate", schema_first=True) as library:
        library.run("defer", "hold=1", "orphan=1")
        with library.worker():
            wait_until(lambda: library.json("counts")[0]["doing"] == 1, "procrastinate's worker to take the job")
            with Database.open(parse_target(PG_TARGET), purpose="monitor") as db:
                (found,) = [c for c in detect(db) if c.table.schema == library.schema]
            app = make_app(SimpleNamespace(target=parse_target(PG_TARGET), layout=found.layout))
            async with app.run_test(size=SIZE) as pilot:
                await wait_for(pilot, lambda: app.session.latest is not None and app.session.latest.types,
                               "the first poll")  # fmt: skip
                app.screen.query_one(QueueTable).select_type("hold")
                await pilot.press("enter")
                await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.detail is not None,
                               "the drill-down")  # fmt: skip
                summary = text(app.screen.query_one("#summary", Static))
                note = text(app.screen.query_one("#summary-note", Static))
                assert "claimed 1" in summary and WORDS in note, (summary, note)
                assert app.screen.query_one("#summary-note").size.height == 2  # wrapped at 120 columns, not cut
        stats = queuetop_cli("stats", "--json", "--table", f"{library.schema}.procrastinate_jobs",
                             "--layout", "procrastinate")  # fmt: skip
        assert stats.returncode == 0, stats.stderr
        assert json.loads(stats.stdout)["library"] == {"name": "procrastinate", "words": {
            "pending": "todo", "scheduled": "todo", "claimed": "doing", "timed_out": "doing", "dead": "failed",
            "ended": "succeeded, cancelled, aborted"}}  # fmt: skip
