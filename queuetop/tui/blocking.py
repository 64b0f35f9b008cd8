"""The blocking panel: sessions idle in a transaction while holding claims, and sessions waiting for another's
locks, with application and host. Shown only when there is any; it renders the `Blocking` value the poll
thread read (`Monitor`, every BLOCKING_EVERY_S) and never reads the database itself."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from queuetop.watch.blocking import Blocking

MAX_LINES = 6  # the table stays the main thing on screen


class BlockingPanel(Static):
    """Hidden while nothing holds or waits (app.tcss: display none); else one line per holder and per waiting
    session."""

    def show(self, blocking: Blocking | None) -> None:
        if blocking is None or blocking.empty:
            self.display = False
            return
        held, waiting = len(blocking.holders), len(blocking.waits)
        title = ", ".join(part for part in (
            f"{held} session(s) idle in a transaction holding claims" if held else "",
            f"{waiting} session(s) waiting for another's locks" if waiting else "") if part)  # fmt: skip
        lines = blocking.lines()
        shown = lines[:MAX_LINES]
        more = [f"… and {len(lines) - MAX_LINES} more: `queuetop doctor` lists them all"] if len(lines) > MAX_LINES \
            else []  # fmt: skip
        body = Text()
        body.append(f"Blocking: {title}\n", style="bold")
        body.append("\n".join(f"  {line}" for line in [*shown, *more]), style="")
        self.update(body)
        self.display = True
