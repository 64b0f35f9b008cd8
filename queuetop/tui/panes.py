"""One target of the multi-target dashboard on the UI thread: what the dashboard is given for it (`PaneSpec`), its
state (`Session`: the poll loop's and the figures'), the messages its threads send, and its link in a few words."""

from __future__ import annotations

import math

from textual.message import Message

from queuetop.core import format as fmt
from queuetop.store.series import FileCharts
from queuetop.tui.session import NOT_ANSWERING_S, Session
from queuetop.watch.monitor import BUSY, NO_SCHEMA, NOT_ANSWERING, TIMED_OUT, PollOutcome


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


def link_words(pane: Session, now: float) -> tuple[str, str]:
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
