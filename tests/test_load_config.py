"""Load options: parsing, validation and the messages a user sees for bad values (no database needed)."""

from __future__ import annotations

import random

import pytest

from queuetop.cli import _parser, main
from queuetop.db import UsageError
from queuetop.load.command import config_from_args
from queuetop.load.config import (
    ConsumerPool,
    LoadConfig,
    WorkTime,
    demo_config,
    parse_rate,
    parse_types,
    parse_work,
)
from queuetop.load.ids import IdLookup, IdRanges


def test_rate_is_a_positive_number_or_unlimited():
    assert parse_rate("250") == 250.0
    assert parse_rate(" Unlimited ") is None
    for bad in ("0", "-5", "fast", "nan", "inf5"):
        with pytest.raises(UsageError, match="--rate"):
            parse_rate(bad)


def test_types_are_a_count_or_weighted_names():
    assert parse_types("3") == (("load-1", 1.0), ("load-2", 1.0), ("load-3", 1.0))
    assert parse_types("email:5,report:1") == (("email", 5.0), ("report", 1.0))
    assert parse_types("email, report:0.5") == (("email", 1.0), ("report", 0.5))
    for bad, words in [("0", "from 1"), ("email:x", "not a number"), ("email,,report", "empty item"),
                       (":3", "no job type name")]:  # fmt: skip
        with pytest.raises(UsageError, match=words):
            parse_types(bad)
    with pytest.raises(UsageError, match="positive"):
        LoadConfig(types=parse_types("email:-1"))
    with pytest.raises(UsageError, match="twice"):
        LoadConfig(types=parse_types("email,email"))


def test_work_specs_for_all_types_and_per_type():
    default, per_type = parse_work("exp:30,report=uniform:100-300")
    assert default == WorkTime("exp", 30)
    assert per_type == {"report": WorkTime("uniform", 100, 300)}
    assert parse_work("fixed:0")[0].sample_s(random.Random(1)) == 0
    rng = random.Random(7)
    assert all(0.1 <= WorkTime("uniform", 100, 300).sample_s(rng) <= 0.3 for _ in range(100))
    for bad, words in [("slow:5", "unknown distribution"), ("uniform:50-5", "low end"), ("fixed:-1", "from 0"),
                       ("fixed:abc", "cannot read"), ("fixed:1,exp:2", "more than one")]:  # fmt: skip
        with pytest.raises(UsageError, match=words):
            parse_work(bad)


def test_config_checks_fractions_and_names():
    with pytest.raises(UsageError, match="--fail must be a fraction"):
        LoadConfig(fail=1.0)
    with pytest.raises(UsageError, match="--crash must be a fraction"):
        LoadConfig(crash=-0.1)
    with pytest.raises(UsageError, match="--work names job type 'nope'"):
        LoadConfig(work={"nope": WorkTime("fixed", 1)})
    with pytest.raises(UsageError, match="at least one consumer"):
        LoadConfig(pools=(ConsumerPool(0),))
    with pytest.raises(UsageError, match="does not produce"):
        LoadConfig(pools=(ConsumerPool(1, ("other",)),))


def test_crashes_get_a_sweeper_even_when_none_was_asked_for():
    assert LoadConfig().sweep_every_s is None
    assert LoadConfig(crash=0.1, lease_s=4).sweep_every_s == 2
    assert LoadConfig(crash=0.1, release_every_s=0.5).sweep_every_s == 0.5


def test_demo_has_a_slow_type_with_consumers_of_its_own():
    config = demo_config()
    assert len(config.type_names) >= 3
    assert config.fail > 0 and config.crash > 0 and config.sweep_every_s
    report_pool = next(p for p in config.pools if p.job_types == ("report",))
    report_rate = config.rate * dict(config.types)["report"] / sum(w for _, w in config.types)
    capacity = report_pool.count / config.work_for("report").mean_s()
    assert report_rate > capacity  # it backs up
    assert config.rate <= 50  # gentle on SQLite


def test_watch_keeps_its_type_filter_apart_from_the_load_types():
    args = _parser().parse_args(["watch", "--with-load", "--types", "email:5,report:1", "--type", "email"])
    assert args.types == ["email"]
    assert config_from_args(args).type_names == ("email", "report")


@pytest.mark.parametrize("argv, words", [
    (["--rate", "-5"], "--rate must be more than 0"),
    (["--rate", "lots"], "--rate must be a number"),
    (["--fail", "1.5"], "--fail must be a fraction"),
    (["--crash", "-0.1"], "--crash must be a fraction"),
    (["--types", "email:x"], "--types: the weight in 'email:x' is not a number"),
    (["--work", "email=bogus:3", "--types", "email"], "--work: unknown distribution"),
    (["--work", "other=fixed:3", "--types", "email"], "--work names job type 'other', which is not in --types"),
    (["--batch", "0"], "--batch must be a whole number from 1"),
    (["--consumers", "0"], "at least one consumer"),
    (["--producers", "0"], "--producers must be at least 1"),
    (["--lease", "0"], "--lease must be a positive number of seconds"),
    (["--jobs", "0"], "--jobs must be a whole number from 1"),
    (["--duration", "-1"], "--duration must be a positive number of seconds"),
    (["--max-attempts", "0"], "--max-attempts must be a whole number from 1"),
])  # fmt: skip
def test_bad_load_arguments_exit_2_with_one_clear_line(argv, words, tmp_path, capsys):
    status = main(["load", "--db", str(tmp_path / "never-created.db"), *argv])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("queuetop: error: ") and words in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "never-created.db").exists()


def test_id_ranges_merge_and_answer_membership():
    ids = IdRanges()
    ids.add([5, 6, 7])
    ids.add([1, 2])
    ids.add([3, 10])
    ids.add(range(100, 1100, 2))
    assert len(ids) == 507
    assert ids.runs()[:3] == [(1, 3), (5, 7), (10, 10)]
    lookup = IdLookup(ids)
    assert lookup.first == 1 and lookup.count == 507
    assert 3 in lookup and 10 in lookup and 1098 in lookup
    assert 4 not in lookup and 8 not in lookup and 101 not in lookup and 0 not in lookup and 5000 not in lookup
