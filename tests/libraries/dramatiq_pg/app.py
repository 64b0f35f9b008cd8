"""A dramatiq application on dramatiq-pg's PostgreSQL broker, as its users write one, run by the library test in
its own virtual environment (`.venv-libraries/dramatiq_pg`): dramatiq-pg's own `init` makes its table (in SCHEMA),
messages are sent through dramatiq's API (`send`, `send_with_options(delay=...)`) and run by dramatiq's own worker.
Nothing here touches the table by hand.

    python app.py SCHEMA schema           dramatiq-pg's `init` (its schema.sql), in SCHEMA
    python app.py SCHEMA defer KIND=N...  send N messages of each kind (fast, hold, flaky, doomed, later, orphan)
    python app.py SCHEMA worker           dramatiq's worker (2 threads) on queue "default" until killed
    python app.py SCHEMA counts           dramatiq-pg's own `stats` (messages per state), as JSON

Kinds: fast (succeeds: done), hold (sleeps until its worker is killed: consumed), flaky (fails; dramatiq's Retries
middleware sends it again an hour later, to the delay queue "default.DQ" with an eta), doomed (fails, no retry:
rejected), later (a delay of an hour: "default.DQ" with an eta, which the worker takes and holds in memory),
orphan (queue "nobody", which no worker reads).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time

import dramatiq
from dramatiq.middleware import Prometheus, default_middleware
from dramatiq_pg import PostgresBroker, cli

schema, command = sys.argv[1], sys.argv[2]
URL = os.environ.get("QUEUETOP_LIB_PG_URL", "postgres://postgres@127.0.0.1:5432/queuetop_test")
# Prometheus's exporter left out: it fails in a worker started outside dramatiq's command line
broker = PostgresBroker(url=URL, schema=schema, prefix="", results=False,
                        middleware=[m() for m in default_middleware if m is not Prometheus])
dramatiq.set_broker(broker)
HOUR_MS = 3600 * 1000


@dramatiq.actor(actor_name="fast")
def fast() -> None:
    pass


@dramatiq.actor(actor_name="hold")
def hold() -> None:
    time.sleep(3600)


@dramatiq.actor(actor_name="flaky", max_retries=3, min_backoff=HOUR_MS, max_backoff=HOUR_MS)
def flaky() -> None:
    raise RuntimeError("flaky fails; retried in an hour")


@dramatiq.actor(actor_name="doomed", max_retries=0)
def doomed() -> None:
    raise RuntimeError("doomed fails for good")


@dramatiq.actor(actor_name="orphan", queue_name="nobody")
def orphan() -> None:
    pass


def dramatiq_pg(*args: str) -> str:
    """dramatiq-pg's own command line (`dramatiq-pg --dsn URL --schemaname SCHEMA ...`), its printed output."""
    sys.argv = ["dramatiq-pg", "--dsn", URL, "--schemaname", schema, *args]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        if cli.main():
            raise SystemExit(f"dramatiq-pg {' '.join(args)} failed")
    return printed.getvalue()


def main() -> None:
    if command == "schema":
        dramatiq_pg("init")
    elif command == "defer":
        for spec in sys.argv[3:]:
            kind, count = spec.split("=")
            for _ in range(int(count)):
                fast.send_with_options(delay=HOUR_MS) if kind == "later" else globals()[kind].send()
    elif command == "counts":
        lines = dramatiq_pg("stats").splitlines()
        print(json.dumps({state: int(n) for state, n in (line.split(": ") for line in lines)}))
    elif command == "worker":
        worker = dramatiq.Worker(broker, queues={"default", "default.DQ"}, worker_threads=2)
        worker.start()
        while True:
            time.sleep(1)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
