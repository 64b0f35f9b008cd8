"""A Grafana dashboard for the series `queuetop serve` exports: a row per target (repeated over the `target`
variable), in it the panels a queue's on-call looks at first — depth, oldest age, arrivals against completions,
wait and processing percentiles, timed-out claims and dead jobs, rows in no state — and the monitor's own poll
time and state. Variables: the Prometheus data source, then target, layout and job type, each read from the
series themselves (`label_values`), each "All" by default.

Built here, as data, so every query is written once and checked by the tests (each parsed by Prometheus' own
`promtool`, each metric it names present in `serve`'s output); `queuetop grafana` prints it, and
`dashboards/queuetop.json` in the repository is that output (a test keeps the two equal), for an import without
queuetop at hand. The rates read the series `queuetop alerts`' rules record where Prometheus has them, else
compute them from the counters.
"""

from __future__ import annotations

import json
from typing import Any

UID = "queuetop"
SELECTOR = 'target=~"$target",layout=~"$layout",job_type=~"$job_type"'
RATE = "$__rate_interval"  # Grafana's: at least four scrape intervals, so a rate always has points
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}

# (title, unit, [(PromQL, legend)], width): the panels of one target's row, left to right, top to bottom
PANELS: list[tuple[str, str, list[tuple[str, str]], int]] = [
    ("Depth (pending jobs)", "short", [(f"queuetop_depth{{{SELECTOR}}}", "{{job_type}}")], 8),
    ("Oldest pending job", "s", [(f"queuetop_oldest_age_seconds{{{SELECTOR}}}", "{{job_type}}")], 8),
    ("Arrivals and completions", "reqps", [
        (f"sum by (job_type) (job_type:queuetop_arrivals:rate1m{{{SELECTOR}}} "
         f"or rate(queuetop_arrivals_total{{{SELECTOR}}}[{RATE}]))", "in {{job_type}}"),
        (f"sum by (job_type) (job_type:queuetop_completions:rate1m{{{SELECTOR}}} "
         f"or rate(queuetop_completions_total{{{SELECTOR}}}[{RATE}]))", "out {{job_type}}"),
    ], 8),
    ("Wait (created → claimed), p50 / p95 / p99", "s",
     [(f"queuetop_wait_seconds{{{SELECTOR}}}", "{{job_type}} p{{quantile}}")], 8),
    ("Processing (claimed → completed), p50 / p95 / p99", "s",
     [(f"queuetop_processing_seconds{{{SELECTOR}}}", "{{job_type}} p{{quantile}}")], 8),
    ("Timed-out claims, dead jobs, rows in no state", "short", [
        (f"queuetop_timed_out{{{SELECTOR}}}", "timed out {{job_type}}"),
        (f"queuetop_dead{{{SELECTOR}}}", "dead {{job_type}}"),
        (f"queuetop_in_no_state{{{SELECTOR}}}", "no state {{job_type}}"),
    ], 8),
    ("SLOs breached (queuetop_slo_breach)", "short",
     [('queuetop_slo_breach{target=~"$target",job_type=~"$job_type"}', "{{job_type}} {{slo}}")], 12),
    ("The monitor: poll time, and up (1) or not (0)", "s", [
        ('queuetop_poll_seconds{target=~"$target"}', "poll time"),
        ('queuetop_up{target=~"$target"}', "up"),
    ], 12),
]  # fmt: skip


def dashboard() -> dict[str, Any]:
    """The dashboard, as Grafana's JSON model (schema 39, Grafana 10 and later)."""
    panels: list[dict[str, Any]] = [{
        "type": "row", "title": "$target", "id": 1, "collapsed": False, "repeat": "target", "panels": [],
        "gridPos": {"h": 1, "w": 24, "x": 0, "y": 0},
    }]  # fmt: skip
    x = y = 0
    for number, (title, unit, queries, width) in enumerate(PANELS, start=2):
        if x + width > 24:
            x, y = 0, y + 8
        panels.append({
            "type": "timeseries", "title": title, "id": number, "datasource": DATASOURCE,
            "gridPos": {"h": 8, "w": width, "x": x, "y": 1 + y},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {"legend": {"displayMode": "table", "placement": "right", "calcs": ["lastNotNull", "max"]},
                        "tooltip": {"mode": "multi", "sort": "desc"}},
            "targets": [{"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
                        for i, (expr, legend) in enumerate(queries)],
        })  # fmt: skip
        x += width
    return {
        "uid": UID, "title": "queuetop: job queues", "tags": ["queuetop", "queues"], "schemaVersion": 39,
        "editable": True, "time": {"from": "now-1h", "to": "now"}, "refresh": "10s", "timezone": "",
        "description": "The series of `queuetop serve`: a row per target. Made by `queuetop grafana`.",
        "templating": {"list": [
            {"type": "datasource", "name": "datasource", "label": "Prometheus", "query": "prometheus"},
            _variable("target", "label_values(queuetop_up, target)"),
            _variable("layout", 'label_values(queuetop_depth{target=~"$target"}, layout)'),
            _variable("job_type", 'label_values(queuetop_depth{target=~"$target",layout=~"$layout"}, job_type)'),
        ]},
        "panels": panels,
    }  # fmt: skip


def _variable(name: str, query: str) -> dict[str, Any]:
    return {"type": "query", "name": name, "label": name.replace("_", " "), "datasource": DATASOURCE,
            "query": {"query": query, "refId": name}, "definition": query, "refresh": 2, "sort": 1,
            "multi": True, "includeAll": True, "allValue": ".*",
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]}}  # fmt: skip


def render() -> str:
    return json.dumps(dashboard(), indent=2, ensure_ascii=False) + "\n"
