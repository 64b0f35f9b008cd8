"""Fixed scenes of the dashboard: the same pixels every time, for the snapshot tests, `screenshots/` and the
render benchmark.

A scene is the real app fed fixed data instead of a database: a source that returns one prepared poll, stand-in
actions that answer the dialogs and the drill-down, a clock that does not move, and five minutes of chart
history computed from smooth functions (no randomness). Queues of the seeds' shapes (`Shape`) are the same
functions with what the shape cannot know set to None, as its collector reports them. Nothing here is used when
queuetop runs for real.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from queuetop.act.actions import (
    ClaimedJob,
    CompletedJob,
    EnqueueRequest,
    EnqueueResult,
    PendingJob,
    TypeDetail,
)
from queuetop.act.jobs import JobPage, JobView
from queuetop.act.queue import ReleaseResult
from queuetop.act.workers import ScheduledResult, WorkerStats, WorkersView, figures_of, no_claimer
from queuetop.core.history import drain_eta
from queuetop.db import Target
from queuetop.layouts import NATIVE, Layout, load_layout
from queuetop.store.series import Series
from queuetop.tui.app import QueuetopApp
from queuetop.tui.detail import DetailScreen
from queuetop.tui.table import QueueTable
from queuetop.tui.widgets import Plot
from queuetop.watch.monitor import CONNECTED, NO_SCHEMA, RECONNECTING, PollOutcome
from queuetop.watch.slo import Breach, Slo, breach_masks
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats

SIZE = (120, 40)
MOMENT = datetime(2026, 3, 14, 2, 13, 0)  # 2 a.m., during a load test
TARGET = Target("odbc", "DRIVER={PostgreSQL Unicode};SERVER=db1.internal;DATABASE=jobs;UID=ops;PWD=***")
MSSQL_TARGET = Target("odbc", "DRIVER={ODBC Driver 18 for SQL Server};SERVER=db2.internal;DATABASE=app;UID=ops;"
                              "PWD=***")  # fmt: skip
HISTORY_S = 300


class FrozenClock:
    """A monotonic clock that moves only when a scene says so."""

    def __init__(self, now: float = 10_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Profile:
    """How one job type behaves over the scene's five minutes (t = seconds before the end, 0 = now)."""

    name: str
    depth: Callable[[float], float]
    arrivals: float
    completions: Callable[[float], float]
    oldest_s: float | None
    claimed: int
    timed_out: int = 0
    dead: int = 0
    wait_p95_s: float | None = None
    processing_p95_s: float | None = None
    estimate: bool = False
    scheduled: int | None = None  # shapes that know jobs due later (native, job_queue)
    lost: int | None = None  # shapes that know lost jobs (requests)


PROFILES = (
    Profile("billing.invoice", lambda t: 12 + 6 * math.sin(t / 20), 8.5, lambda t: 8.7, 1.2, 4,
            wait_p95_s=0.9, processing_p95_s=0.12, scheduled=0),
    Profile("email.send", lambda t: 1284 + 900 * math.sin(t / 45) * (t / 300), 120, lambda t: 96 + 10 * math.cos(t / 9),
            48.0, 16, dead=3, wait_p95_s=9.8, processing_p95_s=0.045, scheduled=0),
    Profile("report.render", lambda t: 3870 - 8.5 * t, 9.2, lambda t: 2.1, 845.0, 8, timed_out=5, dead=12,
            wait_p95_s=361.0, processing_p95_s=28.0, scheduled=40),
    Profile("search.reindex", lambda t: 2140 + 0.2 * t, 3.0, lambda t: 3.2, 7980.0, 2, wait_p95_s=7200.0,
            processing_p95_s=1.4, estimate=True, scheduled=0),
    Profile("thumbnail", lambda t: 0, 40.0, lambda t: 40.0, None, 3, wait_p95_s=0.05, processing_p95_s=0.07,
            scheduled=0),
    Profile("webhook.deliver", lambda t: 58 + 40 * math.cos(t / 30), 64.0, lambda t: 71.0, 3.1, 12,
            wait_p95_s=2.2, processing_p95_s=0.31, scheduled=18),
    Profile("cleanup.nightly", lambda t: 0, 0.0, lambda t: 0.0, None, 0, scheduled=1),
)  # fmt: skip


def type_stats(profile: Profile, t: float) -> TypeStats:
    depth = max(0, round(profile.depth(t)))
    completions = profile.completions(t)
    drain, eta = drain_eta(depth, profile.arrivals, completions)
    return TypeStats(
        job_type=profile.name, depth=depth, oldest_age_s=profile.oldest_s if depth else None, claimed=profile.claimed,
        timed_out=profile.timed_out, dead=profile.dead, arrivals_10s_per_s=profile.arrivals,
        arrivals_60s_per_s=profile.arrivals, completions_10s_per_s=completions, completions_60s_per_s=completions,
        wait_p50_s=profile.wait_p95_s and profile.wait_p95_s / 3, wait_p95_s=profile.wait_p95_s,
        wait_p99_s=profile.wait_p95_s and profile.wait_p95_s * 1.4,
        processing_p50_s=profile.processing_p95_s and profile.processing_p95_s / 2,
        processing_p95_s=profile.processing_p95_s,
        processing_p99_s=profile.processing_p95_s and profile.processing_p95_s * 1.3,
        drain=drain, drain_eta_s=eta, depth_is_estimate=profile.estimate, scheduled=profile.scheduled,
        lost=profile.lost,
    )  # fmt: skip


def totals_of(rows: tuple[TypeStats, ...]) -> TypeStats:
    def total(name: str) -> float:
        return sum(getattr(row, name) or 0 for row in rows)

    def known(name: str) -> int | None:  # None when no row knows it
        values = [getattr(row, name) for row in rows if getattr(row, name) is not None]
        return sum(values) if values else None

    depth, arrivals, completions = int(total("depth")), total("arrivals_10s_per_s"), total("completions_10s_per_s")
    drain, eta = drain_eta(depth, arrivals, completions)
    ages = [row.oldest_age_s for row in rows if row.oldest_age_s is not None]
    waits = [row.wait_p95_s for row in rows if row.wait_p95_s is not None]
    work = [row.processing_p95_s for row in rows if row.processing_p95_s is not None]
    return TypeStats(
        job_type=TOTAL, depth=depth, oldest_age_s=max(ages) if ages else None, claimed=known("claimed"),
        timed_out=known("timed_out"), dead=known("dead"), scheduled=known("scheduled"), lost=known("lost"),
        arrivals_10s_per_s=arrivals, arrivals_60s_per_s=arrivals, completions_10s_per_s=completions,
        completions_60s_per_s=completions,
        wait_p95_s=max(waits) if waits else None, processing_p95_s=max(work) if work else None,
        drain=drain, drain_eta_s=eta, depth_is_estimate=any(row.depth_is_estimate for row in rows),
    )  # fmt: skip


def snapshot_at(t: float, profiles: tuple[Profile, ...] = PROFILES) -> Snapshot:
    """The scene's queue `t` seconds before the end."""
    rows = tuple(type_stats(profile, t) for profile in profiles)
    return Snapshot(taken_at=MOMENT - timedelta(seconds=t), target=TARGET.display, dialect="postgres",
                    poll_ms=3.8, window_s=60.0, types=rows, totals=totals_of(rows), layout=NATIVE.name,
                    figures=dict(NATIVE.provides))  # fmt: skip


def history(profiles: tuple[Profile, ...] = PROFILES, seconds: int = HISTORY_S,
            breached: tuple[float, float] | None = None) -> Series:  # fmt: skip
    """The scene's five minutes of chart history; `breached` (from, to, in seconds before the end): report.render
    was over its depth SLO then, as the dashboard's SLO checks would have recorded it."""
    series = Series()
    masks = breach_masks([Breach(TARGET.display, "report.render", Slo.MAX_DEPTH, 500, 900, MOMENT, MOMENT)])
    for t in range(seconds, -1, -1):
        inside = breached is not None and breached[1] >= t >= breached[0]
        series.add(snapshot_at(float(t), profiles), masks if inside else None)
    return series


def many_types_snapshot(count: int = 200, t: float = 0.0) -> Snapshot:
    """`count` job types, for the render benchmark."""
    profiles = tuple(replace(PROFILES[i % len(PROFILES)], name=f"{PROFILES[i % len(PROFILES)].name}.{i:03d}")
                     for i in range(count))  # fmt: skip
    return snapshot_at(t, profiles)


# -- stand-ins for the database ----------------------------------------------------------------------------
class FixedSource:
    def __init__(self, outcome: PollOutcome, target: Target = TARGET) -> None:
        self.outcome = outcome
        self.target = target

    def poll(self, looking_for: str = "", fresh: bool = False) -> PollOutcome:
        return self.outcome


def _detail(job_type: str) -> TypeDetail:
    pending = tuple(PendingJob(id=1_048_200 + i, age_s=845.0 - 37 * i, priority=128 if i % 4 else 10,
                               attempts=1 if i < 3 else 0, available_in_s=6.0 if i == 1 else 0.0,
                               info=f'{{"report": "monthly-{i:02d}", "format": "pdf", "pages": {40 + i * 7}}}')
                    for i in range(12))  # fmt: skip
    claims = tuple(ClaimedJob(id=1_047_900 + i * 13, worker=f"render-{i % 3 + 1}.prod", claimed_for_s=95.0 - 9 * i,
                              expires_in_s=-35.0 + 9 * i, attempts=1 + i % 3)
                   for i in range(8))  # fmt: skip
    outcomes = ("succeeded", "succeeded", "failed", "succeeded", "dead", "succeeded")
    completions = tuple(CompletedJob(id=1_047_880 - i, outcome=outcomes[i % len(outcomes)], wait_s=330.0 + 4 * i,
                                     processing_s=None if outcomes[i % len(outcomes)] == "dead" else 21.0 + i,
                                     ago_s=2.0 + 7 * i)
                        for i in range(10))  # fmt: skip
    return TypeDetail(job_type, MOMENT, pending, claims, completions)


class FixedActions:
    """Answers like a queue with 5 timed-out claims of report.render; changes nothing. With a layout, the
    dialogs ask what that shape's actions would (as `Actions.layout` makes them)."""

    def __init__(self, layout: Layout | None = None) -> None:
        self.layout = layout

    def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        return EnqueueResult(request.job_type, tuple(range(1_048_213, 1_048_213 + request.count)))

    def count_timed_out(self, job_type: str | None = None) -> ReleaseResult:
        return ReleaseResult(timed_out=5 if job_type in (None, "report.render") else 0, dry_run=True)

    def release(self, job_type: str | None = None) -> ReleaseResult:
        return ReleaseResult(timed_out=5, released=4, dead=1)

    def type_detail(self, job_type: str) -> TypeDetail:
        return _detail(job_type)

    def dead(self, action: str, job_type: str | None = None) -> int:
        return 12 if job_type in (None, "report.render") else 0

    def workers(self) -> WorkersView:
        layout = self.layout or NATIVE
        return WORKERS if layout.made_by_init else read_workers_of_nothing(layout)

    def release_worker(self, worker: str | None, dry_run: bool = False) -> ReleaseResult:
        return ReleaseResult(timed_out=5, released=0 if dry_run else 5, dry_run=dry_run)

    def make_available(self, job_type: str | None, dry_run: bool = False) -> ScheduledResult:
        return ScheduledResult(scheduled=120, made_available=0 if dry_run else 120, dry_run=dry_run)

    def job(self, job_id: Any) -> JobView | None:
        return None  # the scenes show no single job

    def dead_job(self, action: str, job_id: Any) -> int:
        return 0

    def make_job_available(self, job_id: Any) -> int:
        return 0

    def release_job(self, job_id: Any) -> ReleaseResult:
        return ReleaseResult(timed_out=0)

    def jobs(self, state: str, job_type: str, limit: int = 20) -> JobPage:
        return JobPage(state, job_type, (), (), None)  # the scenes list pending jobs only


def read_workers_of_nothing(layout: Layout) -> WorkersView:
    """A shape's panel as its figures allow: no workers to show where it names no claimer."""
    return WorkersView(MOMENT, layout.name, layout.columns.get("claimed_by"), figures=figures_of(layout),
                       reason=no_claimer(layout), clock=layout.read_clock)  # fmt: skip


WORKERS = WorkersView(MOMENT, NATIVE.name, "RetrievedBy", (
    WorkerStats("render-3.prod", 5, 5, 0, 0, 0, None, 212.0),
    WorkerStats("email-1.prod", 8, 0, 412, 405, 3, 0.052, 0.2),
    WorkerStats("email-2.prod", 8, 0, 398, 391, 1, 0.049, 0.4),
    WorkerStats("webhook-1.prod", 6, 1, 207, 199, 6, 0.41, 0.9),
    WorkerStats("render-1.prod", 3, 0, 14, 12, 1, 31.5, 8.1),
    WorkerStats("render-2.prod", 3, 0, 13, 11, 0, 28.2, 11.6),
    WorkerStats("search-1.prod", 2, 0, 3, 3, 0, 1.6, 19.0),
    WorkerStats(None, 1, 0, 1, 0, 0, None, 44.0),
))  # fmt: skip


class FixedLoad:
    """A background load (as `queuetop demo` runs one) that always reports the same progress."""

    def progress_line(self) -> str:
        return "load 4m12s · 61,204 enqueued · 57,330 completed · 12 dead · 38 crashed · 3,862 in flight · 231/s"


# -- the scenes -------------------------------------------------------------------------------------------
Prepare = Callable[[Pilot], Awaitable[None]]


@dataclass(frozen=True)
class Scene:
    name: str
    description: str
    make: Callable[[], QueuetopApp]
    prepare: Prepare
    press: tuple[str, ...] = ()
    size: tuple[int, int] = SIZE


def scene_app(outcome: PollOutcome | None = None, *, series: Series | None = None, read_only: bool = False,
              clock: FrozenClock | None = None, background: FixedLoad | None = None, target: Target = TARGET,
              layout: Layout | None = None) -> QueuetopApp:  # fmt: skip
    return QueuetopApp(FixedSource(outcome or PollOutcome(CONNECTED, snapshot_at(0.0)), target),
                       FixedActions(layout), read_only=read_only, clock=clock or FrozenClock(), series=series,
                       background=background, poll_on_start=False)  # fmt: skip


async def _settle(pilot: Pilot) -> None:
    """Let every worker (detail reads, dry runs, chart drawings) finish and its result reach the screen."""
    for _ in range(20):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        busy = any(plot.drawing for screen in pilot.app.screen_stack for plot in screen.query(Plot))
        if not busy and not any(worker.is_running for worker in pilot.app.workers):
            break
    for box in pilot.app.screen.query(Input):
        box.cursor_blink = False  # a blinking cursor would make the pixels depend on timing
    await pilot.pause()


def _showing(outcome: PollOutcome, select: str | None = "report.render") -> Prepare:
    async def prepare(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, QueuetopApp)
        app.apply(outcome)
        await pilot.pause()
        if select:
            app.main.query_one(QueueTable).select_type(select)
        await _settle(pilot)

    return prepare


LIVE = PollOutcome(CONNECTED, snapshot_at(0.0))


def _main_app() -> QueuetopApp:
    return scene_app(LIVE, series=history(), background=FixedLoad())


async def _drill_down(pilot: Pilot) -> None:
    await _showing(LIVE)(pilot)
    pilot.app.push_screen(DetailScreen("report.render"))
    await _settle(pilot)


def _dialog(key: str, *typed: str) -> Prepare:
    async def prepare(pilot: Pilot) -> None:
        await _showing(LIVE)(pilot)
        await pilot.press(key)
        await _settle(pilot)
        if typed:
            await pilot.press(*typed)
            await _settle(pilot)

    return prepare


def _disconnected_app() -> QueuetopApp:
    return scene_app(LIVE, series=history())


async def _disconnected(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, QueuetopApp)
    await _showing(LIVE)(pilot)
    clock = app._clock
    assert isinstance(clock, FrozenClock)
    clock.now += 12.0
    app.apply(PollOutcome(RECONNECTING, error="lost the connection to the database: server closed the connection "
                                              "unexpectedly (check that the server is up)", retry_in_s=4.0, failures=3))
    await _settle(pilot)


EMPTY = PollOutcome(CONNECTED, Snapshot(taken_at=MOMENT, target=TARGET.display, dialect="postgres", poll_ms=1.2,
                                        window_s=60.0))  # fmt: skip
NO_QUEUE = PollOutcome(NO_SCHEMA, error=f"the queue schema is missing in {TARGET.display} (run `queuetop init` to "
                                        "create it)", retry_in_s=5.0, failures=1)  # fmt: skip

UNREACHABLE = PollOutcome(RECONNECTING, error='cannot reach the database server (5.0 s): connection to server at '
                                              '"db1.internal" (10.0.3.7), port 5432 failed: timeout expired (check '
                                              'SERVER and PORT in the connection string and that the server is '
                                              'running)', retry_in_s=8.0, failures=4)  # fmt: skip


# -- queues of the seeds' shapes ----------------------------------------------------------------------------
UNKNOWN_FIELDS = {  # a figure a shape cannot know → the fields its collector leaves None
    "oldest_age_s": ("oldest_age_s",), "scheduled": ("scheduled",), "claimed": ("claimed",),
    "timed_out": ("timed_out",), "dead": ("dead",), "lost": ("lost",),
    "arrivals": ("arrivals_10s_per_s", "arrivals_60s_per_s"),
    "completions": ("completions_10s_per_s", "completions_60s_per_s"),
    "wait": ("wait_p50_s", "wait_p95_s", "wait_p99_s"),
    "processing": ("processing_p50_s", "processing_p95_s", "processing_p99_s"),
}  # fmt: skip


@dataclass(frozen=True)
class Shape:
    """A queue of a seed's shape without a job type column: one row, named after its table."""

    layout: Layout
    profile: Profile
    target: Target
    dialect: str
    note: str | None = None


def shaped_snapshot_at(t: float, shape: Shape) -> Snapshot:
    """The shape's queue `t` seconds before the end, as its collector reports it: None where it cannot know."""
    figures = dict(shape.layout.provides)
    row = type_stats(shape.profile, t)
    row = replace(row, **{name: None for figure, names in UNKNOWN_FIELDS.items() if not figures.get(figure, True)
                          for name in names})  # fmt: skip
    return Snapshot(taken_at=MOMENT - timedelta(seconds=t), target=shape.target.display, dialect=shape.dialect,
                    poll_ms=6.1, window_s=60.0, types=(row,), totals=replace(row, job_type=TOTAL),
                    layout=shape.layout.name, figures=figures, clock=shape.layout.read_clock,
                    note=shape.note)  # fmt: skip


def shaped_history(shape: Shape, seconds: int = HISTORY_S) -> Series:
    series = Series()
    for t in range(seconds, -1, -1):
        series.add(shaped_snapshot_at(float(t), shape))
    return series


# Seed 004's dbo.Job_Queue: scheduled jobs, timed-out claims the seed retakes, dead after 3 attempts; no lost
# figure; the server's local time.
JOB_QUEUE_SHAPE = Shape(
    load_layout("job_queue"),
    Profile("Job_Queue", lambda t: 1830 - 2.4 * t, 22.0, lambda t: 19.5 + 1.5 * math.sin(t / 25), 412.0, 48,
            timed_out=6, dead=3, wait_p95_s=290.0, processing_p95_s=7.4, scheduled=120),
    MSSQL_TARGET, "mssql", note="found dbo.Job_Queue: layout job_queue")  # fmt: skip
# Seed 002's dbo.work_queue: a processed flag and no times, so only depth and the rates (completions from the
# change of depth between polls).
WORK_QUEUE_SHAPE = Shape(
    load_layout("work_queue"),
    Profile("work_queue", lambda t: 12_400 - 4.0 * t, 35.0, lambda t: 31.0 + 2 * math.cos(t / 15), None, 0),
    MSSQL_TARGET, "mssql", note="found dbo.work_queue: layout work_queue")  # fmt: skip
JOB_QUEUE = PollOutcome(CONNECTED, shaped_snapshot_at(0.0, JOB_QUEUE_SHAPE))
WORK_QUEUE = PollOutcome(CONNECTED, shaped_snapshot_at(0.0, WORK_QUEUE_SHAPE))


def _shape_app(shape: Shape) -> Callable[[], QueuetopApp]:
    def make() -> QueuetopApp:
        outcome = PollOutcome(CONNECTED, shaped_snapshot_at(0.0, shape))
        return scene_app(outcome, series=shaped_history(shape), target=shape.target, layout=shape.layout)

    return make


def _showing_then(outcome: PollOutcome, *keys: str) -> Prepare:
    async def prepare(pilot: Pilot) -> None:
        await _showing(outcome, select=None)(pilot)
        await pilot.press(*keys)
        await _settle(pilot)

    return prepare


async def _time_cursor(pilot: Pilot) -> None:
    """The time cursor two minutes back: the past figures in the table (as the history file would give them)."""
    app = pilot.app
    assert isinstance(app, QueuetopApp)
    await _showing(LIVE)(pilot)
    app.session.past = snapshot_at(120.0)
    app.session.cursor_t = (app.session.past.taken_at - datetime(1970, 1, 1)).total_seconds()
    app.refresh_screen()
    await _settle(pilot)


# -- several targets at once --------------------------------------------------------------------------------
STAGING = Target("odbc", "DRIVER={ODBC Driver 18 for SQL Server};SERVER=db-staging.internal;DATABASE=app;UID=ops;"
                         "PWD=***")  # fmt: skip
DR = Target("odbc", "DRIVER={PostgreSQL Unicode};SERVER=db-dr.internal;PORT=5432;DATABASE=jobs;UID=ops;PWD=***")
STAGING_SHAPE = replace(JOB_QUEUE_SHAPE, target=STAGING)
DR_UNREACHABLE = replace(UNREACHABLE, error='cannot reach the database server (5.0 s): connection to server at '
                                           '"db-dr.internal", port 5432 failed: Connection refused (check SERVER and '
                                           'PORT in the connection string and that the server is running)')  # fmt: skip


def _multi_app() -> QueuetopApp:
    from queuetop.tui.multi import MultiApp
    from queuetop.tui.session import PaneSpec

    return MultiApp([PaneSpec("prod", FixedSource(LIVE), FixedActions(), read_only=True, series=history()),
                     PaneSpec("staging", FixedSource(LIVE, STAGING), FixedActions(JOB_QUEUE_SHAPE.layout),
                              interval=2.0, series=shaped_history(STAGING_SHAPE)),
                     PaneSpec("dr", FixedSource(DR_UNREACHABLE, DR), FixedActions())],
                    clock=FrozenClock(), poll_on_start=False)  # fmt: skip


async def _multi(pilot: Pilot) -> None:
    """prod live; staging polled 95 s ago, then lost (stale data on screen); dr never reached."""
    from queuetop.tui.multi import MultiApp

    app = pilot.app
    assert isinstance(app, MultiApp)
    clock = app._clock
    assert isinstance(clock, FrozenClock)
    lost = PollOutcome(RECONNECTING, error="lost the connection to the database: TCP Provider: Error code 0x2746 "
                                           "(check that the server is up)", retry_in_s=15.0, failures=6)  # fmt: skip
    app.apply_to(app.panes["staging"], PollOutcome(CONNECTED, shaped_snapshot_at(0.0, STAGING_SHAPE)))
    clock.now += 5.0
    app.apply_to(app.panes["staging"], lost)
    app.apply_to(app.panes["dr"], DR_UNREACHABLE)
    clock.now += 90.0  # the outages go on: the last failed attempts are the ones shown
    app.apply_to(app.panes["staging"], lost)
    app.apply_to(app.panes["dr"], DR_UNREACHABLE)
    app.apply_to(app.panes["prod"], LIVE)
    await pilot.pause()
    table = app.main.query_one("#table-0", QueueTable)
    table.focus()  # prod selected, whichever section took the focus first
    table.select_type("report.render")
    await _settle(pilot)
    app.clear_notifications()  # each outage's notification would cover the sections
    await _settle(pilot)


SCENES: dict[str, Scene] = {
    scene.name: scene
    for scene in (
        Scene("main", "the main screen under load", _main_app, _showing(LIVE)),
        Scene("drill-down", "report.render up close", _main_app, _drill_down),
        Scene("enqueue", "the enqueue dialog", _main_app, _dialog("e", "backspace", "5", "0", "0")),
        Scene("enqueue-invalid", "the enqueue dialog with inline errors", _main_app,
              _dialog("e", "backspace", "0", "tab", "tab", "backspace", "backspace", "backspace", "3", "0", "0")),
        Scene("release", "the release confirmation", _main_app, _dialog("r")),
        Scene("help", "every key", _main_app, _dialog("question_mark")),
        Scene("empty", "an empty queue", lambda: scene_app(EMPTY), _showing(EMPTY, select=None)),
        Scene("no-schema", "a database without the queue tables", lambda: scene_app(NO_QUEUE),
              _showing(NO_QUEUE, select=None)),
        Scene("disconnected", "the database went away: stale data, reconnecting", _disconnected_app, _disconnected),
        Scene("unreachable", "the database cannot be reached at start", lambda: scene_app(UNREACHABLE),
              _showing(UNREACHABLE, select=None)),
        Scene("read-only", "read-only: enqueue refused", lambda: scene_app(LIVE, series=history(), read_only=True),
              _dialog("e")),
        Scene("job-queue", "seed 004's dbo.Job_Queue as it is: its own columns, server local time",
              _shape_app(JOB_QUEUE_SHAPE), _showing(JOB_QUEUE, select=None), size=(132, 40)),
        Scene("job-queue-enqueue", "the enqueue dialog on dbo.Job_Queue: the fields its insert takes",
              _shape_app(JOB_QUEUE_SHAPE), _showing_then(JOB_QUEUE, "e"), size=(132, 40)),
        Scene("work-queue", "seed 002's dbo.work_queue: a processed flag, so only depth and rates",
              _shape_app(WORK_QUEUE_SHAPE), _showing(WORK_QUEUE, select=None)),
        Scene("work-queue-release", "r on dbo.work_queue: nothing to release, and why",
              _shape_app(WORK_QUEUE_SHAPE), _showing_then(WORK_QUEUE, "r")),
        Scene("narrow", "an 80×24 terminal: the least important columns dropped, and said so", _main_app,
              _showing(LIVE), size=(80, 24)),
        Scene("workers", "W: the workers panel, a probably dead worker first", _main_app, _showing_then(LIVE, "W")),
        Scene("workers-release", "r on the probably dead worker: its timed-out claims, counted", _main_app,
              _showing_then(LIVE, "W", "r")),
        Scene("time-cursor", "the time cursor 2 minutes back: past figures, marked as past", _main_app, _time_cursor),
        Scene("multi", "three targets at 80×24: one live, one lost with its stale data, one never reached",
              _multi_app, _multi, size=(80, 24)),
        Scene("multi-wide", "three targets at 200×60", _multi_app, _multi, size=(200, 60)),
        Scene("slo-marks", "SLO breaches marked on the charts: report.render's depth, 3 to 2 minutes ago",
              lambda: scene_app(LIVE, series=history(breached=(120.0, 180.0))), _showing(LIVE)),
    )
}  # fmt: skip
SCREENSHOTS = ("main", "drill-down", "enqueue", "release", "job-queue", "work-queue", "narrow")


async def _export(pilot: Pilot, scene: Scene) -> None:
    await scene.prepare(pilot)
    await pilot.press(*scene.press)
    await pilot.pause()
    pilot.app.exit(pilot.app.export_screenshot(title=f"queuetop: {scene.description}"))


def render_svg(scene: Scene) -> str:
    """The scene as an SVG, as `screenshots/` holds it."""
    app = scene.make()

    async def auto_pilot(pilot: Pilot) -> None:
        await _export(pilot, scene)

    svg = app.run(headless=True, size=scene.size, auto_pilot=auto_pilot)
    assert isinstance(svg, str), f"scene {scene.name} produced no screenshot"
    return svg
