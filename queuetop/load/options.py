"""The options of a load (`queuetop load`, `watch --with-load`, `demo`), apart from the load itself: the command
line is built for every command, and only these run a load (`command.py` imports the driver and its reports)."""

from __future__ import annotations

import argparse

from queuetop.layouts import CLAIM_FORMS

DEFAULT_DURATION_S = 30.0
DRAIN_S = 10.0  # after --duration: how long consumers may finish what is left (LoadConfig.drain_s)


def add_load_arguments(parser: argparse.ArgumentParser) -> None:
    """The load options, shared by `load` and `watch --with-load`.

    `--types` is stored as `load_types`: `watch` already has `--type` stored as `types` (the job types shown).
    """
    group = parser.add_argument_group("load")
    group.add_argument("--producers", type=int, default=2, metavar="N", help="producer threads (default 2)")
    group.add_argument("--consumers", type=int, default=4, metavar="N", help="consumer threads (default 4)")
    group.add_argument("--rate", default="100", metavar="R",
                       help="jobs/s enqueued in total, or 'unlimited' (default 100)")  # fmt: skip
    group.add_argument("--types", dest="load_types", metavar="SPEC",
                       help="a number of job types (named load-1, load-2, ...; on seed 000's GUID JobType: "
                            "GUIDs, its own two first), or weighted names such as email:5,report:1 (default 3; "
                            "a shape without a job type column takes none)")  # fmt: skip
    group.add_argument("--duration", type=float, metavar="S",
                       help=f"stop producing after S seconds, let consumers finish for up to "
                            f"{DRAIN_S:g} s, then report (`load`: default {DEFAULT_DURATION_S:g} s "
                            f"unless --jobs is given; with --with-load: produce until quit)")  # fmt: skip
    group.add_argument("--jobs", type=int, metavar="N",
                       help="enqueue N jobs, then finish when all are completed or dead")  # fmt: skip
    group.add_argument("--work", default="uniform:5-50", metavar="SPEC",
                       help="processing time in ms: fixed:20, uniform:5-50, exp:30 (mean), or per type "
                            "email=fixed:5,report=exp:200; an item without a type is the others' "
                            "(default uniform:5-50)")  # fmt: skip
    group.add_argument("--fail", type=float, default=0.0, metavar="F",
                       help="fraction of attempts that fail and are retried after 1 s (default 0); a seed "
                            "fails its own way (004: left to time out; 001: never completed, lost until released)"
                            ", and seeds without a failure path refuse it")  # fmt: skip
    group.add_argument("--crash", type=float, default=0.0, metavar="F",
                       help="fraction of claims abandoned as if the worker died: they time out and are "
                            "released (at the end of the run, at once); on a seed whose taking is final they stay "
                            "stranded, as its table leaves them (default 0)")  # fmt: skip
    group.add_argument("--lease", type=float, metavar="S",
                       help="claim timeout in seconds (default 30; seed 004's job_queue: its own 15 min)")
    group.add_argument("--batch", type=int, default=1, metavar="N",
                       help="jobs claimed at once (default 1; of the seeds, only 004's dequeue takes more)")
    group.add_argument("--claim-form", choices=tuple(CLAIM_FORMS), metavar="FORM",
                       help="which of the seed's dequeues to run, where it offers several (work_queue: "
                            "select_update, its default; update_top; unlocked, the seed's broken first try, "
                            "which the verdict must catch). `queuetop layouts --show NAME` lists a shape's forms")
    group.add_argument("--release-every", type=float, metavar="S",
                       help="release the queue's timed-out claims every S seconds, as a sweeper would "
                            "(default: off, or half the lease when --crash is set)")  # fmt: skip
    group.add_argument("--max-attempts", type=int, default=3, metavar="N",
                       help="attempts before a job is dead (default 3)")  # fmt: skip
