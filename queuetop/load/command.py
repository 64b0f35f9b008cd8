"""`queuetop load` and the background load of `queuetop demo` / `queuetop watch --with-load`.

SKELETON handed to the load-driver work: argument definitions are final, the rest is to be written.
"""

from __future__ import annotations

import argparse


def add_load_arguments(parser: argparse.ArgumentParser) -> None:
    """The load options, shared by `load`, `demo` and `watch --with-load`."""
    group = parser.add_argument_group("load")
    group.add_argument("--producers", type=int, default=2, metavar="N", help="producer threads (default 2)")
    group.add_argument("--consumers", type=int, default=4, metavar="N", help="consumer threads (default 4)")
    group.add_argument("--rate", default="100", metavar="R",
                       help="jobs/s enqueued in total, or 'unlimited' (default 100)")
    group.add_argument("--types", default="3", metavar="SPEC",
                       help="a number of job types, or weighted names such as email:5,report:1 (default 3)")
    group.add_argument("--duration", type=float, metavar="S", help="stop after S seconds")
    group.add_argument("--jobs", type=int, metavar="N", help="stop after N jobs are enqueued (and processed)")
    group.add_argument("--work", default="uniform:5-50", metavar="SPEC",
                       help="processing time in ms: fixed:20, uniform:5-50, exp:30, or per type "
                            "email=fixed:5,report=exp:200 (default uniform:5-50)")
    group.add_argument("--fail", type=float, default=0.0, metavar="F",
                       help="fraction of attempts that fail and are retried (default 0)")
    group.add_argument("--crash", type=float, default=0.0, metavar="F",
                       help="fraction of claims abandoned as if the worker died (default 0)")
    group.add_argument("--lease", type=float, default=30.0, metavar="S", help="claim timeout in seconds (default 30)")
    group.add_argument("--batch", type=int, default=1, metavar="N", help="jobs claimed at once (default 1)")
    group.add_argument("--release-every", type=float, metavar="S",
                       help="release timed-out claims every S seconds, as a sweeper would")
    group.add_argument("--max-attempts", type=int, default=3, metavar="N",
                       help="attempts before a job is dead (default 3)")


def run_load_command(args: argparse.Namespace) -> int:
    raise NotImplementedError("queuetop load is being built")
