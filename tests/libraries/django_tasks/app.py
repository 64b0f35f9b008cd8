"""A Django application using Django's tasks with the django-tasks-db backend, as its users write one, run by the
library test in its own virtual environment (`.venv-libraries/django_tasks`): Django's own `migrate` makes the
table, tasks are enqueued through Django's task API (`Task.enqueue`, `Task.using(run_after=...)`) and run by
django-tasks-db's own worker (`manage.py db_worker`). Nothing here touches the table by hand.

    python app.py SCHEMA schema           Django's migrations (django_tasks_db's among them)
    python app.py SCHEMA defer KIND=N...  enqueue N tasks of each kind (fast, hold, doomed, later, orphan)
    python app.py SCHEMA worker           django-tasks-db's worker on queue "default" until killed
    python app.py SCHEMA counts           per task, django-tasks-db's own querysets (ready, running, ...), as JSON

The database: PostgreSQL with SCHEMA as the search_path (QUEUETOP_LIB_PG), or with QUEUETOP_LIB_SQLITE set, that
SQLite file (SCHEMA unused). Kinds: fast (succeeds: its row stays, SUCCESSFUL), hold (sleeps until its worker is
killed: RUNNING for ever, the backend has no lease), doomed (fails: FAILED, the backend never retries), later
(run_after an hour ahead), orphan (queue "nobody", which no worker reads). A task enqueued without a delay is
stored with run_after 9999-01-01, django-tasks-db's "no delay" (models.get_date_max).
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

import django
from django.conf import settings

schema, command = sys.argv[1], sys.argv[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tasks.py, found by its dotted path
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # django_database.py, shared with the other Django app
from django_database import django_database  # noqa: E402

database = django_database(schema)
settings.configure(
    INSTALLED_APPS=["django_tasks", "django_tasks_db"],
    DATABASES={"default": database},
    TASKS={"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "nobody"]}},
    USE_TZ=True,
    LOGGING_CONFIG=None,
)
django.setup()

import tasks  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.utils import timezone  # noqa: E402
from django_tasks_db.models import DBTaskResult  # noqa: E402


def main() -> None:
    if command == "schema":
        call_command("migrate", verbosity=0)
    elif command == "defer":
        for spec in sys.argv[3:]:
            kind, count = spec.split("=")
            task = tasks.fast.using(run_after=timezone.now() + timedelta(hours=1)) if kind == "later" \
                else getattr(tasks, kind)
            for _ in range(int(count)):
                task.enqueue()
    elif command == "counts":
        results = DBTaskResult.objects
        counts = {name: {row["task_path"]: row["n"] for row in query.values("task_path").annotate(n=Count("id"))}
                  for name, query in (("ready", results.ready()), ("running", results.running()),
                                      ("failed", results.failed()), ("successful", results.successful()))}
        print(json.dumps(counts))
    elif command == "worker":
        call_command("db_worker", queue_name="default", interval=0.1, startup_delay=False, verbosity=0)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
