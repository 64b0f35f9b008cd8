"""A Celery application on kombu's SQLAlchemy transport, as its users write one, run by the library test in its
own virtual environment (`.venv-libraries/celery_sqlalchemy`): kombu makes its tables (kombu_queue,
kombu_message) as the first message is sent, tasks are sent through Celery's API (`delay`, `apply_async`) and run
by Celery's own worker. Nothing here touches the tables by hand.

    python app.py SCHEMA schema           kombu's tables (declaring the two queues makes them)
    python app.py SCHEMA defer KIND=N...  send N tasks of each kind (fast, hold, doomed, later, orphan)
    python app.py SCHEMA worker           Celery's worker (2 threads) on queue "celery" until killed
    python app.py SCHEMA counts           kombu's own count of waiting messages per queue (queue_declare), as JSON

The broker: PostgreSQL with SCHEMA as the search_path (QUEUETOP_LIB_PG_URL), or with QUEUETOP_LIB_SQLITE set, that
SQLite file. Kinds: fast (succeeds), hold (sleeps until its worker is killed), doomed (fails), later (a countdown
of an hour: Celery's worker takes it at once and holds it in memory), orphan (queue "nobody", which no worker
reads). A message taken by a worker is marked invisible and stays; nothing marks its end.
"""

from __future__ import annotations

import json
import os
import sys
import time
from urllib.parse import quote

from celery import Celery

schema, command = sys.argv[1], sys.argv[2]
if os.environ.get("QUEUETOP_LIB_SQLITE"):
    broker = f"sqla+sqlite:///{os.environ['QUEUETOP_LIB_SQLITE']}"
else:
    url = os.environ.get("QUEUETOP_LIB_PG_URL", "postgresql://postgres@127.0.0.1:5432/queuetop_test")
    broker = f"sqla+{url}?options={quote(f'-csearch_path={schema}')}"
app = Celery("tasks", broker=broker)
app.conf.update(task_default_queue="celery", worker_hijack_root_logger=False, broker_connection_retry=False,
                broker_connection_retry_on_startup=False)  # fmt: skip


@app.task(name="tasks.fast")
def fast() -> None:
    pass


@app.task(name="tasks.hold")
def hold() -> None:
    time.sleep(3600)


@app.task(name="tasks.doomed")
def doomed() -> None:
    raise RuntimeError("doomed fails for good")


@app.task(name="tasks.orphan", queue="nobody")
def orphan() -> None:
    pass


def waiting(queue: str) -> int:
    with app.connection_for_read() as connection:
        return connection.default_channel.queue_declare(queue, passive=True).message_count


def main() -> None:
    if command == "schema":
        print(json.dumps({queue: waiting(queue) for queue in ("celery", "nobody")}))
    elif command == "defer":
        for spec in sys.argv[3:]:
            kind, count = spec.split("=")
            for _ in range(int(count)):
                fast.apply_async(countdown=3600) if kind == "later" else globals()[kind].delay()
    elif command == "counts":
        print(json.dumps({queue: waiting(queue) for queue in ("celery", "nobody")}))
    elif command == "worker":
        app.worker_main(["worker", "-Q", "celery", "--pool", "threads", "-c", "2", "--without-gossip",
                         "--without-mingle", "--without-heartbeat", "-l", "WARNING"])  # fmt: skip
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
