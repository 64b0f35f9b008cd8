"""One dashboard over several targets, driven by Pilot against real databases: two live SQLite files, a live
file beside a PostgreSQL server that is not there, and a read-only target's refusals."""

from __future__ import annotations

import socket
import threading

from textual.widgets import Input, Static

from queuetop.act.queue import Queue
from queuetop.db import parse_target
from queuetop.layouts import NATIVE
from queuetop.store.history_store import HistoryStore
from queuetop.store.model import history_path
from queuetop.tui.modals import EnqueueModal
from queuetop.tui.multi import MultiApp, MultiScreen
from queuetop.tui.table import QueueTable
from queuetop.tui.widgets import Chart
from queuetop.watch.monitor import RECONNECTING
from tests.conftest import make_backend
from tests.helpers import enqueue
from tests.test_cli import snapshot_of_tables
from tests.tui.conftest import SIZE, MultiFactory, status, text, wait_for


def depth(app: MultiApp, name: str, job_type: str) -> int | None:
    latest = app.panes[name].latest
    row = latest.type_named(job_type) if latest else None
    return row.depth if row else None


def shown_types(app: MultiApp, name: str) -> list[str]:
    screen = app.main
    assert isinstance(screen, MultiScreen)
    return screen.table_of(name).shown_types


def section(app: MultiApp, part: str, name: str) -> str:
    screen = app.main
    assert isinstance(screen, MultiScreen)
    return text(screen.query_one(f"#{part}-{screen.names.index(name)}", Static))


def closed_port() -> int:
    """A port on the loopback with nothing listening (bound, then let go): a connect is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_two_live_targets_both_update_in_their_own_sections(tmp_path, make_multi: MultiFactory) -> None:
    a, b = make_backend("sqlite", tmp_path / "a"), make_backend("sqlite", tmp_path / "b")
    enqueue(a, "email", 2)
    enqueue(b, "report", 5)
    app = make_multi(("alpha", a.target, a.layout, False), ("beta", b.target, b.layout, False))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: depth(app, "alpha", "email") == 2 and depth(app, "beta", "report") == 5,
                       "a first poll of each target")  # fmt: skip
        assert shown_types(app, "alpha") == ["email"] and shown_types(app, "beta") == ["report"]
        enqueue(a, "email", 3)
        enqueue(b, "report", 1)
        await wait_for(pilot, lambda: depth(app, "alpha", "email") == 5 and depth(app, "beta", "report") == 6,
                       "both targets' new depths")  # fmt: skip
        assert "2 targets: alpha ok, beta ok" in status(app)
        assert "● ok" in section(app, "head", "alpha") and "● ok" in section(app, "head", "beta")


async def test_a_dead_target_shows_its_error_and_retries_while_the_live_one_keeps_updating(
        tmp_path, make_multi: MultiFactory) -> None:  # fmt: skip
    live = make_backend("sqlite", tmp_path)
    enqueue(live, "email", 1)
    dead = parse_target(f"DRIVER={{PostgreSQL Unicode}};SERVER=127.0.0.1;PORT={closed_port()};"
                        "DATABASE=queuetop_test;UID=postgres")  # fmt: skip
    app = make_multi(("local", live.target, live.layout, False), ("pg", dead, NATIVE, False))
    async with app.run_test(size=SIZE) as pilot:
        pane = app.panes["pg"]
        await wait_for(pilot, lambda: pane.link is not None and pane.link.state == RECONNECTING, "the failed connect")
        await wait_for(pilot, lambda: pane.link is not None and pane.link.failures >= 3, "two retries with back-off")
        for more in (2, 3):  # the live target goes on polling through the dead one's retries
            enqueue(live, "email", 1)
            await wait_for(pilot, lambda more=more: depth(app, "local", "email") == more, f"depth {more} on local")
        assert app.polls["local"] > app.polls["pg"] >= 3
        await pilot.pause(0.3)  # a tick: the headers are redrawn each second
        assert "unreachable (retrying" in section(app, "head", "pg")
        error = section(app, "error", "pg")
        assert "down for" in error and "no data yet" in error and "cannot reach" in error.lower(), error
        assert "local ok" in status(app) and "pg unreachable (retrying in" in status(app)
        assert any(note.startswith("pg: cannot read the database") for note in app.notes), app.notes
        assert pane.latest is None and "● ok" in section(app, "head", "local")


async def test_a_target_whose_server_never_answers_does_not_hold_up_the_others(tmp_path, make_multi: MultiFactory
                                                                             ) -> None:  # fmt: skip
    """A server that takes the connection and never says a word: its connect waits for the login timeout (5 s),
    and meanwhile the other target polls on, in its own thread."""
    live = make_backend("sqlite", tmp_path)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel completes the handshake; nothing ever reads or answers
        port = silent.getsockname()[1]
        slow = parse_target(f"DRIVER={{PostgreSQL Unicode}};SERVER=127.0.0.1;PORT={port};DATABASE=queuetop_test;"
                            "UID=postgres")  # fmt: skip
        app = make_multi(("slow", slow, NATIVE, False), ("local", live.target, live.layout, False))
        async with app.run_test(size=SIZE) as pilot:
            pane = app.panes["slow"]
            # a job enqueued on the local target shows while the slow one's connect waits (one, not three in a
            # row: three polls' round trips took longer than the login timeout once, with every core busy)
            enqueue(live, "email", 1)
            await wait_for(pilot, lambda: depth(app, "local", "email") == 1, "depth 1 on local", timeout=4)
            assert pane.polling and pane.link is None, "the slow target's first connect is still waiting"
            assert "slow connecting…" in status(app) and app.selected.name == "local"  # its table took the focus
            await wait_for(pilot, lambda: pane.link is not None, "the login timeout", timeout=15)
            assert pane.link is not None and "timeout expired" in (pane.link.error or "")


async def test_keys_act_on_the_selected_target_and_a_read_only_one_refuses(tmp_path, make_multi: MultiFactory
                                                                           ) -> None:  # fmt: skip
    ro, rw = make_backend("sqlite", tmp_path / "ro"), make_backend("sqlite", tmp_path / "rw")
    enqueue(ro, "email", 4)
    enqueue(rw, "email", 1)
    app = make_multi(("prod", ro.target, ro.layout, True), ("scratch", rw.target, rw.layout, False))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: depth(app, "prod", "email") == 4 and depth(app, "scratch", "email") == 1,
                       "a first poll of each target")  # fmt: skip
        before = snapshot_of_tables(ro.target.value)
        screen = app.main
        assert isinstance(screen, MultiScreen)

        def prod_selected() -> bool:  # whichever target answered first has the focus at start
            screen.table_of("prod").focus()
            return app.selected.name == "prod"

        await wait_for(pilot, prod_selected, "prod selected")
        for key, verb in (("e", "enqueue"), ("r", "release")):
            await pilot.press(key)
            await pilot.pause()
            assert not isinstance(app.screen, EnqueueModal)
            assert any(n.startswith(f"Target prod is read-only: {verb} is disabled") for n in app.notes), app.notes
        await pilot.pause(0.3)  # polls go on: nothing changed in the read-only database or on its table
        assert snapshot_of_tables(ro.target.value) == before and depth(app, "prod", "email") == 4
        assert "READ-ONLY" in section(app, "head", "prod") and "READ-ONLY" not in section(app, "head", "scratch")

        await pilot.press("tab")  # the next target's table: the keys act on its selected row
        await wait_for(pilot, lambda: app.selected.name == "scratch", "scratch selected")
        assert "▸ scratch:" in status(app) and section(app, "head", "scratch").startswith("▸ scratch")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EnqueueModal), "the enqueue dialog")
        assert app.screen.query_one("#job_type", Input).value == "email"  # from scratch's selected row
        box = app.screen.query_one("#count", Input)
        box.focus()
        box.value = "6"
        await pilot.press("enter")
        await wait_for(pilot, lambda: depth(app, "scratch", "email") == 7, "the 6 jobs on scratch")
        assert snapshot_of_tables(ro.target.value) == before and depth(app, "prod", "email") == 4

        await pilot.press("enter")  # the drill-down opens on the selected target's job type
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "DetailScreen", "the drill-down")
        assert app.session.actions is app.panes["scratch"].actions and "scratch:" in status(app)


async def test_a_target_that_comes_back_is_announced_by_name(tmp_path, make_multi: MultiFactory) -> None:
    a, b = make_backend("sqlite", tmp_path / "a"), make_backend("sqlite", tmp_path / "b")
    gone = tmp_path / "b" / "queue.db"
    app = make_multi(("a", a.target, a.layout, False), ("b", b.target, b.layout, False))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.panes["b"].connected and app.panes["a"].connected, "both connected")
        gone.rename(gone.with_suffix(".away"))
        await wait_for(pilot, lambda: not app.panes["b"].connected, "b lost")
        assert app.panes["a"].connected
        await pilot.pause(0.3)
        assert "STALE: data from" in section(app, "error", "b") and "is gone" in section(app, "error", "b")
        gone.with_suffix(".away").rename(gone)
        await wait_for(pilot, lambda: app.panes["b"].connected, "b back")
        assert "b: connected to the database again." in app.notes
        assert not app.main.query_one("#error-1", Static).display
        assert isinstance(app.main.query_one("#table-1", QueueTable), QueueTable)


def kept_types(path) -> list[str]:
    """The job types a history file holds, read on a connection of its own."""
    if not path.exists():
        return []
    store = HistoryStore(path, create=False)
    try:
        return store.job_types()
    finally:
        store.close()


async def test_each_target_keeps_its_own_history_and_the_charts_follow_the_selection(
        tmp_path, make_multi: MultiFactory) -> None:  # fmt: skip
    a, b = make_backend("sqlite", tmp_path / "a"), make_backend("sqlite", tmp_path / "b")
    enqueue(a, "email", 2)
    enqueue(b, "report", 3)
    app = make_multi(("alpha", a.target, a.layout, False), ("beta", b.target, b.layout, False), history=True)
    files = {name: history_path(backend.target, backend.layout) for name, backend in (("alpha", a), ("beta", b))}
    assert files["alpha"] != files["beta"]
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_for(pilot, lambda: all(len(p.series.top_types(60, 5)) for p in app.panes.values()),
                       "a few polls of each target")  # fmt: skip
        await wait_for(pilot, lambda: "email" in kept_types(files["alpha"]) and "report" in kept_types(files["beta"]),
                       "each target's polls in its history file", timeout=20)  # fmt: skip
        assert "report" not in kept_types(files["alpha"]) and "email" not in kept_types(files["beta"])
        screen = app.main
        assert isinstance(screen, MultiScreen)
        charts = screen.query_one("#depth-chart", Chart), screen.query_one("#rate-chart", Chart)

        def charts_of(name: str) -> bool:
            screen.table_of(name).focus()
            return app.selected.name == name and all(chart.series is app.panes[name].series for chart in charts)

        await wait_for(pilot, lambda: charts_of("beta"), "beta's charts")
        assert "beta: depth" in str(charts[0].spec.title if charts[0].spec else "")
        await wait_for(pilot, lambda: charts_of("alpha"), "alpha's charts again")


async def test_multi_app_builds_what_run_multi_dashboard_runs_and_its_stack_closes_every_connection(tmp_path) -> None:
    """`multi_app` (what `queuetop watch --all` runs, and scripts/screenshots.py too): a pane per watched target
    with its own Monitor and Actions, its read-only flag, its history file written; the stack closes them all."""
    from contextlib import ExitStack

    from queuetop.tui import WatchedTarget, multi_app

    a, b = make_backend("sqlite", tmp_path / "a"), make_backend("sqlite", tmp_path / "b")
    enqueue(a, "email", 2)
    enqueue(b, "report", 5)
    kept = tmp_path / "history" / "a.sqlite"
    with ExitStack() as stack:
        app = multi_app([WatchedTarget("alpha", a.target, a.layout, interval=0.1, history_path=kept),
                         WatchedTarget("beta", b.target, b.layout, interval=0.1, read_only=True)], stack, bell=False)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: depth(app, "alpha", "email") == 2 and depth(app, "beta", "report") == 5,
                           "a first poll of each target")  # fmt: skip
            assert [app.panes["alpha"].read_only, app.panes["beta"].read_only] == [False, True]
            assert app.panes["alpha"].recorder is not None and app.panes["beta"].recorder is None
        monitors = [pane.source for pane in app.panes.values()]
        assert all(monitor._db is not None for monitor in monitors)
    assert all(monitor._db is None for monitor in monitors)  # closed by the stack
    assert kept.exists()


async def test_multi_app_begins_each_targets_first_poll_before_the_app_and_shows_that_one(tmp_path, monkeypatch):
    """Each target's first poll is submitted to its poll thread as `multi_app` makes its Monitor, before the app is
    imported and built (watch/ahead.py); the app's first poll of the target, on that thread, is that one."""
    from contextlib import ExitStack

    from queuetop.tui import WatchedTarget, multi_app
    from queuetop.watch.monitor import Monitor

    a, b = make_backend("sqlite", tmp_path / "a"), make_backend("sqlite", tmp_path / "b")
    enqueue(a, "email", 2)
    enqueue(b, "report", 5)
    polls: list[str] = []
    poll = Monitor.poll
    monkeypatch.setattr(Monitor, "poll", lambda self, *args, **kwargs: (
        polls.append(threading.current_thread().name), poll(self, *args, **kwargs))[1])  # fmt: skip
    with ExitStack() as stack:
        app = multi_app([WatchedTarget("alpha", a.target, a.layout, interval=60),
                         WatchedTarget("beta", b.target, b.layout, interval=60)], stack, bell=False)
        assert all(pane.ahead is not None and pane.ahead.source is pane.source for pane in app.panes.values())
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: depth(app, "alpha", "email") == 2 and depth(app, "beta", "report") == 5,
                           "a first poll of each target")  # fmt: skip
    assert sorted(polls) == ["queuetop-poll-alpha", "queuetop-poll-beta"]  # one each: no second before 60 s


async def test_each_target_says_what_is_wrong_on_a_line_of_its_own_only_while_it_is(tmp_path,
                                                                                    make_multi: MultiFactory) -> None:
    a, b = make_backend("sqlite", tmp_path / "a"), make_backend("sqlite", tmp_path / "b")
    enqueue(a, "email", 2)
    with a.open() as db:
        Queue(db, a.layout).claim("gone", batch=1, lease=0.1)  # its worker never comes back
    app = make_multi(("alpha", a.target, a.layout, False), ("beta", b.target, b.layout, False))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.main
        await wait_for(pilot, lambda: section(app, "error", "alpha").startswith("▲ 1 claim timed out (email)"),
                       "alpha's headline")  # fmt: skip
        await wait_for(pilot, lambda: app.panes["beta"].latest is not None, "beta's first poll")
        assert screen.query_one("#error-0").display and not screen.query_one("#error-1").display  # beta: empty
