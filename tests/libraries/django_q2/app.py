"""A Django application using django-q2 with its ORM broker, as its users write one, run by the library test in its
own virtual environment (`.venv-libraries/django_q2`): Django's own `migrate` makes the tables, tasks are enqueued
through django-q2's `async_task` and run by its own cluster (`manage.py qcluster`). Nothing here touches the tables
by hand.

    python app.py SCHEMA schema           Django's migrations (django_q's among them)
    python app.py SCHEMA defer KIND=N...  enqueue N tasks of each kind (fast, hold, doomed, orphan)
    python app.py SCHEMA worker           django-q2's cluster (one worker) until killed
    python app.py SCHEMA counts           per queue, the ORM broker's own queue_size() and lock_size(), and the
                                          Success and Failure rows per function, as JSON

The database: PostgreSQL with SCHEMA as the search_path (QUEUETOP_LIB_PG), or with QUEUETOP_LIB_SQLITE set, that
SQLite file (SCHEMA unused). The cluster is named "site" (Q_CLUSTER's name: the queue rows' key). Kinds: fast
(succeeds: its queue row is deleted, a Success row kept), hold (sleeps until its worker is killed: its queue row
locked for `retry` seconds), doomed (fails: a Failure row; max_attempts 1, so its queue row is deleted),
orphan (sent to the queue "nobody", which no cluster reads).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import django
from django.conf import settings

schema, command = sys.argv[1], sys.argv[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tasks.py, found by its dotted path
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # django_database.py, shared with the other Django app
from django_database import django_database  # noqa: E402

database = django_database(schema)
# Connections kept (CONN_MAX_AGE, as most sites set it): the ORM broker calls close_old_connections before each
# read and write, and with Django's default of 0 that is a new PostgreSQL connection per task (300 tasks: 10 s).
database["CONN_MAX_AGE"] = 600
settings.configure(
    INSTALLED_APPS=["django_q"],
    DATABASES={"default": database},
    # One worker; a held task keeps its lock for retry seconds (timeout below it, as django-q2 asks); a failure is
    # final after one attempt (the default, 0, runs a failed task again every `retry` seconds for ever).
    Q_CLUSTER={"name": "site", "orm": "default", "workers": 1, "timeout": 500, "retry": 600, "max_attempts": 1,
               "poll": 0.1, "catch_up": False, "save_limit": 0},
    USE_TZ=True,
    LOGGING_CONFIG=None,
    SECRET_KEY="queuetop-test",  # django-q2 signs each queued payload with it
)
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db.models import Count  # noqa: E402
from django_q.brokers import get_broker  # noqa: E402
from django_q.models import Failure, OrmQ, Success  # noqa: E402
from django_q.tasks import async_task  # noqa: E402


def main() -> None:
    if command == "schema":
        call_command("migrate", verbosity=0)
    elif command == "defer":
        for spec in sys.argv[3:]:
            kind, count = spec.split("=")
            for _ in range(int(count)):
                if kind == "orphan":
                    async_task("tasks.fast", cluster="nobody")
                else:
                    async_task(f"tasks.{kind}")
    elif command == "counts":
        keys = sorted(set(OrmQ.objects.values_list("key", flat=True)) | {"site"})
        per_func = {name: {row["func"]: row["n"] for row in model.objects.values("func").annotate(n=Count("id"))}
                    for name, model in (("success", Success), ("failure", Failure))}
        print(json.dumps({"queued": {key: get_broker(key).queue_size() for key in keys},
                          "locked": {key: get_broker(key).lock_size() for key in keys}, **per_func}))
    elif command == "worker":
        call_command("qcluster")
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
