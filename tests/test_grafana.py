"""`queuetop grafana`: the dashboard is checked as Grafana and Prometheus would read it, short of a Grafana server
(none here: Debian has no package of it): every query — panels' and variables' — parsed by Prometheus' own
promtool (as recording rules, with Grafana's variables given values), every metric it names present in what
`serve` exports for a real queue, the layout whole (unique ids, a 24-column grid), and dashboards/queuetop.json
in the repository the command's own output."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from queuetop.act.queue import Queue
from queuetop.db import Database, parse_target
from queuetop.layouts import NATIVE
from queuetop.layouts.schema import init_schema
from queuetop.serve.alerts import RECORDED

from .test_cli import queuetop

REPOSITORY = Path(__file__).resolve().parent.parent
PROMTOOL = shutil.which("promtool") or "promtool"  # absent: the test fails, saying so (setup.sh installs it)
GRAFANA_VALUES = {"$__rate_interval": "1m", "$target": ".*", "$layout": ".*", "$job_type": ".*"}


def dashboard() -> dict:
    made = queuetop("grafana")
    assert made.returncode == 0, made.stderr
    return json.loads(made.stdout)


def queries(board: dict) -> list[str]:
    """Every PromQL the dashboard runs: the panels', and the series inside each variable's label_values()."""
    exprs = [target["expr"] for panel in board["panels"] for target in panel.get("targets", ())]
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            (inside,) = re.findall(r"^label_values\((.*), \w+\)$", variable["query"]["query"])
            exprs.append(inside)
    return exprs


def test_the_repositorys_file_is_the_commands_output():
    assert (REPOSITORY / "dashboards" / "queuetop.json").read_text() == queuetop("grafana").stdout


def test_every_query_parses_as_promql(tmp_path):
    exprs = queries(dashboard())
    assert len(exprs) >= 13
    rules = {"groups": [{"name": "grafana", "rules": [
        {"record": f"queuetop:check_{n}", "expr": re.sub(r"\$\w+", lambda m: GRAFANA_VALUES[m.group(0)], expr)}
        for n, expr in enumerate(exprs)]}]}  # fmt: skip
    (tmp_path / "queries.yml").write_text(json.dumps(rules))  # JSON is YAML
    checked = subprocess.run([PROMTOOL, "check", "rules", "queries.yml"], capture_output=True, text=True,
                             cwd=tmp_path, timeout=60)  # fmt: skip
    assert checked.returncode == 0 and f"SUCCESS: {len(exprs)} rules found" in checked.stdout, checked.stdout + \
        checked.stderr  # fmt: skip


def test_every_metric_it_names_is_one_serve_exports(tmp_path):
    path = tmp_path / "q.db"
    with Database.open(parse_target(str(path)), create=True) as db:
        init_schema(db, NATIVE)
        queue = Queue(db)
        queue.enqueue_many("email", 20)
        for job in queue.claim("worker", batch=10):  # completed, so the wait and processing summaries have points
            queue.complete(job.id, job.token)
    made = queuetop("stats", "--db", str(path), "--format", "openmetrics")  # serve's families, once
    assert made.returncode == 0, made.stderr
    exposition = made.stdout
    exported = set(re.findall(r"^# TYPE (\w+)", exposition, re.M)) | set(re.findall(r"^(\w+)[{ ]", exposition, re.M))
    named = {name for expr in queries(dashboard()) for name in re.findall(r"[\w:]*queuetop_[\w:]*", expr)}
    recorded = {name for name in named if ":" in name}  # the rates `queuetop alerts`' rules record
    assert recorded <= {name for name, _ in RECORDED}, sorted(recorded)
    assert named - recorded and named - recorded <= exported, sorted(named - recorded - exported)


def test_a_row_per_target_with_its_panels_on_the_grid():
    board = dashboard()
    (row, *panels) = board["panels"]
    assert row["type"] == "row" and row["repeat"] == "target"
    assert [v["name"] for v in board["templating"]["list"]] == ["datasource", "target", "layout", "job_type"]
    assert len({panel["id"] for panel in board["panels"]}) == len(board["panels"])
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24 and panel["datasource"]["uid"] == "${datasource}"
        assert all(target["expr"] and target["refId"] for target in panel["targets"])
    titles = " ".join(panel["title"] for panel in panels)
    for word in ("Depth", "Oldest", "Arrivals and completions", "Wait", "Processing", "Timed-out", "dead", "poll"):
        assert word in titles
