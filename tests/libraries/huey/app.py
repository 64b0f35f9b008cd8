"""A huey application with SqliteHuey, as its users write one, run by the library test in huey's own virtual
environment (`.venv-libraries/huey`): huey makes its tables as it opens the file, tasks are enqueued by calling
them (`fast()`, `later.schedule(delay=3600)`) and run by huey's own consumer. Nothing here touches the tables.

    python app.py FILE schema           open the SQLite FILE with SqliteHuey (it makes its tables)
    python app.py FILE defer KIND=N...  enqueue N tasks of each kind (fast, hold, doomed, later, other)
    python app.py FILE worker           huey's consumer (2 worker threads) until killed
    python app.py FILE counts           huey's own counts (pending_count, scheduled_count per instance), as JSON

Kinds: fast (succeeds), hold (sleeps until its consumer is killed: its row is gone as it starts), doomed (fails),
later (an eta an hour ahead: in huey's schedule table), other (on a second Huey instance, "reports", in the same
file, which no consumer runs).
"""

from __future__ import annotations

import json
import sys
import time

from huey import SqliteHuey
from huey.consumer import Consumer

filename, command = sys.argv[1], sys.argv[2]
huey = SqliteHuey(name="huey", filename=filename)
reports = SqliteHuey(name="reports", filename=filename)


@huey.task()
def fast() -> None:
    pass


@huey.task()
def hold() -> None:
    time.sleep(3600)


@huey.task()
def doomed() -> None:
    raise RuntimeError("doomed fails for good")


@reports.task()
def other() -> None:
    pass


def main() -> None:
    if command == "schema":
        huey.storage.queue_size()  # the first use opens the file and makes the tables
    elif command == "defer":
        for spec in sys.argv[3:]:
            kind, count = spec.split("=")
            for _ in range(int(count)):
                if kind == "later":
                    fast.schedule(delay=3600)
                else:
                    globals()[kind]()
    elif command == "counts":
        print(json.dumps({h.name: {"pending": h.pending_count(), "scheduled": h.scheduled_count()}
                          for h in (huey, reports)}))
    elif command == "worker":
        Consumer(huey, workers=2, worker_type="thread", periodic=False, check_worker_health=False).run()
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
