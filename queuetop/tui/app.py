"""The Textual app: the poll loop, the status and the keys (its writes are `writes.py`'s, its time cursor
`cursor.py`'s); screens and widgets only render.

The poll loop is one thread worker per poll, started again by a timer once the previous poll's result has
been shown, so polls never overlap and a slow database only slows the loop down. The result arrives as a
`Polled` message carrying a frozen PollOutcome. Enqueue, release and the drill-down's lists run in thread
workers on the Actions' own connections. Nothing here waits on the database on the UI thread.

Errors: a database error is a state (status line, stale data, a notification on each change), never an
exception on the screen. A bug is logged with its traceback to the log file and shown as a notification; if
one escapes anyway, the app ends with a one-line message naming the log instead of a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, Protocol

from rich.text import Text
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen

from queuetop.core import format as fmt
from queuetop.db.target import default_database_path
from queuetop.store.series import FileCharts, Series
from queuetop.tui.cursor import TimeCursor
from queuetop.tui.detail import DetailScreen
from queuetop.tui.help import HelpScreen, Section, binding_rows
from queuetop.tui.main import MainScreen
from queuetop.tui.session import NOT_ANSWERING_S, DashboardActions, PaneSpec, Recorder, Session, Source
from queuetop.tui.threads import HandlesThreadResults, ThreadResult
from queuetop.tui.widgets import StatusView
from queuetop.tui.workers import WorkersScreen
from queuetop.tui.writes import Writes
from queuetop.watch.ahead import CallThread, PollAhead, Polls
from queuetop.watch.monitor import NO_SCHEMA, NOT_ANSWERING, PollOutcome
from queuetop.watch.slo import Slos, Watched, breach_masks, worst
from queuetop.watch.snapshot import Snapshot
from queuetop.watch.watermarks import seconds

log = logging.getLogger("queuetop")

INTERVALS_S = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
DEFAULT_WINDOW_S = 300.0
SLOW_POLL_S = 2.0  # a poll running longer than this is shown in the status bar
INTERVAL = Binding.Group("Interval")
TIME = Binding.Group("Time cursor")


class UnexpectedError(Exception):
    """A bug that ended the dashboard, as the one line the user sees instead of a traceback (that is in the log)."""

    def __init__(self, error: Exception, see_log: str) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.__cause__ = error  # Pilot re-raises this one: a test's traceback still leads to the bug
        self.see_log = see_log

    def __rich__(self) -> Text:
        return Text(f"queuetop: unexpected error: {self}.{self.see_log}")


class Background(Protocol):
    def progress_line(self) -> str: ...


class Breached(Message):
    """SLO breaches began at this poll (posted once per poll that has new ones): for the bell, and for whoever
    keeps breaches (a history of them, marks on charts)."""

    def __init__(self, watched: Watched) -> None:
        super().__init__()
        self.watched = watched


class Polled(Message):
    """A poll has finished (in the poll thread); its outcome, for the UI thread."""

    def __init__(self, outcome: PollOutcome) -> None:
        super().__init__()
        self.outcome = outcome


class HistoryLoaded(Message):
    """The history file's answer for the charts of a wide window, read on the history reader's thread."""

    def __init__(self, charts: FileCharts) -> None:
        super().__init__()
        self.charts = charts


DashboardScreen = MainScreen | DetailScreen | WorkersScreen


class QueuetopApp(Writes, TimeCursor, HandlesThreadResults, App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "queuetop"
    ENABLE_COMMAND_PALETTE = True

    # The footer shows them in this order, as many as the width allows: at 80 columns the keys that look deeper
    # (⏎, W, the table's) and act (e, r, x) before the ones that tune the view (w, p, + -, [ ]), which `?` lists.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "enqueue", "Enqueue", tooltip="enqueue test jobs (type prefilled from the selection)"),
        # On a shape that declares no [enqueue] (no [release]), `e` (`r`) is not offered (check_action) and says why
        # when pressed.
        Binding("e", "refused('enqueue')", show=False),
        Binding("r", "release", "Release", tooltip="release timed-out claims: dry-run count first, then confirm"),
        Binding("r", "refused('release')", show=False),  # as `e`: not offered where the layout declares no [release]
        Binding("W", "workers", "Workers", tooltip="workers from the claims: who holds what, who is probably dead"),
        Binding("x", "export", "Export", tooltip="write what is on screen (table and charts' data) to a Markdown "
                "and a CSV file in the current directory"),
        Binding("question_mark", "help", "Help", key_display="?", tooltip="this list of keys"),
        Binding("q", "quit", "Quit", tooltip="quit (a load started with the dashboard stops too)"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True, tooltip="quit, as q does"),
        Binding("w", "window", "Window", tooltip="chart window: 1 m, 5 m, 15 m, 1 h, 6 h, 24 h, 7 d (the wide ones "
                "from the history file)"),
        Binding("p", "pause", "Pause", tooltip="pause or resume polling"),
        Binding("plus,equals_sign", "interval(1)", "Interval", key_display="+", group=INTERVAL,
                tooltip="poll less often (a longer interval)"),
        Binding("minus", "interval(-1)", "Interval", key_display="-", group=INTERVAL,
                tooltip="poll more often (a shorter interval)"),
        Binding("left_square_bracket", "scrub(-1)", "Back in time", key_display="[", group=TIME,
                tooltip="move the time cursor back: the table shows the figures of that moment"),
        Binding("right_square_bracket", "scrub(1)", "Forward in time", key_display="]", group=TIME,
                tooltip="move the time cursor forward (past the last poll: live again)"),
        Binding("n", "live", "Live", show=False, tooltip="back to now: the table shows the live figures again"),
        Binding("S", "screenshot", "Screenshot", show=False, tooltip="write an SVG picture of the screen to the "
                "current directory (the command palette's Screenshot does the same)"),
    ]

    def __init__(self, source: Source, actions: DashboardActions, *, interval: float = 1.0, read_only: bool = False,
                 background: Background | None = None, log_path: Path | None = None,
                 clock: Callable[[], float] = time.monotonic, series: Series | None = None,
                 poll_on_start: bool = True, greeting: str | None = None, slos: Slos | None = None,
                 bell: bool = True, recorder: Recorder | None = None,
                 export_dir: Path | None = None, ahead: PollAhead | None = None) -> None:  # fmt: skip
        super().__init__()
        self.greeting = greeting
        self.session = Session(PaneSpec(source.target.display, source, actions, interval=interval, read_only=read_only,
                                        series=series, recorder=recorder, slos=slos, ahead=ahead))  # fmt: skip
        self.session.series.deliver = lambda charts: self.post_message(HistoryLoaded(charts))  # from its thread
        self.bell_on_breach = bell
        self.background = background
        self.log_path = log_path
        self.export_dir = export_dir
        self.window_s = DEFAULT_WINDOW_S
        self.paused = False
        self._clock = clock
        self._poll_on_start = poll_on_start
        self._silent_since: float | None = None  # when the poll began that the database has not answered yet
        self._load_line: str | None = None
        self._load_failed = False
        self.main = MainScreen()

    # -- state the screens read ------------------------------------------------------------------------------
    @property
    def target_display(self) -> str:
        return self.session.source.target.display

    @property
    def db_option(self) -> str:
        """` --db TARGET` for commands shown to the user; empty for the embedded default."""
        target = self.session.source.target
        if target.kind == "sqlite" and Path(target.value) == default_database_path():
            return ""
        return f" --db {shlex.quote(target.display)}"

    @property
    def connected(self) -> bool:
        return self.session.link is not None and self.session.link.connected

    @property
    def shown(self) -> Snapshot | None:
        """The figures the table shows: those at the time cursor, else the latest poll's."""
        return self.session.past if self.session.past is not None else self.session.latest

    def cursor_x(self) -> float | None:
        """The time cursor on the charts' x axis (seconds before the newest point), when it is on."""
        if self.session.cursor_t is None or self.session.series.latest is None:
            return None
        return self.session.cursor_t - self.session.series.latest

    def on_mount(self) -> None:
        self._quit_on_signals()
        self.push_screen(self.main)
        self.set_interval(1.0, self._tick)
        self._read_load_line()
        self.refresh_screen()
        if self.greeting:
            self.notify(self.greeting, timeout=15, markup=False)
        if self._poll_on_start:
            self._start_poll()

    def _quit_on_signals(self) -> None:
        """SIGTERM and SIGHUP end the dashboard as `q` does — the terminal restored, a load started with it
        stopped and its claims handed back — with 128 + the signal's number as the exit code."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(signum, self.exit, None, 128 + signum)
            except (RuntimeError, ValueError):  # not the main thread (a test's app): signals are not ours there
                return

    # -- the poll loop ---------------------------------------------------------------------------------------
    def _start_poll(self) -> None:
        self.session.next_poll = None
        if self.session.polling or self.paused:
            return
        self.session.polling = True
        self.session.poll_started = self._clock()
        self._poll_worker()

    def _poll_worker(self) -> None:
        session = self.session
        if session.poll_thread is None:
            session.poll_thread = CallThread("queuetop-poll")
        needle = self.main.needle  # read here, on the UI's thread: the poll's thread is handed the text
        fresh, self.session.changed = self.session.changed, False
        source = session.ahead or session.source  # read here, on the UI's thread
        session.poll_thread.submit(lambda: self._poll_once(source, needle, fresh))

    def _poll_once(self, source: Polls, looking_for: str, fresh: bool) -> None:  # on the poll thread (a daemon)
        try:
            outcome = source.poll(looking_for, fresh)
        except Exception as exc:  # Monitor.poll never raises: a bug (or a scene's source)
            self.post_message(ThreadResult(self._poll_failed, exc))
            return
        self.post_message(Polled(outcome))

    def _poll_failed(self, error: Exception) -> None:
        self.report_unexpected(error, "running poll")
        self.session.polling = False
        self._schedule(self.session.link)

    def on_polled(self, message: Polled) -> None:
        self.session.polling = False
        self.session.pace.took(message.outcome.poll_s)
        try:
            self.apply(message.outcome)
        except Exception as exc:  # a bug in drawing: report it, keep polling
            self.report_unexpected(exc, "showing a poll")
        snapshot, recorder = message.outcome.snapshot, self.session.recorder
        if recorder is not None and snapshot is not None:
            # A queue put, once the frame is painted: the writer thread's work (and its hold on the GIL) falls
            # between polls, not between a poll and its frame.
            self.call_after_refresh(recorder.record, snapshot, breach_masks(self.session.breaches) or None)
        self._schedule(message.outcome)

    def _schedule(self, outcome: PollOutcome | None) -> None:
        if self.paused or self.session.polling or self.session.next_poll is not None:
            return
        delay = self.session.every_s
        if outcome is not None and not outcome.connected and outcome.retry_in_s is not None:
            delay = max(0.05, outcome.retry_in_s)
        self.session.next_poll = self.set_timer(delay, self._start_poll)

    def poll_soon(self) -> None:
        """Poll now (after an action changed the queue) unless paused or a poll is running; the next poll, this
        one or a later one, counts what a deep queue's spaced counts would leave as they were (`fresh`)."""
        self.session.changed = True
        if self.paused or self.session.polling:
            return
        if self.session.next_poll is not None:
            self.session.next_poll.stop()
        self._start_poll()

    def apply(self, outcome: PollOutcome) -> None:
        """Take in one poll's outcome and redraw. Also how scenes put fixed data on screen."""
        before = self.session.link
        self.session.link = outcome
        self.session.link_at = self._clock()
        if outcome.state != NOT_ANSWERING:
            self._silent_since = None
        elif self._silent_since is None:
            self._silent_since = self.session.poll_started
        if outcome.snapshot is not None:
            self.session.latest = outcome.snapshot
            self.session.last_success = self.session.link_at
            self._judge(outcome.snapshot)
            self.session.series.add(outcome.snapshot, breach_masks(self.session.breaches))
        self._announce(before, outcome)
        self._read_load_line()
        self.refresh_screen()

    def _judge(self, snapshot: Snapshot) -> None:
        """SLOs: the breaches open now colour their cells and the status line; new ones ring the bell once."""
        if self.session.slo_watch is None:
            return
        watched = self.session.slo_watch.observe(snapshot)
        self.session.breaches = watched.breaches
        if watched.new:
            self.post_message(Breached(watched))

    def on_breached(self, message: Breached) -> None:
        if self.bell_on_breach:
            self.bell()  # once per poll that brings new breaches, however many: a page, not an alarm clock

    def on_history_loaded(self, message: HistoryLoaded) -> None:
        if self.session.series.take(message.charts):
            self.refresh_screen()

    @property
    def breached_cells(self) -> frozenset[tuple[str, str]]:
        """The cells in breach in the table shown: at the time cursor, as the history file kept them."""
        if self.session.past is not None:
            return self.session.past_breached
        return frozenset((b.job_type, b.slo.spec.column) for b in self.session.breaches)

    def _announce(self, before: PollOutcome | None, now: PollOutcome) -> None:
        if now.unexpected:
            self.notify(f"Unexpected error while polling: {now.error}.{self._see_log()}", severity="error",
                        timeout=10, markup=False)  # fmt: skip
        elif now.connected:
            if before is not None and before.link_lost and before.state != NO_SCHEMA:
                self.notify("Connected to the database again.", timeout=4)
        elif not now.link_lost:  # a poll that timed out or lost a deadlock: the connection is fine
            if before is None or before.connected:
                self.notify(f"The poll did not finish: {now.error}. The connection is kept; the next poll comes "
                            "at the usual interval.", severity="warning", timeout=8, markup=False)
        elif (before is None or before.connected) and not (now.state == NO_SCHEMA and self.session.latest is None):
            lost = "Lost the database" if self.session.latest is not None else "Cannot read the database"
            kept = " The last data stays on screen, marked stale." if self.session.latest is not None else ""
            said = f"{lost}: {now.error}. Reconnecting by itself, with back-off."
            if now.error and now.error.endswith("; reconnecting"):  # a lost connection says it all already
                said = f"{now.error[0].upper()}{now.error[1:]} (by itself, with back-off)."
            self.notify(f"{said}{kept}", severity="warning", timeout=8, markup=False)

    # -- drawing ---------------------------------------------------------------------------------------------
    def dashboard_screen(self) -> DashboardScreen | None:
        """The top-most screen that shows data (a dialog may be open above it)."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, MainScreen | DetailScreen | WorkersScreen):
                return screen
        return None

    def _live_dashboard_screen(self) -> DashboardScreen | None:
        """The dashboard screen, if its widgets are there to draw on: while the app shuts down a timer or a
        poll result can still arrive as they are being removed (Textual stops the app's timers only after it has
        closed its screens, but says it is no longer running first: a screen's container can outlive the widgets
        in it, so that is what is asked)."""
        screen = self.dashboard_screen() if self.is_running else None
        return screen if screen is not None and screen.is_mounted and screen.query("#status") else None

    def refresh_screen(self) -> None:
        screen = self._live_dashboard_screen()
        if screen is not None:
            screen.refresh_data()
            screen.show_status(self.status_view())

    def status_view(self) -> StatusView:
        session = self.session
        link, now = session.link, self._clock()
        waited = now - session.poll_started
        retry = None
        if link is not None and not link.connected and link.retry_in_s is not None:
            retry = max(0.0, link.retry_in_s - (now - self.session.link_at))
        return StatusView(
            target=self.target_display,
            dialect=self.session.latest.dialect if self.session.latest else None,
            state=link.state if link else None,
            error=link.error if link else None,
            retry_in_s=retry,
            since_success_s=None if self.session.last_success is None else now - self.session.last_success,
            poll_ms=self.session.latest.poll_ms if self.session.latest else None,
            interval_s=self.session.interval,
            every_s=self.session.every_s,
            window_s=self.window_s,
            paused=self.paused,
            read_only=self.session.read_only,
            load_line=self._load_line,
            waiting_s=waited if session.polling and waited >= SLOW_POLL_S else None,
            silent_s=self._silent_s(now),
            layout=self.session.latest.layout if self.session.latest else None,
            note=self.session.latest.note if self.session.latest else None,
            local_clock=self.session.latest is not None and self.session.latest.clock == "local",
            **self._breach_words(),
            past_at=self._past_label(),
            counted_s_ago=self.session.latest.counted_s_ago if self.session.latest else None,
        )

    def _silent_s(self, now: float) -> float | None:
        """How long the database has not answered: a poll running past its statement timeout, or cut by its
        deadline (then until a poll answers again)."""
        if self.session.polling and now - self.session.poll_started >= NOT_ANSWERING_S:
            return now - min(self.session.poll_started, self._silent_since or self.session.poll_started)
        if self._silent_since is not None:
            return now - self._silent_since
        return None

    def _breach_words(self) -> dict[str, Any]:
        first = worst(self.session.breaches)
        if first is None:
            return {}
        lasted = f" for {fmt.duration(first.lasted_s)}" if first.lasted_s >= 1 else " (new)"
        return {"breach": first.describe() + lasted, "more_breaches": len(self.session.breaches) - 1}

    def _past_label(self) -> str | None:
        if self.session.past is None or self.session.series.latest is None:
            return None
        ago = self.session.series.latest - seconds(self.session.past.taken_at)
        return f"{self.session.past.taken_at:%Y-%m-%d %H:%M:%S} ({fmt.duration(ago)} ago{self.session.past_level})"

    def _tick(self) -> None:
        """Once a second: the "polled N s ago" and "reconnecting in N s" figures move on."""
        screen = self._live_dashboard_screen()
        if screen is not None:
            self._read_load_line()
            screen.show_status(self.status_view())

    def _read_load_line(self) -> None:
        if self.background is None or self._load_failed:
            return
        try:
            self._load_line = self.background.progress_line()
        except Exception as exc:
            self._load_failed = True  # say it once, not every second
            self._load_line = "load: progress unavailable"
            self.report_unexpected(exc, "reading the background load's progress")

    def action_drill_down(self) -> None:
        if not isinstance(self.screen, MainScreen):
            return
        job_type = self.main.selected_type
        if job_type is None:
            self.notify("No job type to drill into: the table is empty.", severity="warning")
            return
        self.push_screen(DetailScreen(job_type))

    def action_pause(self) -> None:
        self.paused = not self.paused
        if self.paused and self.session.next_poll is not None:
            self.session.next_poll.stop()
            self.session.next_poll = None
        if not self.paused:
            self._start_poll()
        self._tick()

    def action_interval(self, step: int) -> None:
        if step > 0:
            self.session.interval = next((s for s in INTERVALS_S if s > self.session.interval), INTERVALS_S[-1])
        else:
            interval = self.session.interval
            self.session.interval = next((s for s in reversed(INTERVALS_S) if s < interval), INTERVALS_S[0])
        if self.session.next_poll is not None:  # the waiting poll follows the new interval from now
            self.session.next_poll.stop()
            self.session.next_poll = None
            self._schedule(self.session.link)
        self._tick()

    def action_window(self) -> None:
        windows = self.session.series.windows
        later = [w for w in windows if w > self.window_s]
        self.window_s = later[0] if later else windows[0]
        if self.session.cursor_t is not None and self.session.series.latest is not None and \
                self.session.cursor_t < self.session.series.latest - self.window_s:
            self.action_live()  # the cursor would be off the chart
        self.refresh_screen()

    # -- export ----------------------------------------------------------------------------------------------
    def action_export(self) -> None:
        """Write what is on screen (the table and the charts' data) to a Markdown and a CSV file."""
        from queuetop.store.history_report import write_export

        screen = self.dashboard_screen()
        if screen is None or self.shown is None:
            self.notify("Nothing on screen to export yet.", severity="warning")
            return
        export = screen.export_view()
        folder = self.export_dir or Path.cwd()
        try:
            paths = write_export(export, folder)
        except OSError as exc:
            self.notify(f"Could not write the export in {folder}: {exc.strerror or exc}. Start queuetop from a "
                        "folder you can write to.", severity="error", timeout=10, markup=False)  # fmt: skip
            return
        self.notify(f"Wrote what is on screen to {paths[0]} and {paths[1]}", timeout=10, markup=False)

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """An SVG of the screen, written where `x` writes its export (the current directory), naming the file; where
        it cannot be written, a notice saying why (Textual's own would go to ~/Downloads, which may not exist)."""
        folder = Path(path) if path else self.export_dir or Path.cwd()
        try:
            written = self.save_screenshot(filename, str(folder))
        except OSError as exc:
            self.notify(f"Could not write the screenshot in {folder}: {exc.strerror or exc}. Start queuetop from a "
                        "folder you can write to.", severity="error", timeout=10, markup=False)  # fmt: skip
            return
        self.notify(f"Wrote a picture of the screen to {written}", timeout=10, markup=False)

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:  # fmt: skip
        """The command palette's Screenshot: as `S`."""
        self.action_screenshot(filename, path)
        return None

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.key_sections()))

    def key_sections(self) -> list[Section]:
        navigation = [("↑ ↓ PgUp PgDn Home End", "move the selection"), ("Enter", "drill down into the selected type"),
                      ("click a header", "sort by that column (again: invert)")]  # fmt: skip
        return [
            ("Everywhere", [*binding_rows(self, self.BINDINGS),
                            ("ctrl+p", "command palette: every action by name")]),
            ("Main table", [*binding_rows(self, MainScreen.BINDINGS), *navigation]),
            ("Drill-down", [*binding_rows(self, DetailScreen.BINDINGS),
                            ("e  r", "enqueue or release for this job type")]),
            ("Workers panel (W)", [*binding_rows(self, WorkersScreen.BINDINGS),
                                   ("↑ ↓", "select a worker")]),
            ("Dialogs", [("Tab  Shift+Tab", "next or previous field"), ("Enter", "submit"), ("Escape", "cancel")]),
        ]  # fmt: skip

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.refusal("enqueue") is None:
            yield SystemCommand("Enqueue test jobs", "Add jobs of a type (e)", self.action_enqueue)
        yield SystemCommand("Release timed-out claims", "Dry-run count, then confirm (r)", self.action_release)
        yield SystemCommand("Pause or resume polling", "p", self.action_pause)
        yield SystemCommand("Poll less often", "+", lambda: self.action_interval(1))
        yield SystemCommand("Poll more often", "-", lambda: self.action_interval(-1))
        yield SystemCommand("Chart window", "1 m, 5 m, 15 m, 1 h, 6 h, 24 h, 7 d (w)", self.action_window)
        yield SystemCommand("Back in time", "Move the time cursor back ([)", lambda: self.action_scrub(-1))
        yield SystemCommand("Live", "Back to the live figures (n)", self.action_live)
        yield SystemCommand("Export the screen", "Markdown and CSV files of the table and charts (x)",
                            self.action_export)
        yield SystemCommand("Drill down", "Open the selected job type (Enter)", self.action_drill_down)
        yield SystemCommand("Workers", "Who holds what, from the claims (W)", self.action_workers)
        yield SystemCommand("Help", "List every key (?)", self.action_help)
        if isinstance(screen, MainScreen):
            yield SystemCommand("Filter job types", "/", screen.action_filter)
            yield SystemCommand("Invert sort order", "i", screen.action_invert_sort)
            for column in screen.columns:  # those the queue's shape can fill
                yield SystemCommand(f"Sort by {column.label}", "< and > move the sort column",
                                    lambda key=column.key: screen.sort_on(key))  # fmt: skip
        if isinstance(screen, DetailScreen):
            yield SystemCommand("Back to the table", "Escape", screen.action_back)

    # -- errors ----------------------------------------------------------------------------------------------
    def _see_log(self) -> str:
        return f" Details in {self.log_path}." if self.log_path else ""

    def report_unexpected(self, error: BaseException, doing: str) -> None:
        log.error("unexpected error while %s", doing, exc_info=error)
        self.notify(f"Unexpected error while {doing}: {type(error).__name__}: {error}.{self._see_log()}",
                    severity="error", timeout=10, markup=False)  # fmt: skip

    def _handle_exception(self, error: Exception) -> None:
        """Last resort for a bug that escaped every handler: log it, end with one line, never a traceback.

        Textual has no public hook for this (Textualize/textual#2818), so this one override stays: it hands Textual
        the error wrapped in a renderable one-liner, and Textual's own path sets the exit status, keeps the error for
        Pilot to re-raise in tests and shows the line (an error with `__rich__` is shown, not traced back).
        """
        log.error("unexpected error; the dashboard stops", exc_info=error)
        super()._handle_exception(UnexpectedError(error, self._see_log()))
