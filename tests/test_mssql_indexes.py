"""SQL Server's native indexes carry their filter's columns (a filtered index without them costs a key lookup
per row), and an install made by an older queuetop is found by its columns, not its name: `init` and `doctor`
print the DROP_EXISTING statement that upgrades each such index, and run nothing. No SQL Server here: the
catalog's answers come from a stand-in that answers sys.index_columns as the server would; the statements
themselves are in the golden T-SQL, parsed by both grammars (tests/test_tsql.py)."""

from __future__ import annotations

from queuetop.db.dialects import MSSQLDialect
from queuetop.db.recording import StatementRecorder
from queuetop.layouts import NATIVE
from queuetop.layouts.schema import outdated_indexes
from queuetop.layouts.sql import Statements
from queuetop.serve.doctor_sqlserver import outdated_index_findings
from queuetop.serve.findings import Status

OLD = {  # what `queuetop init` made before the indexes carried their filter columns
    "IX_WorkQueue_Pending": ["JobType", "Priority", "AvailableDate", "CreatedDate"],
    "IX_WorkQueue_Claimed": ["JobType", "TimeoutDate", "CreatedDate"],
    "IX_WorkCompleted_Dead": ["JobType"],
}


class Catalog(StatementRecorder):
    """sys.index_columns of one database: index name -> its columns (an index not listed does not exist)."""

    def __init__(self, indexes: dict[str, list[str]]) -> None:
        super().__init__(MSSQLDialect())
        self.indexes = indexes

    def fetchall(self, sql, params=()):
        super().fetchall(sql, params)
        assert "sys.index_columns" in sql
        return [(column,) for column in self.indexes.get(params[1], [])]


def current() -> dict[str, list[str]]:
    statements = Statements(MSSQLDialect(), NATIVE)
    columns = {index.name: statements.index_columns(index) for index in statements.index_definitions()}
    return {name: keys + include for name, (keys, include) in columns.items()}


def test_each_filtered_index_carries_the_columns_of_its_filter():
    columns = current()
    assert "RetrievedDate" in columns["IX_WorkQueue_Pending"] and "RetrievedDate" in columns["IX_WorkQueue_Dequeue"]
    assert {"RetrievedDate", "Attempts"} <= set(columns["IX_WorkQueue_PendingAge"])
    assert {"RetrievedDate", "RetrievedBy"} <= set(columns["IX_WorkQueue_Claimed"])  # the workers screen's claimer
    assert "Outcome" in columns["IX_WorkCompleted_Dead"]


def test_an_index_made_by_an_older_queuetop_is_found_with_the_statement_that_upgrades_it():
    catalog = Catalog({**current(), **OLD, "IX_WorkQueue_Dequeue": []})  # Dequeue absent: init makes it, no upgrade
    found = {step.name: step for step in outdated_indexes(catalog, NATIVE)}
    assert set(found) == set(OLD)
    assert found["IX_WorkQueue_Pending"].lacks == ("RetrievedDate",)
    assert found["IX_WorkQueue_Claimed"].lacks == ("RetrievedDate", "RetrievedBy")
    assert found["IX_WorkCompleted_Dead"].upgrade_sql == (
        "CREATE INDEX [IX_WorkCompleted_Dead] ON [queuetop].[WorkCompleted] ([JobType]) INCLUDE ([Outcome]) "
        "WHERE [Outcome] = 'dead' WITH (DROP_EXISTING = ON);")
    assert all(sql.removeprefix("/* queuetop */ ").startswith("SELECT") for sql, _ in catalog.statements)  # reads


def test_the_doctor_warns_of_them_and_prints_every_upgrade_and_is_quiet_when_all_are_current():
    (finding,) = outdated_index_findings(Catalog({**current(), **OLD}), NATIVE)
    assert finding.status is Status.WARN and "IX_WorkQueue_Claimed lacks RetrievedDate, RetrievedBy" in finding.summary
    assert finding.fix is not None and finding.fix.count("WITH (DROP_EXISTING = ON);") == len(OLD)
    (finding,) = outdated_index_findings(Catalog(current()), NATIVE)
    assert finding.status is Status.OK


def test_the_indexes_the_doctor_recommends_for_a_seeds_table_carry_their_filter_columns_too():
    from types import SimpleNamespace

    from queuetop.db.dialects.postgres import PostgresDialect
    from queuetop.layouts import load_layout
    from queuetop.serve.doctor import SEED_ADVICE, Doctor

    for name, seed in (("queuesample", "000"), ("requests", "001")):
        (advice,) = [a for a in SEED_ADVICE[seed] if a.where]
        sql = Doctor(SimpleNamespace(dialect=MSSQLDialect()), load_layout(name)).advice_sql(advice)  # type: ignore[arg-type]
        filter_column = sql.split(" WHERE ")[1].split(" IS NULL")[0]
        assert f"INCLUDE ({filter_column})" in sql, sql
        postgres = Doctor(SimpleNamespace(dialect=PostgresDialect()), load_layout(name)).advice_sql(advice)  # type: ignore[arg-type]
        assert "INCLUDE" not in postgres  # a partial index's predicate is read from the index itself there
