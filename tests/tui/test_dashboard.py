"""The dashboard driven by Pilot against real queues: keys pressed, rows changed in the database."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import Button, Input, Label, Static

from queuetop.act.actions import Actions, EnqueueRequest, EnqueueResult
from queuetop.act.queue import Queue
from queuetop.db import parse_target
from queuetop.tui.app import QueuetopApp
from queuetop.tui.detail import DetailScreen
from queuetop.tui.help import HelpScreen
from queuetop.tui.main import MainScreen
from queuetop.tui.modals import EnqueueModal, ReleaseModal
from queuetop.tui.table import QueueTable
from queuetop.watch.monitor import CONNECTED, NO_SCHEMA, RECONNECTING, TIMED_OUT
from tests.conftest import Backend
from tests.helpers import enqueue, unclaimed_and_held
from tests.test_monitor import lock_sqlite
from tests.tui.conftest import SIZE, AppFactory, RecordingApp, status, text, wait_for


def claim(backend: Backend, job_type: str, count: int, lease: float) -> None:
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        queue.enqueue_many(job_type, count)
        assert len(queue.claim("w", [job_type], batch=count, lease=lease)) == count


def rows(backend: Backend, job_type: str) -> tuple[int, int]:
    """(pending, claimed) of one type, read from the database itself."""
    with backend.open() as db:
        return unclaimed_and_held(db, backend.layout, job_type)


def table(app: QueuetopApp) -> QueueTable:
    return app.main.query_one(QueueTable)


def depth_of(app: QueuetopApp, job_type: str) -> int | None:
    row = app.session.latest.type_named(job_type) if app.session.latest else None
    return row.depth if row else None


async def type_into(pilot, selector: str, value: str) -> None:
    box = pilot.app.screen.query_one(selector, Input)
    box.focus()
    box.value = value
    await pilot.pause()


# -- enqueue ------------------------------------------------------------------------------------------------
async def enqueue_through_the_modal(app: RecordingApp, backend: Backend, pilot) -> None:
    await wait_for(pilot, lambda: depth_of(app, "email") == 2, "the first poll")
    table(app).select_type("email")
    await pilot.press("e")
    await wait_for(pilot, lambda: isinstance(app.screen, EnqueueModal), "the enqueue dialog")
    assert app.screen.query_one("#job_type", Input).value == "email"  # prefilled from the selection
    await type_into(pilot, "#count", "7")
    await type_into(pilot, "#payload", '{"to": "ops"}')
    await type_into(pilot, "#priority", "5")
    await pilot.press("enter")
    await wait_for(pilot, lambda: rows(backend, "email") == (9, 0), "the 7 new jobs in the database")
    await wait_for(pilot, lambda: any(n.startswith("enqueued 7 jobs of type 'email': ids") for n in app.notes),
                   "the notification with the id range")  # fmt: skip
    assert isinstance(app.screen, MainScreen)


async def test_enqueue_through_the_modal_adds_exactly_the_asked_rows(sqlite_backend: Backend,
                                                                     make_app: AppFactory) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 2)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await enqueue_through_the_modal(app, sqlite_backend, pilot)
        await wait_for(pilot, lambda: depth_of(app, "email") == 9, "the table to show them")
    actions = Actions(sqlite_backend.target)
    detail = actions.type_detail("email")
    actions.close()
    assert sorted((job.priority, job.info) for job in detail.pending)[0] == (5, '{"to": "ops"}')


async def test_validation_errors_keep_the_modal_open_and_change_nothing(sqlite_backend: Backend,
                                                                        make_app: AppFactory) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 2)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.latest is not None, "the first poll")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EnqueueModal), "the enqueue dialog")
        modal = app.screen
        await type_into(pilot, "#job_type", "")
        await type_into(pilot, "#count", "0")
        await type_into(pilot, "#priority", "300")
        await pilot.click("#submit")
        await pilot.pause()
        assert app.screen is modal  # still open
        errors = {name: str(modal.query_one(f"#{name}-error", Label).content)
                  for name in ("job_type", "count", "priority")}  # fmt: skip
        assert "empty" in errors["job_type"] and "from 1 to" in errors["count"] and "to 255" in errors["priority"]
        assert modal.query_one("#priority", Input).has_class("-invalid")
        await type_into(pilot, "#priority", "200")  # fixing a field clears its error as you type
        assert str(modal.query_one("#priority-error", Label).content) == ""
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "the dialog to close")
    assert rows(sqlite_backend, "email") == (2, 0)
    assert not any(note.startswith("enqueued") for note in app.notes)


# -- release ------------------------------------------------------------------------------------------------
async def release_through_the_confirm(app: RecordingApp, backend: Backend, pilot) -> None:
    await wait_for(pilot, lambda: app.session.latest and app.session.latest.type_named("email") and
                   app.session.latest.type_named("email").timed_out == 3, "the timed-out claims on screen")  # fmt: skip
    table(app).select_type("email")
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(app.screen, ReleaseModal) and app.screen.found is not None,
                   "the dry-run count")  # fmt: skip
    verdict = str(app.screen.query_one("#verdict", Static).visual)
    assert verdict.startswith("3 claims of type 'email' are past their timeout")
    assert rows(backend, "email") == (0, 5)  # the dry run changed nothing
    await pilot.click("#confirm")
    await wait_for(pilot, lambda: rows(backend, "email") == (3, 2), "the 3 timed-out claims back to pending")
    await wait_for(pilot, lambda: "Released 3 timed-out claims of type 'email' back to pending; "
                                  "0 out of attempts moved to dead." in app.notes, "the report")  # fmt: skip
    assert rows(backend, "report") == (0, 2)  # another type's timed-out claims were left alone


async def test_release_through_the_confirm_releases_exactly_the_timed_out_claims(
        sqlite_backend: Backend, make_app: AppFactory) -> None:  # fmt: skip
    claim(sqlite_backend, "email", 3, lease=0.05)
    claim(sqlite_backend, "email", 2, lease=600)
    claim(sqlite_backend, "report", 2, lease=0.05)
    time.sleep(0.1)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await release_through_the_confirm(app, sqlite_backend, pilot)


async def test_nothing_to_release_is_said_plainly(sqlite_backend: Backend, make_app: AppFactory) -> None:
    claim(sqlite_backend, "email", 2, lease=600)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: depth_of(app, "email") is not None, "the first poll")
        table(app).select_type("email")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReleaseModal) and app.screen.found is not None,
                       "the dry-run count")  # fmt: skip
        modal = app.screen
        assert str(modal.query_one("#verdict", Static).visual) == \
            "Nothing to release: no claims of type 'email' are past their timeout."  # fmt: skip
        assert modal.query_one("#confirm", Button).disabled
        await pilot.click("#all")  # the other scope is counted afresh
        await wait_for(pilot, lambda: modal.scope is None and modal.found is not None, "the count for all types")
        assert str(modal.query_one("#verdict", Static).visual).startswith("Nothing to release: no claims are")
        await pilot.press("escape")
    assert rows(sqlite_backend, "email") == (0, 2)


# -- refusals -----------------------------------------------------------------------------------------------
async def test_read_only_refuses_enqueue_and_release(sqlite_backend: Backend, make_app: AppFactory) -> None:
    claim(sqlite_backend, "email", 1, lease=0.01)
    app = make_app(sqlite_backend, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.connected, "the first poll")
        for key in ("e", "r"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, MainScreen)
        assert [n for n in app.notes if "read-only" in n] == [
            "This dashboard is read-only (--read-only): enqueue is disabled.",
            "This dashboard is read-only (--read-only): release is disabled.",
        ]
        assert "READ-ONLY" in status(app)
    assert rows(sqlite_backend, "email") == (0, 1)


async def test_actions_are_refused_while_disconnected(tmp_path: Path, sqlite_backend: Backend,
                                                      make_app: AppFactory) -> None:  # fmt: skip
    app = make_app(sqlite_backend, target=parse_target(str(tmp_path / "missing.db")))
    async with app.run_test(size=SIZE) as pilot:
        session = app.session
        await wait_for(pilot, lambda: session.link is not None and session.link.state == NO_SCHEMA, "the first poll")
        assert "queuetop init" in text(app.main.query_one("#empty", Static))  # the empty-state panel says what to do
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert any(n.startswith("Not connected to the database") and "Enqueue is disabled" in n for n in app.notes)


# -- looking around -----------------------------------------------------------------------------------------
async def test_filter_and_sort(sqlite_backend: Backend, make_app: AppFactory) -> None:
    enqueue(sqlite_backend, "email", 5)
    enqueue(sqlite_backend, "report", 1)
    enqueue(sqlite_backend, "thumbnail", 3)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: table(app).shown_types == ["email", "thumbnail", "report"],
                       "rows by depth, deepest first")  # fmt: skip
        await pilot.press("less_than_sign")  # the column left of depth: the type, A to Z
        assert (app.main.sort_key, app.main.descending) == ("type", False)
        assert table(app).shown_types == ["email", "report", "thumbnail"]
        await pilot.press("i")
        assert table(app).shown_types == ["thumbnail", "report", "email"]
        await pilot.press("greater_than_sign", "greater_than_sign")  # two to the right: oldest
        assert app.main.sort_key == "oldest"

        await pilot.press("slash")
        assert app.focused is app.main.query_one("#filter", Input)
        await pilot.press("r", "e", "p")
        assert table(app).shown_types == ["report"]
        await pilot.press("enter")  # keep the filter, back to the table
        assert app.focused is table(app)
        await wait_for(pilot, lambda: app.polls > 3, "a few more polls")
        assert table(app).shown_types == ["report"]  # the filter survives refreshes
        await pilot.press("escape")
        assert len(table(app).shown_types) == 3


async def test_the_selection_follows_its_type_across_refreshes(sqlite_backend: Backend, make_app: AppFactory) -> None:
    enqueue(sqlite_backend, "email", 5)
    enqueue(sqlite_backend, "report", 1)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: table(app).shown_types == ["email", "report"], "the first poll")
        table(app).select_type("report")
        enqueue(sqlite_backend, "report", 10)  # report becomes the deepest: it moves to the top
        await wait_for(pilot, lambda: table(app).shown_types == ["report", "email"], "the new order")
        assert table(app).selected_type == "report" and table(app).cursor == 0


async def test_drill_down_and_back(sqlite_backend: Backend, make_app: AppFactory) -> None:
    enqueue(sqlite_backend, "email", 2)
    claim(sqlite_backend, "thumbnail", 1, lease=600)
    enqueue(sqlite_backend, "thumbnail", 3)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: depth_of(app, "thumbnail") == 3, "the first poll")
        table(app).select_type("thumbnail")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.detail is not None,
                       "the drill-down with its lists")  # fmt: skip
        detail = app.screen
        assert detail.job_type == "thumbnail"
        assert (len(detail.detail.pending), len(detail.detail.claims)) == (3, 1)
        assert detail.query_one("#pending").row_count == 3 and detail.query_one("#claims").row_count == 1
        assert "thumbnail  depth 3" in text(detail.query_one("#summary", Static))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "back to the table")
        assert table(app).selected_type == "thumbnail"


async def test_no_drill_down_when_the_filter_leaves_no_row(sqlite_backend: Backend, make_app: AppFactory) -> None:
    enqueue(sqlite_backend, "email", 1)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: depth_of(app, "email") == 1, "the first poll")
        await pilot.press("slash", "z", "enter", "enter")
        assert table(app).shown_types == [] and isinstance(app.screen, MainScreen)
        app.action_drill_down()  # as the command palette's "Drill down" would
        assert "No job type to drill into: the table is empty." in app.notes


# -- resilience ---------------------------------------------------------------------------------------------
async def test_database_removed_mid_run_then_back(sqlite_backend: Backend, make_app: AppFactory,
                                                  tmp_path: Path) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 4)
    path = Path(sqlite_backend.target.value)
    away = tmp_path / "away.db"
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: depth_of(app, "email") == 4, "the first poll")
        path.rename(away)
        await wait_for(pilot, lambda: app.session.link.state == RECONNECTING, "the reconnecting state")
        assert "reconnecting in" in status(app) and "STALE" in status(app) and "is gone" in status(app)
        assert app.main.query_one("#body").has_class("stale")
        assert table(app).shown_types == ["email"]  # the last data stays visible
        assert any(n.startswith("Lost the database") for n in app.notes)
        away.rename(path)
        await wait_for(pilot, lambda: app.session.link.state == CONNECTED, "recovery")
        assert not app.main.query_one("#body").has_class("stale")
        assert "Connected to the database again." in app.notes
        await pilot.press("e")  # and actions work again
        await wait_for(pilot, lambda: isinstance(app.screen, EnqueueModal), "the enqueue dialog")


async def test_a_poll_stopped_by_a_lock_is_not_a_lost_connection(sqlite_backend: Backend,
                                                                 make_app: AppFactory) -> None:  # fmt: skip
    enqueue(sqlite_backend, "email", 2)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: depth_of(app, "email") == 2, "the first poll")
        locker = lock_sqlite(Path(sqlite_backend.target.value))
        try:
            await wait_for(pilot, lambda: app.session.link.state == TIMED_OUT, "the timed-out poll", timeout=30)
            assert "poll timed out" in status(app) and "reconnecting" not in status(app)
            assert any(n.startswith("The poll did not finish") for n in app.notes)
            assert not any(n.startswith("Lost the database") for n in app.notes)
        finally:
            locker.kill()
            locker.wait()
        await wait_for(pilot, lambda: app.session.link.state == CONNECTED, "the next poll", timeout=30)
        assert "Connected to the database again." not in app.notes  # it never went away


# -- keys and commands --------------------------------------------------------------------------------------
async def test_pause_interval_and_window_keys(sqlite_backend: Backend, make_app: AppFactory) -> None:
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 2, "polling")
        await pilot.press("p")
        assert app.paused and "PAUSED" in status(app)
        await pilot.pause(0.1)  # a poll already running may still land
        paused_at = app.polls
        await pilot.pause(0.5)
        assert app.polls == paused_at
        await pilot.press("p")
        await wait_for(pilot, lambda: app.polls > paused_at, "polling again")
        await pilot.press("plus")
        assert app.session.interval == 0.2 and "every 0.2 s" in status(app)
        await pilot.press("minus", "minus")
        assert app.session.interval == 0.1  # the floor
        window = app.window_s
        await pilot.press("w")
        assert app.window_s != window


async def test_help_lists_every_key(sqlite_backend: Backend, make_app: AppFactory) -> None:
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(f"{keys} {what}" for _, section in app.key_sections() for keys, what in section)
        for owner in (QueuetopApp, MainScreen, DetailScreen):
            for binding in owner.BINDINGS:
                assert (binding.tooltip or binding.description) in shown, binding
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


def test_every_action_is_in_the_command_palette(sqlite_backend: Backend, make_app: AppFactory) -> None:
    app = make_app(sqlite_backend)
    main_titles = {command.title for command in app.get_system_commands(MainScreen())}
    for title in ("Enqueue test jobs", "Release timed-out claims", "Pause or resume polling", "Poll less often",
                  "Poll more often", "Chart window", "Drill down", "Help", "Filter job types", "Invert sort order",
                  "Sort by depth", "Sort by timed-out", "Quit"):  # fmt: skip
        assert title in main_titles
    assert "Back to the table" in {command.title for command in app.get_system_commands(DetailScreen("email"))}


async def test_quit_returns_zero(sqlite_backend: Backend, make_app: AppFactory) -> None:
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
    assert app.return_code == 0


# -- the unexpected -----------------------------------------------------------------------------------------
class BrokenActions(Actions):
    def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        raise RuntimeError("a bug")


async def test_a_bug_in_an_action_is_notified_and_the_app_carries_on(
        sqlite_backend: Backend, caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    from queuetop.watch.monitor import Monitor

    enqueue(sqlite_backend, "email", 1)
    monitor = Monitor(sqlite_backend.target)
    app = RecordingApp(monitor, BrokenActions(sqlite_backend.target), interval=0.1, log_path=Path("/var/log/q.log"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.connected, "the first poll")
        await pilot.press("e")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Unexpected error" in n for n in app.notes), "the error notification")
        note = next(n for n in app.notes if "Unexpected error" in n)
        assert "RuntimeError: a bug" in note and "/var/log/q.log" in note
        polls = app.polls
        await wait_for(pilot, lambda: app.polls > polls, "polling to carry on")
    monitor.close()
    assert any(record.exc_info for record in caplog.records if record.name == "queuetop")


async def test_the_background_load_is_shown_in_the_status(sqlite_backend: Backend, make_app: AppFactory) -> None:
    class Load:
        def progress_line(self) -> str:
            return "load: 1,200 enqueued · 1,100 done · 12 in flight · 240/s"

    app = make_app(sqlite_backend, background=Load())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.connected, "the first poll")
        assert "load: 1,200 enqueued · 1,100 done · 12 in flight · 240/s" in status(app)


# -- PostgreSQL -----------------------------------------------------------------------------------------------
@pytest.mark.postgres
async def test_the_same_flow_on_postgres(pg_backend: Backend, make_app: AppFactory) -> None:
    enqueue(pg_backend, "email", 2)
    app = make_app(pg_backend)
    async with app.run_test(size=SIZE) as pilot:
        await enqueue_through_the_modal(app, pg_backend, pilot)
        claim(pg_backend, "email", 3, lease=0.05)  # leaves 9 pending, takes 3 more fresh ones
        claim(pg_backend, "email", 2, lease=600)
        claim(pg_backend, "report", 2, lease=0.05)
        with pg_backend.open() as db:  # the 9 from the enqueue flow are not part of this count
            Queue(db, pg_backend.layout).claim("w", ["email"], batch=9, lease=600)
        await release_and_drill_down(app, pg_backend, pilot)


async def release_and_drill_down(app: RecordingApp, backend: Backend, pilot) -> None:
    """The release flow once 14 email claims are held (3 timed out) and nothing is pending."""
    session = app.session
    await wait_for(pilot, lambda: session.latest.type_named("email").timed_out == 3, "the timed-out claims on screen")
    table(app).select_type("email")
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(app.screen, ReleaseModal) and app.screen.found is not None,
                   "the dry-run count")  # fmt: skip
    await pilot.click("#confirm")
    await wait_for(pilot, lambda: rows(backend, "email") == (3, 11), "the 3 timed-out claims back to pending")
    assert rows(backend, "report") == (0, 2)
    table(app).select_type("email")
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.detail is not None,
                   "the drill-down")  # fmt: skip
    assert len(app.screen.detail.claims) == 11 and len(app.screen.detail.pending) == 3
    await pilot.press("escape")
    await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "back to the table")


async def test_past_max_types_the_busiest_are_listed_and_the_rest_summed_on_a_line_above_the_totals(
        sqlite_backend: Backend, make_app: AppFactory) -> None:  # fmt: skip
    """`watch --max-types 2` on a queue of four types: the two deepest listed, the other two summed on one line
    pinned above the totals ("+2 more types"), which stay every type's; the filter (`/`) finds a folded type."""
    for n, name in enumerate(["a", "b", "c", "d"]):
        enqueue(sqlite_backend, name, n + 1)
    app = make_app(sqlite_backend, max_types=2)
    async with app.run_test(size=SIZE) as pilot:
        shown = table(app)

        def drawn() -> list[str]:
            return ["".join(segment.text for segment in shown.render_line(y)) for y in range(shown.size.height)]

        # the line as drawn, not only the snapshot holding it: the table is laid out again after the data comes
        await wait_for(pilot, lambda: any("+2 more types" in line for line in drawn()), "the folded types' line")
        assert shown.shown_types == ["d", "c"]
        lines = drawn()
        folded = next(line for line in lines if "+2 more types" in line)
        totals = next(line for line in lines if "all types" in line)
        assert folded.split()[3] == "3" and totals.split()[2] == "10", (folded, totals)
        assert lines.index(folded) == lines.index(totals) - 1
        await pilot.press("end")
        assert shown.selected_type == "c"  # the folded line is no type to open
        await pilot.press("slash", "a")  # the filter finds a folded type too: its poll lists it
        await wait_for(pilot, lambda: shown.shown_types == ["a"], "the folded type the filter looks for")
        assert (shown.other.job_type, shown.other.depth) == ("+1 more types", 2)  # a takes no place: b alone
