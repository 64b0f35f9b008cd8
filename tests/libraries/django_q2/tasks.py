"""The tasks of the django-q2 application (`app.py`): a module of their own, as in a Django app, so a worker finds
each by its dotted path (`tasks.fast`), which is what django_q_task's func holds."""

from __future__ import annotations

import time


def fast() -> None:
    pass


def hold() -> None:
    time.sleep(3600)


def doomed() -> None:
    raise RuntimeError("doomed fails for good")
