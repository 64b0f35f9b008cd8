"""What a load test does, as one validated, immutable `LoadConfig`, and the parsing of its option strings.

`--rate 200` / `--rate unlimited`, `--types 3` / `--types email:5,report:1`, `--work uniform:5-50` /
`--work exp:30,report=exp:200` and the fractions are checked here, once, with messages that name the option
and say what a good value looks like. A `LoadConfig` built in code is checked the same way.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from queuetop.act.queue import check_count, check_job_type, check_seconds
from queuetop.db import UsageError
from queuetop.layouts import NATIVE, Layout
from queuetop.load.options import DRAIN_S

MAX_THREADS = 256
MAX_TYPES = 100
MAX_WORK_MS = 3_600_000.0
MAX_JOBS = 100_000_000
UNLIMITED = ("unlimited", "max", "inf")
DEFAULT_TYPE_PREFIX = "load-"
WAVE_PERIOD_S = 60.0
TYPES_HINT = "write NAME:WEIGHT, e.g. email:5,report:1"
WORK_HINT = "use fixed:MS, uniform:LOW-HIGH or exp:MEAN, in milliseconds"


@dataclass(frozen=True)
class WorkTime:
    """How long a consumer 'works' on one job: fixed, uniform or exponential, in milliseconds."""

    kind: str  # fixed | uniform | exp
    low_ms: float  # fixed: the time; uniform: the low end; exp: the mean
    high_ms: float | None = None  # uniform only

    def __post_init__(self) -> None:
        if self.kind not in ("fixed", "uniform", "exp"):
            raise UsageError(f"unknown work time distribution {self.kind!r}", WORK_HINT)
        values = [self.low_ms] + ([self.high_ms] if self.kind == "uniform" else [])
        if any(v is None or not 0 <= v <= MAX_WORK_MS for v in values):
            raise UsageError(f"work times must be from 0 to {MAX_WORK_MS:,.0f} ms, not {self.spec()!r}")
        if self.kind == "uniform" and self.high_ms < self.low_ms:  # type: ignore[operator]
            raise UsageError(f"work time {self.spec()!r}: the low end is above the high end", "e.g. uniform:5-50")

    def sample_s(self, rng: random.Random) -> float:
        if self.kind == "fixed":
            return self.low_ms / 1000
        if self.kind == "uniform":
            return rng.uniform(self.low_ms, self.high_ms) / 1000  # type: ignore[arg-type]
        return rng.expovariate(1 / self.low_ms) / 1000 if self.low_ms else 0.0

    def mean_s(self) -> float:
        if self.kind == "uniform":
            return (self.low_ms + self.high_ms) / 2000  # type: ignore[operator]
        return self.low_ms / 1000

    def spec(self) -> str:
        if self.kind == "uniform":
            return f"uniform:{self.low_ms:g}-{self.high_ms:g}"
        return f"{self.kind}:{self.low_ms:g}"


DEFAULT_WORK = WorkTime("uniform", 5, 50)


@dataclass(frozen=True)
class ConsumerPool:
    """`count` consumer threads claiming the given job types (empty: every type of the load)."""

    count: int
    job_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoadConfig:
    """Everything a load run needs. Validated on construction."""

    types: tuple[tuple[str, float], ...] = ((f"{DEFAULT_TYPE_PREFIX}1", 1.0),)  # (job type, weight)
    producers: int = 2
    pools: tuple[ConsumerPool, ...] = (ConsumerPool(4),)
    rate: float | None = 100.0  # jobs/s in total; None: as fast as the database takes them
    wave: float = 0.0  # the rate swings ± this fraction over a minute (the demo's breathing)
    duration_s: float | None = None  # stop producing after this long
    jobs: int | None = None  # stop producing after this many jobs
    work: Mapping[str, WorkTime] = field(default_factory=dict)  # per type; DEFAULT_WORK for the others
    default_work: WorkTime = DEFAULT_WORK
    fail: float = 0.0  # fraction of attempts that fail (retried, dead after max_attempts)
    crash: float = 0.0  # fraction of claims abandoned as if the worker died
    lease_s: float = 30.0
    batch: int = 1
    release_every_s: float | None = None
    max_attempts: int = 3
    retry_after_s: float = 1.0  # a failed job is available again after this long
    drain_s: float = DRAIN_S  # after --duration: how long consumers may finish what is left
    seed: int | None = None  # for repeatable runs (tests)

    def __post_init__(self) -> None:
        if not self.types:
            raise UsageError("a load needs at least one job type", "e.g. --types 3 or --types email:5,report:1")
        names = [name for name, _ in self.types]
        for name, weight in self.types:
            check_job_type(name)
            if not (isinstance(weight, int | float) and math.isfinite(weight) and weight > 0):
                raise UsageError(f"--types: the weight of {name!r} must be a positive number, not {weight!r}")
        if len(set(names)) != len(names):
            raise UsageError("--types names a job type twice", "give each type once, e.g. email:5,report:1")
        check_count(self.producers, "--producers", MAX_THREADS, low=0)
        if not self.pools or sum(p.count for p in self.pools) < 1:
            raise UsageError("a load needs at least one consumer", "e.g. --consumers 4")
        for pool in self.pools:
            check_count(pool.count, "--consumers", MAX_THREADS, low=0)
            unknown = [t for t in pool.job_types if t not in names]
            if unknown:
                raise UsageError(f"consumers claim job type {unknown[0]!r}, which the load does not produce")
        if self.rate is not None and not (isinstance(self.rate, int | float) and 0 < self.rate <= 1e6):
            raise UsageError(f"--rate must be a positive number of jobs per second or 'unlimited', not {self.rate!r}")
        if not 0 <= self.wave < 1:
            raise UsageError(f"the rate wave must be a fraction from 0 to below 1, not {self.wave!r}")
        if self.duration_s is not None:
            check_seconds(self.duration_s, "--duration")
        if self.jobs is not None:
            check_count(self.jobs, "--jobs", MAX_JOBS, low=1)
        unknown = [t for t in self.work if t not in names]
        if unknown:
            raise UsageError(f"--work names job type {unknown[0]!r}, which is not in --types",
                             f"the types are: {', '.join(names)}")  # fmt: skip
        object.__setattr__(self, "work", MappingProxyType(dict(self.work)))
        check_fraction(self.fail, "--fail")
        check_fraction(self.crash, "--crash")
        check_seconds(self.lease_s, "--lease")
        check_count(self.batch, "--batch", 10_000, low=1)
        if self.release_every_s is not None:
            check_seconds(self.release_every_s, "--release-every")
        check_count(self.max_attempts, "--max-attempts", 1000, low=1)
        if not 0 <= self.retry_after_s < 10**6:
            raise UsageError(f"the retry delay must be zero or more seconds, not {self.retry_after_s!r}")
        check_seconds(self.drain_s, "the drain time")

    # -- derived -----------------------------------------------------------------------------------------
    @property
    def type_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.types)

    @property
    def consumers(self) -> int:
        return sum(pool.count for pool in self.pools)

    def work_for(self, job_type: str) -> WorkTime:
        return self.work.get(job_type, self.default_work)

    @property
    def sweep_every_s(self) -> float | None:
        """How often timed-out claims are released: as asked, or, when claims are abandoned and nobody was
        asked to release them, half a lease (else a crashed claim would never come back)."""
        if self.release_every_s is not None:
            return self.release_every_s
        return max(0.1, self.lease_s / 2) if self.crash > 0 else None

    def describe(self) -> dict[str, object]:
        """The settings as plain data, for the JSON report."""
        return {
            "types": {name: weight for name, weight in self.types},
            "producers": self.producers,
            "consumers": [{"count": p.count, "job_types": list(p.job_types) or None} for p in self.pools],
            "rate_per_s": self.rate,
            "duration_s": self.duration_s,
            "jobs": self.jobs,
            "work": {name: self.work_for(name).spec() for name in self.type_names},
            "fail": self.fail,
            "crash": self.crash,
            "lease_s": self.lease_s,
            "batch": self.batch,
            "release_every_s": self.sweep_every_s,
            "max_attempts": self.max_attempts,
        }


# -- checks ------------------------------------------------------------------------------------------------
def check_fraction(value: object, option: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
        raise UsageError(f"{option} must be a fraction from 0 up to (not including) 1, such as 0.05; not {value!r}")
    return float(value)


# -- option strings ----------------------------------------------------------------------------------------
def parse_rate(text: str) -> float | None:
    """'200' -> 200.0; 'unlimited' -> None."""
    cleaned = text.strip().lower().removesuffix("/s")
    if cleaned in UNLIMITED:
        return None
    try:
        rate = float(cleaned)
    except ValueError:
        raise UsageError(f"--rate must be a number of jobs per second or 'unlimited', not {text!r}") from None
    if not (math.isfinite(rate) and 0 < rate <= 1e6):
        raise UsageError(f"--rate must be more than 0 and at most 1,000,000 jobs per second, not {text!r}",
                         "or 'unlimited' for as fast as the database takes them")  # fmt: skip
    return rate


def parse_types(text: str) -> tuple[tuple[str, float], ...]:
    """'3' -> load-1..load-3, equal weights; 'email:5,report:1' -> weighted names ('email' alone: weight 1)."""
    cleaned = text.strip()
    if cleaned.isdigit():
        count = int(cleaned)
        if not 1 <= count <= MAX_TYPES:
            raise UsageError(f"--types: the number of job types must be from 1 to {MAX_TYPES}, not {count}")
        return tuple((f"{DEFAULT_TYPE_PREFIX}{i}", 1.0) for i in range(1, count + 1))
    types = []
    for part in _items(cleaned, "--types", "email:5,report:1"):
        name, _, weight_text = part.rpartition(":") if ":" in part else (part, "", "1")
        name = name.strip()
        if not name:
            raise UsageError(f"--types: {part!r} has no job type name", TYPES_HINT)
        try:
            weight = float(weight_text)
        except ValueError:
            raise UsageError(f"--types: the weight in {part!r} is not a number", TYPES_HINT) from None
        types.append((check_job_type(name), weight))
    return tuple(types)


def parse_work(text: str) -> tuple[WorkTime, dict[str, WorkTime]]:
    """'uniform:5-50' or 'exp:30,report=exp:200': (the default, the per-type ones)."""
    default, per_type = DEFAULT_WORK, {}
    defaults_given = 0
    for part in _items(text.strip(), "--work", "uniform:5-50 or email=fixed:5,report=exp:200"):
        if "=" in part:
            name, _, spec = part.partition("=")
            name = check_job_type(name.strip())
            if name in per_type:
                raise UsageError(f"--work names job type {name!r} twice")
            per_type[name] = parse_work_time(spec)
        else:
            default, defaults_given = parse_work_time(part), defaults_given + 1
    if defaults_given > 1:
        raise UsageError("--work gives more than one time for all types", "name the type: email=fixed:5")
    return default, per_type


def parse_work_time(spec: str) -> WorkTime:
    """'fixed:20' | 'uniform:5-50' | 'exp:30' (milliseconds)."""
    kind, _, values = spec.strip().partition(":")
    kind = {"exponential": "exp", "const": "fixed"}.get(kind.lower(), kind.lower())
    try:
        if kind == "uniform":
            low, _, high = values.partition("-")
            return WorkTime("uniform", float(low), float(high))
        if kind in ("fixed", "exp"):
            return WorkTime(kind, float(values))
    except ValueError:
        raise UsageError(f"--work: cannot read {spec.strip()!r}", WORK_HINT) from None
    raise UsageError(f"--work: unknown distribution in {spec.strip()!r}", WORK_HINT)


def _items(text: str, option: str, example: str) -> list[str]:
    parts = [p.strip() for p in text.split(",")]
    if not text.strip():
        raise UsageError(f"{option} is empty", f"e.g. {example}, or leave {option} out for the default")
    if any(not p for p in parts):
        raise UsageError(f"{option}: {text!r} has an empty item", f"e.g. {example}")
    return parts


# -- the demo ----------------------------------------------------------------------------------------------
DEMO_LEASE_S = 5.0
DEMO_SWEEP_S = 30.0  # slower than the lease: timed-out claims wait on screen for `r`


def demo_config(layout: Layout | None = None, job_types: tuple[str, ...] | None = None) -> LoadConfig:
    """`queuetop demo`: four job types of different speeds at a pace SQLite takes easily on a small machine.

    `report` has one consumer of its own and arrives about twice as fast as it can process them, so its queue
    backs up (drain: never) while the others keep up. One attempt in twelve fails (retried after 2 s, dead
    after 3), one claim in a hundred is abandoned with a 5 s lease, and a sweeper releases timed-out claims
    every 30 s: slower than the lease, so a few timed-out claims wait on screen for the user's `r`. The rate
    breathes over a minute.

    On another shape (`layout`) the same load runs through the seed's own dequeue: its job types as the shape
    stores them (`job_types`: the four names as GUIDs on seed 000; one stream on a shape without a job type
    column), failures only where the seed has a failure path, and the sweeper only where it has a release.
    """
    names = job_types or ("email", "webhook", "thumbnail", "report")
    email, webhook, thumbnail, report = names if len(names) == 4 else (names[0],) * 4
    layout = layout or NATIVE
    failing = layout.claim is not None and layout.claim.failure is not None
    sweep = DEMO_SWEEP_S if layout.release is not None else None
    works = {
        email: WorkTime("uniform", 5, 30),
        webhook: WorkTime("exp", 40),
        thumbnail: WorkTime("uniform", 100, 300),
        report: WorkTime("uniform", 1000, 3000),
    }
    if len(set(names)) < 4:  # one stream: the mix of the four speeds, with three consumers
        return LoadConfig(types=((email, 1.0),), producers=1, pools=(ConsumerPool(3),), rate=8.0, wave=0.4,
                          default_work=WorkTime("uniform", 5, 300), fail=0.08 if failing else 0.0, crash=0.01,
                          lease_s=DEMO_LEASE_S, release_every_s=sweep, retry_after_s=2.0)  # fmt: skip
    return LoadConfig(
        types=((email, 8.0), (webhook, 4.0), (thumbnail, 3.0), (report, 1.0)),
        producers=1,
        pools=(ConsumerPool(3, (email, webhook, thumbnail)), ConsumerPool(1, (report,))),
        rate=16.0,
        wave=0.4,
        work=works,
        fail=0.08 if failing else 0.0,
        crash=0.01,
        lease_s=DEMO_LEASE_S,
        release_every_s=sweep,
        max_attempts=3,
        retry_after_s=2.0,
    )
