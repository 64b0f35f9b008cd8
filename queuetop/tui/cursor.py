"""The time cursor: a moment of the past chosen on the charts (`[`, `]`, a click), its figures read from the
history file on the series' reader thread and shown in the table until `live` brings the present back.
"""

from __future__ import annotations

from textual.message import Message

from queuetop.core import format as fmt
from queuetop.store.series import PastFigures, Series
from queuetop.store.threads import snapshot_from
from queuetop.tui.widgets import Chart
from queuetop.watch.slo import breached_cells

SCRUB_STEPS = 30  # `[` and `]` move the cursor by 1/30 of the chart window


class PastLoaded(Message):
    """The figures at the time cursor, read from the history file on the history reader's thread."""

    def __init__(self, figures: PastFigures, series: Series) -> None:
        super().__init__()
        self.figures = figures
        self.series = series


class TimeCursor:
    """The time cursor's actions of `QueuetopApp` (a mixin: it reads the app's series and screens)."""

    # -- the time cursor -------------------------------------------------------------------------------------
    def action_scrub(self, step: int) -> None:
        """Move the time cursor by 1/30 of the chart window; forward past the newest poll is live again."""
        latest = self.session.series.latest
        if latest is None:
            return
        # from where the last step asked to be, while the reader thread has not answered it yet
        start = next((t for t in (self.session.past_asked, self.session.cursor_t) if t is not None), latest)
        self.scrub_to(start + step * self.window_s / SCRUB_STEPS)

    def scrub_to(self, t: float) -> None:
        """Show the figures at server time `t` (seconds), as kept in the history file."""
        latest, store = self.session.series.latest, self.session.series.store
        if latest is None:
            return
        if t >= latest:
            self.action_live()
            return
        if store is None:
            self.notify("The time cursor needs the history file: this dashboard runs with --no-history.",
                        severity="warning")  # fmt: skip
            return
        t = max(t, latest - self.window_s)
        self.session.past_asked = t
        series = self.session.series  # the answer is for this series' target, even if another is selected meanwhile
        series.read_past(t, lambda figures: self.post_message(PastLoaded(figures, series)))

    def on_past_loaded(self, message: PastLoaded) -> None:
        figures, store = message.figures, message.series.store
        if message.series is not self.session.series or figures.asked_t != self.session.past_asked or store is None:
            return  # asked for another target, or superseded (a newer step, `n`)
        self.session.past_asked = None
        records = list(figures.records)
        past = snapshot_from(records, like=self.session.latest, target=self.target_display, clock=store.clock)
        if past is None:
            self.notify("No history kept from that moment yet.", severity="warning")
            return
        # not before the oldest moment kept
        self.session.cursor_t, self.session.past = max(figures.asked_t, records[0].t), past
        self.session.past_breached = breached_cells({record.job_type: record.breaches for record in records})
        width = store.retention.levels[figures.level].width_s
        self.session.past_level = "" if width == 0 else f", {fmt.duration(width)} bucket mean"
        self.refresh_screen()

    def on_chart_scrubbed(self, message: Chart.Scrubbed) -> None:
        if self.session.series.latest is not None:
            self.scrub_to(self.session.series.latest + message.seconds_before_now)

    def action_live(self) -> None:
        """Back to the live figures."""
        self.session.past_asked = None  # an answer still on its way is dropped
        if self.session.cursor_t is None and self.session.past is None:
            return
        self.session.cursor_t, self.session.past = None, None
        self.refresh_screen()

