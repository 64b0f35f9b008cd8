"""`run_dashboard`, the entry point the CLI calls: wiring, the exit status, and the log of unexpected errors."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot

from queuetop.db import parse_target
from queuetop.tui import logging_to, run_dashboard
from queuetop.tui.app import QueuetopApp
from tests.conftest import Backend
from tests.tui.conftest import SIZE


def run_headless_then(keys: tuple[str, ...], seen: dict) -> object:
    def run(self: QueuetopApp) -> object:
        async def pilot(pilot: Pilot) -> None:
            for _ in range(100):
                if self.connected:
                    break
                await pilot.pause(0.05)
            seen["connected"] = self.connected
            seen["types"] = [row.job_type for row in self.session.latest.types] if self.session.latest else None
            seen["read_only"] = self.session.read_only
            seen["load"] = self.status_view().load_line
            await pilot.press(*keys)

        return App.run(self, headless=True, size=SIZE, auto_pilot=pilot)

    return run


def test_run_dashboard_creates_the_embedded_database_and_quits_with_0(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    seen: dict = {}
    monkeypatch.setattr(QueuetopApp, "run", run_headless_then(("q",), seen))

    class Load:
        def progress_line(self) -> str:
            return "load: 10 enqueued"

    target = parse_target(str(tmp_path / "data" / "queuetop.db"))
    status = run_dashboard(target, interval=0.1, read_only=True, auto_init=True, background=Load(),
                           log_path=tmp_path / "logs" / "queuetop.log")  # fmt: skip
    assert status == 0
    assert seen == {"connected": True, "types": [], "read_only": True, "load": "load: 10 enqueued"}
    assert (tmp_path / "data" / "queuetop.db").exists() and (tmp_path / "logs").is_dir()


def test_run_dashboard_limits_the_view_to_the_types_asked_for(sqlite_backend: Backend,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from queuetop.act.queue import Queue

    with sqlite_backend.open() as db:
        Queue(db).enqueue_many("email", 1)
        Queue(db).enqueue_many("report", 1)
    seen: dict = {}
    monkeypatch.setattr(QueuetopApp, "run", run_headless_then(("q",), seen))
    assert run_dashboard(sqlite_backend.target, interval=0.1, job_types=["report"]) == 0
    assert seen["types"] == ["report"]


def test_the_first_poll_is_begun_before_the_app_is_built_and_is_the_one_it_shows(
        sqlite_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """run_dashboard submits the monitor's first poll to its poll thread before it imports and builds the app
    (watch/ahead.py: the poll runs meanwhile); the app polls on that thread and shows that poll's figures, not a
    second poll's."""
    from queuetop.act.queue import Queue
    from queuetop.watch.monitor import Monitor

    with sqlite_backend.open() as db:
        Queue(db).enqueue_many("email", 2)
    polls: list[str] = []
    poll = Monitor.poll
    monkeypatch.setattr(Monitor, "poll", lambda self, *a, **k: (polls.append(threading.current_thread().name),
                                                                 poll(self, *a, **k))[1])  # fmt: skip
    given: dict = {}
    build = QueuetopApp.__init__

    def built(self: QueuetopApp, *args: object, **kwargs: object) -> None:
        ahead = kwargs.get("ahead")
        given["ahead"] = ahead is not None and ahead.source is args[0]  # type: ignore[attr-defined]
        build(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(QueuetopApp, "__init__", built)
    seen: dict = {}
    monkeypatch.setattr(QueuetopApp, "run", run_headless_then(("q",), seen))
    assert run_dashboard(sqlite_backend.target, interval=60) == 0  # no second poll before `q`
    assert given == {"ahead": True} and seen["types"] == ["email"]
    assert polls == ["queuetop-poll"]  # one poll, on the poll thread, and the app showed it


def test_unexpected_errors_go_to_the_log_file_and_nowhere_else(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    path = tmp_path / "state" / "log" / "queuetop.log"
    logger = logging.getLogger("queuetop")
    with logging_to(path):
        try:
            raise RuntimeError("kaboom")
        except RuntimeError:
            logger.exception("unexpected error while testing")
    text = path.read_text()
    assert "unexpected error while testing" in text and "RuntimeError: kaboom" in text and "Traceback" in text
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""  # the screen stays clean
    assert not any(isinstance(h, logging.FileHandler) for h in logger.handlers)


def test_a_bug_that_escapes_every_handler_ends_the_dashboard_with_one_line_and_the_traceback_in_the_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    def broken_help(self: QueuetopApp) -> None:
        raise ZeroDivisionError("the bug")

    monkeypatch.setattr(QueuetopApp, "action_help", broken_help)
    monkeypatch.setattr(QueuetopApp, "run", run_headless_then(("question_mark",), {}))
    log_path = tmp_path / "queuetop.log"
    status = run_dashboard(parse_target(str(tmp_path / "q.db")), interval=0.1, auto_init=True, log_path=log_path)
    assert status == 1
    err = capfd.readouterr().err.replace("\n", "")  # the line is wrapped at the console's width
    assert f"queuetop: unexpected error: ZeroDivisionError: the bug. Details in {log_path}." in err
    assert "Traceback" not in err and "broken_help" not in err
    logged = log_path.read_text()
    assert "unexpected error; the dashboard stops" in logged and "broken_help" in logged
