#!/usr/bin/env bash
# Every test, on real databases: installs what it needs (venv, unixODBC, psqlODBC, PostgreSQL), then lints
# and runs the whole suite. PostgreSQL must be reachable: the suite fails, never skips, when it is not.
# SQL Server joins when QUEUETOP_TEST_MSSQL holds a connection string.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
.venv/bin/ruff check queuetop tests bench scripts
# Four workers on two cores: most of a test's time is spent waiting (a poll interval, a lease, a server), so the
# suite takes about half as long; QUEUETOP_TEST_WORKERS=0 runs it in one process.
exec .venv/bin/pytest -q -n "${QUEUETOP_TEST_WORKERS:-4}" "$@"
