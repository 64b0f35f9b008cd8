"""The dashboard, in Textual: the only package of queuetop that imports textual.

`run_dashboard` is what `queuetop`, `queuetop watch` and `queuetop demo` call: it wires a Monitor (polls, on
its own connection) and Actions (enqueue, release, drill-down, on theirs) to the app, and sends the log of
unexpected errors to a file while the screen is in use. `run_multi_dashboard` does the same for several named
targets at once (`queuetop -t prod -t staging`): a Monitor, Actions and history file per target (`multi_app`
builds that app without running it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from queuetop.core.files import private_file
from queuetop.db import Target
from queuetop.layouts import NATIVE, Layout
from queuetop.store.model import Retention
from queuetop.watch.slo import Slos

if TYPE_CHECKING:
    from queuetop.tui.multi import MultiApp

LOG_FORMAT = "%(asctime)s %(levelname)s %(message)s"


QUIT_WAIT_S = 0.2  # at quit, how long a connection's close waits for a statement in flight before cutting it


def run_dashboard(target: Target, *, layout: Layout = NATIVE, interval: float = 1.0, read_only: bool = False,
                  job_types: Sequence[str] = (), auto_init: bool = False, background: object | None = None,
                  log_path: Path | None = None, settings: dict | None = None, note: str | None = None,
                  greeting: str | None = None, slos: Slos | None = None, bell: bool = True,
                  history_path: Path | None = None, retention: Retention | None = None,
                  max_types: int | None = None) -> int:  # fmt: skip
    """Run the dashboard until the user quits; the exit status (0 on a normal quit).

    `auto_init` creates the file and schema on the first connect (the embedded default). `background` is a
    running load whose `progress_line()` is shown in the status bar; the caller stops it afterwards.
    `greeting`: a notification shown when the dashboard opens (the demo says what its load leaves to do). `slos`:
    breached cells are coloured, the status line names the breach, and the bell rings when one begins (`bell`).
    `history_path`: the history file to keep every poll in (its writer thread) and to read the charts' past from
    (the charts start full); None: no history. `max_types`: past this many job types the busiest are shown and
    the rest folded into one `(other)` line (those with an SLO limit of their own always shown); None: every type.
    """
    from queuetop.store.series import Series
    from queuetop.store.threads import open_history
    from queuetop.watch.ahead import CallThread, PollAhead
    from queuetop.watch.monitor import Monitor

    writer, reader = open_history(history_path, target, layout, retention) if history_path else (None, None)
    series = Series(store=reader)
    actions = None
    with logging_to(log_path):
        monitor = Monitor(target, layout, job_types=job_types, auto_init=auto_init, settings=settings, note=note,
                          max_types=max_types, pinned=slos.own_types if slos else ())
        # its first poll runs while the dashboard is imported and built, not after (watch/ahead.py)
        ahead = PollAhead(monitor, CallThread("queuetop-poll"))
        try:
            series.load()
            from queuetop.act.actions import Actions
            from queuetop.tui.app import QueuetopApp

            actions = Actions(target, layout, settings=settings)
            app = QueuetopApp(monitor, actions, interval=interval, read_only=read_only, background=background,  # type: ignore[arg-type]
                              log_path=log_path, greeting=greeting, slos=slos, bell=bell, series=series,
                              recorder=writer, ahead=ahead)  # fmt: skip
            app.run()
        finally:
            # Never wait for a poll or an action stuck on a server that stopped answering: cut them and go.
            monitor.close(wait_s=QUIT_WAIT_S)
            if actions is not None:
                actions.close(wait_s=QUIT_WAIT_S)
            series.close()  # its history reader's thread
            if writer is not None:
                writer.close()
            if reader is not None:
                reader.close()
    return app.return_code or 0


@dataclass(frozen=True)
class WatchedTarget:
    """One target of a multi-target dashboard, as the command line and the config file resolved it."""

    name: str
    target: Target
    layout: Layout = NATIVE
    interval: float = 1.0
    read_only: bool = False
    auto_init: bool = False
    settings: dict | None = None
    note: str | None = None
    slos: Slos | None = None
    history_path: Path | None = None
    retention: Retention | None = None
    max_types: int | None = None  # past this many job types, the busiest shown and the rest folded (None: all)


def run_multi_dashboard(targets: Sequence[WatchedTarget], *, job_types: Sequence[str] = (),
                        log_path: Path | None = None, bell: bool = True) -> int:  # fmt: skip
    """One dashboard over several targets until the user quits; the exit status. Each target gets its own
    Monitor (its poll thread's connection), Actions and history file; all are closed at the end."""
    with ExitStack() as stack:
        app = multi_app(targets, stack, job_types=job_types, log_path=log_path, bell=bell)
        with logging_to(log_path):
            app.run()
    return app.return_code or 0


def multi_app(targets: Sequence[WatchedTarget], stack: ExitStack, *, job_types: Sequence[str] = (),
              log_path: Path | None = None, bell: bool = True) -> MultiApp:  # fmt: skip
    """The multi-target app, not yet running: a Monitor, Actions, chart series and history file per target, each
    closed by `stack`. scripts/screenshots.py runs it headless, as the command runs it on the terminal."""
    from queuetop.act.actions import Actions
    from queuetop.store.series import Series
    from queuetop.store.threads import open_history
    from queuetop.watch.ahead import CallThread, PollAhead
    from queuetop.watch.monitor import Monitor

    panes = []
    for watched in targets:
        writer = reader = None
        if watched.history_path is not None:
            writer, reader = open_history(watched.history_path, watched.target, watched.layout,
                                          watched.retention)  # fmt: skip
            stack.callback(reader.close)
            stack.callback(writer.close)
        series = Series(store=reader)
        series.load()
        stack.callback(series.close)  # its history reader's thread, before the file is closed
        monitor = Monitor(watched.target, watched.layout, job_types=job_types, auto_init=watched.auto_init,
                          settings=watched.settings, note=watched.note, max_types=watched.max_types,
                          pinned=watched.slos.own_types if watched.slos else ())  # fmt: skip
        stack.callback(monitor.close, wait_s=QUIT_WAIT_S)
        # its first poll runs while the dashboard is imported and built, not after (watch/ahead.py)
        ahead = PollAhead(monitor, CallThread(f"queuetop-poll-{watched.name}"))
        actions = Actions(watched.target, watched.layout, settings=watched.settings)
        stack.callback(actions.close, wait_s=QUIT_WAIT_S)
        panes.append((watched, monitor, actions, series, writer, ahead))
    from queuetop.tui.multi import MultiApp
    from queuetop.tui.session import PaneSpec

    specs = [PaneSpec(watched.name, monitor, actions, interval=watched.interval,  # type: ignore[arg-type]
                      read_only=watched.read_only, series=series, recorder=writer, slos=watched.slos, ahead=ahead)
             for watched, monitor, actions, series, writer, ahead in panes]  # fmt: skip
    return MultiApp(specs, log_path=log_path, bell=bell)


@contextmanager
def logging_to(path: Path | None) -> Iterator[None]:
    """Send queuetop's log to `path` (folder created) and nowhere else: stderr would scribble on the screen."""
    logger = logging.getLogger("queuetop")
    handler: logging.Handler = logging.NullHandler()
    if path is not None:
        try:
            handler = logging.FileHandler(private_file(path), encoding="utf-8", delay=True)
            handler.setFormatter(logging.Formatter(LOG_FORMAT))
        except OSError:
            pass  # no log file is better than no dashboard
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        handler.close()
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


__all__ = ["WatchedTarget", "run_dashboard", "run_multi_dashboard"]
