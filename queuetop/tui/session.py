"""What the screens read of the dashboard and ask of it: one target's session, as a Protocol.

The screens (main, drill-down, workers, the export) know the dashboard only by this: its figures (`latest`,
`shown`, `past`, `link`, the chart `series` and window), how to word the target, the time cursor, the cells in
breach, and the few things they ask of it. `QueuetopApp` and `MultiApp` (the selected target's pane) both fit
it, so no screen imports the app that pushes it: the arrows run from the app down to its screens only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from textual.timer import Timer

from queuetop.act.actions import EnqueueRequest, EnqueueResult, ReleaseResult, TypeDetail
from queuetop.act.jobs import JobPage, JobView
from queuetop.act.workers import ScheduledResult, WorkerStats, WorkersView
from queuetop.db import Target
from queuetop.store.series import Series
from queuetop.watch.ahead import CallThread, PollAhead
from queuetop.watch.monitor import PollOutcome
from queuetop.watch.pace import Pace
from queuetop.watch.slo import Breach, Slos, SloWatch
from queuetop.watch.snapshot import Snapshot

NOT_ANSWERING_S = 5.0  # a poll past the monitor's statement timeout: the server is not answering, figures stale


class Source(Protocol):
    """Where snapshots come from: the Monitor, or a fixed scene for screenshots."""

    target: Target

    def poll(self, looking_for: str = "", fresh: bool = False) -> PollOutcome:
        """One poll; `looking_for`: the filter (`/`), whose types are shown even past --max-types; `fresh`: the
        user just changed the queue (a deep queue whose counts are spaced counts now)."""
        ...


class DashboardActions(Protocol):
    """What the dialogs and the drill-down need: `queuetop.act.actions.Actions`, or a scene's stand-in."""

    def enqueue(self, request: EnqueueRequest) -> EnqueueResult: ...
    def count_timed_out(self, job_type: str | None = None) -> ReleaseResult: ...
    def release(self, job_type: str | None = None) -> ReleaseResult: ...
    def type_detail(self, job_type: str) -> TypeDetail: ...
    def dead(self, action: str, job_type: str | None = None) -> int: ...
    def workers(self) -> WorkersView: ...
    def release_worker(self, worker: str | None, dry_run: bool = False) -> ReleaseResult: ...
    def make_available(self, job_type: str | None, dry_run: bool = False) -> ScheduledResult: ...
    def job(self, job_id: Any) -> JobView | None: ...
    def jobs(self, state: str, job_type: str, limit: int = ...) -> JobPage: ...
    def dead_job(self, action: str, job_id: Any) -> int: ...
    def make_job_available(self, job_id: Any) -> int: ...
    def release_job(self, job_id: Any) -> ReleaseResult: ...


class Recorder(Protocol):
    """Where each poll's snapshot is kept (the history file's writer thread); `record` must never block.
    `breaches` (job type → bit mask of the SLOs it misses, `slo.breach_masks`) is kept per poll and OR-ed over each
    bucket: the charts mark them, also after a restart."""

    def record(self, snapshot: Snapshot, breaches: Mapping[str, int] | None = None) -> None: ...


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
    ahead: PollAhead | None = None  # the first poll, begun on the poll thread before the app was built


class Session:
    """One target's state on the UI thread: the poll loop's and the figures'. Only the UI thread touches it. The
    dashboard has one session (`QueuetopApp.session`); the multi-target one has a session per target and switches
    `session` to the selected one, so every key acts on the selected target through the same code."""

    def __init__(self, spec: PaneSpec) -> None:
        self.name = spec.name
        self.source = spec.source
        self.actions = spec.actions
        self.interval = spec.interval
        self.pace = Pace()  # how dear its polls are: where they are, they come further apart than `interval`
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
        self.changed = False  # an action of the user changed the queue since the last poll began: the next is fresh
        self.poll_started = 0.0
        self.next_poll: Timer | None = None
        self.ahead = spec.ahead  # polls on the poll thread go through it: its first is the one begun ahead
        self.poll_thread: CallThread | None = spec.ahead.thread if spec.ahead is not None else None
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

    @property
    def every_s(self) -> float:
        """From one poll to the next: the interval, or longer where polls are dear (`watch/pace.py`)."""
        return self.pace.wait_s(self.interval)


class Dashboard(Protocol):
    """One target's session as the screens see it."""

    session: Session  # the target the keys act on
    window_s: float

    @property
    def target_display(self) -> str: ...
    @property
    def db_option(self) -> str: ...
    @property
    def connected(self) -> bool: ...
    @property
    def shown(self) -> Snapshot | None: ...
    def cursor_x(self) -> float | None: ...
    def breached_cells(self) -> frozenset[tuple[str, str]]: ...
    def refresh_screen(self) -> None: ...
    def release_worker(self, worker: WorkerStats) -> None: ...
    def action_drill_down(self) -> None: ...
    def refusal(self, action: str) -> str | None: ...
    def may_write(self, refusal: str | None, verb: str) -> bool: ...
    def poll_soon(self) -> None: ...
