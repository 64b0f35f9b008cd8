"""One target of the multi-target dashboard on the UI thread: what the dashboard is given for it (`PaneSpec`), its
state (`Pane`: the poll loop's and the figures'), the messages its threads send, and its link in a few words."""

from __future__ import annotations

import math
from dataclasses import dataclass

from textual.message import Message
from textual.timer import Timer

from queuetop.core import format as fmt
from queuetop.store.series import FileCharts, Series
from queuetop.tui.app import NOT_ANSWERING_S, Recorder
from queuetop.tui.session import DashboardActions, Source
from queuetop.tui.threads import CallThread
from queuetop.watch.monitor import BUSY, NO_SCHEMA, NOT_ANSWERING, TIMED_OUT, PollOutcome
from queuetop.watch.slo import Breach, Slos, SloWatch
from queuetop.watch.snapshot import Snapshot


@dataclass(frozen=True)
class PaneSpec:
    """One target as the dashboard is given it: its name in the config file and what polls and acts on it."""

    name: str
    source: Source
    actions: DashboardActions
    interval: float = 1.0
    read_only: bool = False
    series: Series | None = None
    recorder: Recorder | None = None
    slos: Slos | None = None


class Pane:
    """One target's state on the UI thread: the poll loop's and the figures'. Only the UI thread touches it."""

    def __init__(self, spec: PaneSpec) -> None:
        self.name = spec.name
        self.source = spec.source
        self.actions = spec.actions
        self.interval = spec.interval
        self.read_only = spec.read_only
        self.series = spec.series if spec.series is not None else Series()
        self.recorder = spec.recorder
        self.slo_watch = SloWatch(spec.slos, target=spec.source.target.display) if spec.slos else None
        self.breaches: tuple[Breach, ...] = ()
        self.latest: Snapshot | None = None
        self.link: PollOutcome | None = None
        self.link_at = 0.0
        self.last_success: float | None = None
        self.down_since: float | None = None  # the first failed poll of the outage now going on
        self.polling = False
        self.poll_started = 0.0
        self.next_poll: Timer | None = None
        self.poll_thread: CallThread | None = None
        self.past: Snapshot | None = None
        self.past_breached: frozenset[tuple[str, str]] = frozenset()  # the cells in breach at the time cursor
        self.cursor_t: float | None = None
        self.past_level = ""
        self.past_asked: float | None = None  # the time cursor's moment asked of the history reader

    @property
    def shown(self) -> Snapshot | None:
        return self.past if self.past is not None else self.latest

    @property
    def connected(self) -> bool:
        return self.link is not None and self.link.connected


class TargetHistoryLoaded(Message):
    """The history file's answer for one target's charts of a wide window (from its series' reader thread)."""

    def __init__(self, target: str, charts: FileCharts) -> None:
        super().__init__()
        self.target = target
        self.charts = charts


class TargetPolled(Message):
    """A poll of one target has finished (in that target's poll thread); its outcome, for the UI thread."""

    def __init__(self, target: str, outcome: PollOutcome) -> None:
        super().__init__()
        self.target = target
        self.outcome = outcome


def link_words(pane: Pane, now: float) -> tuple[str, str]:
    """A target's link in a few words ("ok", "unreachable (retrying in 8 s)") and the style to show them in."""
    link = pane.link
    if pane.polling and now - pane.poll_started >= NOT_ANSWERING_S:  # a poll past its statement timeout
        return f"not answering for {fmt.duration(now - pane.poll_started)}", "bold red"
    if link is None:
        return "connecting…", "bold yellow"
    if link.connected:
        return "ok", "bold green"
    retry = ""
    if link.retry_in_s is not None:
        retry = f" in {max(0, math.ceil(link.retry_in_s - (now - pane.link_at)))} s"
    if link.state == NO_SCHEMA:
        return f"no queue schema (checking again{retry})", "bold yellow"
    if link.state == TIMED_OUT:
        return "poll timed out (polling on)", "bold yellow"
    if link.state == BUSY:
        return "poll lost a deadlock (polling on)", "bold yellow"
    if link.state == NOT_ANSWERING:
        return f"not answering (reconnecting{retry})", "bold red"
    lost = "lost" if pane.latest is not None else "unreachable"
    return f"{lost} (retrying{retry})", "bold red"
