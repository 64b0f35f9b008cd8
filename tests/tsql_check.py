"""The T-SQL check every SQL Server test uses: a real grammar, a denylist, and structural rules.

No SQL Server runs here, so each statement queuetop can send is held to three checks:
1. sqlfluff's `tsql` dialect (pinned in pyproject) parses it with no unparsable segment, after each ODBC `?`
   marker is turned into a variable `@p1`, `@p2`, ... (sqlfluff reads variables, not markers). Unlike sqlglot's
   T-SQL mode it refuses LIMIT, RETURNING and `TOP ?`, so it catches the mistakes this check exists for. Its
   Rust parser (sqlfluffrs, pinned beside it, sqlfluff's default where installed) does the parsing: the same tree
   as the Python parser for every statement of the golden inventory, in a third of the time.
2. A denylist of other dialects' words that a lenient grammar might let through: LIMIT, RETURNING,
   `CREATE ... IF NOT EXISTS`, FOR UPDATE, `::` casts, `TOP ?` / `TOP @p` without parentheses, true/false.
   Looked for outside string literals, comments and [bracketed] names.
3. Structure: a claim (an UPDATE that picks its rows with TOP) carries ROWLOCK, READPAST and UPDLOCK — the
   rule for queuetop's own statements (`queuetop_rules`; the seeds' claims predate it); CREATE SCHEMA, VIEW,
   PROCEDURE, FUNCTION and TRIGGER each alone in their batch (SQL Server refuses them otherwise).

`problems(sql)` returns what is wrong, one line each; `assert_tsql(sql)` fails a test with that list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from sqlfluff.core import FluffConfig, Linter

# T-SQL that SQL Server documents but sqlfluff 4.5.0's grammar does not know. Each is matched whole and checked
# by its own pattern instead; test_tsql_check proves sqlfluff still refuses it, so the entry goes when it learns it.
GRAMMAR_GAPS = {
    "ALTER TABLE ... SET (LOCK_ESCALATION = ...)":
        re.compile(r"ALTER TABLE (\[[^\]]+\]\.)?\[[^\]]+\] SET \(LOCK_ESCALATION = (AUTO|TABLE|DISABLE)\)"),
}  # fmt: skip

DENYLIST = {  # what other dialects say that T-SQL does not
    "LIMIT (T-SQL: TOP (n))": re.compile(r"\bLIMIT\b", re.I),
    "RETURNING (T-SQL: OUTPUT inserted.*)": re.compile(r"\bRETURNING\b", re.I),
    "CREATE ... IF NOT EXISTS (T-SQL: check the catalog first)": re.compile(r"\bCREATE\s+\w+\s+IF\s+NOT\s+EXISTS\b",
                                                                            re.I),
    "FOR UPDATE (T-SQL: WITH (UPDLOCK))": re.compile(r"\bFOR\s+UPDATE\b", re.I),
    ":: cast (T-SQL: CAST(x AS t))": re.compile(r"::"),
    "TOP with a parameter but no parentheses (T-SQL: TOP (?))": re.compile(r"\bTOP\s+[?@]", re.I),
    "true/false literal (T-SQL has none: 1/0)": re.compile(r"\b(true|false)\b", re.I),
}
CLAIM_HINTS = ("ROWLOCK", "READPAST", "UPDLOCK")
ALONE_IN_BATCH = ("create_schema_statement", "create_view_statement", "create_procedure_statement",
                  "create_function_statement", "create_trigger_statement")  # fmt: skip
_HIDDEN = re.compile(r"'(?:[^']|'')*'|\[[^\]]*\]|--[^\n]*|/\*.*?\*/", re.S)  # literals, names, comments


@cache
def _linter() -> Linter:
    return Linter(config=FluffConfig(overrides={"dialect": "tsql"}))

# Valid T-SQL that sqlglot's T-SQL mode cannot read yet (sqlfluff's grammar does): UPDATE TOP (n) (the seeds'
# update_top claim, the batched maintenance writes; also after a table variable's DECLARE). The tests expect its
# ParseError, so a sqlglot that learns it fails them and the exception can go.
SQLGLOT_GAPS = re.compile(r"^/\* queuetop \*/ (DECLARE @qt_out TABLE [^;]*; )?UPDATE TOP \(")


def hide_literals(sql: str) -> str:
    """The statement with string literals, [names] and comments blanked, so the denylist reads only SQL words."""
    return _HIDDEN.sub(lambda m: " " * len(m.group(0)), sql)


def markers_to_variables(sql: str) -> str:
    """Each ODBC `?` outside a literal, name or comment becomes @p1, @p2, ... in order."""
    hidden = hide_literals(sql)
    out, count = [], 0
    for i, ch in enumerate(sql):
        if ch == "?" and hidden[i] == "?":
            count += 1
            out.append(f"@p{count}")
        else:
            out.append(ch)
    return "".join(out)


def marker_count(sql: str) -> int:
    return hide_literals(sql).count("?")


def grammar_problems(sql: str) -> list[str]:
    """What sqlfluff's T-SQL grammar refuses in one batch (markers already turned into variables)."""
    body = sql.strip().removesuffix(";").strip()
    for pattern in GRAMMAR_GAPS.values():
        if pattern.fullmatch(re.sub(r"^/\*[^*]*\*/\s*", "", body)):
            return []  # a documented gap of the grammar: checked by the pattern instead (see GRAMMAR_GAPS)
    parsed = _linter().parse_string(sql)
    found = [f"grammar: {violation.desc()}" for violation in parsed.violations]
    if parsed.tree is not None:
        found += [f"grammar: unparsable {seg.raw[:80]!r}" for seg in parsed.tree.recursive_crawl("unparsable")]
        statements = list(parsed.tree.recursive_crawl("statement", recurse_into=False))
        if len(statements) > 1:
            for statement in statements:
                kinds = {child.get_type() for child in statement.segments}
                for kind in kinds & set(ALONE_IN_BATCH):
                    found.append(f"structure: {kind.removesuffix('_statement').replace('_', ' ').upper()} must be "
                                 "alone in its batch (send it by itself, or end the batch with GO)")
    return found


def is_claim(sql: str) -> bool:
    """An UPDATE that picks its rows with TOP: what a worker runs to take jobs."""
    words = hide_literals(sql).upper()
    return bool(re.search(r"\bUPDATE\b", words)) and bool(re.search(r"\bTOP\b", words))


def problems(sql: str, params: Sequence[Any] | None = None, *, queuetop_rules: bool = True) -> list[str]:
    """Everything wrong with one batch of T-SQL as queuetop would send it (`?` markers), one line each."""
    found = grammar_problems(markers_to_variables(sql))
    words = hide_literals(sql)
    found += [f"denylist: {name}" for name, pattern in DENYLIST.items() if pattern.search(words)]
    if queuetop_rules and is_claim(sql):
        hints = " ".join(re.findall(r"\bWITH\s*\(([^)]*)\)", words, re.I)).upper()
        missing = [hint for hint in CLAIM_HINTS if not re.search(rf"\b{hint}\b", hints)]
        if missing:
            found.append("structure: a claim must read WITH (ROWLOCK, READPAST, UPDLOCK); missing "
                         + ", ".join(missing))
    if params is not None and marker_count(sql) != len(params):
        found.append(f"parameters: {marker_count(sql)} markers, {len(params)} values")
    return found


def assert_tsql(sql: str, params: Sequence[Any] | None = None, *, queuetop_rules: bool = True) -> None:
    found = problems(sql, params, queuetop_rules=queuetop_rules)
    assert not found, "not T-SQL as SQL Server takes it:\n  " + "\n  ".join(found) + f"\n{sql}"


def split_batches(script: str) -> list[str]:
    """A script cut at its `GO` lines (sqlcmd's and SSMS's batch separator), empty batches dropped."""
    return [batch.strip() for batch in re.split(r"(?im)^\s*GO\s*$", script) if batch.strip()]
