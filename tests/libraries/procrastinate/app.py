"""A procrastinate application as its users write one, run by the library-test in procrastinate's own virtual
environment (`.venv-libraries/procrastinate`): it applies procrastinate's schema, defers a job mix through
procrastinate's API, and runs procrastinate's own worker. Nothing here touches the tables by hand.

    python app.py SCHEMA schema           procrastinate's schema, in SCHEMA (the connection's search_path)
    python app.py SCHEMA defer KIND=N...  defer N jobs of each kind (fast, hold, flaky, doomed, later, orphan)
    python app.py SCHEMA worker [BEAT]    procrastinate's worker on queue "default" until killed; BEAT: its
                                          heartbeat every BEAT seconds, a worker silent for 3 BEATs stalled
    python app.py SCHEMA counts           procrastinate's own count per task (JobManager.list_tasks), as JSON
    python app.py SCHEMA stalled SECONDS  the ids of the jobs procrastinate calls stalled (JobManager.
                                          get_stalled_jobs, heartbeat older than SECONDS), as JSON

Kinds: fast (succeeds), hold (sleeps until its worker is killed: in flight), flaky (fails, retried an hour
later), doomed (fails for good), later (scheduled an hour ahead), orphan (queue "nobody", which no worker
listens to).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import procrastinate

schema = sys.argv[1]
conninfo = os.environ.get("QUEUETOP_LIB_PG", "host=127.0.0.1 port=5432 dbname=queuetop_test user=postgres")
app = procrastinate.App(connector=procrastinate.PsycopgConnector(
    conninfo=conninfo, kwargs={"options": f"-c search_path={schema}"}))


@app.task(name="fast", queue="default")
def fast() -> None:
    pass


@app.task(name="hold", queue="default")
def hold() -> None:
    time.sleep(3600)


@app.task(name="flaky", queue="default", retry=procrastinate.RetryStrategy(max_attempts=1, wait=3600))
def flaky() -> None:
    raise RuntimeError("flaky fails; retried in an hour")


@app.task(name="doomed", queue="default")
def doomed() -> None:
    raise RuntimeError("doomed fails for good")


@app.task(name="echo", queue="default")
def echo(**kwargs: object) -> None:  # takes the arguments `queuetop enqueue --info` gives it
    pass


@app.task(name="orphan", queue="nobody")
def orphan() -> None:
    pass


async def stalled(seconds: float) -> list[int]:
    async with app.open_async():
        return sorted(job.id for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds))


def main() -> None:
    command = sys.argv[2]
    if command == "stalled":
        print(json.dumps(asyncio.run(stalled(float(sys.argv[3])))))
        return
    with app.open():
        if command == "schema":
            app.schema_manager.apply_schema()
        elif command == "defer":
            for spec in sys.argv[3:]:
                kind, count = spec.split("=")
                task = {"later": fast.configure(schedule_in={"hours": 1})}.get(kind) or globals()[kind]
                for _ in range(int(count)):
                    task.defer()
        elif command == "counts":
            print(json.dumps(list(app.job_manager.list_tasks())))
        elif command == "worker":
            beat = {"update_heartbeat_interval": float(sys.argv[3]), "stalled_worker_timeout": 3 * float(sys.argv[3])
                    } if len(sys.argv) > 3 else {}  # fmt: skip
            app.run_worker(queues=["default"], concurrency=8, wait=True, install_signal_handlers=True, **beat)
        else:
            raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
