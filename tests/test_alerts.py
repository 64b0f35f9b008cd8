"""`queuetop alerts`: Prometheus alerting rules made from the SLOs, judged by Prometheus' own promtool (installed
by scripts/setup.sh --test from Debian's prometheus package): `promtool check rules` on every rule, and `promtool
test rules` feeding the series `queuetop serve` exports — an SLO breached fires after its `for`, one met never
does, a job type's own limit beats the default, a fall of the dead count is no dead rate, a queue that completes
nothing is fine while nothing waits."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .test_cli import assert_clean_failure, queuetop

PROMTOOL = shutil.which("promtool") or "promtool"  # absent: the tests fail, saying so (setup.sh installs it)
SERIES = '{{target="default",layout="native",job_type="{}"}}'
SLOS = ("--max-oldest-age", "60", "--slo", "email:max_oldest_age_s=30", "--slo", "bulk:max_oldest_age_s=300",
        "--min-completions", "1",
        "--max-dead-rate", "0.1", "--max-wait-p95", "10", "--for", "1m")  # fmt: skip


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The rules of `queuetop alerts SLOS`, written where promtool reads them, checked, and read back (once for
    the module: each test writes its own test file beside them)."""
    tmp_path = tmp_path_factory.mktemp("alerts")
    made = queuetop("alerts", *SLOS)
    assert made.returncode == 0, made.stderr
    (tmp_path / "rules.yml").write_text(made.stdout)
    checked = promtool("check", "rules", "rules.yml", cwd=tmp_path)
    assert checked.returncode == 0 and "SUCCESS: 15 rules found" in checked.stdout, checked.stdout + checked.stderr
    import yaml  # sqlfluff's dependency, in the test environment: only to read the rules back here

    alerting, _recorded = yaml.safe_load(made.stdout)["groups"]
    return {"dir": tmp_path, "rules": alerting["rules"]}


def fired(rules: dict, alert: str, slo_for: str, job_type: str) -> dict:
    """The alert promtool should report, annotations rendered as Prometheus renders their labels."""
    (rule,) = [r for r in rules["rules"] if r["alert"] == alert and r["labels"].get("slo_for", slo_for) == slo_for]
    labels = {**rule["labels"], "target": "default", "layout": "native", "job_type": job_type}
    return {"exp_labels": labels, "exp_annotations": rendered(rule, labels)}


def rendered(rule: dict, labels: dict) -> dict:
    """A rule's annotations as Prometheus renders their `{{ $labels.NAME }}` for an alert with these labels."""
    return {k: re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], v)
            for k, v in rule["annotations"].items()}


def run_cases(rules: dict, series: list[dict], cases: list[dict], recorded: list[dict] | None = None) -> None:
    test = {"rule_files": ["rules.yml"], "evaluation_interval": "15s",
            "tests": [{"interval": "15s", "input_series": series, "alert_rule_test": cases,
                       "promql_expr_test": recorded or []}]}  # fmt: skip
    name = f"test-{len(list(rules['dir'].glob('test-*')))}.yml"
    (rules["dir"] / name).write_text(json.dumps(test))  # JSON is YAML
    result = promtool("test", "rules", name, cwd=rules["dir"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_slo_breached_fires_after_its_for_and_a_types_own_limit_beats_the_default(rules):
    run_cases(rules, [
        {"series": "queuetop_oldest_age_seconds" + SERIES.format("email"), "values": "10 10 10 40x20"},  # > 30: 45 s on
        {"series": "queuetop_oldest_age_seconds" + SERIES.format("report"), "values": "40x20"},  # < the default 60
        {"series": "queuetop_oldest_age_seconds" + SERIES.format("thumbnail"), "values": "61x20"},
        {"series": "queuetop_oldest_age_seconds" + SERIES.format("bulk"), "values": "100x20"},  # its own 300: fine
    ], [
        {"eval_time": "45s", "alertname": "QueuetopOldestJobTooOld",  # thumbnail: breached 45 s, not yet 1 min
         "exp_alerts": []},
        {"eval_time": "75s", "alertname": "QueuetopOldestJobTooOld",
         "exp_alerts": [fired(rules, "QueuetopOldestJobTooOld", "default", "thumbnail")]},
        {"eval_time": "105s", "alertname": "QueuetopOldestJobTooOld",
         "exp_alerts": [fired(rules, "QueuetopOldestJobTooOld", "email", "email"),
                        fired(rules, "QueuetopOldestJobTooOld", "default", "thumbnail")]},
    ])  # fmt: skip


def test_too_few_completions_fire_only_while_jobs_wait(rules):
    run_cases(rules, [  # 0.5 completions/s against a floor of 1/s
        {"series": "queuetop_completions_total" + SERIES.format("email"), "values": "0+7.5x20"},
        {"series": "queuetop_depth" + SERIES.format("email"), "values": "5x20"},
        {"series": "queuetop_completions_total" + SERIES.format("report"), "values": "0+7.5x20"},
        {"series": "queuetop_depth" + SERIES.format("report"), "values": "0x20"},  # idle: fine
        {"series": "queuetop_completions_total" + SERIES.format("thumbnail"), "values": "0+30x20"},  # 2/s: fine
        {"series": "queuetop_depth" + SERIES.format("thumbnail"), "values": "5x20"},
    ], [
        {"eval_time": "3m", "alertname": "QueuetopCompletionsTooSlow",
         "exp_alerts": [fired(rules, "QueuetopCompletionsTooSlow", "default", "email")]},
    ])  # fmt: skip


def test_the_dead_rate_is_the_rise_over_a_minute_and_a_fall_is_none(rules):
    run_cases(rules, [  # +6 per 15 s: 0.4/s against 0.1/s; report's dead retried (a fall); thumbnail 0.05/s
        {"series": "queuetop_dead" + SERIES.format("email"), "values": "0+6x20"},
        {"series": "queuetop_dead" + SERIES.format("report"), "values": "300-6x20"},
        {"series": "queuetop_dead" + SERIES.format("thumbnail"), "values": "0+0.75x20"},
    ], [
        {"eval_time": "3m", "alertname": "QueuetopJobsDying",
         "exp_alerts": [fired(rules, "QueuetopJobsDying", "default", "email")]},
    ])  # fmt: skip


def test_a_wait_p95_above_its_limit_and_a_monitor_that_cannot_read(rules):
    run_cases(rules, [
        {"series": 'queuetop_wait_seconds{target="default",layout="native",job_type="email",quantile="0.95"}',
         "values": "12x20"},
        {"series": 'queuetop_wait_seconds{target="default",layout="native",job_type="email",quantile="0.5"}',
         "values": "12x20"},  # another quantile: not the SLO's
        {"series": 'queuetop_up{target="default"}', "values": "1 1 0x20"},
    ], [
        {"eval_time": "2m", "alertname": "QueuetopWaitTooLong",
         "exp_alerts": [{**fired(rules, "QueuetopWaitTooLong", "default", "email"),
                         "exp_labels": {**fired(rules, "QueuetopWaitTooLong", "default", "email")["exp_labels"],
                                        "quantile": "0.95"}}]},
        {"eval_time": "3m", "alertname": "QueuetopCannotRead",
         "exp_alerts": [{"exp_labels": {"severity": "critical", "target": "default"},
                         "exp_annotations": fired_annotations(rules, "QueuetopCannotRead", {"target": "default"})}]},
    ])  # fmt: skip


def test_types_folded_into_other_are_judged_by_serve_not_by_their_sum(rules):
    breach = 'queuetop_slo_breach{{target="default",job_type="{}",slo="max_oldest_age_s"}}'
    run_cases(rules, [
        {"series": "queuetop_oldest_age_seconds" + SERIES.format("(other)"), "values": "1000x20"},  # no type's age
        {"series": "queuetop_depth" + SERIES.format("email"), "values": "3x20"},  # email has series of its own:
        {"series": breach.format("email"), "values": "1x20"},  # its own rule says it, not this one
        {"series": breach.format("tenant-77"), "values": "1x20"},  # folded: only serve's verdict says it
    ], [
        {"eval_time": "3m", "alertname": "QueuetopOldestJobTooOld", "exp_alerts": []},
        {"eval_time": "3m", "alertname": "QueuetopSloBreached", "exp_alerts": [{
            "exp_labels": {"severity": "warning", "target": "default", "job_type": "tenant-77",
                           "slo": "max_oldest_age_s"},
            "exp_annotations": fired_annotations(rules, "QueuetopSloBreached", {
                "target": "default", "job_type": "tenant-77", "slo": "max_oldest_age_s"})}]},
    ])  # fmt: skip


def fired_annotations(rules: dict, alert: str, labels: dict) -> dict:
    (rule,) = [r for r in rules["rules"] if r["alert"] == alert]
    return rendered(rule, labels)


def test_without_slos_only_the_rules_no_slo_needs_and_it_says_so(tmp_path):
    made = queuetop("alerts")
    assert made.returncode == 0 and "no SLO given" in made.stderr
    assert "queuetop doctor" in made.stdout and "-t {{" not in made.stdout  # the default target: no -t to give
    (tmp_path / "rules.yml").write_text(made.stdout)
    checked = promtool("check", "rules", "rules.yml", cwd=tmp_path)
    assert "SUCCESS: 8 rules found" in checked.stdout, checked.stdout + checked.stderr  # 4 alerts, 4 recorded


def test_the_config_files_targets_each_get_their_rules_and_a_named_one_its_option(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[slo]\nmax_depth = 100\n[targets.prod]\ndb = "prod.db"\n[targets.prod.slo]\nmax_depth = 10\n'
                      '[targets.staging]\ndb = "staging.db"\n')  # fmt: skip
    made = queuetop("--config", str(config), "alerts", "--all")
    assert made.returncode == 0, made.stderr
    import yaml

    exprs = {rule.get("expr") for group in yaml.safe_load(made.stdout)["groups"] for rule in group["rules"]}
    assert r'queuetop_depth{target="prod",job_type!~"\\(other\\)"} > 10' in exprs  # "(other)": not a type's depth
    assert r'queuetop_depth{target="staging",job_type!~"\\(other\\)"} > 100' in exprs
    assert "queuetop -t staging" in made.stdout
    assert "queuetop doctor -t {{ $labels.target }}" in made.stdout  # named in the config file: -t finds them
    assert_clean_failure(queuetop("alerts", "--for", "forever"), "--for")


def test_the_recorded_rates_and_sums_are_what_a_dashboard_would_compute(rules):
    run_cases(rules, [  # 30 arrivals and 15 completions every 15 s: 2/s and 1/s
        {"series": "queuetop_arrivals_total" + SERIES.format("email"), "values": "0+30x20"},
        {"series": "queuetop_completions_total" + SERIES.format("email"), "values": "0+15x20"},
        {"series": "queuetop_depth" + SERIES.format("email"), "values": "7x20"},
        {"series": "queuetop_depth" + SERIES.format("report"), "values": "5x20"},
    ], [], [
        {"expr": "job_type:queuetop_arrivals:rate1m", "eval_time": "3m",
         "exp_samples": [{"labels": "job_type:queuetop_arrivals:rate1m" + SERIES.format("email"), "value": 2}]},
        {"expr": "job_type:queuetop_completions:rate1m", "eval_time": "3m",
         "exp_samples": [{"labels": "job_type:queuetop_completions:rate1m" + SERIES.format("email"), "value": 1}]},
        {"expr": "target:queuetop_depth:sum", "eval_time": "3m",
         "exp_samples": [{"labels": 'target:queuetop_depth:sum{target="default"}', "value": 12}]},
    ])  # fmt: skip
