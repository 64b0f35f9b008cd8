"""A pgqueuer application as its users write one, run by the library test in pgqueuer's own virtual environment
(`.venv-libraries/pgqueuer`): it installs pgqueuer's schema (`Queries.install`), enqueues a job mix through its API
(`Queries.enqueue`) and runs pgqueuer's own worker (`PgQueuer.run`). Nothing here touches the tables by hand.

    python app.py SCHEMA schema           pgqueuer's tables, in SCHEMA (PGQUEUER_SCHEMA)
    python app.py SCHEMA defer KIND=N...  enqueue N jobs of each kind (fast, hold, flaky, doomed, later, orphan)
    python app.py SCHEMA worker           pgqueuer's worker until killed
    python app.py SCHEMA counts           pgqueuer's own count (Queries.queue_size), as JSON
    python app.py SCHEMA durations        pgqueuer's own processing percentiles over the last hour, per entrypoint
                                          (Queries.job_duration_percentiles, from pgqueuer_log), as JSON

Kinds: fast (succeeds: its row is deleted, a line in pgqueuer_log stays), hold (sleeps until its worker is killed:
picked, its heartbeat stops), flaky (fails and asks for a retry in an hour: queued again, execute_after ahead),
doomed (fails on an entrypoint with on_failure="hold": kept as 'failed'), later (execute_after an hour ahead),
orphan (an entrypoint no worker registers: it waits).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import timedelta

os.environ["PGQUEUER_SCHEMA"] = sys.argv[1]  # read once, when pgqueuer first asks for its settings

import asyncpg
from pgqueuer import PgQueuer
from pgqueuer.errors import RetryRequested
from pgqueuer.models import Job
from pgqueuer.queries import Queries

DSN = os.environ.get("QUEUETOP_LIB_PG_URL", "postgres://postgres@127.0.0.1:5432/queuetop_test")
KINDS = {"fast": ("fast", None), "hold": ("hold", None), "flaky": ("flaky", None), "doomed": ("doomed", None),
         "later": ("fast", timedelta(hours=1)), "orphan": ("orphan", None)}  # fmt: skip


async def worker(connection: asyncpg.Connection) -> None:
    pgq = PgQueuer.from_asyncpg_connection(connection)

    @pgq.entrypoint("fast")
    async def fast(job: Job) -> None:
        pass

    @pgq.entrypoint("hold")
    async def hold(job: Job) -> None:
        await asyncio.sleep(3600)

    @pgq.entrypoint("flaky")
    async def flaky(job: Job) -> None:
        raise RetryRequested(delay=timedelta(hours=1), reason="flaky fails; retried in an hour")

    @pgq.entrypoint("doomed", on_failure="hold")
    async def doomed(job: Job) -> None:
        raise RuntimeError("doomed fails for good")

    await pgq.run(dequeue_timeout=timedelta(seconds=1), batch_size=10)


async def main() -> None:
    command = sys.argv[2]
    connection = await asyncpg.connect(DSN)
    queries = Queries.from_asyncpg_connection(connection)
    try:
        if command == "schema":
            await queries.install()
        elif command == "defer":
            for spec in sys.argv[3:]:
                kind, count = spec.split("=")
                entrypoint, ahead = KINDS[kind]
                for _ in range(int(count)):
                    await queries.enqueue(entrypoint, kind.encode(), execute_after=ahead)
        elif command == "counts":
            print(json.dumps([s.model_dump(mode="json") for s in await queries.queue_size()]))
        elif command == "durations":
            stats = await queries.job_duration_percentiles(timedelta(hours=1))
            print(json.dumps([s.model_dump(mode="json") for s in stats]))
        elif command == "worker":
            await worker(connection)
        else:
            raise SystemExit(f"unknown command {command!r}")
    finally:
        await connection.close()


if __name__ == "__main__":
    asyncio.run(main())
