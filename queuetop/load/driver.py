"""The load driver: producer, consumer and sweeper threads that work a real queue through `queuetop.act.queue`.

Every thread opens its own connection and does what a real worker does: producers enqueue at a set total
rate, job types drawn by weight; consumers claim (in batches), 'work' for a sampled time, then complete or
fail the job; a fraction of claims is abandoned as if the worker died (its claim must time out and be
released); a sweeper releases timed-out claims periodically, as a cron job would.

Stopping is clean: producers stop, then each consumer finishes the job in its hands (if that takes at most
`STOP_GRACE_S`), gives back the rest of its batch, and hands back the claims it abandoned that no sweeper has
released yet, so no claim is left to wait out its lease.

Any shape whose layout describes its seed's dequeue runs the same way through `queues.ShapeLoadQueue`: the
seed's own claim and completion, its failure path where it has one, crashed claims left as the seed leaves
them. Every claim goes into the run's `Ledger` (the job, the worker, when it was live) and every claim
statement's time is kept: the report finds duplicates there and shows the claims' latency.

The counters kept here drive the progress line and the end of a `--jobs` run; the end report is computed from
the database (see report.py). "Ours" means ids above the highest id that existed when the run started (or, on
a shape whose ids are GUIDs, the ids its inserts returned): the run's own jobs (a job enqueued by someone else
at the same time, of the same type, is rare and only affects when a `--jobs` run decides it is done, never the
report).
"""

from __future__ import annotations

import math
import os
import random
import secrets
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime, timedelta
from typing import Any, TypeVar

from queuetop.act.queue import Job
from queuetop.act.shape_worker import check_claim_form
from queuetop.core import format as fmt
from queuetop.db import ConnectionLost, Database, LeaseLost, QueuetopError, Target, Timeout, UsageError
from queuetop.db.retry import retry_transient
from queuetop.layouts import NATIVE, Layout
from queuetop.load.config import WAVE_PERIOD_S, ConsumerPool, LoadConfig
from queuetop.load.ids import IdRanges
from queuetop.load.ledger import Claim, Ledger
from queuetop.load.link import Hands, Link, Outages
from queuetop.load.queues import NativeLoadQueue, ShapeLoadQueue
from queuetop.load.tally import Budget, LoadCounters, RunFacts, Tally

T = TypeVar("T")

STOP_GRACE_S = 2.0  # a job in hand that needs longer than this after a stop is given back instead
UNLIMITED_CHUNK = 10  # jobs per enqueue statement when the rate is unlimited
MAX_CHUNK = 200  # jobs per enqueue statement when catching up with the schedule
IDLE_MIN_S, IDLE_MAX_S = 0.005, 0.1  # back-off of a consumer that finds nothing to claim
CONTROL_EVERY_S = 0.05
LEDGER_COMPACT_AT = 50_000  # claims kept in memory before the ledger drops those that ended long ago
LEDGER_KEEP_S = 5.0
LATENCIES_KEPT = 100_000  # claim times kept per consumer (a long run's percentiles are of its latest claims)
RATE_WINDOW_S = 5.0
AWAY_ENDS_DRAIN_S = 2.0  # a database away this long when the drain is due ends the run (a restart's blink does not)


class LoadRun:
    """One load test: start() it, watch progress_line() and counters(), shutdown(), then hand facts() to the
    report."""

    def __init__(self, target: Target, config: LoadConfig, layout: Layout = NATIVE, *, until_done: bool = False,
                 claim_form: str | None = None, settings: dict[str, Any] | None = None) -> None:  # fmt: skip
        """`until_done`: the run ends by itself (done() turns true) once its jobs are processed or the drain
        time after --duration has passed; otherwise consumers carry on until stopped (a background load).
        `claim_form`: which of the seed's dequeue forms to drive (a shape's first by default); `settings`: the
        layout's $settings ($lost_after, ...)."""
        self.target = target
        self.config = config
        self.layout = layout
        self.until_done = until_done
        self.claim_form = check_claim_form(layout, claim_form)
        # a shape's $max_attempts is the run's --max-attempts (the seeds' 3 by default)
        self.settings = {**layout.settings, "max_attempts": config.max_attempts, **(settings or {})}
        self.ledger = Ledger()
        self._latencies: list[deque[float]] = []  # one per consumer: appended without a lock
        self._guid_ids: set[Any] = set()
        self.tag = f"load-{os.getpid()}-{secrets.token_hex(2)}"
        self.created_by = f"queuetop {self.tag}"
        self.ids = IdRanges()
        self._enqueued_by_type: Counter[str] = Counter()
        self.interrupted = False
        self._tally = Tally()
        # Where a completion has no compare-and-set and a lost claim is taken back (seed 001), a worker that lost
        # its job can still complete the new holder's row: a job's success counts once, or the run would end early.
        claim = layout.claim
        unguarded = claim is not None and claim.taken_back == "release" and not claim.finish_guard
        self._completed_ids: set[Any] | None = set() if unguarded else None
        self._budget = Budget(config.jobs)
        self._abandoned: list[tuple[int, str]] = []
        self._records_lock = threading.Lock()  # the abandoned claims and the per-type counts
        self._errors: list[BaseException] = []
        self._stop_producing = threading.Event()
        self._stop_consuming = threading.Event()
        self._stop_sweeping = threading.Event()
        self._done = threading.Event()
        self._producers: list[threading.Thread] = []
        self._consumers: list[threading.Thread] = []
        self._others: list[threading.Thread] = []
        self._producers_left = config.producers
        self._producers_lock = threading.Lock()
        self._baseline_id = 0
        self.started_at: datetime | None = None
        self._t0 = 0.0
        self._producing_ended: float | None = None
        self._ended: float | None = None
        self._rate_samples: deque[tuple[float, int]] = deque()
        self._progress_lock = threading.Lock()
        self._shutdown_lock = threading.Lock()
        self._stuck = 0
        self.outages = Outages()
        self._links: list[Link] = []

    # -- life cycle --------------------------------------------------------------------------------------
    def start(self) -> LoadRun:
        """Check the target (raises QueuetopError at once if it is unreachable or has no schema), then start
        the threads and return."""
        with Database.open(self.target, purpose="worker") as db:
            adapter = NativeLoadQueue if self.layout.batch_claims else ShapeLoadQueue
            self._baseline_id = adapter.baseline_id(db, self.layout)
            self.started_at = db.now()
            self._check_queue(self._queue(db))
        self._t0 = time.monotonic()
        if self.config.producers == 0:
            self._producing_ended = self._t0
        for i in range(self.config.producers):
            self._producers.append(self._thread(f"p{i + 1}", self._stop_producing, self._produce_until_stopped, i,
                                                ended=self._producer_ended))
        index = 0
        for pool in self.config.pools:
            for _ in range(pool.count):
                index += 1
                hands = Hands(f"{self.tag}/c{index}", self._rng(1000 + index), LATENCIES_KEPT)
                self._latencies.append(hands.latencies)
                self._consumers.append(self._thread(f"c{index}", self._stop_consuming, self._consume, index, pool,
                                                    hands))
        if self.sweep_every_s:
            self._others.append(self._thread("sweeper", self._stop_sweeping, self._sweep))
        control = threading.Thread(target=self._control, name=f"{self.tag}-control", daemon=True)
        self._others.append(control)
        for thread in (*self._producers, *self._consumers, *self._others):
            thread.start()
        return self

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` s for the run to end by itself (or fail); True if it has."""
        return self._done.wait(timeout)

    def shutdown(self) -> None:
        """Stop cleanly (see the module's docstring) and wait for the threads. Safe to call twice."""
        with self._shutdown_lock:
            if self._ended is not None:
                return
            self._stop_producing.set()
            self._join(self._producers, 2.0, cut=True)
            self._mark_producing_ended()
            self._stop_consuming.set()
            self._join(self._consumers, STOP_GRACE_S + 1.0, cut=True)
            self._stop_sweeping.set()
            self._join(self._others, 2.0, cut=True)
            self._ended = time.monotonic()
            self._done.set()

    def _join(self, threads: list[threading.Thread], timeout: float, cut: bool = False) -> None:
        """Wait for the threads; with `cut`, a statement still in flight after `timeout` (a server that stopped
        answering) has its connection cut, so the run ends now and not at the statement's deadline."""
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if cut and any(thread.is_alive() for thread in threads):
            for link in list(self._links):
                link.abandon()
            deadline = time.monotonic() + 5.0
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
        self._stuck += sum(thread.is_alive() for thread in threads)

    # -- what it is doing ----------------------------------------------------------------------------------
    def counters(self) -> LoadCounters:
        return self._tally.snapshot()

    @property
    def error(self) -> BaseException | None:
        return self._errors[0] if self._errors else None

    @property
    def elapsed_s(self) -> float:
        return ((self._ended or time.monotonic()) - self._t0) if self._t0 else 0.0

    def progress_line(self) -> str:
        """One line: elapsed, enqueued, completed, dead, in flight, completion rate over the last seconds."""
        c = self.counters()
        now = time.monotonic()
        finished = c.succeeded + c.dead
        with self._progress_lock:
            self._rate_samples.append((now, finished))
            while len(self._rate_samples) > 2 and self._rate_samples[1][0] < now - RATE_WINDOW_S:
                self._rate_samples.popleft()
            t_first, n_first = self._rate_samples[0]
        rate = (finished - n_first) / (now - t_first) if now - t_first > 0.2 else None
        parts = [f"load {fmt.duration(self.elapsed_s)}", f"{c.enqueued:,} enqueued", f"{c.succeeded:,} completed"]
        if c.dead or self.config.fail or self.config.crash:
            parts.append(f"{c.dead + c.doomed:,} dead")
        if self.config.crash:
            parts.append(f"{c.crashed:,} crashed")
        parts += [f"{c.in_flight:,} in flight", f"{fmt.rate(rate)}/s"]
        if (outages := self.outages.figures()).lost:
            parts.append(f"{outages.lost:,} connections lost, {outages.reconnects:,} reconnected")
        if self.error is not None:
            return f"load stopped: {self.error}"
        if self._ended is not None:
            parts.append("stopped")
        elif self._stop_consuming.is_set():
            parts.append("stopping…")
        elif self._stop_producing.is_set() or self._budget.exhausted:
            parts.append("draining" if self.until_done else "producers done")
        return " · ".join(parts)

    def facts(self) -> RunFacts:
        """The run as the report needs it; call after shutdown()."""
        if self.started_at is None:
            raise RuntimeError("the load run was never started")
        with self._records_lock:
            abandoned = list(self._abandoned)
            by_type = dict(self._enqueued_by_type)
        producing_end = self._producing_ended or self._ended or time.monotonic()
        return RunFacts(
            tag=self.tag, target=self.target.display, config=self.config, ids=self.ids, enqueued_by_type=by_type,
            abandoned=abandoned,
            started_at=self.started_at, counters=self.counters(), elapsed_s=self.elapsed_s,
            producing_s=max(0.0, producing_end - self._t0), interrupted=self.interrupted,
            errors=[str(e) for e in self._errors], stuck_threads=self._stuck, layout=self.layout,
            claim_form=self.claim_form, ledger=self.ledger,
            claim_latencies_s=[t for times in self._latencies for t in times], guid_ids=frozenset(self._guid_ids),
            baseline_id=self._baseline_id, settings=self.settings, outages=self.outages.figures(),
        )  # fmt: skip

    # -- threads -----------------------------------------------------------------------------------------
    def _thread(self, name: str, stop: threading.Event, body: Callable[..., None], *args: object,
                ended: Callable[[], None] | None = None) -> threading.Thread:  # fmt: skip
        """A thread that runs `body(db, *args)` on its own connection, again on a new one whenever the server
        ends it (or stops answering), after a back-off, until `stop`; any other failure ends the run."""
        def run() -> None:
            link = Link(self.target, self.outages, stop)
            self._links.append(link)
            try:
                while (db := link.connect()) is not None:
                    try:
                        body(db, *args)
                        return
                    except ConnectionLost as exc:
                        link.lost(exc)
            except BaseException as exc:  # any other failure ends the run and is reported
                self._failed(exc)
            finally:
                link.close()
                if ended is not None:
                    ended()

        return threading.Thread(target=run, name=f"{self.tag}-{name}", daemon=True)

    def _failed(self, exc: BaseException) -> None:
        self._errors.append(exc)
        self._stop_producing.set()
        self._stop_consuming.set()
        self._stop_sweeping.set()
        self._done.set()

    def _retrying(self, operation: Callable[[], T]) -> T:
        """Run a queue operation, again after a deadlock, a serialization conflict or a busy / lock timeout (see
        db/retry.py: safe, since each operation is one transaction and a compare-and-set), counting each."""
        return retry_transient(operation, on_retry=lambda _exc: self._tally.add("busy_retries"))

    def _rng(self, salt: int) -> random.Random:
        return random.Random(None if self.config.seed is None else self.config.seed * 1000 + salt)

    def _queue(self, db: Database) -> NativeLoadQueue | ShapeLoadQueue:
        if self.layout.batch_claims:  # the leased queue `Queue` works, native's
            return NativeLoadQueue(db, self.layout, self.config.max_attempts)
        return ShapeLoadQueue(db, self.layout, self.claim_form, self.settings)

    def _check_queue(self, queue: NativeLoadQueue | ShapeLoadQueue) -> None:
        """Refuse, before any thread starts, what this shape's seed has no path for."""
        if self.config.fail and not queue.can_fail:
            raise UsageError(f"layout {self.layout.name} has no failure path: taking a job is final there, so "
                             "--fail cannot be simulated", "drop --fail (--crash works: a crashed claim is stranded)")
        if self.config.release_every_s is not None and queue.nothing_to_release:
            raise UsageError(f"layout {self.layout.name} has nothing to release: {queue.nothing_to_release}",
                             "drop --release-every")

    def _ours(self, job: Job | Any) -> bool:
        if self._baseline_id is None:  # GUID ids: a job is seen before its insert returned; the report is exact
            return True
        return int(job.id) > self._baseline_id

    @property
    def _ledger_lease_s(self) -> float | None:
        """How long a claim stays live in the ledger at most: its lease, seed 001's $lost_after (a release takes
        a request back only after that), or None (a final claim is never taken back)."""
        taken_back = self._claim_taken_back
        if taken_back == "timeout":
            return self.config.lease_s
        return float(self.settings["lost_after"]) if taken_back == "release" else None

    @property
    def _claim_taken_back(self) -> str | None:
        return self.layout.claim.taken_back if self.layout.claim is not None else None

    # -- producers ---------------------------------------------------------------------------------------
    def _producer_ended(self) -> None:
        with self._producers_lock:
            self._producers_left -= 1
            last = self._producers_left == 0
        if last:
            self._mark_producing_ended()

    def _produce_until_stopped(self, db: Database, index: int) -> None:
        queue, rng, config = self._queue(db), self._rng(index), self.config
        names = list(config.type_names)
        weights = [weight for _, weight in config.types]
        share = None if config.rate is None else config.rate / config.producers
        sent, started = 0, time.monotonic()
        while not self._stop_producing.is_set():
            if share is None:
                wanted = UNLIMITED_CHUNK
            else:
                elapsed = time.monotonic() - started
                due = self._scheduled(share, elapsed) - sent
                if due > max(1.0, share):  # more than a second behind: drop the debt, never burst
                    sent += int(due - max(1.0, share))
                    due = self._scheduled(share, elapsed) - sent
                if due < 1:
                    self._stop_producing.wait(min(0.05, (1 - due) / self._rate_at(share, elapsed)))
                    continue
                wanted = min(int(due), MAX_CHUNK)
            granted = self._budget.take(wanted)
            if granted == 0:
                return
            for job_type, count in Counter(rng.choices(names, weights, k=granted)).items():
                ids = queue.enqueue(job_type, count, self.created_by)  # each chunk is retried by itself
                if self._baseline_id is None:
                    with self._records_lock:
                        self._guid_ids.update(ids)
                else:
                    self.ids.add(ids)
                self._tally.add("enqueued", len(ids))
                with self._records_lock:
                    self._enqueued_by_type[job_type] += len(ids)
            sent += granted

    def _scheduled(self, rate: float, t: float) -> float:
        """Jobs due by `t` s at `rate`/s, swinging ± wave over WAVE_PERIOD_S: the integral of the rate."""
        wave = self.config.wave
        if not wave:
            return rate * t
        w = 2 * math.pi / WAVE_PERIOD_S
        return rate * t + rate * wave / w * (1 - math.cos(w * t))

    def _rate_at(self, rate: float, t: float) -> float:
        return rate * (1 + self.config.wave * math.sin(2 * math.pi * t / WAVE_PERIOD_S))

    def _mark_producing_ended(self) -> None:
        if self._producing_ended is None:
            self._producing_ended = time.monotonic()

    # -- consumers ---------------------------------------------------------------------------------------
    def _consume(self, db: Database, index: int, pool: ConsumerPool, me: Hands) -> None:
        queue, config = self._queue(db), self.config
        job_types = list(pool.job_types or config.type_names)
        idle = IDLE_MIN_S
        lease_s = self._ledger_lease_s
        try:
            self._hand_back_after_loss(queue, me)
            while not self._stop_consuming.is_set():
                sent = time.monotonic()
                me.claiming = True
                jobs = self._retrying(lambda w=me.worker: queue.claim(w, job_types, config.batch, config.lease_s))
                me.claiming = False
                returned = time.monotonic()
                me.latencies.append(returned - sent)
                if not jobs:
                    self._tally.add("empty_claims")
                    self._stop_consuming.wait(idle)
                    idle = min(IDLE_MAX_S, idle * 2)
                    continue
                self._tally.add("claims")
                claims = self.ledger.claimed([job.id for job in jobs], me.worker, sent, returned, lease_s)
                held = list(zip(jobs, claims, strict=True))
                idle = IDLE_MIN_S
                dies_at = me.rng.randrange(len(jobs)) if config.crash and me.rng.random() < config.crash else None
                for i, job in enumerate(jobs):
                    me.held = held[i:]  # in hand until let go: handed back if the connection is lost meanwhile
                    if i == dies_at:  # the worker dies holding the rest of its batch; a new one takes its place
                        self._abandon(jobs[i:], claims[i:], me.worker, me.abandoned, db, queue)
                        me.lives += 1
                        me.worker = f"{self.tag}/c{index}~{me.lives}"
                        break
                    # a job a final claim took is worked even after a stop: it cannot be handed back
                    work_s = config.work_for(job.job_type or "").sample_s(me.rng)
                    stopping = self._stop_consuming.is_set()
                    if (stopping and queue.can_give_back) or not self._work(work_s, not queue.can_give_back):
                        self._give_back(queue, jobs[i:], claims[i:])
                        break
                    self._finish(queue, job, claims[i], me.rng)
                me.held = []
        except ConnectionLost:
            if me.claiming:  # its answer went with the connection: if the server committed it, the lease returns it
                self.outages.add("claims_cut")
                me.claiming = False
            raise
        finally:
            with suppress(QueuetopError):  # the connection failed: the sweeper, or the lease, will see to them
                self._recover(queue, me.abandoned)

    def _hand_back_after_loss(self, queue: NativeLoadQueue | ShapeLoadQueue, me: Hands) -> None:
        """The jobs in hand when the last connection was lost, handed back to pending on the new one (the hand-back
        is a compare-and-set on the claim: a job whose completion did reach the server is left as it is)."""
        if me.held and not queue.can_give_back:  # a shape whose taking is final: its claims stay as they are
            self.outages.add("left_to_lease", len(me.held))
            me.held = []
        while me.held:
            job, claim = me.held[0]
            finishing = claim.outcome in ("finished", "failed")  # its completion or failure was in flight
            claim.let_go(time.monotonic(), claim.outcome if finishing else "given back")
            try:
                self._retrying(lambda j=job: queue.give_back(j))
                self.outages.add("released")
            except LeaseLost:  # the completion (or failure) in flight had reached the server, or a release had
                if claim.outcome == "finished":
                    self._tally.add("succeeded" if self._ours(job) else "foreign")
            except Timeout:  # the row is still locked by the lost session (a stalled server may yet commit it)
                if not finishing:
                    claim.crashed()  # as a crashed worker's: the release after its lease takes it back
                self.outages.add("left_to_lease")
            me.held.pop(0)

    def _work(self, seconds: float, finish_anyway: bool = False) -> bool:
        """Sleep for the job's work time. After a stop, finish only if little is left (or always, where a job
        taken cannot be handed back): False means give it back."""
        if seconds <= 0:
            return True
        end = time.monotonic() + seconds
        if not self._stop_consuming.wait(seconds):
            return True
        left = end - time.monotonic()
        if left > STOP_GRACE_S and not finish_anyway:
            return False
        time.sleep(max(0.0, left))
        return True

    def _finish(self, queue: NativeLoadQueue | ShapeLoadQueue, job: Job | Any, claim: Claim,
                rng: random.Random) -> None:  # fmt: skip
        ours = self._ours(job)
        try:
            if self.config.fail and rng.random() < self.config.fail:
                claim.let_go(time.monotonic(), "failed")
                outcome = self._retrying(lambda: queue.fail(job, self.config.retry_after_s))
                self._tally.add("failed")
                if ours and (outcome == "dead" or (outcome == "left" and self._last_attempt(job))):
                    self._tally.add("dead" if outcome == "dead" else "doomed")
            else:
                claim.let_go(time.monotonic(), "finished")
                self._retrying(lambda: queue.complete(job))
                self._tally.add("foreign" if not ours else "succeeded" if self._first_success(job) else
                                "completed_again")  # fmt: skip
        except LeaseLost:  # the claim timed out and a release took it back while we worked
            claim.outcome = "lease lost"
            self._tally.add("leases_lost")
            if ours and self._last_attempt(job):
                self._tally.add("doomed")  # that release buried it as dead

    def _first_success(self, job: Job | Any) -> bool:
        """Whether this completion is the job's first (always, where a completion must still hold its claim)."""
        if self._completed_ids is None:
            return True
        with self._records_lock:
            first = job.id not in self._completed_ids
            self._completed_ids.add(job.id)
        return first

    def _last_attempt(self, job: Job | Any) -> bool:
        """Whether this was the job's last attempt: only where the shape counts attempts up to a limit."""
        attempts_limited = "attempts" in (self.layout.claim.sets if self.layout.claim else {})
        return attempts_limited and job.attempts >= self.config.max_attempts

    def _abandon(self, jobs: list[Any], claims: list[Claim], worker: str, abandoned: list[tuple[Any, Claim]],
                 db: Database, queue: NativeLoadQueue | ShapeLoadQueue) -> None:  # fmt: skip
        self._tally.add("crashed", len(jobs))
        for claim in claims:
            claim.crashed()
        if queue.final_claims:
            self._tally.add("stranded", sum(1 for job in jobs if self._ours(job)))
        doomed = sum(1 for job in jobs if self._ours(job) and self._last_attempt(job))
        if doomed:
            self._tally.add("doomed", doomed)  # the release (or the claim) that finds them will bury them as dead
        with self._records_lock:
            self._abandoned += [(job.id, worker) for job in jobs]
        if not isinstance(queue, NativeLoadQueue):
            return  # a seed's crashed claims stay as the crash left them
        abandoned += zip(jobs, claims, strict=True)
        horizon = self._sweep_horizon(db)
        if horizon is not None:  # the sweeper has long released these: forget them
            abandoned[:] = [(job, claim) for job, claim in abandoned if job.timeout >= horizon]

    def _sweep_horizon(self, db: Database) -> datetime | None:
        """Claims that timed out before this moment have been released by the sweeper."""
        every = self.sweep_every_s
        return None if every is None else db.now() - timedelta(seconds=2 * every + 1.0)

    def _give_back(self, queue: NativeLoadQueue | ShapeLoadQueue, jobs: list[Any], claims: list[Claim]) -> None:
        """Hand unstarted jobs back to pending at once, their attempt unspent."""
        for job, claim in zip(jobs, claims, strict=True):
            claim.let_go(time.monotonic(), "given back")
            try:
                self._retrying(lambda j=job: queue.give_back(j))
                self._tally.add("given_back")
            except LeaseLost:  # released meanwhile: nothing left to give back
                claim.outcome = "lease lost"

    def _recover(self, queue: NativeLoadQueue | ShapeLoadQueue, abandoned: list[tuple[Any, Claim]]) -> None:
        """At stop: release the claims this consumer abandoned that no sweeper has released yet, as a
        release would (back to pending, or dead on the last attempt), so none waits out its lease. From the
        release on the job is anyone's (a consumer still finishing its last claim may take it), so the crashed
        claim ends there in the ledger, not at the lease it would have waited out."""
        if not abandoned:
            return
        horizon = self._sweep_horizon(queue.queue.db) if isinstance(queue, NativeLoadQueue) else None
        for job, claim in abandoned:
            if horizon is not None and job.timeout < horizon:
                continue
            claim.let_go(time.monotonic(), "crashed")  # before the release is sent, as every hand-back
            try:
                self._retrying(lambda j=job: queue.recover(j))
                self._tally.add("recovered_at_stop")
            except LeaseLost:  # released by the sweeper already
                pass

    @property
    def sweep_every_s(self) -> float | None:
        """How often the sweeper releases: as asked, or as the config says for the native queue; on seed 001,
        when requests are crashed or failed, half of $lost_after (else a lost request never comes back); never
        on a shape with nothing to release, nor on seed 004, whose own dequeue takes timed-out claims again."""
        if self.layout.batch_claims:
            return self.config.sweep_every_s
        if self.layout.release is None:
            return None
        if self.config.release_every_s is not None:
            return self.config.release_every_s
        if self._claim_taken_back == "release" and (self.config.crash or self.config.fail):
            return max(0.1, float(self.settings["lost_after"]) / 2)
        return None

    # -- the sweeper and the control loop ------------------------------------------------------------------
    def _sweep(self, db: Database) -> None:
        queue, every = self._queue(db), self.sweep_every_s
        assert every is not None
        while not self._stop_sweeping.wait(every):
            result = self._retrying(queue.release)
            self._tally.add("swept_released", result.released)
            self._tally.add("swept_dead", result.dead)

    def _control(self) -> None:
        """Ends producing at --duration; in an until-done run, says when the run is over."""
        config = self.config
        drain_until: float | None = None
        while not self._stop_consuming.wait(CONTROL_EVERY_S):
            now = time.monotonic()
            if self.ledger.held > LEDGER_COMPACT_AT:  # a long run: memory stays bounded
                self.ledger.compact(now, LEDGER_KEEP_S)
            if config.duration_s is not None and now - self._t0 >= config.duration_s:
                self._stop_producing.set()
            if not self.until_done:
                continue
            producing_over = self._producers_left == 0 or self._stop_producing.is_set()
            if not producing_over:
                continue
            if drain_until is None:
                drain_until = now + config.drain_s if config.duration_s is not None else math.inf
            counters = self.counters()
            # A database away for a while gets no drain: nothing left can finish, so the run ends at its duration.
            away = self.outages.away_for_s() >= AWAY_ENDS_DRAIN_S
            if (self._producers_left == 0 and counters.settled >= counters.enqueued) or now >= drain_until or away:
                self._done.set()
                return
