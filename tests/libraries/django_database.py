"""The database a Django test application (django_tasks/app.py, django_q2/app.py) uses, as Django's DATABASES
entry: PostgreSQL with the app's SCHEMA as its search_path (QUEUETOP_LIB_PG, a libpq connection string), or, with
QUEUETOP_LIB_SQLITE set, that SQLite file. Imported by the apps in their own virtual environments: Django's only."""

from __future__ import annotations

import os


def django_database(schema: str) -> dict:
    if os.environ.get("QUEUETOP_LIB_SQLITE"):
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["QUEUETOP_LIB_SQLITE"]}
    conninfo = dict(part.split("=", 1) for part in os.environ.get(
        "QUEUETOP_LIB_PG", "host=127.0.0.1 port=5432 dbname=queuetop_test user=postgres").split())
    return {"ENGINE": "django.db.backends.postgresql", "NAME": conninfo["dbname"], "USER": conninfo["user"],
            "HOST": conninfo["host"], "PORT": conninfo["port"], "OPTIONS": {"options": f"-c search_path={schema}"}}
