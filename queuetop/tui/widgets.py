"""The small widgets of the dashboard: the status bar, the charts and the empty-state panel.

They only render what they are given: the app computes a frozen `StatusView` or `ChartSpec` and hands it over.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from rich.text import Text
from textual import events
from textual.app import ComposeResult, RenderResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static
from textual_plotext import PlotextPlot

from queuetop.core import format as fmt
from queuetop.store.series import Series
from queuetop.tui.threads import HandlesThreadResults, in_thread
from queuetop.watch.monitor import BUSY, CONNECTED, NO_SCHEMA, RECONNECTING, TIMED_OUT

Y_AXIS_COLUMNS = 9  # what plotext's y labels and frame take from the chart's width


# -- status bar ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StatusView:
    """Everything the status bar says, computed by the app at each poll and each second."""

    target: str
    dialect: str | None
    state: str | None  # None before the first poll has finished
    error: str | None
    retry_in_s: float | None
    since_success_s: float | None  # None: never read the queue yet
    poll_ms: float | None
    interval_s: float  # the user's
    window_s: float
    paused: bool
    read_only: bool
    load_line: str | None = None
    waiting_s: float | None = None  # a poll has been running this long (shown once it is slow)
    silent_s: float | None = None  # the database has not answered for this long (past its own timeout): stale
    layout: str | None = None  # the queue's shape, shown when it is not the native one
    note: str | None = None  # how the layout was chosen ("found QueueSample.WorkQueue: layout queuesample")
    local_clock: bool = False  # the shape's times are the server's local time, not UTC
    breach: str | None = None  # the longest-lasting SLO breach, in words, with how long it has lasted
    more_breaches: int = 0  # how many others are open
    past_at: str | None = None  # the time cursor is on: the table shows this moment, not the live poll
    counted_s_ago: float | None = None  # a deep untracked queue's states as counted that long ago (depths ≈)
    every_s: float | None = None  # from one poll to the next, where dear polls stretch the interval (pace.py)


PAST_STYLE = "bold white on dark_magenta"


def window_label(window_s: float) -> str:
    """1 min, 15 min, 1 h, 24 h, 7 d."""
    if window_s < 3600:
        return f"{window_s / 60:g} min"
    if window_s < 2 * 86400:
        return f"{window_s / 3600:g} h"
    return f"{window_s / 86400:g} d"


def status_lines(view: StatusView) -> tuple[Text, Text, Text | None]:
    """Line 1: the link's state first (it must survive truncation), flags, the queue's shape (when it is not the
    native schema) and its clock, then where. Line 2: how fresh the data is and the polling, how the shape was
    chosen; when disconnected, the error. Line 3, only with a background load: its progress."""
    line = Text()
    if view.silent_s is not None:  # before the state: a poll in flight may still say "connected"
        retry = "" if view.retry_in_s is None else f", reconnecting in {max(0, math.ceil(view.retry_in_s))} s"
        line.append(f"● not answering for {fmt.duration(view.silent_s)}{retry}", style="bold red")
    elif view.state is None:
        line.append("● connecting…", style="bold yellow")
    elif view.state == CONNECTED:
        line.append("● connected", style="bold green")
    else:
        retry = "" if view.retry_in_s is None else f" in {max(0, math.ceil(view.retry_in_s))} s"
        label = {NO_SCHEMA: "no queue schema, checking again", TIMED_OUT: "poll timed out, polling on",
                 BUSY: "poll lost a deadlock, polling on"}.get(view.state, RECONNECTING)
        line.append(f"● {label}{retry}", style="bold red" if view.state == RECONNECTING else "bold yellow")
    if view.paused:
        line.append("  ")
        line.append(" PAUSED ", style="bold black on yellow")
    if view.read_only:
        line.append("  ")
        line.append(" READ-ONLY ", style="bold black on cyan")
    if view.breach:  # before the target too: a breach is what the person at the screen must see
        line.append("  ")
        more = f" (+{view.more_breaches} more)" if view.more_breaches else ""
        line.append(f" SLO {view.breach}{more} ", style="bold white on red")
    if view.past_at:
        line.append("  ")
        line.append(f" ◀ PAST {view.past_at} ", style=PAST_STYLE)
    line.append("  ")
    if view.layout and view.layout != "native":  # before the target, whose end may be cut off
        line.append(f"layout {view.layout}", style="bold")
        if view.local_clock:  # the shape's times are not UTC, as the native schema's are
            line.append(" (server local time)", style="dim")
        line.append("  ")
    if view.dialect:
        line.append(f"{view.dialect} ", style="cyan")
    line.append(view.target, style="bold cyan")

    second = Text()
    connected = view.state == CONNECTED and view.silent_s is None
    if view.since_success_s is None:
        second.append("no data yet", style="dim")
    else:
        age = "just now" if view.since_success_s < 1 else f"{fmt.duration(view.since_success_s)} ago"
        if connected:
            # Older than two intervals: a slow poll must never pass for a live one.
            late = view.since_success_s > 2 * max(view.interval_s, view.every_s or 0.0) and not view.paused
            second.append(f"polled {age}", style="bold yellow" if late else "")
        else:
            second.append(f"STALE: data from {age}", style="bold yellow")
        if view.poll_ms is not None and connected:
            second.append(f" · poll {view.poll_ms:.1f} ms")
        if view.counted_s_ago is not None and connected:  # why every depth is ≈ and holds still between counts
            second.append(f" · ≈ states counted {fmt.duration(view.counted_s_ago)} ago (a deep queue: spaced)",
                          style="dim")
    if view.waiting_s is not None and view.silent_s is None:
        second.append(f" · waiting {view.waiting_s:.0f} s for the database to answer", style="bold yellow")
    if view.every_s is not None and view.every_s > view.interval_s:  # a poll costs more than its share of the time
        second.append(f" · every {view.every_s:.3g} s, not {view.interval_s:g}: polls are dear (doctor names the "
                      "index they lack)", style="yellow")
    else:
        second.append(f" · every {view.interval_s:g} s")
    second.append(f" · chart {window_label(view.window_s)}")
    if view.past_at:
        second.append(" · table: the figures at the cursor ([ ] move it, n: live)", style="bold magenta")
    if view.note:
        second.append(f" · {view.note}", style="dim")
    if not connected and view.error:
        second.append(" · ")
        second.append(view.error, style="red" if view.state == RECONNECTING else "yellow")
    return line, second, Text(view.load_line, style="magenta") if view.load_line else None


class StatusBar(Vertical):
    """Two lines (three while a background load runs) that never wrap: what does not fit ends in an ellipsis."""

    DEFAULT_CSS = """
    StatusBar { height: auto; padding: 0 1; }
    StatusBar > Static { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="link")
        yield Static(id="freshness")
        yield Static(id="load")

    def on_mount(self) -> None:
        self.query_one("#load").display = False

    def show(self, view: StatusView) -> None:
        statics = list(self.query(Static))
        lines = status_lines(view)
        if len(statics) != len(lines):  # a tick between mounting and composing: the next one shows it
            return
        for static, line in zip(statics, lines, strict=True):
            if static.id == "load" and static.display != (line is not None):
                static.display = line is not None
            if line is not None and line != static.content:
                static.update(line, layout=False)  # one line each, always: no layout pass needed


# -- charts ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Line:
    label: str
    job_type: str
    field: str  # depth | arrivals | completions
    color: str  # a plotext colour name; the legend shows the same ANSI colour


RICH_COLOR = {"orange": "yellow"}  # plotext calls ANSI yellow "orange"; the other names agree


@dataclass(frozen=True)
class ChartSpec:
    title: str
    lines: tuple[Line, ...]
    window_s: float
    cursor_x: float | None = None  # the time cursor, in seconds before now: a vertical line
    marks_of: str | None = None  # the job type whose SLO breaches are marked (TOTAL: any type's); None: no marks


BREACH_COLOR = "red"  # the colour of a breached cell in the table
BREACH_MARKER = "▲"  # one per bucket with a breach, along the bottom of the plot
BREACH_LEGEND = f"{BREACH_MARKER} SLO breach"


TICK_STEP_S = {30.0: 10.0, 60.0: 15.0, 120.0: 60.0, 300.0: 60.0, 900.0: 300.0, 1800.0: 600.0, 3600.0: 900.0,
               7200.0: 3600.0, 21600.0: 3600.0, 43200.0: 10800.0, 86400.0: 21600.0, 259200.0: 86400.0,
               604800.0: 86400.0}  # fmt: skip
SPANS_S = tuple(TICK_STEP_S)  # the spans an axis may take: a window, or less while the data is younger than it
MARKERS = ("•", "+", "x", "o", "*", "#")  # without colour (NO_COLOR), one per line, the legend showing the same


def fitted_span(window_s: float, covered_s: float) -> float:
    """The x axis' span: the window, or while the data collected covers less of it (a fresh start), the shortest
    span that holds all of it — ten seconds of data on a 1 h window are drawn over 30 s, not crammed into the
    right edge."""
    return min(window_s, next((span for span in SPANS_S if span >= covered_s), window_s))
TICK_UNITS = ((60.0, 1.0, "s"), (3600.0, 60.0, "m"), (86400.0, 3600.0, "h"), (math.inf, 86400.0, "d"))


def x_ticks(window_s: float) -> tuple[list[float], list[str]]:
    """x ticks in seconds before now, labelled like -5m … now (-6h, -3d for the wide windows)."""
    step = TICK_STEP_S.get(window_s, window_s / 4)
    positions = [-window_s + i * step for i in range(int(window_s // step) + 1)]
    size, unit = next((size, unit) for limit, size, unit in TICK_UNITS if window_s <= limit)
    labels = ["now" if p == 0 else f"{p / size:.0f}{unit}" for p in positions]
    return positions, labels


def y_ticks(top: float, count: int = 4, whole: bool = False) -> tuple[list[float], list[str]]:
    """Round ticks from 0 to at least `top`, labelled short (1.5k, 250k, 3M) so the axis stays narrow; for counts
    (`whole`: depth) whole numbers only, so a queue of 0 or 1 jobs is not drawn against 0.1, 0.2, 0.3."""
    raw = max(top, 1e-9) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if whole:
        step = max(1.0, math.ceil(step))
    positions = [0.0, step]
    while positions[-1] < top:
        positions.append(positions[-1] + step)
    return positions, [short_number(p) for p in positions]


def short_number(value: float) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.1f}".rstrip("0").rstrip(".") + suffix
    return f"{value:.1f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"


def legend_text(spec: ChartSpec, plotted: set[str], marked: bool = False, width: int | None = None,
                markers: bool = False) -> Text:  # fmt: skip
    """The title, each line in its colour (dim while it has no point) and, when the window holds any, what the
    marks along the bottom mean. In `width` cells: every entry shown has its label, the ones that do not fit are
    counted (`+2`). With `markers` (no colour) each line's marker, as the plot draws it, instead of a swatch."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(spec.title + " ", style="bold")
    if marked:  # before the lines, whose labels may be cut off
        text.append(f" {BREACH_LEGEND} ", style=f"bold {BREACH_COLOR}")
    entries = [(f" {MARKERS[i % len(MARKERS)] if markers else '━'} ", line) for i, line in enumerate(spec.lines)]
    for i, (swatch, line) in enumerate(entries):
        left = len(entries) - i - 1
        room = None if width is None else width - text.cell_len - (len(f" +{left}") if left else 0)
        if room is not None and len(swatch) + fmt.cells(line.label) > room:
            text.append(f" +{len(entries) - i}", style="dim")
            break
        text.append(swatch, style=RICH_COLOR.get(line.color, line.color) if line.label in plotted else "dim")
        text.append(line.label, style="" if line.label in plotted else "dim")
    if not plotted:
        text.append("  (no data yet)", style="dim")
    return text


Points = tuple[tuple[Line, tuple[float, ...], tuple[float, ...]], ...]
Marks = tuple[float, ...]  # x of each bucket with an SLO breach


def mark_runs(marks: Marks, bucket_s: float) -> tuple[tuple[float, float], ...]:
    """The marked buckets as runs of adjacent ones, (x of the first, x half a bucket past the last): each drawn as
    one unbroken row of markers, where a marker per bucket leaves gaps between the columns they fall in."""
    runs: list[list[float]] = []
    for x in sorted(marks):
        if runs and x - runs[-1][1] < bucket_s * 0.5:
            runs[-1][1] = x + bucket_s
        else:
            runs.append([x, x + bucket_s])
    return tuple((start, min(end - bucket_s * 0.5, 0.0)) if end - start > bucket_s else (start, start)
                 for start, end in runs)  # fmt: skip


class Plot(HandlesThreadResults, PlotextPlot):
    """The plotext drawing of a chart: its own Plot object, never plotext's global one.

    plotext takes several milliseconds per drawing, so it draws in a worker thread, started once the frame with
    the new figures is on screen; `render` only shows the last finished drawing. One drawing at a time per
    plot (the Plot object is used by that one thread only); a request made meanwhile is drawn right after.
    """

    def __init__(self, chart: Chart, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.chart = chart
        self.drawn: Text = Text()
        self.drawing = False
        self._again = False

    def on_mount(self) -> None:
        # (PlotextPlot's own on_mount runs too: Textual calls the handler of every class in the MRO.)
        self.app.theme_changed_signal.subscribe(self, lambda _: self.chart.redraw(force=True))

    def on_resize(self) -> None:
        self.chart.redraw(force=True)  # the bucket count and the drawing follow the size

    def render(self) -> RenderResult:
        return self.drawn

    def on_click(self, event: events.Click) -> None:
        """A click on the plot puts the time cursor there (the app shows the figures of that moment)."""
        spec = self.chart.drawn_spec
        plotted = self.size.width - Y_AXIS_COLUMNS - 1
        if spec is None or plotted <= 0:
            return
        fraction = min(1.0, max(0.0, (event.x - Y_AXIS_COLUMNS) / plotted))
        self.post_message(Chart.Scrubbed(-spec.window_s * (1 - fraction)))

    def draw(self) -> None:
        """Draw the chart's current points (after the next refresh, in a thread)."""
        if self.drawing:
            self._again = True
            return
        self.drawing = True
        self.call_after_refresh(self._start)

    def _start(self) -> None:
        spec, points, size = self.chart.drawn_spec, self.chart.points, self.size
        runs = mark_runs(self.chart.marks, self.chart.bucket_s or 0.0)
        theme = self._get_plotext_theme_name(self.app.theme)
        markers = self.app.no_color
        in_thread(self, lambda: self._build(spec, points, size.width, size.height, theme, runs, markers), self._built,
                  lambda error: self._built(Text(str(error))), group=f"plot-{self.id or id(self)}")  # fmt: skip

    def _build(self, spec: ChartSpec | None, points: Points, width: int, height: int, theme: str,
               marks: tuple[tuple[float, float], ...] = (), markers: bool = False) -> Text:  # fmt: skip
        """In the worker thread: the plotext calls, and nothing else touches this Plot object meanwhile. With
        `markers` (no colour), each line drawn with its own character (`MARKERS`), the legend showing which."""
        plt = self.plt
        plt.clear_figure()
        if spec is not None and width > 0 and height > 0:
            top = 0.0
            for line, xs, ys in points:
                marker = MARKERS[spec.lines.index(line) % len(MARKERS)] if markers else "braille"
                plt.plot(xs, ys, color=line.color, marker=marker)
                top = max(top, *ys)
            for start, end in marks:  # along the bottom, over the lines: a breach must not hide behind a line at 0
                plt.plot([start, end], [0.0, 0.0], marker=BREACH_MARKER, color=BREACH_COLOR)
            if spec.cursor_x is not None:
                plt.vline(spec.cursor_x, "white")
            plt.xlim(-spec.window_s, 0)
            plt.xticks(*x_ticks(spec.window_s))
            positions, labels = y_ticks(top, whole=all(line.field == "depth" for line in spec.lines))
            plt.ylim(0, positions[-1])
            plt.yticks(positions, labels)
        plt.plotsize(width, height)
        # plotext 5.3.2's plotsize clamps to the terminal size it measured when the figure was made (80×24 under a
        # test, the old size after the terminal grew); it has no public way past that, so this is the call
        # textual-plotext's own PlotextPlot.render makes. Without it 14 of the SVG snapshots are cut at 80 columns.
        plt._set_size(width, height)
        plt.theme(theme)
        return Text.from_ansi(plt.build())

    def _built(self, drawn: Text) -> None:
        self.drawing = False
        self.drawn = drawn
        self.refresh()
        if self._again:
            self._again = False
            self.draw()


class Chart(Vertical):
    """A legend line over a plotext plot of some lines of the chart history. Redrawn only when the points
    it would draw have changed: an idle queue costs no drawing at all."""

    DEFAULT_CSS = """
    Chart { height: 1fr; min-height: 7; }
    Chart > .legend { height: 1; padding: 0 1; }
    Chart > Plot { height: 1fr; }
    """

    class Scrubbed(Message):
        """The user clicked a chart: put the time cursor `seconds_before_now` back (negative)."""

        def __init__(self, seconds_before_now: float) -> None:
            super().__init__()
            self.seconds_before_now = seconds_before_now

    def __init__(self, series: Series, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.series = series
        self.spec: ChartSpec | None = None
        self.drawn_spec: ChartSpec | None = None  # the spec over the span the data covers (`fitted_span`)
        self.points: Points = ()
        self.marks: Marks = ()  # the buckets drawn with a breach mark
        self._legend: Text | None = None
        self._cursor_x: float | None = None
        self.bucket_s: float | None = None  # the width of the buckets drawn (the window over the plot's columns)

    def compose(self) -> ComposeResult:
        yield Static(classes="legend")
        yield Plot(self)

    def show(self, spec: ChartSpec) -> None:
        self.spec = spec
        self.redraw()

    def redraw(self, force: bool = False) -> None:
        spec = self.spec
        if spec is None or not self.is_mounted:
            return
        plot = self.query_one(Plot)
        buckets = max(10, (plot.size.width or 60) - Y_AXIS_COLUMNS)
        span = fitted_span(spec.window_s, self.series.covered_s(spec.window_s))
        if span != spec.window_s:
            spec = replace(spec, window_s=span)  # drawn, clicked and exported over the span the data covers
        self.drawn_spec = spec
        self.bucket_s = spec.window_s / buckets
        points: list[tuple[Line, tuple[float, ...], tuple[float, ...]]] = []
        for line in spec.lines:
            xs, ys = self.series.points(line.job_type, line.field, spec.window_s, buckets)
            if xs:
                points.append((line, tuple(xs), tuple(ys)))
        marks = tuple(self.series.marks(spec.marks_of, spec.window_s, buckets)) if spec.marks_of else ()
        legend = legend_text(spec, {line.label for line, _, _ in points}, bool(marks), max(0, self.size.width - 2),
                             self.app.no_color)  # fmt: skip
        if legend != self._legend:
            self._legend = legend
            self.query_one(".legend", Static).update(legend, layout=False)
        if force or tuple(points) != self.points or marks != self.marks or spec.cursor_x != self._cursor_x:
            self.points = tuple(points)
            self.marks = marks
            self._cursor_x = spec.cursor_x
            plot.draw()


def chart_lines(labels_and_types: Sequence[tuple[str, str]], field: str, colors: Sequence[str]) -> tuple[Line, ...]:
    return tuple(Line(label, job_type, field, colors[i % len(colors)])
                 for i, (label, job_type) in enumerate(labels_and_types))  # fmt: skip


# -- empty state -----------------------------------------------------------------------------------------
CONNECTING = "connecting"


def empty_text(kind: str, db_option: str, read_only: bool, error: str | None = None) -> Text:
    """The panel shown instead of the table: before any data ("connecting", "reconnecting"), for a database
    without the schema ("no schema") or an empty queue ("empty"). `db_option` is what to add to a command to
    reach the same database ("" for the embedded default)."""
    text = Text()
    if kind in (CONNECTING, RECONNECTING):
        text.append("Connecting to the database…" if kind == CONNECTING else "Cannot read the database yet:",
                    style="bold")  # fmt: skip
        if error:
            text.append(f"\n\n{error}", style="red")
        text.append("\n\nqueuetop keeps trying by itself, with back-off (the status line counts down).\n")
        text.append("Targets (--db, $QUEUETOP_DB) are explained by ")
        text.append("queuetop --help", style="bold cyan")
        text.append(".")
        return text
    if kind == NO_SCHEMA:
        text.append("This database has no queue yet.\n\n", style="bold")
        text.append("Create the queue tables with\n\n")
        text.append(f"    queuetop init{db_option}\n\n", style="bold cyan")
        text.append("The dashboard notices them by itself a few seconds later.\n\n")
    else:
        text.append("The queue is empty.\n\n", style="bold")
        if read_only:
            text.append("Add jobs from another terminal (this dashboard is read-only):\n\n")
        else:
            text.append("Press ", style="")
            text.append("e", style="bold reverse")
            text.append(" to enqueue test jobs, or from another terminal:\n\n")
        text.append(f"    queuetop enqueue{db_option} --type email --count 100\n\n", style="bold cyan")
    text.append("To see queuetop at work on a live load, try\n\n")
    text.append("    queuetop demo", style="bold cyan")
    return text


class EmptyState(Static):
    DEFAULT_CSS = """
    EmptyState { width: auto; max-width: 90%; height: auto; }
    """

    def show(self, kind: str, db_option: str, read_only: bool, error: str | None = None) -> None:
        self.update(empty_text(kind, db_option, read_only, error))
