"""What the screens read of the dashboard and ask of it: one target's session, as a Protocol.

The screens (main, drill-down, workers, the export) know the dashboard only by this: its figures (`latest`,
`shown`, `past`, `link`, the chart `series` and window), how to word the target, the time cursor, the cells in
breach, and the few things they ask of it. `QueuetopApp` and `MultiApp` (the selected target's pane) both fit
it, so no screen imports the app that pushes it: the arrows run from the app down to its screens only.
"""

from __future__ import annotations

from typing import Protocol

from queuetop.act.actions import EnqueueRequest, EnqueueResult, ReleaseResult, TypeDetail
from queuetop.act.workers import ScheduledResult, WorkerStats, WorkersView
from queuetop.db import Target
from queuetop.store.series import Series
from queuetop.watch.monitor import PollOutcome
from queuetop.watch.snapshot import Snapshot


class Source(Protocol):
    """Where snapshots come from: the Monitor, or a fixed scene for screenshots."""

    target: Target

    def poll(self) -> PollOutcome: ...


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


class Dashboard(Protocol):
    """One target's session as the screens see it."""

    actions: DashboardActions
    series: Series
    window_s: float
    read_only: bool
    latest: Snapshot | None
    past: Snapshot | None
    link: PollOutcome | None

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
