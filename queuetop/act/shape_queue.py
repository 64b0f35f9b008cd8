"""The actions on a queue of any shape: enqueue the way the seed's own insert does, release, dead retry/delete.

Every layout is served here from its data (a leased queue's enqueue and release, native's, in bulk through
`queue.Queue`, which works such queues):
which form fields its insert takes (`[enqueue]`; or which arguments of the library's own function, where the
library says to add jobs that way: `[enqueue] function`), what `release` does (`[release]`: clear a claim by
compare-and-set on its token, or move lost rows from the completed table back into the queue), and how a dead
job is retried (`[dead_retry]`). A shape that cannot do something says why, in one sentence, before anything
is written; a failed action leaves the queue as it was (each change is one transaction).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from queuetop.act.batches import MAINTENANCE_BATCH, Progress, in_batches
from queuetop.act.queue import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PRIORITY,
    Queue,
    ReleaseResult,
    check_count,
    check_job_type,
    check_priority,
    insert_in_chunks,
)
from queuetop.core.errors import QueuetopError, UsageError
from queuetop.db import Database
from queuetop.layouts import Layout
from queuetop.layouts.model import CALL_FIELDS
from queuetop.layouts.predicate import roles_of
from queuetop.layouts.schema import require_current
from queuetop.layouts.sql import Statements

RELEASE_BATCH = 500  # rows looked at per round of a release
# The payload of a test job enqueued without one: the seeds' payload columns are NOT NULL (001's request, 002's
# name, 003's COMMAND), and a job queuetop made should be recognisable as one in the table.
TEST_PAYLOAD = "queuetop test job"
TEST_PAYLOAD_XML = '<test by="queuetop"/>'
TEST_PAYLOAD_JSON = '{"test": "queuetop test job"}'


def check_guid(value: str) -> str:
    try:
        return str(uuid.UUID(value)).upper()
    except (ValueError, AttributeError, TypeError):
        raise UsageError(f"the job type {value!r} is not a GUID",
                         "this shape's JobType is a uniqueidentifier: e.g. --type AC351A46-49E4-4F0C-BF8C-F45255012150",
                         ) from None


def nothing_to_release(layout: Layout) -> str:
    """Why a shape without a release has nothing to release, read from the states it defines (never from its
    name): a claim can only need releasing if the shape knows claims that went wrong."""
    states = layout.states
    stuck = [name.replace("_", "-") for name in ("timed_out", "lost") if name in states]
    if stuck:
        return f"it counts {' and '.join(stuck)} jobs but says nothing about releasing them"
    if "claimed" in states:
        return "its claims never time out"
    pending = states.get("pending")
    taken_by = roles_of(pending.condition) if pending is not None else set()
    if "finished" in taken_by:  # a job leaves pending when its row is marked done
        return "the processed flag is final (no claims time out)"
    if taken_by & {"claimed_at", "token", "claimed_by"}:  # ... when a worker stamps it as taken
        return "retrieval is final (no claims time out)"
    return "taking a job is final (no claims time out)"


def release_refusal(layout: Layout) -> str | None:
    """Why this shape cannot release claims, in one sentence (the CLI's error and the dashboard's notice); None
    where it declares `[release]`."""
    if layout.release is not None:
        return None
    return (f"layout {layout.name} has nothing to release: {nothing_to_release(layout)}; it declares no [release] "
            "section")


def payload_for_test_job(sql_type: str | None) -> str:
    """The payload of a test job, as the payload column takes it (xml, or text cut to a varchar's length)."""
    if sql_type == "xml":
        return TEST_PAYLOAD_XML
    length = sql_type.partition("(")[2].rstrip(")") if sql_type else ""
    return TEST_PAYLOAD[: int(length)] if length.isdigit() else TEST_PAYLOAD


class ShapeQueue:
    """The actions on one queue of a state-machine layout, over one connection (so: one thread)."""

    def __init__(self, db: Database, layout: Layout, settings: dict[str, Any] | None = None) -> None:
        self.db = db
        self.layout = layout
        self.settings = dict(settings or {})
        self.statements = Statements(db.dialect, layout)

    # -- enqueue -----------------------------------------------------------------------------------------
    def check_job_type(self, job_type: str | None) -> str | None:
        """The job type as this shape stores it; an error if the shape has none, or if it is malformed."""
        if not self.layout.has_job_type:
            if job_type is not None:
                raise UsageError(f"layout {self.layout.name} has no job type column, so --type {job_type!r} cannot "
                                 "be stored", "drop --type")
            return None
        if job_type is None:
            raise UsageError(f"layout {self.layout.name} needs a job type", "name it with --type T")
        if self.layout.type_of("type") == "guid":
            return check_guid(job_type)
        return check_job_type(job_type)

    def enqueue_many(self, job_type: str | None, count: int, info: str | None = None, priority: int | None = None,
                     delay_s: float = 0.0, created_by: str | None = None) -> list[Any]:  # fmt: skip
        """Add `count` jobs the way the seed's insert does, in short transactions (`insert_in_chunks`); their ids.
        `created_by` is stored where the layout's insert takes it."""
        layout, fields = self.layout, self.layout.enqueue_fields
        layout.require("enqueue")  # before anything else: no row is ever made up for a table
        job_type = self.check_job_type(job_type)
        if layout.enqueue_call is not None:
            return self._enqueue_by_call(job_type, count, info, priority, delay_s)
        if layout.batch_claims:  # one statement a chunk
            return Queue(self.db, layout).enqueue_many(
                job_type or "", count, info=info, priority=DEFAULT_PRIORITY if priority is None else priority,
                delay_s=delay_s, created_by=created_by if "created_by" in fields else None)
        self._check_options(count, info, priority, delay_s)
        if info is None and "info" in fields:
            info = payload_for_test_job(layout.type_of(fields["info"]))
        given = {"type": job_type, "info": info, "priority": priority}
        roles, values = [], []
        for field_name, role in fields.items():
            if field_name in given and given[field_name] is not None:
                roles.append(role)
                values.append(given[field_name])
        if delay_s:
            roles.append(fields["available"])
        sql = self.statements.insert(roles, delayed=bool(delay_s))
        encode = self.db.dialect.encode_value
        params = [encode(layout.type_of(role), value) for role, value in zip(roles, values, strict=False)]
        if delay_s:
            params.append(self.db.dialect.shift_param(delay_s))
        return insert_in_chunks(self.db, count, lambda size: [self.db.fetchone(sql, params)[0] for _ in range(size)])

    def _enqueue_by_call(self, job_type: str | None, count: int, info: str | None, priority: int | None,
                         delay_s: float) -> list[Any]:  # fmt: skip
        """Add `count` jobs through the library's own function (`[enqueue] function`), in short transactions."""
        call, name = self.layout.enqueue_call, self.layout.library or self.layout.name
        assert call is not None
        self._check_options(count, info, priority, delay_s)
        if info is None and "info" in call.args and call.args["info"][0] not in call.constants:
            info = TEST_PAYLOAD_JSON if call.args["info"][1] in ("json", "jsonb") else TEST_PAYLOAD
        if info is not None and call.args["info"][1] in ("json", "jsonb"):
            try:
                json.loads(info)
            except ValueError:
                raise UsageError(f"--info must be JSON: {name}'s {call.function}() takes it as "
                                 f"{call.args['info'][0]} {call.args['info'][1]}", "e.g. --info '{\"n\": 1}'") from None
        given = {"type": job_type, "info": info, "priority": priority, "available": delay_s or None}
        fields = [field_name for field_name in CALL_FIELDS if field_name in call.args and given[field_name] is not None]
        sql = self.statements.enqueue_call(fields, delayed=bool(delay_s))
        params = [self.db.dialect.shift_param(delay_s) if name == "available" else
                  call.constants[name.removeprefix("constant:")] if name.startswith("constant:") else given[name]
                  for name in call.bind_order(fields)]  # fmt: skip
        if self.layout.schema:  # the statement's search path: the library's schema (Statements.enqueue_call)
            params.append(self.db.dialect.quote(self.layout.schema))
        return insert_in_chunks(self.db, count, lambda size: [self.db.fetchone(sql, params)[0] for _ in range(size)])

    def _check_options(self, count: int, info: str | None, priority: int | None, delay_s: float) -> None:
        """enqueue's options against what this layout's enqueue takes (its insert's columns, or its library
        function's arguments), before anything is sent."""
        takes = self.layout.enqueue_takes
        check_count(count)
        if priority is not None:
            if "priority" not in takes:
                raise UsageError(self._takes_no("priority"), "drop --priority")
            check_priority(priority)
        if delay_s:
            if "available" not in takes:
                raise UsageError(self._takes_no("available"), "drop --delay")
            if delay_s < 0:
                raise UsageError(f"--delay must be zero or more seconds, not {delay_s}")
        if info is not None and "info" not in takes:
            raise UsageError(self._takes_no("info"), "drop --info")

    def _takes_no(self, field_name: str) -> str:
        layout, call = self.layout, self.layout.enqueue_call
        if call is not None:
            return f"{layout.library or layout.name}'s {call.function}() takes no {field_name}"
        lacks = {"priority": "has no priority column", "available": "has no available-at column",
                 "info": "keeps no payload"}  # fmt: skip
        return f"layout {layout.name} {lacks[field_name]}"

    # -- release -----------------------------------------------------------------------------------------
    def release(self, job_type: str | None = None, dry_run: bool = False) -> ReleaseResult:
        """Count (dry run) or release what this shape's `[release]` names; raises UsageError if it has none."""
        release = self.layout.release
        if release is None:
            raise UsageError(str(release_refusal(self.layout)))
        job_type = self._filter_type(job_type)
        if not dry_run:
            require_current(self.db, self.layout)
        if self.layout.batch_claims:  # in bulk, skipping rows others hold; out of attempts → dead
            queue = Queue(self.db, self.layout, max_attempts=self.settings.get("max_attempts", DEFAULT_MAX_ATTEMPTS))
            return queue.release_timed_out(job_type, dry_run=dry_run)
        found = int(self.db.fetchone(*self.statements.count_state(release.state, job_type, self.settings))[0])
        dead = self._count("dead", job_type)
        if dry_run or found == 0:
            return ReleaseResult(timed_out=found, dead=dead, dry_run=dry_run)
        released = self._requeue(job_type) if release.action == "requeue" else self._clear(job_type)
        return ReleaseResult(timed_out=found, released=released, dead=dead)

    def release_job(self, job_id: Any) -> ReleaseResult:
        """Release one claim as `[release]` says, only while the job is still in its state (compare-and-set): the
        native schema's out of attempts → dead; a moved-back request (`requeue`) in its one transaction; a
        cleared claim only while it still holds the token read just before. All zero when it moved on."""
        release = self.layout.release
        if release is None:
            raise UsageError(str(release_refusal(self.layout)))
        require_current(self.db, self.layout)
        if self.layout.batch_claims:
            return Queue(self.db, self.layout, max_attempts=self.settings.get("max_attempts", DEFAULT_MAX_ATTEMPTS)
                         ).release_job(job_id)  # fmt: skip
        if release.action == "requeue":
            released = self._requeue_set(release.state, [job_id]) or 0
        else:
            row = self.db.fetchone(*self.statements.job_by_id("queue", ["token"], job_id, self.settings))
            held = row is not None and row[1] == release.state
            released = self.db.execute(*self.statements.clear_claim(release.state, self.settings, job_id, row[0])) \
                if held else 0  # fmt: skip
        return ReleaseResult(timed_out=released, released=released)

    def _filter_type(self, job_type: str | None) -> str | None:
        if job_type is None:
            return None
        return self.check_job_type(job_type)

    def _count(self, state: str, job_type: str | None) -> int:
        if state not in self.layout.states:
            return 0
        return int(self.db.fetchone(*self.statements.count_state(state, job_type, self.settings))[0])

    def _clear(self, job_type: str | None) -> int:
        """Clear each claim by compare-and-set on its token; a row taken again meanwhile keeps its new claim."""
        state, released = self.layout.release.state, 0  # type: ignore[union-attr]
        seen: set[Any] = set()
        while True:
            rows = self.db.fetchall(*self.statements.ids_in_state(state, job_type, RELEASE_BATCH, self.settings))
            fresh = [(job_id, token) for job_id, token in rows if job_id not in seen]
            if not fresh:
                return released
            for job_id, token in fresh:
                seen.add(job_id)
                released += self.db.execute(*self.statements.clear_claim(state, self.settings, job_id, token))

    def _requeue(self, job_type: str | None) -> int:
        """Move rows back into the queue in sets: insert and delete in one transaction, kept only when both
        touched the same rows (a request completed meanwhile rolls its set back, and is tried alone next)."""
        state, moved = self.layout.release.state, 0  # type: ignore[union-attr]
        skipped: set[Any] = set()
        while True:
            rows = self.db.fetchall(*self.statements.ids_in_state(state, job_type, RELEASE_BATCH, self.settings))
            ids = [job_id for job_id, _ in rows if job_id not in skipped]
            if not ids:
                return moved
            moved_now = self._requeue_set(state, ids)
            if moved_now is not None:
                moved += moved_now
                continue
            for job_id in ids:  # a race: each alone, so one request completed meanwhile does not hold back the rest
                alone = self._requeue_set(state, [job_id])
                if alone is None:
                    skipped.add(job_id)
                else:
                    moved += alone

    def _requeue_set(self, state: str, ids: list[Any]) -> int | None:
        (insert, insert_params), (delete, delete_params) = self.statements.requeue(state, ids, self.settings)
        try:
            with self.db.transaction():
                inserted = self.db.execute(insert, insert_params)
                deleted = self.db.execute(delete, delete_params)
                if inserted != deleted:
                    raise _Mismatch
        except _Mismatch:
            return None
        return deleted

    # -- dead jobs ---------------------------------------------------------------------------------------
    def dead_job(self, action: str, job_id: Any) -> int:
        """"retry" or "delete" one dead job, only while it is still dead (compare-and-set on its state): 1, or 0
        when it moved on meanwhile."""
        self.layout.require(f"dead {action}")
        require_current(self.db, self.layout)
        if action == "retry" and self.layout.dead_move_back:
            return self._moved_back([job_id], f"job {job_id} changed while it was retried")
        with self.db.transaction():
            return self.db.execute(*self.statements.change_job(action, "dead", job_id, self.settings))

    def dead(self, action: str, job_type: str | None = None, on_progress: Progress | None = None) -> int:
        """"count", "retry" (back to pending, as if never tried) or "delete" the dead jobs (of one type). Counting
        needs only the dead state (so it agrees with `stats`); retry and delete need their declaration, and run
        in batches (`act.batches`), `on_progress` told after each."""
        if "dead" not in self.layout.states:
            raise UsageError(f"layout {self.layout.name} has no dead jobs: it defines no dead state",
                             "only shapes with an attempt limit do")
        if action != "count":
            self.layout.require(f"dead {action}")
        job_type = self._filter_type(job_type)
        if action == "count":
            return self._count("dead", job_type)
        require_current(self.db, self.layout)
        if action == "retry" and self.layout.dead_move_back:
            return self._move_back(job_type, on_progress)
        statement = (self.statements.retry_dead(job_type, self.settings, batch=MAINTENANCE_BATCH) if action == "retry"
                     else self.statements.delete_state("dead", job_type, self.settings, batch=MAINTENANCE_BATCH))
        return in_batches(self.db, statement, batch=MAINTENANCE_BATCH, expected=self._count("dead", job_type),
                          on_progress=on_progress)

    def _move_back(self, job_type: str | None, on_progress: Progress | None) -> int:
        """Dead jobs moved back into the queue table, a set of ids per transaction (as `in_batches`)."""
        moved = 0
        while True:
            rows = self.db.fetchall(*self.statements.ids_in_state("dead", job_type, RELEASE_BATCH, self.settings))
            if not rows:
                return moved
            moved += self._moved_back([job_id for job_id, _ in rows], "dead jobs changed while they were retried")
            if on_progress is not None:
                on_progress(moved)

    def _moved_back(self, ids: list[Any], changed: str) -> int:
        """These dead jobs back into the queue table, in one transaction kept only when the insert and the delete
        touched the same rows (`changed`: what the error says otherwise)."""
        (insert, insert_params), (delete, delete_params) = self.statements.requeue(
            "dead", ids, self.settings, self.layout.dead_move_back)
        with self.db.transaction():
            inserted = self.db.execute(insert, insert_params)
            if self.db.execute(delete, delete_params) != inserted:
                raise QueuetopError(f"{changed}: nothing was changed", "try again")
        return inserted


class _Mismatch(Exception):
    """The insert and the delete of a requeue disagreed: roll back."""


def create_demo_tables(db: Database, layout: Layout) -> bool:
    """Make an empty copy of a shape's tables for `queuetop demo --layout` (see `Statements.create_tables`),
    unless they are there already; True when made. All or nothing: one transaction."""
    from queuetop.layouts.detect import Catalog, default_schemas

    catalog = Catalog(db, [layout.queue_table])
    if catalog.find(db.dialect.schema_for(layout.schema), layout.queue_table, default_schemas(db)) is not None:
        return False
    with db.transaction():
        for sql in Statements(db.dialect, layout).create_tables():
            db.execute(sql)
    return True
