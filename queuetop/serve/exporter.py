"""OpenMetrics for Prometheus: the latest snapshot of each target as metric families, served over HTTP.

The exposition is prometheus_client's, never hand-written text: `SnapshotMetrics` is a custom Collector that
turns the latest frozen outcome of every target into metric families at each scrape. Scrapes never touch the
database: each target is polled by its own thread (`TargetPoller`, one Monitor, so one connection, and the
dashboard's reconnect with back-off) on its own interval, and publishes an immutable `TargetState` by swapping
one reference. A scrape reads those references, so a slow or dead target never delays the others or the
scrape: it shows `queuetop_up{target=...} 0` and no queue series until it answers again.

Series (labels `target`, and `layout`, `job_type` for a queue's figures). A figure the shape cannot know, or
has no value for at this poll (no completion in the window: no wait quantiles), is absent, never 0:

- gauges: queuetop_depth, queuetop_oldest_age_seconds, queuetop_scheduled, queuetop_claimed, queuetop_timed_out,
  queuetop_dead, queuetop_lost, queuetop_in_no_state;
- counters: queuetop_arrivals_total, queuetop_completions_total (events seen since queuetop began watching the
  type, with `_created`);
- summaries: queuetop_wait_seconds, queuetop_processing_seconds with quantile 0.5, 0.95, 0.99. Summaries, not
  histograms: the collector computes nearest-rank percentiles over the completions of the last 60 s and keeps
  no buckets, so a histogram would have to invent its bucket counts; the quantiles are exactly what was
  measured (as with any summary, they cannot be averaged across types or targets: take the max);
- per target: queuetop_up (1 when the last poll read the queue), queuetop_poll_seconds (how long that poll took,
  reaching the database included, also when it failed), queuetop_poll_paced_seconds (where polls are dear,
  the stretched wait between them: watch/pace.py), queuetop_folded_types (how many job types past
  `serve --max-types` are folded into `job_type="(other)"`, see typecap.py);
- with SLOs (the config file, --slo): queuetop_slo_breach 1 and queuetop_slo_breach_duration_seconds for each
  (target, job_type, slo) breached at the last poll, absent when met: the config file stays the one place the
  limits live, and an alert rule is `queuetop_slo_breach == 1`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, SummaryMetricFamily
from prometheus_client.registry import CollectorRegistry

from queuetop.serve.typecap import DEFAULT_MAX_TYPES, TypeCap
from queuetop.watch.monitor import Monitor, PollOutcome
from queuetop.watch.pace import Pace
from queuetop.watch.slo import Breach, Slos, SloWatch
from queuetop.watch.snapshot import Snapshot, TypeStats

QUANTILES = (("0.5", "50"), ("0.95", "95"), ("0.99", "99"))
GAUGES = (  # (metric name, TypeStats field, the shape's figure, help)
    ("queuetop_depth", "depth", "depth", "Pending jobs (not yet claimed)."),
    ("queuetop_oldest_age_seconds", "oldest_age_s", "oldest_age_s", "Age of the oldest pending job."),
    ("queuetop_scheduled", "scheduled", "scheduled", "Jobs not claimable until later (available in the future)."),
    ("queuetop_claimed", "claimed", "claimed", "Jobs claimed by a worker and not past their timeout, in flight "
                                               "(timed-out claims are queuetop_timed_out)."),
    ("queuetop_timed_out", "timed_out", "timed_out", "Claims past their timeout, not yet released."),
    ("queuetop_dead", "dead", "dead", "Jobs that ran out of attempts."),
    ("queuetop_lost", "lost", "lost", "Jobs taken and not completed after --lost-after."),
    ("queuetop_in_no_state", "in_no_state", "in_no_state", "Rows of the queue table in none of the layout's states "
                                                           "(a status value it does not name)."),
)
COUNTERS = (
    ("queuetop_arrivals", "arrivals_total", "arrivals", "Jobs that arrived, seen since queuetop began watching."),
    ("queuetop_completions", "completions_total", "completions", "Jobs that finished, seen since queuetop began "
                                                                  "watching."),
)
SUMMARIES = (
    ("queuetop_wait_seconds", "wait", "Time from created to claimed, over the completions of the last 60 s."),
    ("queuetop_processing_seconds", "processing", "Time from claimed to completed, over the completions of the "
                                                  "last 60 s."),
)
QUEUE_LABELS = ("target", "layout", "job_type")
LISTEN_BACKLOG = 128  # connections waiting to be accepted: room for many scrapers at once


@dataclass(frozen=True)
class TargetState:
    """What a target's poller last saw. `outcome` None: the first poll has not finished yet."""

    name: str
    outcome: PollOutcome | None = None
    poll_seconds: float | None = None  # wall time of the last poll attempt
    started_at: float = 0.0  # Unix time the poller started: the counters' `_created`
    breaches: tuple[Breach, ...] = ()  # the SLOs (config file, --slo) breached at the last poll
    capped: tuple[TypeStats, ...] | None = None  # the types exported, past the cap folded (None: the snapshot's)
    folded: int = 0  # how many types the "(other)" row of `capped` stands for
    paced_s: float | None = None  # from this poll to the next, where dear polls stretch --interval (pace.py)

    @property
    def snapshot(self) -> Snapshot | None:
        return self.outcome.snapshot if self.outcome is not None else None

    @property
    def types(self) -> tuple[TypeStats, ...]:
        """The rows to export: the capped ones, else every type of the snapshot."""
        if self.capped is not None:
            return self.capped
        return self.snapshot.types if self.snapshot is not None else ()


class SnapshotMetrics:
    """A prometheus_client Collector: metric families from the latest state of every target, at each scrape."""

    def __init__(self, states: Callable[[], Sequence[TargetState]]) -> None:
        self._states = states

    def describe(self) -> list:
        return []  # names vary with the targets; registering must not call collect() (and poll nothing)

    def collect(self) -> Iterator:
        states = self._states()
        yield from families(states)


def families(states: Iterable[TargetState]) -> Iterator:
    """The metric families of a set of target states (also `queuetop stats --format openmetrics`)."""
    states = list(states)
    up = GaugeMetricFamily("queuetop_up", "1 when the last poll of the target read the queue, else 0.",
                           labels=["target"])  # fmt: skip
    took = GaugeMetricFamily("queuetop_poll_seconds", "How long the last poll of the target took.",
                             labels=["target"], unit="seconds")  # fmt: skip
    counted = GaugeMetricFamily("queuetop_states_counted_age_seconds", "On a deep queue whose depth cannot be "
                                "tracked, between two of its spaced counts: how long ago its states were counted (the "
                                "gauges are that count's); absent where the last poll counted or tracked them.",
                                labels=["target"], unit="seconds")  # fmt: skip
    paced = GaugeMetricFamily("queuetop_poll_paced_seconds", "Where the target's polls are dear (a table without "
                              "the index they need: queuetop doctor names it), how long from one poll to the next, "
                              "longer than serve --interval so that polls take at most a tenth of the time; absent "
                              "where the interval holds.", labels=["target"], unit="seconds")  # fmt: skip
    folded = GaugeMetricFamily("queuetop_folded_types", 'Job types past serve --max-types, exported together as '
                               'job_type="(other)".', labels=["target"])  # fmt: skip
    gauges = {name: GaugeMetricFamily(name, doc, labels=QUEUE_LABELS, unit=_unit(name)) for name, _, _, doc in GAUGES}
    counters = {name: CounterMetricFamily(name, doc, labels=QUEUE_LABELS) for name, _, _, doc in COUNTERS}
    summaries = {name: SummaryMetricFamily(name, doc, labels=QUEUE_LABELS, unit="seconds")
                 for name, _, doc in SUMMARIES}  # fmt: skip
    breached = GaugeMetricFamily("queuetop_slo_breach", "1 for each SLO (config file, --slo) breached at the last "
                                 "poll; absent when met.", labels=["target", "job_type", "slo"])  # fmt: skip
    lasted = GaugeMetricFamily("queuetop_slo_breach_duration_seconds", "How long an open SLO breach has lasted.",
                               labels=["target", "job_type", "slo"], unit="seconds")  # fmt: skip
    for state in states:
        for breach in state.breaches if state.snapshot is not None else ():
            labels = [state.name, breach.job_type, breach.slo.value]
            breached.add_metric(labels, 1.0)
            lasted.add_metric(labels, breach.lasted_s)
        snapshot = state.snapshot
        up.add_metric([state.name], 1.0 if snapshot is not None else 0.0)
        if state.poll_seconds is not None:
            took.add_metric([state.name], state.poll_seconds)
        if state.paced_s is not None:
            paced.add_metric([state.name], state.paced_s)
        if snapshot is None:
            continue  # a target that did not answer has no queue figures: absent, not 0 and not stale
        folded.add_metric([state.name], float(state.folded))
        if snapshot.counted_s_ago is not None:
            counted.add_metric([state.name], snapshot.counted_s_ago)
        for row in state.types:
            labels = [state.name, snapshot.layout, row.job_type]
            for name, attr, figure, _ in GAUGES:
                value = getattr(row, attr)
                if value is not None and snapshot.provides(figure):
                    gauges[name].add_metric(labels, float(value))
            for name, attr, figure, _ in COUNTERS:
                value = getattr(row, attr)
                if value is not None and snapshot.provides(figure):
                    counters[name].add_metric(labels, float(value), created=state.started_at or None)
            for name, figure, _ in SUMMARIES:
                if not snapshot.provides(figure):
                    continue
                for quantile, p in QUANTILES:
                    value = getattr(row, f"{figure}_p{p}_s")
                    if value is not None:
                        summaries[name].add_sample(name, dict(zip(QUEUE_LABELS, labels, strict=True)) |
                                                   {"quantile": quantile}, float(value))  # fmt: skip
    yield up
    yield took
    yield paced
    yield folded
    yield counted
    yield from gauges.values()
    yield from counters.values()
    yield from summaries.values()
    yield breached
    yield lasted


def _unit(name: str) -> str:
    return "seconds" if name.endswith("_seconds") else ""


def registry_of(states: Callable[[], Sequence[TargetState]]) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotMetrics(states))  # type: ignore[arg-type]
    return registry


def exposition(states: Sequence[TargetState]) -> str:
    """One OpenMetrics exposition of these states (ends with `# EOF`)."""
    from prometheus_client.openmetrics.exposition import generate_latest

    return generate_latest(registry_of(lambda: states)).decode("utf-8")


# -- polling ---------------------------------------------------------------------------------------------
class TargetPoller:
    """One target, one thread, one Monitor (so one connection): polls every `interval_s` and publishes the
    outcome as a new immutable TargetState. Never raises (Monitor.poll never does)."""

    def __init__(self, name: str, monitor: Monitor, interval_s: float,
                 on_state: Callable[[TargetState], None] | None = None, slos: Slos | None = None,
                 max_types: int = DEFAULT_MAX_TYPES) -> None:  # fmt: skip
        self.name = name
        self._slos = SloWatch(slos, target=name) if slos else None
        # a type with a limit of its own keeps its name: its alert rule selects it by name
        self._cap = TypeCap(max_types, pinned=slos.own_types
                            if slos else ())  # fmt: skip
        self.monitor = monitor
        self.interval_s = interval_s
        self.pace = Pace()  # where polls are dear, they come further apart than interval_s (watch/pace.py)
        self.on_state = on_state
        self.state = TargetState(name, started_at=time.time())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"queuetop-poll-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            outcome = self.monitor.poll()
            took = time.perf_counter() - started
            breaches = self.state.breaches
            capped, folded = None, 0  # a failed poll exports no queue figure at all
            if outcome.snapshot is not None:
                if self._slos is not None:
                    breaches = self._slos.observe(outcome.snapshot).breaches
                exported = self._cap.cap(outcome.snapshot.types)
                capped, folded = exported.types, exported.folded
            self.pace.took(outcome.poll_s)
            wait = self.pace.wait_s(self.interval_s)
            self.state = TargetState(self.name, outcome, took, self.state.started_at, breaches, capped, folded,
                                     wait if wait > self.interval_s else None)  # fmt: skip
            if self.on_state is not None:
                self.on_state(self.state)
            # After a failure the Monitor answers "not yet" until its back-off is over: wait for that instead, so
            # every call is a real attempt and poll_seconds says what the attempt cost.
            if not outcome.connected and outcome.retry_in_s is not None:
                wait = max(wait, outcome.retry_in_s + 0.01)
            self._stop.wait(wait)

    def stop(self, wait_s: float = 2.0) -> None:
        self._stop.set()
        self._thread.join(wait_s)
        self.monitor.close(wait_s)


class CachedExposition:
    """prometheus_client's WSGI app, with its answer kept until a target publishes a new state. Building the
    exposition is the dear part of a scrape (at 200 job types ~3,000 series: tens of milliseconds of label
    escaping); scrapes between two polls (a Prometheus HA pair, a person with curl) get the same bytes. Kept per
    request kind: Accept (OpenMetrics or the classic text format), Accept-Encoding (gzip) and the query."""

    def __init__(self, registry: CollectorRegistry, states: Callable[[], Sequence[TargetState]]) -> None:
        from prometheus_client.exposition import make_wsgi_app

        self._app = make_wsgi_app(registry)
        self._states = states
        self._lock = threading.Lock()
        self._seen: tuple[TargetState, ...] = ()
        self._answers: dict[tuple[str, ...], tuple[str, list, list[bytes]]] = {}

    def __call__(self, environ: dict, start_response: Callable) -> list[bytes]:
        kind = tuple(environ.get(k, "") for k in ("REQUEST_METHOD", "PATH_INFO", "QUERY_STRING", "HTTP_ACCEPT",
                                                   "HTTP_ACCEPT_ENCODING"))  # fmt: skip
        states = tuple(self._states())
        with self._lock:
            if not _same(states, self._seen):
                self._seen, self._answers = states, {}
            answer = self._answers.get(kind)
        if answer is None:
            captured: list = []
            body = self._app(environ, lambda status, headers, *_: captured.extend((status, headers)))
            answer = (captured[0], captured[1], list(body))
            with self._lock:
                if _same(states, self._seen):  # no poll published meanwhile: keep it for the next scrapes
                    self._answers[kind] = answer
        start_response(answer[0], answer[1])
        return answer[2]


def _same(these: Sequence[TargetState], those: Sequence[TargetState]) -> bool:
    """The very same states (a poll publishes a new object, so identity says whether anything changed)."""
    return len(these) == len(those) and all(a is b for a, b in zip(these, those, strict=True))


class Exporter:
    """The HTTP endpoint and its pollers. `start()` binds (port 0: any free port, see `port`) and starts them."""

    def __init__(self, pollers: Sequence[TargetPoller], host: str = "127.0.0.1", port: int = 9187) -> None:
        self.pollers = list(pollers)
        self.host = host
        self.port = port
        self.registry = registry_of(self.states)
        self._server = None
        self._thread: threading.Thread | None = None

    def states(self) -> list[TargetState]:
        return [poller.state for poller in self.pollers]

    def bind(self) -> None:
        """Bind and listen (port 0: any free port, see `port`), without answering yet."""
        import socket
        from wsgiref.simple_server import WSGIRequestHandler, make_server

        from prometheus_client.exposition import ThreadingWSGIServer

        class Quiet(WSGIRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass  # a line on stderr per scrape would bury what matters

        class Server(ThreadingWSGIServer):
            address_family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            # socketserver listens with a backlog of 5: 20 scrapers connecting at once overflow it, the kernel
            # drops their SYNs and each retries a second later (p95 1 s). The kernel caps it at somaxconn.
            request_queue_size = LISTEN_BACKLOG

        self._server = make_server(self.host, self.port, CachedExposition(self.registry, self.states),
                                   server_class=Server, handler_class=Quiet)  # fmt: skip
        self.port = self._server.server_port

    def start(self) -> None:
        """Bind, answer scrapes on a thread of their own, and start the pollers."""
        if self._server is None:
            self.bind()
        assert self._server is not None
        self._thread = threading.Thread(target=self._server.serve_forever, name="queuetop-metrics", daemon=True)
        self._thread.start()
        for poller in self.pollers:
            poller.start()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def stop(self) -> None:
        if self._server is not None:
            if self._thread is not None:  # shutdown() waits for serve_forever: only once it was started
                self._server.shutdown()
            self._server.server_close()
        for poller in self.pollers:
            poller._stop.set()  # all at once: a stuck one must not keep the others waiting
        for poller in self.pollers:
            poller.stop(wait_s=2.0)
