"""Poll cost vs size on the job libraries' own tables: what does one warm poll of each library preset cost at
10^4 and 10^6 jobs, beside the library's own count of the same figures?

For each library (`--library`, default all), the library makes its own tables (its app in tests/libraries/NAME,
as the tests run it: procrastinate's schema, graphile-worker's migrations, pg-boss's start, pgqueuer's install,
Django's migrate, dramatiq-pg's init, kombu's first connection), with its own indexes only; the script then fills
them in bulk, shaped as the library leaves them (a bench fixture written in SQL: 10^6 jobs through the library's
API would take an hour), and measures queuetop's warm poll (`ShapeCollector.poll`, `--polls` times, after the
first) and the library's own count (the statement its dashboard or API runs for the same figures). Mix at N jobs,
20 job types: procrastinate, pg-boss (10, 11 and 12), django-tasks-db, dramatiq-pg and Celery keep finished (or taken)
jobs, so 90 % of them and 10 % waiting; graphile-worker and pgqueuer delete finished jobs, so all N wait (a backlog;
pgqueuer's log holds their 'queued' lines and the three lines of N jobs that ran before); django-q2 deletes a task's
queue row as it saves its result, so all N wait in django_q_ormq, beside the results of N tasks that ran before (10 %
failed).
No activity between polls: this is the read alone. The polls come `--interval` apart (1 s, a dashboard's), so
where a shape's count of its states is spaced by its cost (an untracked shape past 20,000 jobs: `SpacedCount`)
the warm polls are those a dashboard makes: most read arrivals only, one in a few counts; "poll mean" is what the
database pays a poll on average, "poll max" the counting poll. Such a shape is measured a second time with every
poll counting (as before stop 41): "every poll counts" in the indexes column.

    .venv/bin/python bench/library_poll_cost.py                        # every library, 1e4 and 1e6
    .venv/bin/python bench/library_poll_cost.py --library pgboss --sizes 1e4,1e5

Needs `bash scripts/setup.sh --test` (the libraries) and the test PostgreSQL server. Data: schemas
`bench_lib_<library>_<size>`, made afresh each run and dropped after.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from common import (
    PG_TARGET_TEXT,
    QUEUETOP,
    create_advised_indexes,
    load_average,
    ms,
    p50_p95,
    print_table,
    process_ms,
    ratio,
)

from queuetop.db import Database, parse_target
from queuetop.layouts import Layout, load_layout, with_tables
from queuetop.watch import recount, unaccounted
from queuetop.watch.collector import ShapeCollector
from tests.libraries import LibraryApp

SIZES = {"1e3": 10**3, "1e4": 10**4, "1e5": 10**5, "1e6": 10**6}
TYPES = 20
# each the name of its app and of its preset
LIBRARIES = ("procrastinate", "graphile_worker", "pgboss", "pgqueuer", "django_tasks", "dramatiq_pg",
             "celery_sqlalchemy", "django_q2", "pgboss11", "pgboss12")
PGBOSS_QUEUES = ("fast", "hold", "stuck", "flaky", "doomed", "orphan")  # the ones its app creates

FILL = {
    # procrastinate: its insert trigger writes a 'deferred' event per job, as a defer would; a job that ran has its
    # 'started' and 'succeeded' lines too, as its worker's status changes write them, over the hour before.
    "procrastinate": """
        INSERT INTO {s}.procrastinate_jobs (queue_name, task_name, priority, status, attempts, args)
        SELECT 'default', 'task_' || (i % {types}), 0,
               (CASE WHEN i > {n} * 0.9 THEN 'todo' ELSE 'succeeded' END)::{s}.procrastinate_job_status,
               CASE WHEN i > {n} * 0.9 THEN 0 ELSE 1 END, '{{}}'::jsonb
        FROM generate_series(1, {n}) AS i;
        INSERT INTO {s}.procrastinate_events (job_id, type, at)
        SELECT id, line::{s}.procrastinate_job_event_type,
               now() - interval '2 hours' + id * interval '3600 seconds' / {n} + step * interval '10 ms'
        FROM {s}.procrastinate_jobs, (VALUES ('started', 0), ('succeeded', 1)) AS lines (line, step)
        WHERE status = 'succeeded'
        ORDER BY id, step""",
    "graphile_worker": """
        INSERT INTO {s}._private_tasks (identifier) SELECT 'task_' || t FROM generate_series(0, {types} - 1) AS t;
        INSERT INTO {s}._private_jobs (task_id, payload, priority, run_at, attempts, max_attempts, created_at)
        SELECT (SELECT id FROM {s}._private_tasks WHERE identifier = 'task_' || (i % {types})), '{{}}'::json, 0,
               now() - (({n} - i) * interval '3600 seconds' / {n}), 0, 25,
               now() - (({n} - i) * interval '3600 seconds' / {n})
        FROM generate_series(1, {n}) AS i""",
    "pgboss": """
        INSERT INTO {s}.job (name, state, start_after, created_on, started_on, completed_on)
        SELECT (ARRAY{queues})[1 + i % {nq}],
               (CASE WHEN i > {n} * 0.9 THEN 'created' ELSE 'completed' END)::{s}.job_state,
               now() - (({n} - i) * interval '3600 seconds' / {n}), now() - (({n} - i) * interval '3600 seconds' / {n}),
               CASE WHEN i > {n} * 0.9 THEN NULL ELSE now() - (({n} - i) * interval '3600 seconds' / {n}) END,
               CASE WHEN i > {n} * 0.9 THEN NULL ELSE now() - (({n} - i) * interval '3600 seconds' / {n}) END
        FROM generate_series(1, {n}) AS i""",
    # pgqueuer: a 'queued' line in pgqueuer_log per waiting job, as its enqueue writes one; and the three lines
    # (queued, picked, successful) of as many jobs again that ran and were deleted over the hour before.
    "pgqueuer": """
        INSERT INTO {s}.pgqueuer (id, priority, entrypoint, status, created, updated, heartbeat, execute_after)
        SELECT {n} + i, 0, 'task_' || (i % {types}), 'queued', now() - (({n} - i) * interval '3600 seconds' / {n}),
               now() - (({n} - i) * interval '3600 seconds' / {n}), now() - (({n} - i) * interval '3600 seconds' / {n}),
               now() - (({n} - i) * interval '3600 seconds' / {n})
        FROM generate_series(1, {n}) AS i;
        SELECT setval(pg_get_serial_sequence('{s}.pgqueuer', 'id'), 2 * {n});
        INSERT INTO {s}.pgqueuer_log (job_id, status, priority, entrypoint, created)
        SELECT ran.job_id, step.status::{s}.pgqueuer_status, 0, 'task_' || (ran.job_id % {types}), step.at
        FROM (SELECT i AS job_id, now() - interval '2 hours' + (i * interval '3600 seconds' / {n}) AS queued
              FROM generate_series(1, {n}) AS i) AS ran,
             LATERAL (VALUES ('queued', ran.queued), ('picked', ran.queued + interval '1 second'),
                             ('successful', ran.queued + interval '2 seconds')) AS step(status, at)
        ORDER BY step.at;
        INSERT INTO {s}.pgqueuer_log (job_id, status, priority, entrypoint, created)
        SELECT id, 'queued', priority, entrypoint, created FROM {s}.pgqueuer ORDER BY id""",
    "django_tasks": """
        INSERT INTO {s}.django_tasks_database_dbtaskresult (id, status, enqueued_at, started_at, finished_at,
            args_kwargs, priority, task_path, worker_ids, queue_name, backend_name, run_after, exception_class_path,
            traceback)
        SELECT gen_random_uuid(), CASE WHEN i > {n} * 0.9 THEN 'READY' ELSE 'SUCCESSFUL' END,
               now() - (({n} - i) * interval '3600 seconds' / {n}),
               CASE WHEN i > {n} * 0.9 THEN NULL ELSE now() - (({n} - i) * interval '3600 seconds' / {n}) END,
               CASE WHEN i > {n} * 0.9 THEN NULL ELSE now() - (({n} - i) * interval '3600 seconds' / {n}) END,
               '{{"args": [], "kwargs": {{}}}}'::jsonb, 0, 'tasks.task_' || (i % {types}), '[]'::jsonb, 'default',
               'default', '9999-01-01 00:00:00+00', '', ''
        FROM generate_series(1, {n}) AS i""",
    "dramatiq_pg": """
        INSERT INTO {s}.queue (message_id, queue_name, state, mtime, message)
        SELECT gen_random_uuid(), 'default', (CASE WHEN i > {n} * 0.9 THEN 'queued' ELSE 'done' END)::{s}.state,
               now() - (({n} - i) * interval '3600 seconds' / {n}),
               jsonb_build_object('queue_name', 'default', 'actor_name', 'task_' || (i % {types}), 'args', '[]'::jsonb,
                                  'kwargs', '{{}}'::jsonb, 'options', '{{}}'::jsonb, 'message_timestamp', 0)
        FROM generate_series(1, {n}) AS i""",
    "celery_sqlalchemy": """
        INSERT INTO {s}.kombu_message (id, visible, payload, version, queue_id)
        SELECT nextval('{s}.message_id_sequence'), i > {n} * 0.9,
               json_build_object('body', 'e30=', 'headers', json_build_object('task', 'tasks.task_' || (i % {types})),
                                 'properties', '{{}}'::json)::text,
               1, (SELECT id FROM {s}.kombu_queue WHERE name = 'celery')
        FROM generate_series(1, {n}) AS i""",
    # django-q2: N tasks waiting in 20 queues (a lock in the past: the enqueue time), and the results of N that ran
    # over the hour before, 10 % of them failures, each written by the cluster of its queue.
    "django_q2": """
        INSERT INTO {s}.django_q_ormq (key, payload, lock)
        SELECT 'q_' || (i % {types}), 'x', now() - (({n} - i) * interval '3600 seconds' / {n})
        FROM generate_series(1, {n}) AS i;
        INSERT INTO {s}.django_q_task (id, name, func, started, stopped, success, attempt_count, cluster)
        SELECT md5(i::text), 'task-' || i, 'tasks.task_' || (i % {types}),
               now() - interval '2 hours' + (i * interval '3600 seconds' / {n}),
               now() - interval '2 hours' + (i * interval '3600 seconds' / {n}) + interval '1 second',
               i % 10 <> 0, 1, 'q_' || (i % {types})
        FROM generate_series(1, {n}) AS i""",
}
# the same columns (11's and 12's expire_seconds, 12's heartbeat and blocked keep their defaults)
FILL["pgboss11"] = FILL["pgboss12"] = FILL["pgboss"]
OWN_COUNT = {  # what the library runs for the same figures
    "procrastinate": "SELECT count(*), status FROM {s}.procrastinate_jobs GROUP BY status",  # count_jobs_status
    "graphile_worker": "SELECT task_identifier, count(*) FROM {s}.jobs GROUP BY 1",  # the view people query
    "pgboss": "SELECT name, state, count(*) FROM {s}.job GROUP BY rollup(name), rollup(state)",  # countStates
    "pgqueuer": "SELECT count(*), priority, entrypoint, status FROM {s}.pgqueuer"
                " GROUP BY entrypoint, priority, status",  # Queries.queue_size
    "django_tasks": "SELECT count(*) FROM {s}.django_tasks_database_dbtaskresult WHERE status = 'READY'"
                    " AND (run_after = '9999-01-01 00:00:00+00' OR run_after <= now())",  # ready().count()
    "dramatiq_pg": "SELECT state, count(1) FROM {s}.queue GROUP BY state",  # dramatiq-pg stats
    "celery_sqlalchemy": "SELECT count(*) FROM {s}.kombu_message WHERE visible = true"
                         " AND queue_id = (SELECT id FROM {s}.kombu_queue WHERE name = 'celery')",  # kombu _size
    # pg-boss 11's and 12's getQueues read counts their supervisor caches with one aggregate over the job table
    "pgboss11": "SELECT name, count(*) FILTER (WHERE start_after > now()), count(*) FILTER (WHERE state < 'active'),"
                " count(*) FILTER (WHERE state = 'active'), count(*) FROM {s}.job GROUP BY name",  # getQueueStats
    "pgboss12": "SELECT name, count(*) FILTER (WHERE state < 'active' AND NOT blocked AND start_after <= now()),"
                " count(*) FILTER (WHERE state < 'active' AND start_after > now()), count(*) FILTER (WHERE state ="
                " 'active'), count(*) FILTER (WHERE state = 'failed') FROM {s}.job GROUP BY name",
    "django_q2": "SELECT (SELECT count(*) FROM {s}.django_q_ormq WHERE lock <= now()), (SELECT count(*) FROM"
                 " {s}.django_q_ormq WHERE lock > now()), (SELECT count(*) FROM {s}.django_q_task WHERE NOT success)",
                 # qinfo: queue_size() and lock_size() over the queues, Failure.objects.count()
}


def build(library: str, size: int) -> tuple[LibraryApp, float]:
    app = LibraryApp(library)
    app.schema = f"bench_lib_{library}_{size}"
    with Database.open(parse_target(PG_TARGET_TEXT), purpose="bulk") as db:
        db.execute(f"DROP SCHEMA IF EXISTS {app.schema} CASCADE")
        if library in ("procrastinate", "django_tasks", "celery_sqlalchemy", "django_q2"):  # tables in a schema
            db.execute(f"CREATE SCHEMA {app.schema}")
    app.run("schema", timeout=300)
    started = time.perf_counter()
    queues = "[" + ", ".join(f"'{q}'" for q in PGBOSS_QUEUES) + "]"
    with Database.open(parse_target(PG_TARGET_TEXT), purpose="bulk") as db:
        db.execute(f"SET search_path TO {app.schema}")  # the library's triggers name its tables unqualified
        for statement in FILL[library].format(s=app.schema, n=size, types=TYPES, queues=queues,
                                              nq=len(PGBOSS_QUEUES)).split(";"):  # fmt: skip
            if statement.strip():
                db.execute(statement)
        table = "_private_jobs" if library == "graphile_worker" else load_layout(library).queue_table  # not a view
        db.execute(f"ANALYZE {app.schema}.{table}")
        if load_layout(library).completed_table:
            db.execute(f"ANALYZE {app.schema}.{load_layout(library).completed_table}")
    return app, time.perf_counter() - started


def first_poll_ms(db: Database, layout: Layout, first_look: bool = True) -> tuple[ShapeCollector, float]:
    """A dashboard's collector and its first poll's ms; its count of the rows in no state awaited after.
    `first_look=False`: the first poll counts every row (as `check` and `stats --exact` do, and as every first
    poll of a shape whose depth cannot be tracked did before stop 43)."""
    collector = ShapeCollector(db, layout, first_look=first_look)
    started = time.perf_counter()
    assert collector.poll().error is None
    spent = (time.perf_counter() - started) * 1000
    collector.settle()
    return collector, spent


def measure(app: LibraryApp, library: str, polls: int, interval: float
            ) -> tuple[float, float, float, float, list[float], list[float]]:  # fmt: skip
    """The first poll's ms; the same had it waited for its count of the rows in no state as it did before stop 37
    for a table of any size, and had it counted every row (each measured after the first: the cache they find is
    the warmer); `queuetop stats` as a whole process (p50 of 3); the warm polls' and the library's own."""
    layout = with_tables(load_layout(library), f"{app.schema}.{load_layout(library).queue_table}")
    own = OWN_COUNT[library].format(s=app.schema)
    with Database.open(parse_target(PG_TARGET_TEXT), purpose="monitor") as db:
        collector, first_poll = first_poll_ms(db, layout)
        every_row = first_poll_ms(db, layout, first_look=False)[1]
        every_size = unaccounted.FIRST_WAIT_UP_TO_ROWS
        unaccounted.FIRST_WAIT_UP_TO_ROWS = 10**12
        try:
            waited = first_poll_ms(db, layout)[1]
        finally:
            unaccounted.FIRST_WAIT_UP_TO_ROWS = every_size
        ours, theirs = [], []
        for _ in range(polls):
            time.sleep(max(0.0, interval - (sum(ours[-1:]) + sum(theirs[-1:])) / 1000))
            started = time.perf_counter()
            snapshot = collector.poll()
            ours.append((time.perf_counter() - started) * 1000)
            assert snapshot.error is None, snapshot.error
            started = time.perf_counter()
            db.fetchall(own)
            theirs.append((time.perf_counter() - started) * 1000)
    stats = statistics.median(process_ms([QUEUETOP, "stats", "--db", PG_TARGET_TEXT, "--layout", library,
                                          "--table", f"{app.schema}.{layout.queue_table}"], 3))  # fmt: skip
    return first_poll, waited, every_row, stats, ours, theirs


def measure_counting_every_poll(app: LibraryApp, library: str, polls: int, interval: float
                                ) -> tuple[float, float, float, float, list[float], list[float]]:  # fmt: skip
    """`measure`, every poll counting every state however many jobs (as before the counts were spaced)."""
    spaced_past = recount.SPACED_PAST_JOBS
    recount.SPACED_PAST_JOBS = 10**12
    try:
        return measure(app, library, polls, interval)
    finally:
        recount.SPACED_PAST_JOBS = spaced_past


def add_advised_indexes(app: LibraryApp, library: str) -> int:
    """The indexes `doctor` advises for the library's tables (its preset's [[advice]]), made; how many."""
    layout = with_tables(load_layout(library), f"{app.schema}.{load_layout(library).queue_table}")
    with Database.open(parse_target(PG_TARGET_TEXT), purpose="bulk") as db:
        made = create_advised_indexes(db, layout)
        db.execute(f"ANALYZE {app.schema}.{layout.queue_table}")
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", action="append", choices=LIBRARIES)
    parser.add_argument("--sizes", default="1e4,1e6")
    parser.add_argument("--polls", type=int, default=15)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds from one warm poll to the next (1)")
    parser.add_argument("--advised", action="store_true",
                        help="measure each size again with the indexes doctor advises (the preset's [[advice]])")
    args = parser.parse_args()
    rows = []
    for library in args.library or LIBRARIES:
        first: float | None = None
        for size_name in args.sizes.split(","):
            app, built_s = build(library, SIZES[size_name])
            runs = []
            try:
                runs.append(("its own", *measure(app, library, args.polls, args.interval)))
                if not load_layout(library).depth_tracked:
                    runs.append(("its own, every poll counts",
                                 *measure_counting_every_poll(app, library, args.polls, args.interval)))
                if args.advised and add_advised_indexes(app, library):
                    runs.append(("+ doctor's", *measure(app, library, args.polls, args.interval)))
            finally:
                with Database.open(parse_target(PG_TARGET_TEXT), purpose="bulk") as db:
                    db.execute(f"DROP SCHEMA IF EXISTS {app.schema} CASCADE")
            for indexes, first_poll, waited, every_row, stats, ours, theirs in runs:
                p50, p95 = p50_p95(ours)
                own = statistics.median(theirs)
                first = first if first is not None else p50
                rows.append([library, size_name, indexes, f"{built_s:.0f} s", ms(first_poll), ms(waited),
                             ms(every_row), ms(stats), ms(p50),
                             ms(p95), ms(statistics.mean(ours)), ms(max(ours)), ratio(p50, first), ms(own),
                             ratio(p50, own), ratio(statistics.mean(ours), own)])  # fmt: skip
    print_table(["library", "jobs", "indexes", "build", "first poll", "had it waited for no state",
                 "had it counted every row", "stats (process)", "poll p50",
                 "poll p95", "poll mean", "poll max", "vs smallest",
                 "its own count p50", "poll / own", "mean / own"], rows,
                title=f"library presets, warm poll ({load_average()})")  # fmt: skip


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"library_poll_cost: {exc}") from None
