"""The headline: one line above the table saying what is wrong now, worst first, with no SLO configured —
"report backing up: in 0.8/s > out 0.5/s for 2m10s, oldest 2m39s · 3 claims timed out (email)" — or that nothing
is ("all queues draining", "all queues empty"). What counts as trouble is what colours the table
(`table.trouble`): claims timed out, jobs lost, rows in no state, arrivals outpacing completions with work
waiting, no completion for a minute while work waits, an oldest job past a minute. How long a queue has been
backing up needs more than one poll: `HeadlineWatch` remembers since when, per type (the server's clock).

Plain text first, colour second: each part is words a monochrome terminal shows as well (NO_COLOR), and the
style only repeats them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from queuetop.core import format as fmt
from queuetop.tui.table import ALERT, OLD_WARN_S, WARN, age_style, outpaced
from queuetop.watch.snapshot import Snapshot, TypeStats

PARTS = 3  # at most this many troubles named: the line must fit, and the worst come first


@dataclass(frozen=True)
class Headline:
    text: str
    style: str  # "" (nothing wrong), WARN or ALERT: the worst part's


@dataclass
class HeadlineWatch:
    """Successive snapshots of one queue → its headline; remembers since when each type has been backing up or
    stalled, so the line can say for how long."""

    _backing: dict[str, datetime] = field(default_factory=dict)
    _stalled: dict[str, datetime] = field(default_factory=dict)

    def observe(self, snapshot: Snapshot) -> Headline:
        now = snapshot.taken_at
        rows = snapshot.types
        self._backing = _since(self._backing, [r.job_type for r in rows if outpaced(r)], now)
        self._stalled = _since(self._stalled, [r.job_type for r in rows if stalled(r)], now)
        # stalled once work has waited a minute with nothing completed: by its oldest job, or as long as seen so
        stuck = {r.job_type for r in rows if r.job_type in self._stalled
                 and max(r.oldest_age_s or 0.0, _lasted(self._stalled[r.job_type], now)) >= 60.0}  # fmt: skip
        parts: list[tuple[int, str, str]] = []  # (rank: lower is worse, words, style)
        _counted(parts, 0, rows, lambda r: r.timed_out, "claim timed out", "claims timed out", ALERT)
        _counted(parts, 1, rows, lambda r: r.lost, "job lost", "jobs lost", ALERT)
        for row in sorted((r for r in rows if r.job_type in stuck), key=lambda r: -r.depth):
            parts.append((2, f"{row.job_type} stalled: {fmt.count(row.depth)} waiting, nothing completed for "
                             f"{fmt.duration(_lasted(self._stalled[row.job_type], now, 60.0))}", ALERT))
        for row in sorted((r for r in rows if r.job_type in self._backing and r.job_type not in stuck),
                          key=lambda r: -(r.oldest_age_s or 0)):  # fmt: skip
            lasted = _lasted(self._backing[row.job_type], now)
            parts.append((3, f"{row.job_type} backing up: in {fmt.rate(row.arrivals_10s_per_s)}/s > out "
                             f"{fmt.rate(row.completions_10s_per_s)}/s"
                             + (f" for {fmt.duration(lasted)}" if lasted >= 1 else "")
                             + (f", oldest {fmt.duration(row.oldest_age_s)}" if row.oldest_age_s else ""),
                          age_style(row) or WARN))  # fmt: skip
        named = stuck | set(self._backing)  # their oldest job is said with them
        for row in sorted(rows, key=lambda r: -(r.oldest_age_s or 0)):
            age = row.oldest_age_s or 0
            if age > OLD_WARN_S and row.job_type not in named:
                parts.append((4, f"{row.job_type} oldest {fmt.duration(age)}", age_style(row)))
        _counted(parts, 5, rows, lambda r: r.in_no_state, "row in no state", "rows in no state", WARN)
        if not parts:
            return Headline(_calm(snapshot), "")
        parts.sort(key=lambda part: part[0])
        shown = parts[:PARTS]
        more = f" · +{len(parts) - PARTS} more" if len(parts) > PARTS else ""
        style = ALERT if any(style == ALERT for _, _, style in shown) else WARN
        return Headline("▲ " + " · ".join(words for _, words, _ in shown) + more, style)


def stalled(row: TypeStats) -> bool:
    """Work waits and nothing completed over the last minute (where completions are known at all); named in the
    headline once the work has waited that minute too."""
    return row.depth > 0 and row.completions_60s_per_s == 0.0


UNTIL_COUNTED = ("claimed", "timed_out", "dead")  # a deep untracked queue's first look leaves these None (firstlook.py)


def _calm(snapshot: Snapshot) -> str:
    totals = snapshot.totals
    if any(snapshot.provides(figure) and getattr(totals, figure) is None for figure in UNTIL_COUNTED):
        return "≈ a first look: depths from a sample, the other states counted at the next poll"  # no ✓ unseen
    if not snapshot.types or all(r.depth == 0 and not r.claimed for r in snapshot.types):
        return "✓ all queues empty"
    if any(r.completions_10s_per_s is not None for r in snapshot.types):
        return "✓ all queues draining"
    return "✓ nothing looks wrong"  # a shape that cannot know its completions: no claim to draining


def _counted(parts: list[tuple[int, str, str]], rank: int, rows: tuple[TypeStats, ...], figure, one: str,
             many: str, style: str) -> None:  # fmt: skip
    """One part for a count summed over the types, naming the types that have it (the most first)."""
    having = sorted(((figure(r), r.job_type) for r in rows if figure(r)), key=lambda pair: (-pair[0], pair[1]))
    if having:
        total = sum(n for n, _ in having)
        names = ", ".join(name for _, name in having[:2]) + (", …" if len(having) > 2 else "")
        parts.append((rank, f"{fmt.count(total)} {one if total == 1 else many} ({names})", style))


def _since(before: dict[str, datetime], now_in: list[str], now: datetime) -> dict[str, datetime]:
    """Since when each type in `now_in` has been so: kept from before, else from now; the others forgotten."""
    return {job_type: before.get(job_type, now) for job_type in now_in}


def _lasted(since: datetime, now: datetime, at_least: float = 0.0) -> float:
    return max(at_least, (now - since).total_seconds())
