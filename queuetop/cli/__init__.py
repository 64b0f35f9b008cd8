"""The `queuetop` command: `main`, which parses the command line, fills in the config file's settings, runs one
command and turns every way it can end into the README's exit codes.

Every failure a user can cause or meet (a bad argument, an unreachable server, a missing schema) ends as one
line on stderr naming the cause and the fix, with exit code 2; `--debug` adds the traceback. SIGTERM and SIGHUP
stop a command as Ctrl-C does. The package, one module a job:

- `parser`: the options and the help of every command;
- `common`: what every command does first (the target, the layout, the config file's settings per target);
- `queue_commands`: init, stats, enqueue, release, dead, workers, layouts, detect, doctor;
- `watch_commands`: the dashboard, demo, load, history;
- `fleet_commands`: config, check, serve, alerts — the commands that take several targets.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from collections.abc import Sequence

from queuetop.cli.common import EXIT_USAGE, _refuse_writes, configure, slos_from_args, with_per_target
from queuetop.cli.parser import COMMANDS, Command, _parser
from queuetop.core.errors import STOP_SIGNALS, Stopped
from queuetop.db import QueuetopError, UsageError

__all__ = ["_parser", "configure", "main", "with_per_target"]


# -- entry point -----------------------------------------------------------------------------------------
def _names_a_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> bool:
    """Whether the first word that is no option's value is a command: in `queuetop -t release -t up`, `release`
    names a target, and the command is the dashboard."""
    watch = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["watch"]
    takes_value = {flag for p in (parser, watch) for action in p._actions if action.nargs != 0
                   for flag in action.option_strings}  # fmt: skip
    words = iter(argv)
    for word in words:
        if word == "--":
            return next(words, None) in COMMANDS
        if not word.startswith("-"):
            return word in COMMANDS
        if word in takes_value:
            next(words, None)  # the option's value, whatever it says
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """The command. Its exit codes: 0 done (check: OK), 1 a verdict that failed (check: a breach; load: jobs lost
    or duplicated) or a bug, 2 an error, 128 + N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP) where
    there is no verdict to give (load gives its verdict, serve exits 0), 141 stdout closed (`| head`)."""
    saved = {signum: signal.signal(signum, _stop) for signum in STOP_SIGNALS if signum != signal.SIGINT}
    try:
        code = _run(argv)
        sys.stdout.flush()  # here, not at exit: a reader that left must be met where it can be handled
        return code
    except BrokenPipeError:
        # The reader left (`queuetop stats | head -1`): end as a pipeline expects, quietly. stdout goes to
        # /dev/null so the interpreter's own flush at exit does not complain about the same pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def _stop(signum: int, _frame: object) -> None:
    raise Stopped(signum)


def _run(argv: Sequence[str] | None) -> int:
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    dashboard = not _names_a_command(parser, argv) and not {"-h", "--help", "--version"} & set(argv)
    if dashboard:
        argv.insert(0, "watch")  # `queuetop` alone is the dashboard
    args = parser.parse_args(argv)
    if dashboard and not _stdout_is_terminal():  # `queuetop | head`, `queuetop > file`: the figures once, not a screen
        args.run = Command("queue_commands", "stats_for_a_pipe")
    try:
        if args.command == "demo" and args.targets:
            raise UsageError("`queuetop demo` runs on a queue of its own, not on a named target",
                             "drop -t; `queuetop demo --db demo.db` keeps the demo queue in demo.db")
        if args.command not in ("demo", "layouts"):
            args.per_target = configure(args)
            args = with_per_target(args)
            _refuse_writes(args)
        else:  # the demo's queue is its own: no target, no config file; only the command line's SLOs
            args.interval = 1.0 if getattr(args, "interval", None) is None else args.interval
            args.read_only = bool(getattr(args, "read_only", False))
            args.slos = slos_from_args(args)
        return args.run(args)
    except QueuetopError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"queuetop: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        signum = Stopped.signal_of(exc)
        print("queuetop: interrupted" if signum == signal.SIGINT else
              f"queuetop: stopped by {signal.Signals(signum).name}", file=sys.stderr)  # fmt: skip
        return 128 + signum
    except BrokenPipeError:
        raise
    except Exception as exc:  # a bug: say so in one line unless asked for the traceback
        if args.debug:
            raise
        print(f"queuetop: unexpected error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
              file=sys.stderr)  # fmt: skip
        return 1
