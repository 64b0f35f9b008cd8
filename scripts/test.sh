#!/usr/bin/env bash
# Every test, on real databases: installs what it needs (venv, unixODBC, psqlODBC, PostgreSQL), then lints
# and runs the whole suite. PostgreSQL must be reachable: the suite fails, never skips, when it is not.
# SQL Server joins when QUEUETOP_TEST_MSSQL holds a connection string.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
.venv/bin/ruff check queuetop tests bench scripts
# Six workers on two cores: a worker spends about a fifth of its time on the CPU (the rest waits on a poll interval,
# a lease, a server, a child process), so six fill the cores (four left a quarter idle: 247 s; eight queue for
# them: 261 s; six 224 s). Work stealing: a worker that runs out takes tests from a busy one, so the last minute
# is not one worker's queue of slow tests. QUEUETOP_TEST_WORKERS=0 runs the suite in one process.
exec .venv/bin/pytest -q -n "${QUEUETOP_TEST_WORKERS:-6}" --dist worksteal "$@"
