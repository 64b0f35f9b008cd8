"""Ctrl-C stops a bulk `queuetop enqueue` between two chunks, on every database, and says exactly what stayed: the
count and the id range it prints are the rows in the table. A real subprocess, a real SIGINT, real databases."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from queuetop.act.queue import ENQUEUE_CHUNK
from tests.conftest import PG_TARGET, Backend, drop_backend, make_backend

COUNT = 1_000_000


def committed(backend: Backend) -> tuple[int, int | None, int | None]:
    """(rows, lowest id, highest id) of the queue table, read on a connection of the test's own."""
    with backend.open() as db:
        q = db.dialect
        table = q.qualify(backend.layout.schema, backend.layout.queue_table)
        n, low, high = db.fetchone(f'SELECT COUNT(*), MIN({q.quote("WorkQueueID")}), MAX({q.quote("WorkQueueID")}) '
                                   f"FROM {table}")  # fmt: skip
    return int(n), low, high


@pytest.mark.parametrize(("backend_name", "signum"), [("sqlite", signal.SIGINT), ("postgres", signal.SIGINT),
                                                     ("sqlite", signal.SIGTERM), ("postgres", signal.SIGHUP)])
def test_ctrl_c_stops_a_bulk_enqueue_between_chunks_and_says_what_was_committed(backend_name: str, signum: int,
                                                                                tmp_path: Path) -> None:
    backend = make_backend(backend_name, tmp_path)
    try:
        if backend_name == "sqlite":
            where = ["--db", backend.target.value]
        else:  # the native schema, under this test's own schema name
            layout_file = tmp_path / "native_here.toml"
            layout_file.write_text(f'preset = "native"\n[tables]\nschema = "{backend.layout.schema}"\n')
            where = ["--db", PG_TARGET, "--layout", str(layout_file)]
        env = {**os.environ, "QUEUETOP_DB": "", "QUEUETOP_LAYOUT": ""}
        command = [sys.executable, "-m", "queuetop", "enqueue", "--type", "email", "--count", str(COUNT), *where]
        run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.monotonic() + 60
        while committed(backend)[0] == 0:  # interrupt once it is under way
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.05)
        run.send_signal(signum)
        out, err = run.communicate(timeout=60)
        assert run.returncode == 128 + signum, (out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        said = re.fullmatch(r"queuetop: interrupted: ([\d,]+) of 1,000,000 jobs were enqueued and committed "
                            r"\(ids (\d+)\.\.(\d+)\); nothing else was written", lines[0])  # fmt: skip
        assert said, lines[0]
        n, low, high = committed(backend)
        assert (int(said.group(1).replace(",", "")), int(said.group(2)), int(said.group(3))) == (n, low, high)
        assert 0 < n < COUNT and n % ENQUEUE_CHUNK == 0  # whole chunks: stopped between two
    finally:
        drop_backend(backend)
