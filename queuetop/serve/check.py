"""`queuetop check`: poll a target once, or for a while, and judge its SLOs, for cron, CI and Nagios.

One poll: every breach is reported. With `--for 30s` the target is polled every interval for 30 s and a breach
counts only if it was seen at every poll that could judge it (as a Prometheus alert's `for:`), so one slow poll
or a burst that clears by itself does not page anyone; breaches seen at some polls only are listed apart. The
dead rate needs two polls, so it is judged only with --for.

The result of each target is immutable; the exit code of the command follows from all of them: 1 if any
breach, else 2 if anything could not be checked (a target unreachable, an SLO its shape cannot know, no SLO at
all), else 0.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from queuetop.core.errors import QueuetopError
from queuetop.watch.pace import Pace
from queuetop.watch.slo import Breach, Check, Slo, Slos, SloWatch, Verdict
from queuetop.watch.snapshot import Snapshot

Session = Callable[[], tuple[Callable[[], Snapshot], Callable[[], None]]]  # opens: (poll, close)


class Status(Enum):
    OK = "ok"
    BREACH = "breach"
    UNKNOWN = "could not check"

    @property
    def exit_code(self) -> int:
        return {Status.OK: 0, Status.BREACH: 1, Status.UNKNOWN: 2}[self]


@dataclass(frozen=True)
class TargetResult:
    name: str
    display: str
    polls: int = 0
    span_s: float = 0.0  # from the first poll to the last
    layout: str | None = None
    error: str | None = None  # could not poll (or no SLO to check)
    breaches: tuple[Breach, ...] = ()  # seen at every poll that judged them
    passing: tuple[Breach, ...] = ()  # seen at some polls only (with --for)
    not_checkable: tuple[Check, ...] = ()
    no_data: tuple[Check, ...] = ()
    judged: int = 0  # checks that ended ok or breached at the last poll

    @property
    def status(self) -> Status:
        if self.breaches:
            return Status.BREACH
        if self.error or self.not_checkable:
            return Status.UNKNOWN
        return Status.OK

    def to_json(self) -> dict[str, Any]:
        return {"target": self.name, "db": self.display, "status": self.status.value, "layout": self.layout,
                "error": self.error, "polls": self.polls, "span_s": round(self.span_s, 3), "judged": self.judged,
                "breaches": [b.to_json() for b in self.breaches],
                "passing": [b.to_json() for b in self.passing],
                "not_checkable": [{"slo": c.slo.value, "limit": c.limit, "reason": c.reason}
                                  for c in self.not_checkable],
                "no_data": [{"slo": c.slo.value, "job_type": c.job_type, "limit": c.limit, "reason": c.reason}
                            for c in self.no_data]}  # fmt: skip


def overall(results: Sequence[TargetResult]) -> Status:
    statuses = {r.status for r in results}
    return Status.BREACH if Status.BREACH in statuses else Status.UNKNOWN if Status.UNKNOWN in statuses else Status.OK


def run_check(name: str, display: str, session: Session, slos: Slos, for_s: float = 0.0, interval_s: float = 1.0,
              *, sleep: Callable[[float], object] = time.sleep,
              clock: Callable[[], float] = time.monotonic) -> TargetResult:  # fmt: skip
    """Poll through `session` (opened here, in the calling thread, and closed before returning) and judge.
    `sleep` waits between polls; when it returns True (an Event's wait, set on Ctrl-C) the check ends there."""
    if not slos:
        return TargetResult(name, display, error="no SLO to check: give one (--max-oldest-age 60, --slo "
                                                 "email:max_depth=100) or set [slo] in the config file")
    try:
        poll, close = session()
    except QueuetopError as exc:
        return TargetResult(name, display, error=str(exc))
    watch = SloWatch(slos, target=name)
    tally: dict[tuple[str, str, Slo], list[int]] = {}  # key -> [polls breached, polls ok]
    last: dict[tuple[str, str, Slo], Breach] = {}
    polls, layout, started, evaluation, pace = 0, None, clock(), None, Pace()
    try:
        while True:
            try:
                snapshot = poll()
            except QueuetopError as exc:
                return TargetResult(name, display, polls, clock() - started, layout,
                                    error=f"poll {polls + 1} failed: {exc}")  # fmt: skip
            polls, layout = polls + 1, snapshot.layout
            pace.took(snapshot.poll_ms / 1000)
            watched = watch.observe(snapshot)
            evaluation = watched.evaluation
            for check in evaluation.checks:
                if check.job_type is not None and check.verdict in (Verdict.BREACH, Verdict.OK):
                    counts = tally.setdefault((name, check.job_type, check.slo), [0, 0])
                    counts[0 if check.verdict is Verdict.BREACH else 1] += 1
            last.update((breach.key, breach) for breach in watched.breaches)
            wait = pace.wait_s(interval_s)  # dear polls come further apart (watch/pace.py)
            if clock() - started + wait > for_s or sleep(wait) is True:
                break
    finally:
        close()
    assert evaluation is not None
    sustained = tuple(last[k] for k, (bad, good) in tally.items() if bad and not good)
    passing = tuple(last[k] for k, (bad, good) in tally.items() if bad and good)
    judged = sum(1 for c in evaluation.checks if c.verdict in (Verdict.OK, Verdict.BREACH))
    return TargetResult(name, display, polls, clock() - started, layout, None, sustained, passing,
                        evaluation.not_checkable, evaluation.no_data, judged)  # fmt: skip


def report_lines(result: TargetResult) -> list[str]:
    """What `queuetop check` prints for one target: a headline, then one line per finding."""
    where = f"{result.name} ({result.display}" + (f", layout {result.layout})" if result.layout else ")")
    polls = f"{result.polls} poll{'s' if result.polls != 1 else ''}" + (
        f" over {result.span_s:.0f} s" if result.polls > 1 else "")  # fmt: skip
    status = result.status
    if result.error:
        head = f"{where}: COULD NOT CHECK: {result.error}"
    elif status is Status.BREACH:
        head = f"{where}: BREACH: {len(result.breaches)} of {_checks(result.judged)}, {polls}"
    elif status is Status.UNKNOWN:
        head = f"{where}: COULD NOT CHECK every SLO ({_checks(result.judged)} ok, {polls})"
    else:
        head = f"{where}: OK: {_checks(result.judged)} met, {polls}"
    lines = [head]
    for breach in result.breaches:
        lasted = f", for {breach.lasted_s:.0f} s" if breach.lasted_s else ""
        lines.append(f"  BREACH         {breach.describe()} ({breach.slo.value}{lasted})")
    for breach in result.passing:
        lines.append(f"  not sustained  {breach.describe()} ({breach.slo.value}): breached at some polls only")
    for check in result.not_checkable:
        lines.append(f"  NOT CHECKABLE  {check.slo.value}: {check.reason}")
    for check in result.no_data:
        lines.append(f"  no data        {check.job_type} {check.slo.value}: {check.reason}")
    return lines


def _checks(n: int) -> str:
    return f"{n} check{'s' if n != 1 else ''}"
