"""The tasks of the django-tasks-db application (`app.py`): a module of their own, as in a Django app, so a worker
finds each by its dotted path (`tasks.fast`), which is what the table's task_path holds."""

from __future__ import annotations

import time

from django_tasks import task


@task()
def fast() -> None:
    pass


@task()
def hold() -> None:
    time.sleep(3600)


@task()
def doomed() -> None:
    raise RuntimeError("doomed fails for good")


@task(queue_name="nobody")
def orphan() -> None:
    pass
