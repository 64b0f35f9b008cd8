#!/usr/bin/env bash
# Every test, on real databases: installs what it needs (venv, unixODBC, psqlODBC, PostgreSQL), then lints
# and runs the whole suite. PostgreSQL must be reachable: the suite fails, never skips, when it is not.
# SQL Server joins when QUEUETOP_TEST_MSSQL holds a connection string.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
.venv/bin/ruff check queuetop tests bench scripts
# pytest rewrites each test module's asserts when it imports it and keeps the result beside the bytecode, except
# where PYTHONDONTWRITEBYTECODE is set (this machine, CI): there each of the workers below rewrote all ~110 modules
# afresh (six workers starting: 40 s of CPU, 22 s of wall). One collection first writes that cache (5 s); the
# workers then read it (19 s of CPU, 11 s). Its errors, if any, are the run's to report.
PYTHONDONTWRITEBYTECODE= .venv/bin/pytest --collect-only -q -p no:cacheprovider >/dev/null 2>&1 || true
# Six workers on two cores: a worker spends about a sixth of its time on its own CPU (the rest waits on a poll
# interval, a lease, a server, a child process), so more than one a core. Work stealing: a worker that runs out
# takes tests from a busy one, so the last minute is not one worker's queue of slow tests. Measured on 2 cores
# (one suite each, 2026-11-27): four workers 247-266 s, six with work stealing 224-261 s, eight 261 s (the cores
# saturate): the suite is CPU-bound, six is no worse than four. QUEUETOP_TEST_WORKERS=0: one process.
exec .venv/bin/pytest -q -n "${QUEUETOP_TEST_WORKERS:-6}" --dist worksteal "$@"
