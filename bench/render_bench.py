#!/usr/bin/env python3
"""What the dashboard costs: `.venv/bin/python bench/render_bench.py` prints three figures.

1. render: one poll of a 200-type queue turned into the updated screen (120×40, headless): the app taking in the
   snapshot (table, status, chart points) until Textual has painted what changed (the moment the compositor has
   written the frame; headless, so nothing is drawn on a real terminal). Goal ≤ 16 ms
   (a 60 Hz frame). Every figure moves at every poll. The charts redraw when a bucket of their window completes
   (every 6 s at the default 5 minutes); plotext draws in a worker thread after the frame, timed separately.
2. idle CPU: the real app polling a real, idle SQLite queue (20 types) once a second, the poll thread included.
3. memory: the chart history after an hour of 1 s polls of 200 types (it keeps 15 minutes, so it stops growing),
   and the process's resident size around it.

Figures vary with the machine and its load; run it on a quiet one. `--quick` shortens every part.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.screen import Screen

from queuetop.act.actions import Actions
from queuetop.act.queue import Queue
from queuetop.db import Database, parse_target
from queuetop.layouts.schema import init_schema
from queuetop.store.series import Series
from queuetop.tui.app import QueuetopApp
from queuetop.tui.scenes import SIZE, FixedActions, FixedSource, FrozenClock, many_types_snapshot
from queuetop.tui.widgets import Plot
from queuetop.watch.monitor import CONNECTED, Monitor, PollOutcome

GOAL_MS = 16.0
TYPES = 200


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


# -- 1. render ---------------------------------------------------------------------------------------------
def bench_render(polls: int) -> dict[str, list[float]]:
    series = Series()
    for t in range(300, 0, -1):  # five minutes of history behind the first measured poll
        series.add(many_types_snapshot(TYPES, float(t)))
    first = PollOutcome(CONNECTED, many_types_snapshot(TYPES, 0.0))
    app = QueuetopApp(FixedSource(first), FixedActions(), clock=FrozenClock(), series=series, poll_on_start=False)
    timings: dict[str, list[float]] = {"frame": [], "frame, no chart redraw": [], "frame, chart redraw": [],
                                       "charts": []}  # fmt: skip

    def drawing() -> bool:
        return any(plot.drawing for plot in app.screen.query(Plot))

    painted_at: list[float] = []
    paint = Screen._compositor_refresh

    def timed_paint(screen: Screen) -> None:  # when the frame reached the terminal (headless: was written)
        paint(screen)
        painted_at.append(time.perf_counter())

    Screen._compositor_refresh = timed_paint  # type: ignore[method-assign]

    async def run(pilot) -> None:
        app.apply(first)
        await pilot.pause()
        for i in range(polls):
            # t runs backwards in the scene's functions: -1, -2, … are later moments, with new figures each time
            outcome = PollOutcome(CONNECTED, many_types_snapshot(TYPES, -1.0 - i))
            painted_at.clear()
            start = time.perf_counter()
            app.apply(outcome)
            await pilot._wait_for_screen()  # the messages the update posted, and the repaint they cause
            app.screen._on_timer_update()  # anything still to paint
            painted = painted_at[-1] if painted_at else time.perf_counter()
            timings["frame"].append((painted - start) * 1000)
            redraw = drawing()
            timings["frame, chart redraw" if redraw else "frame, no chart redraw"].append((painted - start) * 1000)
            if redraw:  # a chart bucket completed: plotext draws in a worker, then the plot is repainted
                while drawing():
                    await asyncio.sleep(0.0005)
                await pilot._wait_for_screen()
                app.screen._on_timer_update()
                timings["charts"].append((painted_at[-1] - painted) * 1000)
            await pilot.pause()
        app.exit()

    try:
        app.run(headless=True, size=SIZE, auto_pilot=run)
    finally:
        Screen._compositor_refresh = paint  # type: ignore[method-assign]
    return timings


# -- 2. idle CPU -------------------------------------------------------------------------------------------
def bench_idle_cpu(seconds: float) -> tuple[float, int]:
    folder = Path(tempfile.mkdtemp(prefix="queuetop-bench-"))
    target = parse_target(str(folder / "idle.db"))
    with Database.open(target, create=True) as db:
        init_schema(db)
        queue = Queue(db)
        for i in range(20):
            queue.enqueue_many(f"type-{i:02d}", 50)
    monitor, actions = Monitor(target), Actions(target)
    app = QueuetopApp(monitor, actions, interval=1.0)
    measured: dict[str, float] = {}

    async def run(pilot) -> None:
        await asyncio.sleep(3.0)  # the first polls and the first full paint are not idling
        polls_before = app.series.point_count()
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(seconds)
        measured["cpu"] = time.process_time() - cpu
        measured["wall"] = time.perf_counter() - wall
        measured["points"] = app.series.point_count() - polls_before
        app.exit()

    app.run(headless=True, size=SIZE, auto_pilot=run)
    monitor.close()
    actions.close()
    return 100 * measured["cpu"] / measured["wall"], int(measured["points"] // 21)


# -- 3. memory ---------------------------------------------------------------------------------------------
def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def bench_memory(hours: float) -> tuple[float, float, float, int]:
    snapshots = [many_types_snapshot(TYPES, float(t)) for t in range(0, 120)]  # reused: only the series grows
    rss_before = rss_mb()
    tracemalloc.start()
    series = Series()
    base = snapshots[0].taken_at
    from dataclasses import replace
    from datetime import timedelta

    for second in range(int(hours * 3600)):
        snapshot = snapshots[second % len(snapshots)]
        series.add(replace(snapshot, taken_at=base + timedelta(seconds=second)))
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return current / 2**20, peak / 2**20, rss_mb() - rss_before, series.point_count()


def main() -> int:
    parser = argparse.ArgumentParser(description="queuetop dashboard: render time, idle CPU, history memory")
    parser.add_argument("--quick", action="store_true", help="fewer polls, a shorter idle run")
    args = parser.parse_args()
    polls, idle_s = (20, 10.0) if args.quick else (100, 30.0)

    print(f"queuetop render bench — Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    timings = bench_render(polls)
    print(f"\n1. one {TYPES}-type snapshot → updated 120×40 screen, {polls} polls (ms):")
    labels = {"frame": "frame (UI thread: table, status, legends, painted)",
              "frame, no chart redraw": "  … when no chart bucket completed",
              "frame, chart redraw": "  … when a chart bucket completed (a plotext drawing starts after it)",
              "charts": "charts: plotext in a worker thread, then painted, after such a frame"}  # fmt: skip
    for name, values in timings.items():
        if values:
            print(f"   p50 {statistics.median(values):6.2f}   p95 {percentile(values, 95):6.2f}   "
                  f"max {max(values):6.2f}   {labels[name]} [{len(values)}]")  # fmt: skip
    p50, p95 = statistics.median(timings["frame"]), percentile(timings["frame"], 95)
    print(f"   goal ≤ {GOAL_MS:.0f} ms per frame: p50/goal = {p50 / GOAL_MS:.2f}, p95/goal = {p95 / GOAL_MS:.2f} "
          f"({'met' if p95 <= GOAL_MS else 'not met'} at p95)")  # fmt: skip

    cpu, polls_seen = bench_idle_cpu(idle_s)
    print(f"\n2. idle: 20 types on SQLite, nothing changing, 1 s interval, {idle_s:.0f} s: CPU {cpu:.2f} % of one core "
          f"({polls_seen} polls)")  # fmt: skip

    history_mb, peak_mb, rss_growth, points = bench_memory(1.0)
    print(f"\n3. chart history after an hour of 1 s polls of {TYPES} types: {history_mb:.1f} MiB held "
          f"(peak {peak_mb:.1f} MiB, {points:,} points kept: 15 minutes × {TYPES + 1} tracks); "
          f"process RSS grew {rss_growth:.1f} MiB")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
