"""The dashboard on a PostgreSQL server that stops answering (its backend stopped with SIGSTOP): it says so and
marks its figures stale, and `q` quits at once however long the server stays silent."""

from __future__ import annotations

import os
import pty
import select
import sys
import time

import pytest

from queuetop.act.actions import Actions
from queuetop.act.queue import Queue
from queuetop.watch.monitor import CONNECTED, Monitor
from tests.conftest import Backend
from tests.helpers import pg_client_ports, stopped_backends_of, terminate_backends_of
from tests.tui.conftest import SIZE, RecordingApp, status, wait_for

DEADLINE_ENV_VAR = "QUEUETOP_READ_DEADLINE_S"


async def test_a_server_that_stops_answering_is_said_not_answering_and_the_figures_stale(
        pg_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv(DEADLINE_ENV_VAR, "2")
    with pg_backend.open() as db:
        Queue(db, pg_backend.layout).enqueue_many("email", 3)
    monitor = Monitor(pg_backend.target, pg_backend.layout, backoff=(30.0,))  # no reconnect while we look
    actions = Actions(pg_backend.target, pg_backend.layout)
    app = RecordingApp(monitor, actions, interval=0.2)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.session.link is not None and app.session.link.state == CONNECTED,
                           "the first poll")
            assert "● connected" in status(app)
            with stopped_backends_of(pg_backend.target, os.getpid()):
                await wait_for(pilot, lambda: "not answering for" in status(app), "'not answering'", timeout=10)
                said = status(app)
                assert "● connected" not in said
                assert "STALE: data from" in said, said
                # the body's class is set on the render after the status line's: under load, a frame later
                await wait_for(pilot, lambda: app.main.query_one("#body").has_class("stale"), "the body marked stale")
    finally:
        monitor.close(wait_s=0.1)
        actions.close(wait_s=0.1)



async def test_a_connection_the_server_ended_is_noticed_as_lost_not_refused(pg_backend: Backend) -> None:
    monitor = Monitor(pg_backend.target, pg_backend.layout, backoff=(30.0,))
    actions = Actions(pg_backend.target, pg_backend.layout)
    app = RecordingApp(monitor, actions, interval=0.2)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.session.link is not None and app.session.link.state == CONNECTED,
                           "the first poll")
            terminate_backends_of(pg_backend.target, os.getpid())
            await wait_for(pilot, lambda: app.session.link.link_lost, "the lost connection")
            notice = ("Lost the connection to the database (the server ended it: terminating connection due to "
                      "administrator command); reconnecting")
            assert any(note.startswith(notice) for note in app.notes), app.notes
            assert not any("refused" in note for note in app.notes)
    finally:
        monitor.close(wait_s=0.1)
        actions.close(wait_s=0.1)

def test_q_quits_at_once_while_the_server_does_not_answer(pg_backend: Backend) -> None:
    """The real command on a terminal (a pty): a poll blocked on the stopped backend must not hold the exit."""
    env = {**os.environ, "QUEUETOP_DB": "", "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    env.pop(DEADLINE_ENV_VAR, None)  # the default deadline (8 s): quitting must not wait for it either
    pid, fd = pty.fork()
    if pid == 0:  # the child: the dashboard
        os.execve(sys.executable, [sys.executable, "-m", "queuetop", "watch", "--db", pg_backend.target.value,
                                   "--layout", "native", "--table", f"{pg_backend.layout.schema}.WorkQueue",
                                   "--interval", "0.2", "--no-history"], env)  # fmt: skip
    screen = b""

    def read_for(seconds: float) -> None:
        nonlocal screen
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    screen += os.read(fd, 65536)
                except OSError:
                    return

    try:
        deadline = time.monotonic() + 20
        while b"connected" not in screen or not pg_client_ports(pid):
            assert time.monotonic() < deadline, f"the dashboard never connected: {screen[-500:]!r}"
            read_for(0.1)
        with stopped_backends_of(pg_backend.target, pid):
            read_for(1.0)  # a poll is now blocked on the stopped backend
            os.write(fd, b"q")
            asked = time.monotonic()
            exited = None
            while time.monotonic() - asked < 10:
                read_for(0.05)
                done, status_code = os.waitpid(pid, os.WNOHANG)
                if done:
                    exited = time.monotonic() - asked
                    break
        assert exited is not None, "the dashboard did not quit while the server was silent"
        assert exited < 3.0, exited  # (the old code: not within 10 s, not until the server answered)
        assert os.waitstatus_to_exitcode(status_code) == 0
    finally:
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)


