"""Helpers for driving the dashboard with Pilot against real queues."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from queuetop.act.actions import Actions
from queuetop.db import Target
from queuetop.store.model import history_path
from queuetop.store.series import Series
from queuetop.store.threads import open_history
from queuetop.tui.app import QueuetopApp
from queuetop.tui.multi import MultiApp, PaneSpec
from queuetop.watch.monitor import Monitor

SIZE = (120, 40)


class RecordingApp(QueuetopApp):
    """The real app, remembering every notification so tests can read what the user was told."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[str] = []
        self.polls = 0

    def notify(self, message: str, **kwargs: Any) -> None:  # type: ignore[override]
        self.notes.append(message)
        super().notify(message, **kwargs)

    def on_polled(self, message: Any) -> None:
        self.polls += 1  # QueuetopApp.on_polled runs as well: Textual calls the handler of each class


AppFactory = Callable[..., RecordingApp]


@pytest.fixture
def make_app() -> Iterator[AppFactory]:
    """Build the app on a real database: a Monitor with quick back-off, real Actions, a fast poll."""
    opened: list[Any] = []

    def make(backend: Any, *, target: Target | None = None, interval: float = 0.1, history: bool = False,
             keep_s: float | None = None, max_types: int | None = None, **kwargs: Any) -> RecordingApp:  # fmt: skip
        """`history`: keep and read a history file, as `run_dashboard` does (in $QUEUETOP_HISTORY_DIR); `keep_s`:
        the seconds the charts keep in memory (the wider windows come from the file); `max_types`: the
        dashboard's --max-types."""
        where = target or backend.target
        monitor = Monitor(where, backend.layout, backoff=(0.2, 0.4), max_types=max_types)
        actions = Actions(where, backend.layout)
        opened.extend((monitor, actions))
        if history:
            writer, reader = open_history(history_path(where, backend.layout), where, backend.layout)
            opened.extend((writer, reader))
            series = Series(store=reader) if keep_s is None else Series(store=reader, keep_s=keep_s)
            opened.append(series)  # its history reader's thread, closed after the test
            series.load()
            kwargs.update(series=series, recorder=writer)
        return RecordingApp(monitor, actions, interval=interval, **kwargs)

    yield make
    for opened_thing in opened:
        opened_thing.close()


async def wait_for(pilot: Pilot, predicate: Callable[[], object], what: str, timeout: float = 15.0) -> None:
    """Let the app run until `predicate()` holds; fail naming `what` if it never does."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for: {what}")
        await pilot.pause(0.05)


def text(widget: Static) -> str:
    return str(widget.visual) if widget.visual is not None else ""


def status(app: QueuetopApp) -> str:
    screen = app.dashboard_screen()
    assert screen is not None
    return "\n".join(text(screen.query_one(f"#{part}", Static)) for part in ("link", "freshness", "load"))


class RecordingMultiApp(MultiApp):
    """The real multi-target app, remembering every notification and counting each target's polls."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[str] = []
        self.polls: dict[str, int] = dict.fromkeys(self.panes, 0)

    def notify(self, message: str, **kwargs: Any) -> None:  # type: ignore[override]
        self.notes.append(message)
        super().notify(message, **kwargs)

    def on_target_polled(self, message: Any) -> None:
        self.polls[message.target] += 1  # MultiApp.on_target_polled runs as well


MultiFactory = Callable[..., RecordingMultiApp]


@pytest.fixture
def make_multi() -> Iterator[MultiFactory]:
    """Build the multi-target app on real databases: `(name, target, layout, read_only)` per target, each with
    its own Monitor (quick back-off) and Actions, as `run_multi_dashboard` wires them."""
    opened: list[Any] = []

    def make(*targets: tuple[str, Target, Any, bool], interval: float = 0.1, history: bool = False,
             **kwargs: Any) -> RecordingMultiApp:  # fmt: skip
        """`history`: each target keeps and reads its own history file, as `run_multi_dashboard` wires them."""
        specs = []
        for name, where, layout, read_only in targets:
            monitor = Monitor(where, layout, backoff=(0.2, 0.4))
            actions = Actions(where, layout)
            opened.extend((monitor, actions))
            series, writer = None, None
            if history:
                writer, reader = open_history(history_path(where, layout), where, layout)
                series = Series(store=reader)
                series.load()
                opened.extend((writer, reader, series))
            specs.append(PaneSpec(name, monitor, actions, interval=interval, read_only=read_only, series=series,
                                  recorder=writer))  # fmt: skip
        return RecordingMultiApp(specs, **kwargs)

    yield make
    for opened_thing in opened:
        opened_thing.close()
