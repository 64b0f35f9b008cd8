"""`enqueue` without `--info` on the seeds whose payload column is NOT NULL (001's request, 002's name, 003's
COMMAND): the jobs go in with a recognisable test payload, not a raw constraint error. The seeds' own tables, made by
their own DDL, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from queuetop.act.shape_queue import TEST_PAYLOAD
from tests.seedshapes import drop_seed
from tests.test_shapes import make_seeded

PAYLOAD_COLUMN = {"requests": "request", "work_queue": "name", "processed": "COMMAND"}


@pytest.mark.parametrize("backend_name", ["sqlite", "postgres"])
@pytest.mark.parametrize("preset", list(PAYLOAD_COLUMN))
def test_ten_jobs_without_info_get_the_test_payload(preset: str, backend_name: str, tmp_path) -> None:
    s = make_seeded(preset, backend_name, tmp_path)
    try:
        out = s.cli("enqueue", "--count", "10")
        assert out.returncode == 0, out.stderr
        assert "enqueued 10 jobs" in out.stdout
        column = s.q(s.tables.queue)
        with s.open() as db:
            payloads = [row[0] for row in db.fetchall(f'SELECT "{PAYLOAD_COLUMN[preset]}" FROM {column}')]
        assert payloads == [TEST_PAYLOAD] * 10
        given = s.cli("enqueue", "--info", "mine")  # a payload given is kept as given
        assert given.returncode == 0, given.stderr
        assert s.count(f"SELECT COUNT(*) FROM {column} WHERE \"{PAYLOAD_COLUMN[preset]}\" = 'mine'") == 1
    finally:
        with s.open() as db:
            drop_seed(db, s.tables)
