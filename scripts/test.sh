#!/usr/bin/env bash
# Every test, on real databases: installs what it needs (venv, unixODBC, psqlODBC, PostgreSQL), then lints
# and runs the whole suite. PostgreSQL must be reachable: the suite fails, never skips, when it is not.
# SQL Server joins when QUEUETOP_TEST_MSSQL holds a connection string.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
.venv/bin/ruff check queuetop tests bench scripts
exec .venv/bin/pytest -q "$@"
