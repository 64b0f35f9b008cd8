"""Every T-SQL statement queuetop can send, for the native schema and every layout, held to the one T-SQL check
(tests/tsql_check.py: sqlfluff's tsql grammar, the denylist, the structural rules) and to the reviewed golden
files `golden/tsql/<layout>/<operation>.sql`. The checker is checked too: it refuses deliberately wrong
statements, and the seeds' own T-SQL (golden/seeds/, extracted from /work/shared/seeds) passes it, save what
SQL Server itself refuses.

After changing a statement: `.venv/bin/python -m tests.golden.make_tsql`, then read the diff of golden/tsql/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .golden.make_tsql import SEED_OWN, every_statement, on_disk, render, uncovered
from .tsql_check import GRAMMAR_GAPS, _linter, assert_tsql, markers_to_variables, problems, split_batches

STATEMENTS = every_statement()
SEEDS = Path(__file__).parent / "golden" / "seeds"


@pytest.mark.parametrize("layout, operation, sql, params", STATEMENTS,
                         ids=[f"{layout}: {operation}" for layout, operation, _, _ in STATEMENTS])  # fmt: skip
def test_every_statement_passes_the_tsql_check(layout, operation, sql, params):
    # `queuetop load` runs a seed's own dequeue as the seed wrote it (seed 000's READPAST alone, seed 002's broken
    # first try without hints): the grammar and the denylist hold for it, queuetop's own claim-hint rule does not
    assert_tsql(sql, params, queuetop_rules=SEED_OWN not in operation)


def test_every_sql_issuing_method_is_in_the_golden_file():
    """A new statement (a dialect method taking `db`, a Statements method returning a statement) must be
    callable by the generator, so it is checked and reviewed like the rest."""
    assert uncovered() == []


def test_the_statements_match_the_reviewed_golden_files():
    expected, made = on_disk(), render()
    changed = sorted(path for path in set(expected) | set(made) if expected.get(path) != made.get(path))
    if changed:
        pytest.fail("the T-SQL changed: run `.venv/bin/python -m tests.golden.make_tsql` and review the diff of "
                    f"tests/golden/tsql/: {len(changed)} file(s) differ: {', '.join(changed[:10])}")


def test_each_golden_statement_ends_with_a_semicolon_at_a_line_end_under_its_comment():
    blocks = [block for text in on_disk().values() for block in text.split("\n\n") if block.strip()]
    assert len(blocks) == len(STATEMENTS)
    for block in blocks:
        assert block.startswith("-- ") and ": " in block.splitlines()[0] and block.rstrip().endswith(";")


# -- the checker catches what it exists for ---------------------------------------------------------------------
CLAIM = ("/* queuetop */ WITH c AS (SELECT TOP (?) * FROM [q].[WorkQueue] WITH ({hints}) WHERE [RetrievedDate] IS NULL "
         "ORDER BY [Priority]) UPDATE c SET [RetrievedDate] = SYSUTCDATETIME() OUTPUT inserted.[WorkQueueID]")


@pytest.mark.parametrize("sql, rule", [
    ("SELECT [a] FROM [q] ORDER BY [a] LIMIT ?", "LIMIT"),
    ("SELECT TOP ? [a] FROM [q]", "TOP with a parameter but no parentheses"),
    ("UPDATE [q] SET [a] = 1 WHERE [b] = ? RETURNING [a]", "RETURNING"),
    ("CREATE SCHEMA IF NOT EXISTS [q]", "IF NOT EXISTS"),
    ("SELECT [a] FROM [q] WHERE [b] = 1 FOR UPDATE", "FOR UPDATE"),
    ("SELECT CAST(? AS int), [a]::int FROM [q]", ":: cast"),
    ("SELECT [a] FROM [q] WHERE [flag] = true", "true/false"),
    (CLAIM.format(hints="ROWLOCK, UPDLOCK"), "missing READPAST"),
    (CLAIM.format(hints="READPAST"), "missing ROWLOCK, UPDLOCK"),
    ("CREATE SCHEMA [q]; CREATE VIEW [q].[v] AS SELECT 1 AS [a]", "CREATE SCHEMA must be alone in its batch"),
    ("SELECT 1 AS [a]; CREATE VIEW [v] AS SELECT 1 AS [a]", "CREATE VIEW must be alone in its batch"),
])  # fmt: skip
def test_the_check_refuses_a_deliberately_wrong_statement(sql, rule):
    found = problems(sql)
    assert any(rule in problem for problem in found), found


def test_a_right_claim_and_literals_that_look_like_words_pass():
    assert problems(CLAIM.format(hints="ROWLOCK, READPAST, UPDLOCK"), (5,)) == []
    assert problems("SELECT [limit], 'true' FROM [q] /* LIMIT */ WHERE [a] = ?", (1,)) == []


def test_markers_become_numbered_variables_but_not_inside_literals():
    assert markers_to_variables("SELECT TOP (?) '?' FROM [q?] WHERE [a] = ?") == \
        "SELECT TOP (@p1) '?' FROM [q?] WHERE [a] = @p2"


def test_the_grammar_gaps_are_still_gaps():
    """When sqlfluff learns one of these, this fails: drop it from GRAMMAR_GAPS so the grammar checks it."""
    assert _linter().parse_string("ALTER TABLE [a].[b] SET (LOCK_ESCALATION = DISABLE)").violations
    assert set(GRAMMAR_GAPS) == {"ALTER TABLE ... SET (LOCK_ESCALATION = ...)"}


# -- the seeds' own T-SQL: the checker accepts the real thing -------------------------------------------------
# What the grammar refuses in the seeds, rightly: SQL Server 2012 removed the FASTFIRSTROW hint (OPTION (FAST 1)).
SEED_REFUSALS = {"001_requests.sql": ["FASTFIRSTROW"]}


@pytest.mark.parametrize("path", sorted(SEEDS.glob("*.sql")), ids=lambda p: p.name)
def test_the_seeds_own_tsql_passes_the_same_check(path):
    refused = []
    for batch in split_batches(path.read_text(encoding="utf-8")):
        found = problems(batch, queuetop_rules=False)  # their claims predate queuetop's hint rule
        if found:
            refused.append((batch, found))
    expected = SEED_REFUSALS.get(path.name, [])
    assert len(refused) == len(expected), refused
    for (batch, _found), word in zip(refused, expected, strict=True):
        assert word in batch


def test_the_batch_rule_fires_on_a_seed_without_its_go():
    script = (SEEDS / "001_requests.sql").read_text(encoding="utf-8")
    push = script.split("GO\n")[-1]
    joined = "SELECT 1 AS [a]\n" + push  # a procedure after another statement in one batch
    assert any("PROCEDURE must be alone" in p for p in problems(joined, queuetop_rules=False))
