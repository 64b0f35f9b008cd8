"""Prometheus alerting rules from the SLOs: the limits `check`, the dashboard's marks and `serve`'s
queuetop_slo_breach series use, written once in the config file (or given with --slo), said again in PromQL over
the series `queuetop serve` exports, so Prometheus pages where the dashboard would have turned a cell red.

Per target (the `target` label `serve` gives it) and SLO: one rule for the job types that have a limit of their
own, and one for every other type at the default limit (`job_type!~` the others), so a type is judged by the
same limit here as in `check`. The types `serve --max-types` folds into `job_type="(other)"` are judged by
`serve` itself (its queuetop_slo_breach series, one rule for the breaches of types without series of their
own): a sum of many types' depths is no type's depth.

The SLOs in PromQL, each over the series of one (target, layout, job_type):

- max_oldest_age_s, max_depth, max_timed_out, max_lost: the gauge above the limit;
- max_wait_p95_s: queuetop_wait_seconds{quantile="0.95"} above the limit;
- min_completions_per_s: the completions counter's rate over a minute below the limit while jobs wait (depth > 0);
- max_dead_rate: the rise of queuetop_dead over the last minute (a fall counts as 0), per second, above.

Beside them, rules no SLO needs: the monitor cannot read a target (queuetop_up 0), or Prometheus gets nothing
from it at all (absent), a queue backing up (arrivals above completions with its depth growing, for ten minutes)
and one stalled (jobs waiting, none completed for five; both windows are options). Each names its target and
type in its labels and says in its annotations what to run first. A second group records the arrival and
completion rates per series and the depth and timed-out claims per target, for dashboards. Written as YAML by
hand: a list of maps of strings, each scalar a JSON-quoted string (valid YAML), so no YAML library is needed;
`promtool check rules` judges it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from queuetop.serve.typecap import OTHER
from queuetop.watch.slo import Slo, Slos, show_value

GROUP = "queuetop"
RATE_WINDOW = "1m"  # as the dashboard's 60 s rates and the dead rate's window
# Recorded at every evaluation, so a dashboard over many targets and types reads a rate instead of computing it
# from the raw counters at every load (`queuetop grafana`'s panels fall back to the raw counters where absent).
RECORDED = (
    ("job_type:queuetop_arrivals:rate1m", f"rate(queuetop_arrivals_total[{RATE_WINDOW}])"),
    ("job_type:queuetop_completions:rate1m", f"rate(queuetop_completions_total[{RATE_WINDOW}])"),
    ("target:queuetop_depth:sum", "sum by (target) (queuetop_depth)"),
    ("target:queuetop_timed_out:sum", "sum by (target) (queuetop_timed_out)"),
)


@dataclass(frozen=True)
class Rule:
    """One alerting rule, as Prometheus reads it."""

    alert: str
    expr: str
    for_: str
    labels: tuple[tuple[str, str], ...]
    summary: str
    description: str


# SLO → (alert name, the PromQL of the figure over a selector, what to run first)
_FIGURES: dict[Slo, tuple[str, str, str]] = {
    Slo.MAX_OLDEST_AGE: ("QueuetopOldestJobTooOld", "queuetop_oldest_age_seconds{sel}",
                         "queuetop -t {target} (Enter on {job_type}: its oldest jobs)"),
    Slo.MAX_DEPTH: ("QueuetopQueueTooDeep", "queuetop_depth{sel}", "queuetop -t {target}"),
    Slo.MAX_WAIT_P95: ("QueuetopWaitTooLong", 'queuetop_wait_seconds{sel_quantile}', "queuetop -t {target}"),
    Slo.MIN_COMPLETIONS: ("QueuetopCompletionsTooSlow",
                          f"rate(queuetop_completions_total{{sel}}[{RATE_WINDOW}])",
                          "queuetop workers -t {target}"),
    Slo.MAX_TIMED_OUT: ("QueuetopClaimsTimedOut", "queuetop_timed_out{sel}",
                        "queuetop release -t {target} --type {job_type} --dry-run"),
    Slo.MAX_LOST: ("QueuetopJobsLost", "queuetop_lost{sel}",
                   "queuetop release -t {target} --type {job_type} --dry-run"),
    Slo.MAX_DEAD_RATE: ("QueuetopJobsDying", f"clamp_min(queuetop_dead{{sel}} - queuetop_dead{{sel}} offset "
                                             f"{RATE_WINDOW}, 0) / 60", "queuetop dead count -t {target}"),
}  # fmt: skip


def rules_for(targets: Sequence[tuple[str, Slos, bool]], hold_s: float = 60.0, backing_up_s: float = 600.0,
              stalled_s: float = 300.0) -> list[Rule]:  # fmt: skip
    """The rules for each (target label, its SLOs, whether the config file names it: `-t NAME` in the hints),
    then the ones no SLO needs. `hold_s`: how long a breach must last before it fires (Prometheus' `for`);
    `backing_up_s`, `stalled_s`: the window of those two rules and how long each must hold."""
    hold = duration(hold_s)
    rules = [rule for label, slos, named in targets for rule in _slo_rules(label, slos, named, hold)]
    every_target = [_folded_breach_rule(hold)] if rules else []
    every_target += _monitor_rules(hold, duration(backing_up_s), duration(stalled_s))
    if not any(named for _, _, named in targets):  # no target of the config file: `-t NAME` would find none
        every_target = [replace(rule, description=rule.description.replace(" -t {{ $labels.target }}", ""))
                        for rule in every_target]  # fmt: skip
    return rules + every_target


def _slo_rules(target: str, slos: Slos, named: bool, hold: str) -> Iterable[Rule]:
    for slo in slos.used():
        limits = [limit for limit in slos.limits if limit.slo is slo]
        own = sorted({limit.job_type for limit in limits if limit.job_type is not None})
        for limit in sorted(limits, key=lambda lim: (lim.job_type is None, lim.job_type or "")):
            if limit.job_type is None:  # and not the fold of many types: see _folded_breach_rule
                types = f'job_type!~"{_regex([*own, OTHER])}"'
            else:
                types = f"job_type={_quoted(limit.job_type)}"
            yield _slo_rule(target, named, slo, limit.value, types, limit.job_type, hold)


def _slo_rule(target: str, named: bool, slo: Slo, value: float, types: str, job_type: str | None,
              hold: str) -> Rule:  # fmt: skip
    name, figure, first = _FIGURES[slo]
    matchers = ",".join(m for m in (f"target={_quoted(target)}", types) if m)
    expr = figure.replace("{sel_quantile}", "{" + matchers + ',quantile="0.95"}').replace("{sel}", "{" + matchers
                                                                                            + "}")  # fmt: skip
    spec = slo.spec
    if slo is Slo.MIN_COMPLETIONS:  # an idle queue completes nothing and is fine: only while jobs wait
        expr = f"{expr} < {_number(value)} and on(target, layout, job_type) queuetop_depth{{{matchers}}} > 0"
    else:
        expr = f"{expr} {'<' if spec.is_minimum else '>'} {_number(value)}"
    scope = job_type or "every type without a limit of its own"
    return Rule(
        alert=name, expr=expr, for_=hold,
        # which limit this is: two rules of one alert and labels would be one rule to Prometheus' lint
        labels=(("severity", "warning"), ("slo", slo.value), ("slo_for", job_type or "default"), ("target", target)),
        summary=f"{{{{ $labels.job_type }}}} on {{{{ $labels.target }}}}: {spec.label} "
                f"{'below' if spec.is_minimum else 'above'} {show_value(slo, value)} ({slo.value})",
        description=f"SLO {slo.value} = {_number(value)} for {scope} on target {target}. First: "
                    + first.format(target=target, job_type="{{ $labels.job_type }}").replace(
                        f" -t {target}", f" -t {target}" if named else ""),
    )  # fmt: skip


def _folded_breach_rule(hold: str) -> Rule:
    """A breach `serve` judged on a type it exports only inside "(other)": it has no series of its own."""
    return Rule(
        "QueuetopSloBreached", "queuetop_slo_breach == 1 unless on(target, job_type) queuetop_depth", hold,
        (("severity", "warning"),), "{{ $labels.job_type }} on {{ $labels.target }}: SLO {{ $labels.slo }} breached",
        f"serve judged {{{{ $labels.job_type }}}} past its {{{{ $labels.slo }}}} limit; the type is one of those "
        f'past serve --max-types, exported only inside job_type="{OTHER}". First: queuetop -t '
        "{{ $labels.target }}",
    )  # fmt: skip


def _monitor_rules(hold: str, backing_up: str, stalled: str) -> list[Rule]:
    """A target that cannot be read is held as long as an SLO's breach; the others have windows of their own."""
    return [
        Rule("QueuetopCannotRead", "queuetop_up == 0", hold, (("severity", "critical"),),
             "queuetop cannot read target {{ $labels.target }}",
             "The last polls of target {{ $labels.target }} failed: every queue figure of it is absent. First: "
             "queuetop -t {{ $labels.target }} (the status line says why), queuetop doctor -t {{ $labels.target }}"),
        Rule("QueuetopAbsent", "absent(queuetop_up)", "5m", (("severity", "critical"),),
             "no queuetop series at all",
             "Prometheus has no queuetop_up series: `queuetop serve` is down or not scraped. First: is it running "
             "(curl http://HOST:9187/metrics), and is it in scrape_configs?"),
        Rule("QueuetopBackingUp",
             f"rate(queuetop_arrivals_total[{backing_up}]) > rate(queuetop_completions_total[{backing_up}]) "
             f"and on(target, layout, job_type) delta(queuetop_depth[{backing_up}]) > 0", backing_up,
             (("severity", "warning"),), "{{ $labels.job_type }} on {{ $labels.target }} is backing up",
             "Jobs of {{ $labels.job_type }} arrive faster than they complete and the queue grows, for "
             f"{backing_up}. First: queuetop -t {{{{ $labels.target }}}}, then queuetop workers -t "
             "{{ $labels.target }}"),
        Rule("QueuetopStalled",
             f"queuetop_depth > 0 and on(target, layout, job_type) rate(queuetop_completions_total[{stalled}]) == 0",
             stalled, (("severity", "critical"),), "{{ $labels.job_type }} on {{ $labels.target }} has stalled",
             f"Jobs of {{{{ $labels.job_type }}}} wait and none completed for {stalled}. First: queuetop workers -t "
             "{{ $labels.target }}, queuetop release -t {{ $labels.target }} --dry-run"),
    ]  # fmt: skip


def render(rules: Sequence[Rule], source: str) -> str:
    """The rules file: the alerts' group and the recorded rates' (`RECORDED`), every string JSON-quoted (YAML)."""
    out = [f"# Prometheus alerting rules for queuetop, from {source}.",
           "# Made by `queuetop alerts`; check with `promtool check rules FILE`; load it with rule_files:.",
           "groups:", f"  - name: {_quoted(GROUP)}", "    rules:"]  # fmt: skip
    for rule in rules:
        out += [f"      - alert: {_quoted(rule.alert)}", f"        expr: {_quoted(rule.expr)}",
                f"        for: {rule.for_}", "        labels:",
                *(f"          {key}: {_quoted(value)}" for key, value in rule.labels),
                "        annotations:", f"          summary: {_quoted(rule.summary)}",
                f"          description: {_quoted(rule.description)}"]  # fmt: skip
    out += [f"  - name: {_quoted(GROUP + '-recorded')}", "    rules:"]
    for name, expr in RECORDED:
        out += [f"      - record: {_quoted(name)}", f"        expr: {_quoted(expr)}"]
    return "\n".join(out) + "\n"


def _quoted(value: str) -> str:
    """A double-quoted string, as JSON quotes it: a YAML scalar of the rules file, and a PromQL string literal
    (Go's escapes, of which JSON's are a subset)."""
    return json.dumps(value, ensure_ascii=False)


def _regex(values: Iterable[str]) -> str:
    """An RE2 alternation matching exactly these values, for a `!~` matcher (anchored by PromQL), as the body
    of a PromQL string literal."""
    body = "|".join(re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", value) for value in values)
    return json.dumps(body, ensure_ascii=False)[1:-1]


def duration(seconds: float) -> str:
    """Seconds as a Prometheus duration, in the largest units that say it exactly: 600 -> 10m, 90 -> 1m30s."""
    left, parts = int(seconds), []
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts) or "0s"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
