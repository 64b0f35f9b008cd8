#!/usr/bin/env python3
"""Regenerate the README's screenshots from real runs: `.venv/bin/python scripts/screenshots.py`.

Every picture is the real dashboard (the Monitor polling, the Actions reading on their own connections) on a real
SQLite file in a fresh temporary folder, under a real load, driven by key presses the way a user would:

- native (`main`, `drill-down`, `job`, `release`, `workers`, `enqueue`, `narrow`): `queuetop demo`'s load
  (`demo_config()`), with its sweeper slowed to once a minute so that timed-out claims wait for the user, plus
  one worker, `render-7`, that claims four report jobs and dies: the workers panel marks it probably dead.
- `job-queue`: seed 004's own dbo.Job_Queue (its tables as `queuetop demo --layout job_queue` makes them, its
  `usp_API_Get_Job` batch claim and its completion as queuetop's shape driver runs them: `ShapeWorker`, the
  same code as `queuetop load`), two live servers, one that dies, and jobs scheduled for later.
- `work-queue`: seed 002's dbo.work_queue, filled and drained by its own UPDLOCK, READPAST dequeue (the same).
- `targets`: three targets of a config file, resolved and built by `queuetop watch --all`'s own code
  (cli.watched_targets, tui.multi_app): `orders` under the demo's load, `billing` (read-only) a seed-004
  Job_Queue under `queuetop demo --layout job_queue`'s load, `legacy` a PostgreSQL server on a closed port.
- `slo`: the demo's load with `--slo thumbnail:max_depth=60` and two bursts of thumbnail jobs: one breach over
  and one going on (the status line), both marked on the charts.

The figures are whatever the run produced, so they differ a little from run to run (the layout does not). The
snapshot tests keep their fixed scenes (queuetop/tui/scenes.py): `--fixed NAME...` renders those instead.
Name pictures to make only those (`scripts/screenshots.py workers narrow`); `--list` shows them all.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, chdir, contextmanager
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual.pilot import Pilot  # noqa: E402
from textual.widgets import Input  # noqa: E402

from queuetop.act.actions import Actions  # noqa: E402
from queuetop.act.queue import Queue  # noqa: E402
from queuetop.act.shape_queue import ShapeQueue, create_demo_tables  # noqa: E402
from queuetop.act.shape_worker import ShapeWorker  # noqa: E402
from queuetop.cli.common import configure, with_per_target  # noqa: E402
from queuetop.cli.config import slo_from_option  # noqa: E402
from queuetop.cli.parser import _parser  # noqa: E402
from queuetop.cli.watch_commands import watched_targets  # noqa: E402
from queuetop.db import Database, Target, parse_target  # noqa: E402
from queuetop.layouts import NATIVE, Layout, load_layout  # noqa: E402
from queuetop.layouts.schema import init_schema  # noqa: E402
from queuetop.load.command import BackgroundLoad, demo_config, load_types, start_background_load  # noqa: E402
from queuetop.tui import logging_to, multi_app  # noqa: E402
from queuetop.tui.app import QueuetopApp  # noqa: E402
from queuetop.tui.scenes import SCENES, render_svg  # noqa: E402
from queuetop.tui.table import QueueTable  # noqa: E402
from queuetop.tui.workers import WorkersScreen  # noqa: E402
from queuetop.watch.monitor import Monitor  # noqa: E402
from queuetop.watch.slo import Slos  # noqa: E402

NATIVE_PICTURES = ("main", "drill-down", "job", "release", "workers", "enqueue", "narrow", "narrow-drill-down",
                   "wide")  # fmt: skip
PICTURES = {
    "main": "the demo under load: native schema, embedded SQLite",
    "drill-down": "the demo's report type up close",
    "job": "Enter on a job in the drill-down: the job view, its state, every column, each time with its age",
    "workers": "W: the workers panel, the workers that died first",
    "release": "r: the release confirmation, with the dry-run count",
    "enqueue": "e: the enqueue dialog",
    "narrow": "an 80×24 terminal: the least important columns dropped, and said so (→ pages to them)",
    "narrow-drill-down": "the drill-down at 80×24: the charts give way (g brings them), the lists keep the room",
    "wide": "a 160×48 terminal: every column, a taller table, wider charts",
    "job-queue": "seed 004's dbo.Job_Queue as it is: its own columns, server local time",
    "work-queue": "seed 002's dbo.work_queue: a processed flag, so only depth and rates",
    "targets": "three targets of the config file in one dashboard (watch --all), one of them down",
    "slo": "an SLO breached during a burst, then met again: the breach on the status line, ▲ on the charts",
}
WARMUP_S = 45.0  # polls before the first picture: the 1-minute charts are nearly full
SIZE = (120, 40)


def title(name: str) -> str:
    return f"queuetop: {PICTURES[name]}"


async def settle(pilot: Pilot, until: Callable[[], object] = lambda: True, timeout: float = 15.0) -> None:
    """Let the app run until `until()` holds and its workers are done; no blinking cursor in a picture."""
    deadline = time.monotonic() + timeout
    while not until() and time.monotonic() < deadline:
        await pilot.pause(0.1)
    await pilot.pause(0.3)
    for box in pilot.app.screen.query(Input):
        box.cursor_blink = False
    await pilot.pause(0.1)


def run_app(app: QueuetopApp, size: tuple[int, int], steps: Callable[[Pilot], object]) -> None:
    async def auto_pilot(pilot: Pilot) -> None:
        await steps(pilot)  # type: ignore[misc]
        pilot.app.exit()

    app.run(headless=True, size=size, auto_pilot=auto_pilot)


@contextmanager
def native_demo(file: str, beside: Callable[[Target, threading.Event], None]
                ) -> Iterator[tuple[BackgroundLoad, Monitor, Actions]]:  # fmt: skip
    """A native queue in `file` under the demo's load, with `beside(target, stop)` on a thread of its own, and a
    dashboard's monitor and actions on it; all stopped and closed after the run."""
    target = parse_target(file)
    with Database.open(target, create=True) as db:
        init_schema(db)
    load = start_background_load(target, replace(demo_config(), release_every_s=60.0))
    stop = threading.Event()
    threading.Thread(target=beside, args=(target, stop), daemon=True).start()
    monitor, actions = Monitor(target, NATIVE), Actions(target, NATIVE)
    try:
        yield load, monitor, actions
    finally:
        stop.set()
        monitor.close()
        actions.close()
        load.stop()


# -- the native demo ------------------------------------------------------------------------------------------------
def native(wanted: set[str], shots: dict[str, str]) -> None:
    with native_demo("demo.db", _worker_that_dies) as (load, monitor, actions):
        app = QueuetopApp(monitor, actions, background=load)
        run_app(app, SIZE, lambda pilot: native_steps(app, pilot, wanted, shots))


async def native_steps(app: QueuetopApp, pilot: Pilot, wanted: set[str], shots: dict[str, str]) -> None:
    await pilot.pause(WARMUP_S)
    await pilot.press("w")  # the 1-minute chart window (5 → 15 → 1)
    await pilot.press("w")
    table = app.main.query_one(QueueTable)
    table.select_type("report")
    await settle(pilot)
    if "main" in wanted:
        shots["main"] = app.export_screenshot(title=title("main"))
    if wanted & {"drill-down", "job"}:
        await pilot.press("enter")
        await settle(pilot, lambda: getattr(app.screen, "detail", None) is not None)
        if "drill-down" in wanted:
            shots["drill-down"] = app.export_screenshot(title=title("drill-down"))
        if "job" in wanted:
            await pilot.press("enter")  # the oldest pending job of the type
            await settle(pilot, lambda: getattr(app.screen, "loaded", False))
            shots["job"] = app.export_screenshot(title=title("job"))
            await pilot.press("escape")
        await pilot.press("escape")
    if "release" in wanted:
        await pilot.press("r")
        await settle(pilot, lambda: getattr(app.screen, "found", None) is not None)
        shots["release"] = app.export_screenshot(title=title("release"))
        await pilot.press("escape")
    if "workers" in wanted:
        await pilot.press("W")
        await settle(pilot, lambda: isinstance(app.screen, WorkersScreen) and app.screen.view is not None)
        shots["workers"] = app.export_screenshot(title=title("workers"))
        await pilot.press("escape")
    if "enqueue" in wanted:
        await pilot.press("e")
        await settle(pilot)
        await pilot.press("backspace", "5", "0", "0")
        await settle(pilot)
        shots["enqueue"] = app.export_screenshot(title=title("enqueue"))
        await pilot.press("escape")
    if wanted & {"narrow", "narrow-drill-down"}:
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        await pilot.pause(1.5)
        if "narrow" in wanted:
            shots["narrow"] = app.export_screenshot(title=title("narrow"))
        if "narrow-drill-down" in wanted:
            await pilot.press("enter")
            await settle(pilot, lambda: getattr(app.screen, "detail", None) is not None)
            shots["narrow-drill-down"] = app.export_screenshot(title=title("narrow-drill-down"))
            await pilot.press("escape")
    if "wide" in wanted:
        await pilot.resize_terminal(160, 48)
        await settle(pilot)
        await pilot.pause(1.5)
        shots["wide"] = app.export_screenshot(title=title("wide"))


def _worker_that_dies(target, stop: threading.Event) -> None:
    """`render-7` takes four report jobs with a 5 s lease a little into the run, and is never heard from again."""
    if stop.wait(WARMUP_S / 3):
        return
    with Database.open(target) as db:
        Queue(db).claim("render-7", ["report"], batch=4, lease=5)


# -- seeds' own tables, driven by the seeds' own SQL (queuetop's shape driver, as `queuetop load` uses it) ---------
def seed(name: str, seed_name: str, size: tuple[int, int], shots: dict[str, str]) -> None:
    target = parse_target(f"{seed_name}.db")
    layout: Layout = load_layout(seed_name)
    with Database.open(target, create=True) as db:
        create_demo_tables(db, layout)  # the shape's tables, as `queuetop demo --layout` makes them
    stop = threading.Event()
    threads = [threading.Thread(target=_seed_producer, args=(target, layout, stop), daemon=True)]
    servers = ("app-01", "app-02") if seed_name == "job_queue" else ("a", "b")
    threads += [threading.Thread(target=_seed_consumer, args=(target, layout, server, stop, i), daemon=True)
                for i, server in enumerate(servers)]  # fmt: skip
    if seed_name == "job_queue":
        threads.append(threading.Thread(target=_seed_server_that_dies, args=(target, layout, stop), daemon=True))
    for thread in threads:
        thread.start()
    monitor, actions = Monitor(target, layout), Actions(target, layout)
    app = QueuetopApp(monitor, actions)

    async def steps(pilot: Pilot) -> None:
        await pilot.pause(WARMUP_S / 1.5)
        await pilot.press("w", "w")
        await settle(pilot)
        shots[name] = app.export_screenshot(title=title(name))

    try:
        run_app(app, size, steps)
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)
        monitor.close()
        actions.close()


def _seed_producer(target, layout: Layout, stop: threading.Event) -> None:
    """The seed's own insert (`ShapeQueue`, as `queuetop enqueue`): a backlog, then a steady trickle. On seed 004,
    mixed priorities and one job in 25 scheduled ten minutes ahead."""
    rng = random.Random(4)
    job_queue = "priority" in layout.enqueue_fields
    with Database.open(target) as db:
        queue = ShapeQueue(db, layout)
        for i in range(400):  # a backlog to start from
            queue.enqueue_many(None, 1, info=f"job {i}", priority=rng.choice((10, 128, 255)) if job_queue else None,
                               delay_s=600 if job_queue and i % 25 == 0 else 0)  # fmt: skip
        while not stop.wait(0.1):
            for _ in range(rng.randint(1, 4)):
                queue.enqueue_many(None, 1, info=f"job {rng.randrange(10**6)}")


def _seed_consumer(target, layout: Layout, server: str, stop: threading.Event, index: int) -> None:
    """The seed's own dequeue and completion (`ShapeWorker`, as `queuetop load` drives them): batches of three
    where the seed takes batches (usp_API_Get_Job's @nWorkCount), one at a time where it takes one."""
    rng = random.Random(40 + index)
    with Database.open(target) as db:
        worker = ShapeWorker(db, layout)
        while not stop.is_set():
            jobs = worker.claim(server, batch=3)
            if not jobs:
                stop.wait(0.2)
                continue
            for job in jobs:
                stop.wait(rng.uniform(0.02, 0.15))
                worker.complete(job)  # nothing to do where taking is final (seed 002's flag)


def _seed_server_that_dies(target, layout: Layout, stop: threading.Event) -> None:
    """app-03 takes a batch with a short lease and dies: its claims time out, the panel marks it probably dead."""
    if stop.wait(3.0):
        return
    with Database.open(target) as db:
        ShapeWorker(db, layout).claim("app-03", batch=6, lease_s=5)


# -- several targets, as `queuetop watch --all` builds them from a config file -------------------------------------
TARGETS_TOML = """\
[targets.orders]
db = "orders.db"

[targets.billing]
db = "billing.db"
layout = "job_queue"
read_only = true

[targets.legacy]
db = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=1;DATABASE=jobs;UID=ops"
layout = "work_queue"
interval = 5
"""


def targets(shots: dict[str, str]) -> None:
    """`orders`: the native demo's load; `billing` (read-only): seed 004's dbo.Job_Queue under `queuetop demo
    --layout job_queue`'s load, through the seed's own dequeue; `legacy`: a PostgreSQL server nobody listens for."""
    config = Path("queuetop.toml").resolve()
    config.write_text(TARGETS_TOML, encoding="utf-8")
    orders, billing = parse_target("orders.db"), parse_target("billing.db")
    job_queue = load_layout("job_queue")
    with Database.open(orders, create=True) as db:
        init_schema(db)
    with Database.open(billing, create=True) as db:
        create_demo_tables(db, job_queue)
    names = tuple(t for t, _ in load_types("4", job_queue)) if job_queue.has_job_type else (job_queue.queue_table,)
    loads = [start_background_load(orders, replace(demo_config(), release_every_s=60.0)),
             start_background_load(billing, demo_config(job_queue, names), job_queue)]  # fmt: skip
    # What `queuetop --config queuetop.toml watch --all` does before it runs the dashboard (cli.main, _watch_many).
    args = _parser().parse_args(["watch", "--config", str(config), "--all", "--no-history", "--no-bell"])
    args.per_target = configure(args)
    args = with_per_target(args)

    async def steps(pilot: Pilot) -> None:
        await pilot.pause(WARMUP_S)
        await pilot.press("w", "w")
        await settle(pilot)
        shots["targets"] = pilot.app.export_screenshot(title=title("targets"))

    try:
        with ExitStack() as stack:
            app = multi_app(watched_targets(args), stack, job_types=args.types, bell=args.bell)
            with logging_to(None):  # the outage's warnings go nowhere, as they go to the log file, not the screen
                run_app(app, SIZE, steps)
    finally:
        for load in loads:
            load.stop()


# -- an SLO breached during bursts -----------------------------------------------------------------------------------
SLO_LIMIT = "thumbnail:max_depth=60"  # as `--slo thumbnail:max_depth=60` gives it
BURSTS = ((8.0, 260), (38.0, 200))  # (seconds into the run, thumbnail jobs): the demo's three consumers drain them


def slo(shots: dict[str, str]) -> None:
    """The demo's load plus two bursts of thumbnail jobs: the first passes the limit and drains below it again (its
    marks on the charts), the second is still being drained when the picture is taken (the status line)."""
    with native_demo("slo.db", _bursts) as (load, monitor, actions):
        app = QueuetopApp(monitor, actions, background=load, slos=Slos((slo_from_option(SLO_LIMIT),)), bell=False)

        async def steps(pilot: Pilot) -> None:
            await pilot.pause(BURSTS[1][0] + 8.0)
            await pilot.press("w", "w")
            app.main.query_one(QueueTable).select_type("thumbnail")
            await settle(pilot)
            shots["slo"] = app.export_screenshot(title=title("slo"))

        run_app(app, SIZE, steps)


def _bursts(target, stop: threading.Event) -> None:
    started = time.monotonic()
    with Database.open(target) as db:
        for at, count in BURSTS:
            if stop.wait(max(0.0, started + at - time.monotonic())):
                return
            Queue(db).enqueue_many("thumbnail", count, created_by="burst")


# -- the command ----------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pictures", nargs="*", metavar="NAME", help=f"default: {' '.join(PICTURES)}")
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots", help="folder for the SVGs")
    parser.add_argument("--fixed", action="store_true",
                        help="render the snapshot tests' fixed scenes (queuetop/tui/scenes.py) instead")
    parser.add_argument("--list", action="store_true", help="list the pictures (and the fixed scenes) and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, description in PICTURES.items():
            print(f"{name:16} {description}")
        print("\nfixed scenes (--fixed):")
        for name, scene in SCENES.items():
            print(f"{name:16} {scene.description}")
        return 0
    known = SCENES if args.fixed else PICTURES
    unknown = [name for name in args.pictures if name not in known]
    if unknown:
        parser.error(f"unknown picture(s): {', '.join(unknown)} (see --list)")
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    shots: dict[str, str] = {}
    if args.fixed:
        for name in args.pictures or SCENES:
            shots[name] = render_svg(SCENES[name])
    else:
        wanted = set(args.pictures or PICTURES)
        with tempfile.TemporaryDirectory(prefix="queuetop-screenshots-") as folder, chdir(folder):
            os.environ.pop("QUEUETOP_DB", None)
            if wanted & set(NATIVE_PICTURES):
                print("native demo: about a minute of real load ...", flush=True)
                native(wanted, shots)
            if "job-queue" in wanted:
                print("seed 004's dbo.Job_Queue ...", flush=True)
                seed("job-queue", "job_queue", (132, 40), shots)
            if "work-queue" in wanted:
                print("seed 002's dbo.work_queue ...", flush=True)
                seed("work-queue", "work_queue", SIZE, shots)
            if "targets" in wanted:
                print("three targets, one down ...", flush=True)
                targets(shots)
            if "slo" in wanted:
                print("an SLO breached during bursts ...", flush=True)
                slo(shots)
    for name, svg in shots.items():
        path = out / f"{name}.svg"
        path.write_text(svg, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
