"""What the history file keeps and where: the figures stored per poll (their units and how a bucket combines
them), the levels and their retention, one record, and the file's place in the user's data directory."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from operator import attrgetter
from pathlib import Path

from queuetop.core.history import drain_eta
from queuetop.db import Target, UsageError, connstr
from queuetop.layouts import Layout
from queuetop.watch.snapshot import TypeStats
from queuetop.watch.watermarks import EPOCH

DIR_ENV_VAR = "QUEUETOP_HISTORY_DIR"
FORMAT_VERSION = "1"
PRUNE_EVERY_S = 60.0  # old rows are deleted at most this often (in poll time)
QUEUE_LIMIT = 10_000  # snapshots waiting for the writer; past this (a stuck disk) new ones are dropped


class Rollup(Enum):
    MEAN = "mean"  # gauges and rates: the mean of the bucket's polls
    MAX = "max"  # percentiles: the highest any poll of the bucket saw


@dataclass(frozen=True)
class Figure:
    """One figure kept per poll: where it comes from in TypeStats, its stored unit, how buckets combine it."""

    name: str  # the name in `queuetop history` output
    attribute: str  # the TypeStats field
    scale: int  # stored as round(value × scale)
    rollup: Rollup

    @property
    def column(self) -> str:
        return f"{self.name}_x{self.scale}"


FIGURES: tuple[Figure, ...] = (
    Figure("depth", "depth", 10, Rollup.MEAN),
    Figure("oldest_age_s", "oldest_age_s", 1000, Rollup.MEAN),
    Figure("scheduled", "scheduled", 10, Rollup.MEAN),
    Figure("claimed", "claimed", 10, Rollup.MEAN),
    Figure("timed_out", "timed_out", 10, Rollup.MEAN),
    Figure("dead", "dead", 10, Rollup.MEAN),
    Figure("lost", "lost", 10, Rollup.MEAN),
    Figure("arrivals_per_s", "arrivals_10s_per_s", 100, Rollup.MEAN),  # the 10 s rate, as the charts show
    Figure("completions_per_s", "completions_10s_per_s", 100, Rollup.MEAN),
    Figure("wait_p50_s", "wait_p50_s", 1000, Rollup.MAX),
    Figure("wait_p95_s", "wait_p95_s", 1000, Rollup.MAX),
    Figure("wait_p99_s", "wait_p99_s", 1000, Rollup.MAX),
    Figure("processing_p50_s", "processing_p50_s", 1000, Rollup.MAX),
    Figure("processing_p95_s", "processing_p95_s", 1000, Rollup.MAX),
    Figure("processing_p99_s", "processing_p99_s", 1000, Rollup.MAX),
)
FIGURE_NAMES = tuple(f.name for f in FIGURES)
INDEX = {f.name: i for i, f in enumerate(FIGURES)}
CHART_FIGURES = {"depth": "depth", "arrivals": "arrivals_per_s", "completions": "completions_per_s"}


# -- retention -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Level:
    """One level of the file: raw polls (width 0) or buckets of `width_s`, kept for `keep_s`."""

    width_s: float
    keep_s: float

    @property
    def name(self) -> str:
        return "raw" if self.width_s == 0 else short_duration(self.width_s)


def short_duration(value_s: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if value_s >= size and value_s % size == 0:
            return f"{int(value_s // size)}{unit}"
    return f"{value_s:g}s"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str, what: str) -> float:
    """`90`, `90s`, `15m`, `2h`, `7d`, `1w` → seconds; a UsageError naming `what` otherwise."""
    match = _DURATION.match(text or "")
    if not match or float(match.group(1)) <= 0:
        raise UsageError(f"{what} must be a duration such as 90s, 15m, 2h or 7d, not {text!r}")
    return float(match.group(1)) * _UNITS[(match.group(2) or "s").lower()]


@dataclass(frozen=True)
class Retention:
    """The levels, finest first: raw polls, then wider and wider buckets, each kept longer."""

    levels: tuple[Level, ...] = (Level(0, 3600), Level(10, 86400), Level(60, 7 * 86400))

    def __post_init__(self) -> None:
        raw = self.levels[0] if self.levels else None
        if raw is None or raw.width_s != 0:
            raise UsageError("history retention must start with the raw polls (raw:1h)", "e.g. raw:1h,10s:24h,1m:7d")
        for finer, wider in zip(self.levels, self.levels[1:], strict=False):
            if wider.width_s <= finer.width_s or wider.keep_s < finer.keep_s:
                raise UsageError(f"history retention: {wider.name} buckets must be wider and kept at least as long "
                                 f"as {finer.name}", "e.g. raw:1h,10s:24h,1m:7d")
            if wider.width_s > raw.keep_s or wider.width_s < 1:
                raise UsageError(f"history retention: {wider.name} buckets must be from 1 s to the raw polls' "
                                 f"{short_duration(raw.keep_s)} (a bucket is rebuilt from raw polls after a restart)")

    @classmethod
    def parse(cls, text: str) -> Retention:
        """`raw:1h,10s:24h,1m:7d` → Retention (the --history-keep option)."""
        levels = []
        for part in text.split(","):
            width, sep, keep = part.strip().partition(":")
            if not sep:
                raise UsageError(f"--history-keep: {part.strip()!r} is not WIDTH:KEEP", "e.g. raw:1h,10s:24h,1m:7d")
            width_s = 0.0 if width.strip().lower() == "raw" else parse_duration(width, "a bucket width")
            levels.append(Level(width_s, parse_duration(keep, "a retention")))
        return cls(tuple(levels))

    def describe(self) -> str:
        return ", ".join(f"{'raw polls' if not level.width_s else level.name + ' buckets'} for "
                         f"{short_duration(level.keep_s)}" for level in self.levels)  # fmt: skip

    def spec(self) -> str:
        """The --history-keep text of this retention (kept in the file, so a reader knows its levels)."""
        return ",".join(f"{level.name}:{short_duration(level.keep_s)}" for level in self.levels)

    def level_named(self, name: str) -> int:
        names = [level.name for level in self.levels]
        if name not in names:
            raise UsageError(f"--level must be one of {', '.join(names)} (the levels this file keeps), not {name!r}")
        return names.index(name)


DEFAULT_RETENTION = Retention()


# -- where the file lives ----------------------------------------------------------------------------------------
def history_dir() -> Path:
    """$QUEUETOP_HISTORY_DIR, else `history/` in the user's data directory (beside the embedded database)."""
    configured = os.environ.get(DIR_ENV_VAR)
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_data_path

    return user_data_path("queuetop", appauthor=False) / "history"


def target_identity(target: Target) -> str:
    """The target as the history knows it: passwords masked (never on disk), a SQLite file by its full path."""
    if target.kind == "sqlite":
        return str(Path(target.value).expanduser().resolve())
    return target.display


def layout_identity(layout: Layout) -> str:
    where = f"{layout.schema}.{layout.queue_table}" if layout.schema else layout.queue_table
    return f"{layout.name}:{where}"


def history_path(target: Target, layout: Layout, folder: Path | None = None) -> Path:
    """A stable, safe file name: a readable hint of the target and the layout, then a hash of both in full."""
    who, shape = target_identity(target), layout_identity(layout)
    if target.kind == "sqlite":
        hint = Path(who).stem
    else:
        hint = "-".join(v for v in (connstr.get(who, "server"), connstr.get(who, "database")) if v) or "odbc"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{hint}.{layout.name}").strip("._")[:60] or "queue"
    digest = hashlib.sha256(f"{who}\0{shape}".encode()).hexdigest()[:12]
    path = (folder or history_dir()) / f"{slug}.{digest}.sqlite3"
    if target.kind == "sqlite" and path.resolve() == Path(who):
        raise UsageError("the history file would be the monitored database itself", f"set ${DIR_ENV_VAR} elsewhere")
    return path


# -- what is stored ----------------------------------------------------------------------------------------------
Values = tuple[int | None, ...]  # one int per FIGURES entry, in its stored unit; None: not known at that poll


_READ = attrgetter(*(f.attribute for f in FIGURES))
_SCALES = tuple(f.scale for f in FIGURES)


def stored_values(row: TypeStats) -> Values:
    """The row's figures in their stored units (None stays None)."""
    return tuple([None if v is None else round(v * scale) for v, scale in zip(_READ(row), _SCALES, strict=True)])


@dataclass(frozen=True)
class Record:
    """One job type's figures at one moment (raw) or over one bucket (starting at `t`)."""

    t: float  # server time, seconds since the epoch in the file's clock
    job_type: str
    values: Values
    polls: int = 1
    breaches: int | None = None  # bit mask of breached targets (SLOs), OR-ed over a bucket

    def value(self, name: str) -> float | None:
        figure = FIGURES[INDEX[name]]
        stored = self.values[INDEX[name]]
        return None if stored is None else stored / figure.scale

    def figures(self) -> dict[str, float | None]:
        return {name: self.value(name) for name in FIGURE_NAMES}

    def to_stats(self) -> TypeStats:
        """As a TypeStats for the table: the stored figures; the 60 s rates are the stored (10 s) ones; drain is
        computed from them."""
        figures = self.figures()
        depth = round(figures["depth"] or 0)
        arrivals, completions = figures["arrivals_per_s"], figures["completions_per_s"]
        drain, eta = drain_eta(depth, arrivals, completions)

        def count(name: str) -> int | None:
            value = figures[name]
            return None if value is None else round(value)

        return TypeStats(
            job_type=self.job_type, depth=depth, oldest_age_s=figures["oldest_age_s"], claimed=count("claimed"),
            timed_out=count("timed_out"), dead=count("dead"), scheduled=count("scheduled"), lost=count("lost"),
            arrivals_10s_per_s=arrivals, arrivals_60s_per_s=arrivals, completions_10s_per_s=completions,
            completions_60s_per_s=completions, wait_p50_s=figures["wait_p50_s"], wait_p95_s=figures["wait_p95_s"],
            wait_p99_s=figures["wait_p99_s"], processing_p50_s=figures["processing_p50_s"],
            processing_p95_s=figures["processing_p95_s"], processing_p99_s=figures["processing_p99_s"],
            drain=drain, drain_eta_s=eta,
        )  # fmt: skip


def moment(t: float) -> datetime:
    """Seconds since the epoch (server clock) → the naive datetime a Snapshot carries."""
    return EPOCH + timedelta(seconds=t)


