"""The commands that take several targets: config, check (SLOs for cron and CI), serve (OpenMetrics), alerts
(Prometheus rules from the SLOs)."""


from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from queuetop.cli.common import (
    _is_embedded_default,
    _layout_name,
    open_target,
    resolve_layout,
    settings_from,
    target_label,
)
from queuetop.cli.watch_commands import _watch_layout
from queuetop.db import QueuetopError, UsageError, parse_target
from queuetop.watch.snapshot import Snapshot

if TYPE_CHECKING:
    from queuetop.serve.check import TargetResult

STOP_CHECK_S = 0.2  # `serve`'s main thread wakes this often to run a signal's handler (SIGTERM, SIGHUP)


def cmd_config(args: argparse.Namespace) -> int:
    runs = args.per_target
    if args.json:
        print(json.dumps({"config_file": str(runs[0].effective.config_path) if runs[0].effective.config_path else None,
                          "targets": [run.effective.to_json() for run in runs]}, indent=2))
        return 0
    path = runs[0].effective.config_path
    from queuetop.cli.config import find_config, load_config

    found, _ = find_config(args.config)
    print(f"config file: {path}" if path else f"config file: none ({found} does not exist)")
    for run in runs:
        print()
        print("\n".join(run.effective.lines()))
    names = list(load_config(found, False).targets) if path else []
    if names:
        print(f"\ntargets in the file: {', '.join(names)}  (choose with -t NAME)")
    return 0


def cmd_alerts(args: argparse.Namespace) -> int:
    from queuetop.serve.alerts import render, rules_for

    runs = args.per_target
    path = runs[0].effective.config_path
    source = f"the SLOs of {path} and the command line" if path else "the SLOs of the command line"
    rules = rules_for([(target_label(run), run.effective.slos, bool(run.effective.target)) for run in runs],
                      args.for_s, args.backing_up_s, args.stalled_s)  # fmt: skip
    if not any(run.effective.slos for run in runs):
        print("queuetop: no SLO given (config file [slo], --max-oldest-age, --slo ...): only the rules no SLO "
              "needs (a target queuetop cannot read, no series, a queue backing up or stalled)", file=sys.stderr)
    print(render(rules, source), end="")
    return 0


def cmd_grafana(args: argparse.Namespace) -> int:
    from queuetop.serve.grafana import render

    print(render(), end="")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from queuetop.serve.check import overall, report_lines

    if args.for_s and args.interval is not None and not 0.1 <= args.interval <= 3600:
        raise UsageError(f"--interval must be from 0.1 to 3600 seconds, not {args.interval}")
    runs = args.per_target
    # Each target on a thread and connection of its own; daemon threads, so that Ctrl-C (or SIGTERM) ends the
    # command at once: `stop` ends each target's wait between polls, and a poll still running is not waited for.
    stop = threading.Event()
    outcomes: dict[int, TargetResult | BaseException] = {}

    def check(i: int) -> None:
        try:
            outcomes[i] = _check_one(runs[i], stop)
        except BaseException as exc:  # a bug: raised below, in the command's own thread, as before
            outcomes[i] = exc

    threads = [threading.Thread(target=check, args=(i,), name=f"queuetop-check-{i}", daemon=True)
               for i in range(len(runs))]  # fmt: skip
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:
        stop.set()
        raise
    results = []
    for i in range(len(runs)):
        outcome = outcomes[i]
        if isinstance(outcome, BaseException):
            raise outcome
        results.append(outcome)
    status = overall(results)
    if args.json:
        print(json.dumps({"status": status.value, "exit_code": status.exit_code,
                          "targets": [r.to_json() for r in results]}, indent=2))  # fmt: skip
    else:
        for result in results:
            print("\n".join(report_lines(result)))
    return status.exit_code


def _check_one(args: argparse.Namespace, stop: threading.Event) -> TargetResult:
    from queuetop.serve.check import run_check
    from queuetop.watch.collector import collector_for

    def session() -> tuple[Callable[[], Snapshot], Callable[[], None]]:
        db = open_target(args, purpose="monitor")
        try:
            layout, note = resolve_layout(args, db)
            # a verdict rests on counts, never on a deep queue's sampled first look
            collector = collector_for(db, layout, settings=settings_from(args), note=note, first_look=False)
        except BaseException:
            db.close()
            raise
        return collector.poll, db.close

    try:
        display = parse_target(args.db).display
    except QueuetopError as exc:
        from queuetop.serve.check import TargetResult

        return TargetResult(target_label(args), args.db or "", error=str(exc))
    return run_check(target_label(args), display, session, args.effective.slos, args.for_s, args.interval,
                     sleep=stop.wait)


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {text!r} is not HOST:PORT", "e.g. 127.0.0.1:9187, or 0.0.0.0:9187 for every "
                         "interface (only when Prometheus runs on another machine)")
    return host, int(port)


def cmd_serve(args: argparse.Namespace) -> int:
    import logging
    from concurrent.futures import ThreadPoolExecutor

    from queuetop.serve.exporter import Exporter, TargetPoller
    from queuetop.watch.monitor import Monitor

    host, port = parse_listen(args.listen)
    runs = args.per_target
    labels = [target_label(run) for run in runs]
    for run in runs:
        if run.interval is not None and not 0.1 <= run.interval <= 3600:
            raise UsageError(f"--interval must be from 0.1 to 3600 seconds, not {run.interval}")
    if args.max_types < 1:
        raise UsageError(f"--max-types must be at least 1, not {args.max_types}",
                         'types past it are exported together as job_type="(other)"')

    def poller(run: argparse.Namespace) -> TargetPoller:
        target = parse_target(run.db)
        auto_init = _is_embedded_default(run, target) and _layout_name(run) in (None, "native")
        layout, note = _watch_layout(run, target, auto_init)  # a dead target: the layout given, or native
        monitor = Monitor(target, layout, auto_init=auto_init, settings=settings_from(run), note=note)
        return TargetPoller(target_label(run), monitor, run.interval, slos=run.effective.slos,
                            max_types=args.max_types)

    with ThreadPoolExecutor(max_workers=len(runs)) as pool:  # one slow target must not hold up the others' start
        pollers = list(pool.map(poller, runs))
    # A service's log: each target lost and found again, with the time, on stderr (journald, docker logs).
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger = logging.getLogger("queuetop")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    # Before anything is announced: a SIGTERM that comes right after "serving" must still stop cleanly.
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGHUP):  # systemd and docker stop a service with SIGTERM
        signal.signal(signum, lambda *_: stop.set())
    exporter = Exporter(pollers, host, port)
    try:
        exporter.start()
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.listen}: {exc.strerror}", "choose another --listen port") from None
    print(f"queuetop: serving {exporter.url} for {', '.join(labels)}, polling every "
          f"{', '.join(f'{p.interval_s:g}' for p in pollers)} s; Ctrl-C stops", file=sys.stderr)
    try:
        # In short waits, not one: Python runs a signal's handler on the main thread, and a SIGTERM the kernel hands
        # to one of the pollers' threads left the main thread asleep in a wait without a timeout for good (the
        # handler never ran: 2 `serve` processes of 30 under load kept serving).
        while not stop.wait(STOP_CHECK_S):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        exporter.stop()  # each target's connection closed, not dropped
    return 0
