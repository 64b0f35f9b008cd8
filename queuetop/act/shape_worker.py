"""A worker's side of a queue of any shape: the seed's own dequeue and completion, as its layout's `[claim]` says.

The native schema has its worker operations in `queue.py`; for every other shape this module takes jobs the
way the seed's own code does (GetNextJob's UPDATE TOP (1) through the pending view, usp_Request_Pop's move into
RequestsCompleted, work_queue's UPDLOCK/READPAST transaction or its UPDATE TOP (1) ... OUTPUT, seed 003's CTE,
usp_API_Get_Job's batch stamped with a fresh GUID) and completes them as the seed does (CompletedDate,
Last_Attempt_End_Date), so `queuetop load` can test a team's own dequeue before production. The statements
come from `layouts.sql.Statements`; this module only runs them, each claim as one short transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from queuetop.db import Database, LeaseLost, UsageError
from queuetop.layouts import CLAIM_FORMS, Layout
from queuetop.layouts.sql import Statements

_WORKER_NAMESPACE = uuid.UUID("5d6c3a0e-2f43-4c1b-9a3e-7b1f0e0c9d21")  # a worker name -> a stable GUID


@dataclass(frozen=True)
class Taken:
    """A job a worker took through the seed's own dequeue (named as a native `queue.Job`'s attributes)."""

    id: Any
    job_type: str | None
    token: str | None  # the claim's mark, where the shape stamps one
    attempts: int  # this attempt's number (1 where the shape counts none)
    carried: tuple[Any, ...] = ()  # `move`: the row's values, for the completed table


def claim_forms(layout: Layout) -> tuple[str, ...]:
    return layout.claim.forms if layout.claim is not None else ()


def check_claim_form(layout: Layout, form: str | None) -> str:
    """The claim form to run: the one asked for, if this shape's seed has it, else the seed's first."""
    forms = claim_forms(layout)
    if not forms:
        raise UsageError(f"layout {layout.name} describes no dequeue, so `queuetop load` cannot drive it",
                         "add a [claim] section to the layout file (see `queuetop layouts --show work_queue`)")
    layout.require("enqueue")  # the load's producers write the shape's rows
    if form is None:
        return forms[0]
    if form not in forms:
        offered = ", ".join(f"{name} ({CLAIM_FORMS[name]})" for name in forms)
        raise UsageError(f"layout {layout.name} has no claim form {form!r}", f"its seed's forms: {offered}")
    return form


def worker_value(layout: Layout, worker: str) -> str:
    """The worker as the claimed-by column takes it: a GUID column (seed 000's RetrievedBy uniqueidentifier)
    gets a stable GUID made from the name; a varchar(N) column gets the name cut to N, as a VARCHAR(N)
    parameter (seed 004's @sProcessingServer) would cut it."""
    sql_type = layout.type_of("claimed_by") or ""
    if sql_type == "guid":
        try:
            return str(uuid.UUID(worker)).upper()
        except ValueError:
            return str(uuid.uuid5(_WORKER_NAMESPACE, worker)).upper()
    if sql_type.endswith(")") and not sql_type.endswith("(max)"):
        return worker[: int(sql_type[sql_type.index("(") + 1 : -1])]
    return worker


class ShapeWorker:
    """One worker's claims and completions on a state-machine layout, over one connection (so: one thread)."""

    @staticmethod
    def new_token() -> str:
        """A fresh claim mark (a benchmark replaces it to read the statements a claim sends)."""
        return str(uuid.uuid4()).upper()

    def __init__(self, db: Database, layout: Layout, form: str | None = None,
                 settings: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.db = db
        self.layout = layout
        self.form = check_claim_form(layout, form)
        self.claim_spec = layout.claim
        assert self.claim_spec is not None
        self.settings = dict(settings or {})
        self.statements = Statements(db.dialect, layout)
        self._next_type = 0
        self._worker_values: dict[str, str] = {}

    # -- what this shape can do ------------------------------------------------------------------------------
    @property
    def completes(self) -> bool:
        """Whether a job is completed by a statement of its own (else taking it is final)."""
        return bool(self.claim_spec.finish) or self.claim_spec.finish_move

    @property
    def can_give_back(self) -> bool:
        """Whether a job taken but not started can be handed back: a claim with a token cleared by
        compare-and-set, or a moved request moved back; a final claim cannot."""
        return self.form == "move" or ("token" in self.claim_spec.sets and "claimed" in self.layout.states)

    # -- taking jobs ---------------------------------------------------------------------------------------
    def claim(self, worker: str, job_types: list[str] | None = None, batch: int = 1,
              lease_s: float | None = None) -> list[Taken]:  # fmt: skip
        """Take up to `batch` jobs (one, on shapes whose seed takes one at a time); [] when there is none. On a
        shape whose seed claims one job type at a time (GetNextJob's @JobType), the types are tried in turn,
        starting after the one this worker took last."""
        values: dict[str, Any] = {
            **self.settings,
            "__worker": self._worker_values.get(worker) or self._worker_values.setdefault(
                worker, worker_value(self.layout, worker)),  # once per worker name: a claim is the hot path
            "__lease": float(lease_s if lease_s is not None else self.claim_spec.lease_s or 0),
            "__batch": int(batch),
        }
        if self.form == "batch":  # one statement takes the best of every type asked for
            return self._claim_batch(values, list(job_types or ()))
        if not self.claim_spec.by_type or not self.layout.has_job_type:
            return self._claim_once(values)
        types = list(job_types or ())
        if not types:
            raise UsageError(f"layout {self.layout.name} claims one job type at a time", "name the job types")
        for step in range(len(types)):
            index = (self._next_type + step) % len(types)
            taken = self._claim_once({**values, "__type": types[index]})
            if taken:
                self._next_type = index + 1
                return taken
        return []

    def _claim_batch(self, values: dict[str, Any], job_types: list[str]) -> list[Taken]:
        token = self.new_token()
        statement = self.statements.claim_batch(job_types, {**values, "__token": token})
        if self.statements.claim_in_transaction:
            with self.db.transaction():
                rows = self.db.fetchall(*statement)
        else:
            rows = self.db.fetchall(*statement)
        return sorted((self._taken(row[:4], token) for row in rows), key=lambda job: job.id)

    def _claim_once(self, values: dict[str, Any]) -> list[Taken]:
        form, statements, db = self.form, self.statements, self.db
        if form in ("update_top", "cte"):
            if statements.claim_in_transaction:
                with db.transaction():
                    rows = db.fetchall(*statements.claim_one(form, values))
            else:
                rows = db.fetchall(*statements.claim_one(form, values))
            return [self._taken(row) for row in rows]
        if form == "batch_mark":
            token = self.new_token()  # @xGUID = NEWID(), held by the caller as the procedure holds it
            values = {**values, "__token": token}
            with db.transaction():
                db.execute(*statements.claim_mark(values))
                rows = db.fetchall(*statements.claimed_by_token(token))
            return sorted((self._taken(row, token) for row in rows), key=lambda job: job.id)
        with db.transaction():  # select_update, unlocked, move: read one row, then change it
            rows = db.fetchall(*statements.claim_pick(form, values))
            if not rows:
                return []
            job = self._taken(rows[0][:4], carried=tuple(rows[0][4:]))
            if form == "move":
                db.execute(*statements.move_delete(job.id))
            else:
                db.execute(*statements.claim_set({**values, "__id": job.id}))
        if form == "move":  # after the commit, as usp_Request_Pop inserts outside its transaction
            db.execute(*statements.move_insert(job.carried))
        return [job]

    def _taken(self, row: tuple[Any, ...], token: str | None = None, carried: tuple[Any, ...] = ()) -> Taken:
        job_id, job_type, row_token, attempts = row  # ids kept as the database returns them: compared as such
        if job_type is not None and self.layout.type_of("type") == "guid":
            job_type = str(uuid.UUID(str(job_type))).upper()
        mark = token if token is not None else (str(row_token).upper() if row_token is not None else None)
        return Taken(id=job_id, job_type=job_type, token=mark, attempts=int(attempts) if attempts is not None else 1,
                     carried=carried)

    # -- finishing them ------------------------------------------------------------------------------------
    def complete(self, job: Taken) -> None:
        """The seed's completion (CompletedDate, Last_Attempt_End_Date = now). Raises LeaseLost when it changed no
        row: the claim timed out and was taken again (a new mark), or the request was moved back."""
        if not self.completes:
            return
        if self.claim_spec.finish_move:
            moves = self.statements.move_finished(job.id, job.token, "succeeded")
            with self.db.transaction():
                moved = self.db.execute(*moves[0])
                if moved and len(moves) > 1:
                    self.db.execute(*moves[1])
            if not moved:
                raise LeaseLost(f"job {job.id}: the claim was lost (timed out and taken again)")
            return
        if self.db.execute(*self.statements.finish(job.id, job.token)) == 0:
            raise LeaseLost(f"job {job.id}: the claim was lost (timed out and taken again, or moved back)")

    def give_back(self, job: Taken) -> None:
        """Hand back a job taken but never started (a worker shutting down): clear its mark by compare-and-set
        (seed 004: it is pending again, its attempt spent), or move the request back into the queue (seed 001).
        Raises LeaseLost if the claim is no longer this worker's, UsageError where taking is final."""
        if not self.can_give_back:
            raise UsageError(f"layout {self.layout.name}: taking a job is final, it cannot be handed back")
        if self.form == "move":
            (insert, insert_params), (delete, delete_params) = self.statements.requeue("claimed", [job.id],
                                                                                       self.settings)
            with self.db.transaction():
                inserted = self.db.execute(insert, insert_params)
                if self.db.execute(delete, delete_params) != inserted or inserted == 0:
                    raise LeaseLost(f"request {job.id} is no longer in flight: nothing was handed back")
            return
        if self.claim_spec.finish_move:  # a leased queue: its claim cleared and its attempt not spent
            given_back = self.db.execute(*self.statements.give_back(job.id, job.token))
        else:
            given_back = self.db.execute(*self.statements.clear_claim("claimed", self.settings, job.id, job.token))
        if given_back == 0:
            raise LeaseLost(f"job {job.id}: the claim was lost (timed out and taken again)")
