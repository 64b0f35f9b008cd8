"""A stand-in for `Database` that takes statements instead of running them.

Code that builds its SQL through a dialect or `Statements` and sends it through a connection can be read without a
database: `queuetop doctor` plans the statements the collector and a claim send, the golden T-SQL file is made
from every statement, the benchmark turns a worker's statements into a pgbench script. Nothing read this way is
claimed to work; the suite runs the same code on real servers for that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from queuetop.db.dialects.base import Dialect
from queuetop.db.target import Target

Statement = tuple[str, tuple[Any, ...]]


class StatementRecorder:
    """Records what is sent (sql, params), in order. Reads answer `rows` (none by default), `fetchone` answers
    `one`, changes report `changed` rows. With `transactions`, BEGIN and COMMIT are recorded where a transaction
    opens and closes (a pgbench script needs them); without, a transaction is invisible."""

    def __init__(self, dialect: Dialect, *, target: Target | None = None, now: datetime | None = None,
                 rows: Sequence[tuple[Any, ...]] = (), one: tuple[Any, ...] = (0,) * 8, changed: int = 1,
                 transactions: bool = False) -> None:  # fmt: skip
        self.dialect = dialect
        self.target = target
        self._now = now
        self.rows, self.one, self.changed = list(rows), one, changed
        self.transactions = transactions
        self.statements: list[Statement] = []

    def now(self) -> datetime:
        if self._now is None:
            raise RuntimeError("this recorder was made without a time")
        return self._now

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.statements.append((sql, tuple(params)))
        return list(self.rows)

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...]:
        self.statements.append((sql, tuple(params)))
        return self.one

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        self.statements.append((sql, tuple(params)))
        return self.changed

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self.transactions:
            self.statements.append(("BEGIN", ()))
        yield
        if self.transactions:
            self.statements.append(("COMMIT", ()))

    def take(self, call: Callable[[Any], object]) -> Statement:
        """The first statement `call` sends, given this recorder as its connection."""
        self.statements = []
        call(self)
        return self.statements[0]
