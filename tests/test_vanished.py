"""VanishedWatch: jobs that came and went between two polls where finished rows are deleted, from the identity's
sequence less the arrivals seen as rows, counted a poll late so that a late commit is never counted twice."""

from __future__ import annotations

import pytest

from queuetop.watch.watermarks import VanishedWatch, sequence_value


def test_jobs_gone_unseen_are_counted_a_poll_late_and_only_once():
    watch = VanishedWatch()
    watch.begin(100)
    assert watch.take(130) == 0  # 30 ids handed out since the last poll: not yet judged
    watch.saw(5)  # 5 of them seen as rows at the next poll
    assert watch.take(130) == 25  # the other 25 came and went
    assert watch.take(130) == 0  # and are not counted again


def test_a_commit_later_than_a_poll_is_counted_early_and_the_next_gone_jobs_pay_it_back():
    watch = VanishedWatch()
    watch.begin(0)
    assert watch.take(10) == 0  # 10 ids: 4 committed and deleted, 6 in a transaction that outlasts the polls
    assert watch.take(10) == 10  # judged a poll later: none seen, so 10 gone ...
    watch.saw(6)  # ... and then the 6 commit and are seen: 6 too many, for now
    watch.saw(2)
    assert watch.take(30) == 0  # 2 new ones seen: nothing gone
    assert watch.take(30) == 12  # 20 more ids, none seen: 22 gone unseen in all, 10 of them counted already
    assert watch.counted == 30 - 8  # every id handed out, less the 8 seen: the total is right again


@pytest.mark.parametrize(("row", "value"), [((None,), 0), ((41,), 41), (("7",), 7)])
def test_the_sequence_value_is_its_last_id_or_none_yet(row, value):
    assert sequence_value(row) == value


def test_sqlites_sequence_is_the_highest_id_an_autoincrement_key_ever_handed_out(tmp_path):
    """SQLite keeps an AUTOINCREMENT key's highest id in sqlite_sequence (Django's AutoField): deleted rows do not
    lower it; before the first insert it has no row, and the statement still gives one (NULL: 0)."""
    from queuetop.db import Database, parse_target
    from queuetop.layouts import load_layout
    from queuetop.layouts.sql import statements_on

    path = tmp_path / "q.db"
    with Database.open(parse_target(str(path)), create=True) as db:
        db.execute('CREATE TABLE "django_q_ormq" (id integer NOT NULL PRIMARY KEY AUTOINCREMENT, "key" varchar(100) '
                   'NOT NULL, payload text NOT NULL, lock datetime NULL)')
        db.execute('CREATE TABLE "django_q_task" (id varchar(32) PRIMARY KEY, cluster varchar(100), '
                   'started datetime, stopped datetime, success bool, func varchar(256), attempt_count integer)')
        statement = statements_on(db, load_layout("django_q2")).sequence_value()
        assert sequence_value(db.fetchall(*statement)[0]) == 0
        for _ in range(3):
            db.execute("INSERT INTO django_q_ormq (key, payload, lock) VALUES ('site', 'x', '2026-01-01')")
        db.execute("DELETE FROM django_q_ormq")
        assert sequence_value(db.fetchall(*statement)[0]) == 3
